"""The catalog checkpoint `transcripts/catalog.ckpt`: the store's catalog, saved whole.

Owns: the bytes of a checkpoint. Must not touch: files, or when a checkpoint is written
and trusted (that is `engine.transcript.store`; a checkpoint is derived data that only
saves replay time, so a damaged one is ignored and the segments replayed instead).

Byte grammar (a `framing` file of kind `catalog`, sealed with a footer)::

    catalog.ckpt  := header(magic "SS.CATLG") head windows* keys transactions footer
    head          := ["head", segment:int, offset:int, record_count:int, records_crc:int,
                      sealed:bool, transaction_id:int, window_count:int]
                     the checkpoint holds the state after transaction `transaction_id`,
                     whose commit record ends at byte `offset` of segment `segment`;
                     `record_count` records with CRC32 `records_crc` lie between that
                     segment's header and `offset`; `sealed` says a footer follows
                     (all checked against the segment before the checkpoint is trusted)
    windows       := ["windows", [[fields:map, segments:bin, offsets:bin, lengths:bin], ...]]
                     at most WINDOWS_PER_RECORD windows per record, in catalog order;
                     `fields` as in a segment `window` record; the three arrays are
                     the window's event positions in seq order: segment numbers (int32),
                     byte offsets (int64), framed lengths (int32), all little-endian
    keys          := ["keys", [[session_key:str, [session_id:str, ...]], ...]]
                     every key with its windows in joining order
    transactions  := ["transactions", segments:bin, offsets:bin]
                     where transaction g+1 starts, for g = 0 .. transaction_id-1
                     (int32 segment numbers, int64 offsets, little-endian)
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from engine.codec import FILE_KINDS
from engine.codec.framing import (
    HEADER_SIZE,
    DecodeError,
    decode_payload,
    decode_sealed_frames,
    encode_footer,
    encode_header,
    encode_record,
    update_crc,
)
from engine.codec.segment_file import decode_window_fields, encode_window_fields
from engine.errors import CorruptFile
from engine.model import SessionWindow

MAGIC = FILE_KINDS["catalog"].magic
WINDOWS_PER_RECORD = 1024
HEAD_FIELDS = ("segment", "offset", "record_count", "records_crc", "sealed", "transaction_id",
               "window_count")


@dataclass(frozen=True, slots=True)
class CheckpointWindow:
    """One window and its event positions (parallel arrays, seq order)."""

    window: SessionWindow
    segments: array
    offsets: array
    lengths: array


@dataclass(frozen=True, slots=True)
class CatalogCheckpoint:
    """Everything the store's catalog holds after transaction `transaction_id`."""

    segment: int
    offset: int
    record_count: int
    records_crc: int
    sealed: bool
    transaction_id: int
    windows: tuple[CheckpointWindow, ...]
    keys: tuple[tuple[str, tuple[str, ...]], ...]
    transaction_segments: array
    transaction_offsets: array


# --------------------------------------------------------------------------------------
# Arrays as little-endian bytes
# --------------------------------------------------------------------------------------


def encode_array(values: array) -> bytes:
    """Little-endian bytes of an int32 (`i`) or int64 (`q`) array.

    >>> encode_array(array("i", [1, 258])).hex()
    '0100000002010000'
    """
    if sys.byteorder == "big":  # pragma: no cover - the test machines are little-endian
        values = array(values.typecode, values)
        values.byteswap()
    return values.tobytes()


def decode_array(typecode: str, data: Any) -> array:
    """The array of little-endian bytes (DecodeError when the length does not fit).

    >>> list(decode_array("q", encode_array(array("q", [-1, 2**40]))))
    [-1, 1099511627776]
    """
    if not isinstance(data, bytes):
        raise DecodeError("checkpoint array is not binary")
    values = array(typecode)
    if len(data) % values.itemsize:
        raise DecodeError("checkpoint array length is not a whole number of items")
    values.frombytes(data)
    if sys.byteorder == "big":  # pragma: no cover
        values.byteswap()
    return values


# --------------------------------------------------------------------------------------
# Whole file
# --------------------------------------------------------------------------------------


def _iter_values(checkpoint: CatalogCheckpoint) -> Iterator[list[Any]]:
    yield ["head", checkpoint.segment, checkpoint.offset, checkpoint.record_count,
           checkpoint.records_crc, checkpoint.sealed, checkpoint.transaction_id,
           len(checkpoint.windows)]
    for start in range(0, len(checkpoint.windows), WINDOWS_PER_RECORD):
        chunk = checkpoint.windows[start: start + WINDOWS_PER_RECORD]
        yield ["windows", [[encode_window_fields(item.window), encode_array(item.segments),
                            encode_array(item.offsets), encode_array(item.lengths)]
                           for item in chunk]]
    yield ["keys", [[key, list(session_ids)] for key, session_ids in checkpoint.keys]]
    yield ["transactions", encode_array(checkpoint.transaction_segments),
           encode_array(checkpoint.transaction_offsets)]


def encode_catalog_file(checkpoint: CatalogCheckpoint) -> bytes:
    """The whole checkpoint file."""
    encoded = [encode_record(value) for value in _iter_values(checkpoint)]
    records = b"".join(encoded)
    return encode_header(MAGIC) + records + encode_footer(len(encoded), update_crc(0, records))


def decode_catalog_file(data: bytes, location: str) -> CatalogCheckpoint:
    """Decode a checkpoint: CorruptFile on damage, StoreError on another version."""
    values = []
    for frame in decode_sealed_frames(data, location, MAGIC):
        try:
            values.append(decode_payload(frame.payload))
        except DecodeError as error:
            raise CorruptFile(location, frame.offset, str(error)) from None
    try:
        return _decode_values(values)
    except (DecodeError, ValueError, TypeError) as error:
        raise CorruptFile(location, HEADER_SIZE, f"checkpoint grammar: {error}") from None


def _decode_values(values: list[Any]) -> CatalogCheckpoint:
    if len(values) < 3 or values[0][0] != "head" or len(values[0]) != len(HEAD_FIELDS) + 1:
        raise DecodeError("checkpoint does not start with a head record")
    head = dict(zip(HEAD_FIELDS, values[0][1:], strict=True))
    if not all(isinstance(head[name], int) for name in HEAD_FIELDS):
        raise DecodeError("checkpoint head fields are not integers")
    window_count = head.pop("window_count")
    windows: list[CheckpointWindow] = []
    for value in values[1:-2]:
        if value[0] != "windows":
            raise DecodeError(f"unexpected checkpoint record {value[0]!r}")
        for fields, segments, offsets, lengths in value[1]:
            item = CheckpointWindow(decode_window_fields(fields), decode_array("i", segments),
                                    decode_array("q", offsets), decode_array("i", lengths))
            if not len(item.segments) == len(item.offsets) == len(item.lengths):
                raise DecodeError("event position arrays differ in length")
            windows.append(item)
    if len(windows) != window_count:
        raise DecodeError(f"head says {window_count} windows, found {len(windows)}")
    keys_value, transactions_value = values[-2], values[-1]
    if keys_value[0] != "keys" or transactions_value[0] != "transactions":
        raise DecodeError("checkpoint does not end with keys and transactions")
    keys = tuple((key, tuple(session_ids)) for key, session_ids in keys_value[1])
    transaction_segments = decode_array("i", transactions_value[1])
    transaction_offsets = decode_array("q", transactions_value[2])
    if not len(transaction_segments) == len(transaction_offsets) == head["transaction_id"]:
        raise DecodeError("transaction start arrays do not match the transaction count")
    head["sealed"] = bool(head["sealed"])
    return CatalogCheckpoint(**head, windows=tuple(windows), keys=keys,
                             transaction_segments=transaction_segments,
                             transaction_offsets=transaction_offsets)


def describe_payload(value: Any) -> dict[str, Any]:
    """A readable dict of one checkpoint record, for `session-search dump`."""
    tag = value[0]
    if tag == "head":
        return {"kind": "head", **dict(zip(HEAD_FIELDS, value[1:], strict=True))}
    if tag == "windows":
        return {"kind": "windows", "windows": [
            {"session_id": fields.get("session_id"), "events": len(decode_array("q", offsets))}
            for fields, _segments, offsets, _lengths in value[1]]}
    if tag == "keys":
        return {"kind": "keys", "keys": {key: ids for key, ids in value[1]}}
    if tag == "transactions":
        return {"kind": "transactions", "count": len(decode_array("q", value[2]))}
    raise DecodeError(f"unknown checkpoint record {tag!r}")
