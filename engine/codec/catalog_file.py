"""The catalog checkpoint `transcripts/catalog.ckpt`: the store's catalog, saved whole.

Owns: the bytes of a checkpoint. Must not touch: files, or when a checkpoint is written
and trusted (that is `engine.transcript.store`; a checkpoint is derived data that only
saves replay time, so a damaged or outdated one is ignored and the segments replayed).

Byte grammar (a `framing` file of kind `catalog`, sealed with a footer), layout 2::

    catalog.ckpt  := header(magic "SS.CATLG", flags = LAYOUT) head sealed windows* keys
                     transactions footer
    head          := ["head", segment:int, offset:int, record_count:int, records_crc:int,
                      sealed:bool, transaction_id:int, commit_offset:int,
                      window_count:int, event_count:int]
                     the checkpoint holds the state after transaction `transaction_id`,
                     whose commit record ends at byte `offset` of segment `segment`;
                     `record_count` records with CRC32 `records_crc` lie between that
                     segment's header and `offset`; `sealed` says a footer follows;
                     otherwise that commit record starts at `commit_offset` (0 when
                     the segment holds no record yet)
    sealed        := ["sealed", [[size:int, record_count:int, records_crc:int], ...]]
                     one entry per sealed segment, from segment 1 (every segment before
                     `segment`, and `segment` itself when `sealed`): its file size and
                     what its footer says
    windows       := ["windows", field_names:[str, ...], columns:[[value, ...], ...],
                      event_counts:bin, segments:bin, offsets:bin, lengths:bin]
                     at most WINDOWS_PER_RECORD windows per record, in catalog order;
                     `columns[i]` holds field `field_names[i]` of `engine.model.
                     SessionWindow` for each window of the record (one value per
                     window; `extra` is a map); `event_counts` (int32) says how many
                     events each of these windows has; the three position arrays hold
                     those events, window after window in seq order: segment numbers
                     (int32), byte offsets (int64), framed lengths (int32); every array
                     is little-endian
    keys          := ["keys", [[session_key:str, [session_id:str, ...]], ...]]
                     every key with its windows in joining order
    transactions  := ["transactions", segments:bin, offsets:bin]
                     where transaction g+1 starts, for g = 0 .. transaction_id-1
                     (int32 segment numbers, int64 offsets, little-endian)

The header's flags hold the layout number. Layout 1 (flags 0, written before issue 5)
had per-window arrays and no `sealed` record or `commit_offset`; it is not read: opening
a store with one replays the segments and the next writer close saves layout 2.

Why this shape: decoding the checkpoint is most of the cost of opening a large store.
One column per window field (the windows are built with one positional call each) and
one set of position arrays per record, filled into arrays sized from the head, replace
layout 1's field map and three small arrays per window: at 1M messages (8,322 windows,
1.02M events, 18 MB) decoding went from 0.20 s to 0.06 s, and what stays resident after
opening from 50 MB to 32 MB.
"""

from __future__ import annotations

import dataclasses
import sys
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from engine.codec import FILE_KINDS
from engine.codec.framing import (
    HEADER_SIZE,
    DecodeError,
    Footer,
    Frame,
    decode_header,
    decode_payload,
    encode_footer,
    encode_header,
    encode_record,
    iter_frames,
    update_crc,
)
from engine.errors import CorruptFile, StoreError
from engine.model import SessionWindow

MAGIC = FILE_KINDS["catalog"].magic
#: The layout written and read (the header's flags).
LAYOUT = 2
WINDOWS_PER_RECORD = 1024
HEAD_FIELDS = ("segment", "offset", "record_count", "records_crc", "sealed", "transaction_id",
               "commit_offset", "window_count", "event_count")
#: The head of layout 1, only for `describe_payload` (dump shows old files too).
LAYOUT_1_HEAD_FIELDS = ("segment", "offset", "record_count", "records_crc", "sealed",
                        "transaction_id", "window_count")
WINDOW_FIELD_NAMES = tuple(field.name for field in dataclasses.fields(SessionWindow))


@dataclass(frozen=True, slots=True)
class CatalogCheckpoint:
    """Everything the store's catalog holds after transaction `transaction_id`.

    The event positions of every window are concatenated in window order:
    `event_counts[i]` of them belong to `windows[i]`. `sealed_segments` holds
    `(size, record_count, records_crc)` of segments 1, 2, ... that are sealed.
    """

    segment: int
    offset: int
    record_count: int
    records_crc: int
    sealed: bool
    transaction_id: int
    commit_offset: int
    sealed_segments: tuple[tuple[int, int, int], ...]
    windows: tuple[SessionWindow, ...]
    event_counts: array
    event_segments: array
    event_offsets: array
    event_lengths: array
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
    values = array(typecode)
    extend_array(values, data)
    return values


def extend_array(values: array, data: Any) -> None:
    """Append the items of little-endian bytes to `values` (DecodeError if they do not fit).

    >>> values = array("i", [1])
    >>> extend_array(values, encode_array(array("i", [2, 3])))
    >>> list(values)
    [1, 2, 3]
    """
    if not isinstance(data, bytes):
        raise DecodeError("checkpoint array is not binary")
    if len(data) % values.itemsize:
        raise DecodeError("checkpoint array length is not a whole number of items")
    if sys.byteorder == "big":  # pragma: no cover
        added = array(values.typecode)
        added.frombytes(data)
        added.byteswap()
        values.extend(added)
    else:
        values.frombytes(data)


# --------------------------------------------------------------------------------------
# Whole file
# --------------------------------------------------------------------------------------


def _iter_values(checkpoint: CatalogCheckpoint) -> Iterator[list[Any]]:
    yield ["head", checkpoint.segment, checkpoint.offset, checkpoint.record_count,
           checkpoint.records_crc, checkpoint.sealed, checkpoint.transaction_id,
           checkpoint.commit_offset, len(checkpoint.windows), len(checkpoint.event_offsets)]
    yield ["sealed", [list(item) for item in checkpoint.sealed_segments]]
    first_event = 0
    for start in range(0, len(checkpoint.windows), WINDOWS_PER_RECORD):
        chunk = checkpoint.windows[start: start + WINDOWS_PER_RECORD]
        counts = checkpoint.event_counts[start: start + WINDOWS_PER_RECORD]
        end_event = first_event + sum(counts)
        yield ["windows", list(WINDOW_FIELD_NAMES),
               [[getattr(window, name) for window in chunk] for name in WINDOW_FIELD_NAMES],
               encode_array(counts),
               encode_array(checkpoint.event_segments[first_event:end_event]),
               encode_array(checkpoint.event_offsets[first_event:end_event]),
               encode_array(checkpoint.event_lengths[first_event:end_event])]
        first_event = end_event
    yield ["keys", [[key, list(session_ids)] for key, session_ids in checkpoint.keys]]
    yield ["transactions", encode_array(checkpoint.transaction_segments),
           encode_array(checkpoint.transaction_offsets)]


def encode_catalog_file(checkpoint: CatalogCheckpoint) -> bytes:
    """The whole checkpoint file."""
    encoded = [encode_record(value) for value in _iter_values(checkpoint)]
    records = b"".join(encoded)
    return (encode_header(MAGIC, flags=LAYOUT) + records
            + encode_footer(len(encoded), update_crc(0, records)))


def decode_catalog_file(data: bytes, location: str) -> CatalogCheckpoint:
    """Decode a checkpoint: CorruptFile on damage, StoreError on another version or
    layout (both mean: ignore it).

    Records are decoded one at a time as the frames are walked (the footer is checked
    at the end, before anything is returned), so at most one record's payload and
    msgpack value exist at once besides `data` and the result: the position arrays are
    sized from the head and filled in place.
    """
    header = decode_header(data, location)
    if header.magic != MAGIC:
        raise CorruptFile(location, 0, f"expected magic {MAGIC!r}, found {header.magic!r}")
    if (header.flags or 1) != LAYOUT:
        raise StoreError(f"{location}: checkpoint layout {header.flags or 1} is not read by "
                         f"this engine (it reads layout {LAYOUT})")
    decoder = _CheckpointDecoder()
    view = memoryview(data)
    count, records_crc = 0, 0
    for item in iter_frames(data, HEADER_SIZE):
        if isinstance(item, Frame):
            count += 1
            records_crc = update_crc(records_crc, view[item.offset: item.end])
            try:
                decoder.add(decode_payload(item.payload))
            except (DecodeError, ValueError, TypeError, IndexError) as error:
                raise CorruptFile(location, item.offset, f"checkpoint grammar: {error}") from None
        elif isinstance(item, Footer):
            if (item.record_count, item.records_crc) != (count, records_crc):
                raise CorruptFile(location, item.offset, "footer does not match the records")
            try:
                return decoder.finish()
            except (DecodeError, ValueError, TypeError) as error:
                raise CorruptFile(location, item.offset, f"checkpoint grammar: {error}") from None
        else:
            raise CorruptFile(location, item.offset, item.reason)
    raise CorruptFile(location, len(data), "file ends without a footer")


class _CheckpointDecoder:
    """Turns the records of a checkpoint, in file order, into a `CatalogCheckpoint`."""

    def __init__(self) -> None:
        self.head: dict[str, Any] | None = None
        self.sealed_segments: tuple[tuple[int, int, int], ...] | None = None
        self.windows: list[SessionWindow] = []
        self.counts = array("i")
        self.positions: tuple[array, array, array] = (array("i"), array("q"), array("i"))
        self.events = 0  # positions filled so far
        self.keys: tuple[tuple[str, tuple[str, ...]], ...] | None = None
        self.transactions: tuple[array, array] | None = None

    def add(self, value: Any) -> None:
        """Take the next record's decoded payload (DecodeError when out of place)."""
        tag = value[0] if isinstance(value, list) and value else None
        if self.head is None:
            self._add_head(value, tag)
        elif self.sealed_segments is None:
            if tag != "sealed":
                raise DecodeError("checkpoint has no sealed-segments record after its head")
            self.sealed_segments = tuple(_sealed_segment(item) for item in value[1])
        elif tag == "windows" and self.keys is None:
            self._add_windows(value)
        elif tag == "keys" and self.keys is None:
            self.keys = tuple((key, tuple(session_ids)) for key, session_ids in value[1])
        elif tag == "transactions" and self.keys is not None and self.transactions is None:
            self.transactions = (decode_array("i", value[1]), decode_array("q", value[2]))
        else:
            raise DecodeError(f"unexpected checkpoint record {tag!r}")

    def _add_head(self, value: Any, tag: Any) -> None:
        if tag != "head" or len(value) != len(HEAD_FIELDS) + 1:
            raise DecodeError("checkpoint does not start with a head record")
        head = dict(zip(HEAD_FIELDS, value[1:], strict=True))
        if not all(isinstance(head[name], int) and head[name] >= 0 for name in HEAD_FIELDS):
            raise DecodeError("checkpoint head fields are not natural numbers")
        self.head = head
        events = head["event_count"]  # the arrays are filled in place: no regrowth
        self.positions = (array("i", [0]) * events, array("q", [0]) * events,
                          array("i", [0]) * events)

    def _add_windows(self, value: Any) -> None:
        if len(value) != 7:
            raise DecodeError("a windows record does not have 7 fields")
        chunk = decode_window_columns(value[1], value[2])
        counts = decode_array("i", value[3])
        if len(counts) != len(chunk) or (counts and min(counts) < 0):
            raise DecodeError("a windows record's event counts do not match its windows")
        start, end = self.events, self.events + sum(counts)
        if end > self.head["event_count"]:
            raise DecodeError("more event positions than the head says")
        for positions, data in zip(self.positions, value[4:], strict=True):
            values = decode_array(positions.typecode, data)
            if len(values) != end - start:
                raise DecodeError("a windows record's positions do not match its event counts")
            positions[start:end] = values
        self.windows.extend(chunk)
        self.counts.extend(counts)
        self.events = end

    def finish(self) -> CatalogCheckpoint:
        """The checkpoint, once every record was added (DecodeError when one is missing
        or the counts disagree)."""
        head = self.head
        if head is None or self.sealed_segments is None or self.keys is None \
                or self.transactions is None:
            raise DecodeError("checkpoint records are missing")
        window_count, event_count = head.pop("window_count"), head.pop("event_count")
        if (len(self.windows), self.events) != (window_count, event_count):
            raise DecodeError(f"head says {window_count} windows and {event_count} events, "
                              f"found {len(self.windows)} and {self.events}")
        transaction_segments, transaction_offsets = self.transactions
        if not len(transaction_segments) == len(transaction_offsets) == head["transaction_id"]:
            raise DecodeError("transaction start arrays do not match the transaction count")
        head["sealed"] = bool(head["sealed"])
        segments, offsets, lengths = self.positions
        return CatalogCheckpoint(**head, sealed_segments=self.sealed_segments,
                                 windows=tuple(self.windows), event_counts=self.counts,
                                 event_segments=segments, event_offsets=offsets,
                                 event_lengths=lengths, keys=self.keys,
                                 transaction_segments=transaction_segments,
                                 transaction_offsets=transaction_offsets)


def _sealed_segment(item: Any) -> tuple[int, int, int]:
    if not (isinstance(item, list) and len(item) == 3
            and all(isinstance(number, int) for number in item)):
        raise DecodeError("a sealed segment is not [size, record_count, records_crc]")
    return (item[0], item[1], item[2])


def decode_window_columns(names: Any, columns: Any) -> list[SessionWindow]:
    """The windows of one `windows` record's field columns (DecodeError on unknown fields,
    ragged columns, or a session id, key or `extra` of the wrong type).

    >>> [w.session_key for w in decode_window_columns(["session_id", "session_key"],
    ...                                                [["a", "b"], ["k1", "k2"]])]
    ['k1', 'k2']
    """
    if not isinstance(names, list) or not isinstance(columns, list) \
            or len(names) != len(columns):
        raise DecodeError("window columns do not match their field names")
    unknown = sorted(set(names) - set(WINDOW_FIELD_NAMES))
    if unknown or len(set(names)) != len(names):
        raise DecodeError(f"unknown or repeated window fields {unknown or names}")
    by_name = dict(zip(names, columns, strict=True))
    if not all(isinstance(column, list) for column in columns) \
            or len({len(column) for column in columns}) > 1:
        raise DecodeError("window columns differ in length")
    for name in ("session_id", "session_key"):
        if not all(isinstance(value, str) for value in by_name.get(name, [None])):
            raise DecodeError(f"window field {name} is missing or not a string")
    if not all(isinstance(value, dict) for value in by_name.get("extra", [])):
        raise DecodeError("window field extra is not a map")
    if tuple(names) == WINDOW_FIELD_NAMES:
        return list(map(SessionWindow, *columns))
    return [SessionWindow(**dict(zip(names, values, strict=True))) for values in zip(*columns)]


def describe_payload(value: Any) -> dict[str, Any]:
    """A readable dict of one checkpoint record, for `session-search dump`."""
    tag = value[0]
    if tag == "head":
        names = LAYOUT_1_HEAD_FIELDS if len(value) == len(LAYOUT_1_HEAD_FIELDS) + 1 else HEAD_FIELDS
        return {"kind": "head", **dict(zip(names, value[1:], strict=True))}
    if tag == "sealed":
        return {"kind": "sealed", "segments": [
            {"segment": number, "size": size, "record_count": count,
             "records_crc": f"{crc:08x}"}  # as dump shows a footer's
            for number, (size, count, crc) in enumerate(value[1], start=1)]}
    if tag == "windows" and len(value) == 2:  # layout 1: [fields, segments, offsets, lengths]
        return {"kind": "windows", "windows": [
            {"session_id": fields.get("session_id"), "events": len(decode_array("q", offsets))}
            for fields, _segments, offsets, _lengths in value[1]]}
    if tag == "windows":
        session_ids = dict(zip(value[1], value[2], strict=True)).get("session_id", [])
        counts = decode_array("i", value[3])
        return {"kind": "windows", "windows": [
            {"session_id": session_id, "events": count}
            for session_id, count in zip(session_ids, counts, strict=True)]}
    if tag == "keys":
        return {"kind": "keys", "keys": {key: ids for key, ids in value[1]}}
    if tag == "transactions":
        return {"kind": "transactions", "count": len(decode_array("q", value[2]))}
    raise DecodeError(f"unknown checkpoint record {tag!r}")
