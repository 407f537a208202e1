"""The catalog checkpoint `transcripts/catalog.ckpt`: the store's catalog, saved whole.

Owns: the bytes of a checkpoint. Must not touch: files, or when a checkpoint is written
and trusted (that is `engine.transcript.checkpoint`; a checkpoint is derived data that only
saves replay time, so a damaged or outdated one is ignored and the segments replayed).
The readers here take a `read(offset, length) -> bytes` function instead of the whole
file, so that they choose which bytes are read: opening reads the head and the index,
not the event positions.

Byte grammar (a `framing` file of kind `catalog`, sealed with a footer)::

    catalog.ckpt  := header(magic "SS.CATLG", version 2) head index positions footer
    head          := ["head", segment:int, offset:int, record_count:int, records_crc:int,
                      sealed:bool, transaction_id:int, commit_offset:int,
                      window_count:int, event_count:int, index_length:int,
                      index_crc:int, positions_length:int, positions_crc:int]
                     the checkpoint holds the state after transaction `transaction_id`,
                     whose commit record ends at byte `offset` of segment `segment`;
                     `record_count` records with CRC32 `records_crc` lie between that
                     segment's header and `offset`; `sealed` says a footer follows;
                     otherwise that commit record starts at `commit_offset` (0 when
                     the segment holds no record yet). The index is the `index_length`
                     bytes right after the head, with CRC32 `index_crc`; the positions
                     are the `positions_length` bytes after it, with CRC32
                     `positions_crc`; the footer follows them and ends the file
    index         := sealed windows* keys transactions
    sealed        := ["sealed", [[size:int, record_count:int, records_crc:int], ...]]
                     one entry per sealed segment, from segment 1 (every segment before
                     `segment`, and `segment` itself when `sealed`): its file size and
                     what its footer says
    windows       := ["windows", field_names:[str, ...], columns:[[value, ...], ...],
                      event_counts:bin]
                     at most `windows_per_record` windows per record (a writer's
                     choice, WINDOWS_PER_RECORD by default), in catalog order;
                     `columns[i]` holds field `field_names[i]` of `engine.model.
                     SessionWindow` for each window of the record (one value per
                     window; `extra` is a map); `event_counts` (int32, little-endian)
                     says how many events each of these windows has
    keys          := ["keys", [[session_key:str, [session_id:str, ...]], ...]]
                     every key with its windows in joining order
    transactions  := ["transactions", segments:bin, offsets:bin]
                     where transaction g+1 starts, for g = 0 .. transaction_id-1
                     (int32 segment numbers, int64 offsets, little-endian)
    positions     := ["positions", segments:bin, offsets:bin, lengths:bin]*
                     the position of every event, window after window in catalog
                     order and in seq order within a window, at most
                     POSITIONS_PER_RECORD events per record: segment numbers (int32),
                     byte offsets (int64), framed lengths (int32), little-endian
    footer        := the framing footer: the count and CRC32 of all records (head, index
                     and positions), so the file is an ordinary sealed framed file
                     (`session-search dump` reads it whole)

Reading, each byte CRC-checked once. `read_catalog_file` (opening) reads the header and
head (one small read; the head is checked by its own frame CRC), then the index (one
read, one CRC32 against `index_crc`; the frames inside are walked by their lengths, not
checked again), and the file size against the head's lengths; not the positions.
`read_catalog_positions` reads the positions and the footer when the store first needs
an event position: one CRC32 against `positions_crc`, and the footer's record count.
The footer's records CRC is not checked by these readers (the head's two CRCs cover the
same bytes); `decode_catalog_file` decodes a whole file with both. Only when a CRC
does not match are the frames walked with their own CRCs, to name the damaged record.

A checkpoint of another version (the header says which) is refused with
`UnsupportedVersion`, which the store treats as any checkpoint it cannot use: it ignores
it, replays the segments, and the next writer close saves a current one.

Why this shape: decoding the checkpoint is most of the cost of opening a large store,
and a search never needs an event's position (only reading events does: history,
rebuilds, reconcile, appending to a window, verify). The positions are most of the
file: they lie behind the index, so opening reads, checks and decodes only the small
part before them (decoding the positions with the rest took several times as long),
and the positions stay on disk until an event is read.
One column per window field (the windows are built with one C-level pass per field,
`build_windows`) rather than a field map and three small arrays per window; a reader
may keep the columns and build the windows later (`read_catalog_file`'s `windows_of`);
the index records are decoded as `catalog_index` says (the `keys` as tuples, a search's
window columns only: the others stay `UnreadColumn`s until a window is built).
"""

from __future__ import annotations

import dataclasses
import sys
from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any, NamedTuple

from engine.codec import FILE_KINDS
from engine.codec.catalog_index import UnreadColumn, decode_index_payload, keys_of
from engine.codec.framing import (
    FOOTER_SIZE,
    HEADER_SIZE,
    MAX_PAYLOAD_LENGTH,
    RECORD_HEAD,
    RECORD_HEAD_SIZE,
    DecodeError,
    Footer,
    Frame,
    decode_footer_at_end,
    decode_frame_at,
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
#: The default `windows_per_record` of `encode_catalog_file`; the store passes its
#: `EngineConfig.checkpoint_windows_per_record` (the codec reads no config).
WINDOWS_PER_RECORD = 1024
POSITIONS_PER_RECORD = 1 << 18  # 4 MiB of positions per record
#: The default `probe_length` of `read_catalog_file`: how many leading bytes it asks for
#: first, the header and the head (at most about 150 bytes; a longer head is read again
#: whole). The store passes its `EngineConfig.checkpoint_probe_bytes`.
PROBE_LENGTH = 256
HEAD_FIELDS = ("segment", "offset", "record_count", "records_crc", "sealed",
               "transaction_id", "commit_offset", "window_count", "event_count",
               "index_length", "index_crc", "positions_length", "positions_crc")
WINDOW_FIELD_NAMES = tuple(field.name for field in dataclasses.fields(SessionWindow))
#: `read(offset, length)`: exactly `length` bytes of the file from `offset` (a
#: `ReadHandle.read`); it raises StoreError when they are not there.
ReadFunction = Callable[[int, int], Any]
WindowRecords = list[list[Any]]  # each windows record's columns (lists, UnreadColumn), in order


class PositionsRegion(NamedTuple):
    """Where a checkpoint keeps its event positions: `length` bytes from byte
    `offset` of the file, with CRC32 `crc`, holding `event_count` positions; the footer
    follows and counts `records_before` records before them (the head and the index).
    A NamedTuple: a search's start-up makes this class, and a frozen dataclass's class
    costs more to make (`CatalogCheckpoint` stays one: `dataclasses.replace` rebuilds it)."""

    offset: int
    length: int
    crc: int
    event_count: int
    records_before: int


@dataclass(frozen=True, slots=True)
class CatalogCheckpoint:
    """Everything the store's catalog holds after transaction `transaction_id`.

    The event positions of every window are concatenated in window order:
    `event_counts[i]` of them belong to `windows[i]`. `sealed_segments` holds
    `(size, record_count, records_crc)` of segments 1, 2, ... that are sealed.
    A checkpoint read without its positions (`read_catalog_file`) has None for the
    three position arrays and says in `positions_region` where they are
    (`read_catalog_positions` reads them); otherwise `positions_region` is None.
    """

    segment: int
    offset: int
    record_count: int
    records_crc: int
    sealed: bool
    transaction_id: int
    commit_offset: int
    sealed_segments: tuple[tuple[int, int, int], ...]
    windows: Sequence[SessionWindow]  # a tuple, or the `windows_of` of `read_catalog_file`
    event_counts: array
    event_segments: array | None
    event_offsets: array | None
    event_lengths: array | None
    keys: tuple[tuple[str, tuple[str, ...]], ...]
    transaction_segments: array
    transaction_offsets: array
    positions_region: PositionsRegion | None = None


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


def _index_values(checkpoint: CatalogCheckpoint, windows_per_record: int) -> Iterator[list[Any]]:
    yield ["sealed", [list(item) for item in checkpoint.sealed_segments]]
    for start in range(0, len(checkpoint.windows), windows_per_record):
        chunk = checkpoint.windows[start: start + windows_per_record]
        yield ["windows", list(WINDOW_FIELD_NAMES),
               [[getattr(window, name) for window in chunk] for name in WINDOW_FIELD_NAMES],
               encode_array(checkpoint.event_counts[start: start + windows_per_record])]
    yield ["keys", [[key, list(session_ids)] for key, session_ids in checkpoint.keys]]
    yield ["transactions", encode_array(checkpoint.transaction_segments),
           encode_array(checkpoint.transaction_offsets)]


def _positions_values(checkpoint: CatalogCheckpoint) -> Iterator[list[Any]]:
    arrays = (checkpoint.event_segments, checkpoint.event_offsets, checkpoint.event_lengths)
    if any(values is None for values in arrays):
        raise ValueError("a checkpoint is written with its event positions")
    segments, offsets, lengths = arrays
    for start in range(0, len(offsets), POSITIONS_PER_RECORD):
        end = start + POSITIONS_PER_RECORD
        yield ["positions", encode_array(segments[start:end]), encode_array(offsets[start:end]),
               encode_array(lengths[start:end])]


def encode_catalog_file(
    checkpoint: CatalogCheckpoint, *, windows_per_record: int = WINDOWS_PER_RECORD,
) -> bytes:
    """The whole checkpoint file (the checkpoint must hold its positions), with at most
    `windows_per_record` windows in each `windows` record."""
    if windows_per_record < 1:
        raise ValueError("a windows record holds at least one window")
    index = [encode_record(value) for value in _index_values(checkpoint, windows_per_record)]
    positions = [encode_record(value) for value in _positions_values(checkpoint)]
    if sum(checkpoint.event_counts) != len(checkpoint.event_offsets):
        raise ValueError("the event counts do not add up to the positions")
    index_bytes, positions_bytes = b"".join(index), b"".join(positions)
    head = head_record(checkpoint, len(index_bytes), update_crc(0, index_bytes),
                       len(positions_bytes), update_crc(0, positions_bytes))
    records_crc = update_crc(update_crc(update_crc(0, head), index_bytes), positions_bytes)
    return b"".join((encode_header(MAGIC), head, index_bytes, positions_bytes,
                     encode_footer(1 + len(index) + len(positions), records_crc)))


def head_record(checkpoint: CatalogCheckpoint, index_length: int, index_crc: int,
                positions_length: int, positions_crc: int) -> bytes:
    """The head record: the log position covered, counts, the index's and positions' sizes."""
    return encode_record(["head", checkpoint.segment, checkpoint.offset,
                          checkpoint.record_count, checkpoint.records_crc, checkpoint.sealed,
                          checkpoint.transaction_id, checkpoint.commit_offset,
                          len(checkpoint.windows), len(checkpoint.event_offsets),
                          index_length, index_crc, positions_length, positions_crc])


def decode_catalog_file(data: bytes, location: str) -> CatalogCheckpoint:
    """Decode a whole checkpoint file with its positions: CorruptFile on damage,
    UnsupportedVersion on another version (both mean: ignore it).

    The file is read as `read_catalog_file` and `read_catalog_positions` read it, and
    its footer's records CRC is checked as well (one more pass over the bytes: this is
    for tools and tests, not for opening a store).
    """
    view = memoryview(data)
    read = _reader_of(view, location)
    checkpoint = read_catalog_file(read, len(view), location)
    region = checkpoint.positions_region
    assert region is not None  # read_catalog_file always says where they are
    segments, offsets, lengths = read_catalog_positions(read, region, location)
    footer = decode_footer_at_end(view)
    assert footer is not None  # read_catalog_positions checked it
    if update_crc(0, view[HEADER_SIZE: footer.offset]) != footer.records_crc:
        raise CorruptFile(location, footer.offset, "footer does not match the records")
    return dataclasses.replace(checkpoint, event_segments=segments, event_offsets=offsets,
                               event_lengths=lengths, positions_region=None)


def read_catalog_file(
    read: ReadFunction, size: int, location: str, *, probe_length: int = PROBE_LENGTH,
    windows_of: Callable[[WindowRecords], Sequence[SessionWindow]] | None = None,
) -> CatalogCheckpoint:
    """The checkpoint of a file of `size` bytes, read through `read`: CorruptFile on
    damage, UnsupportedVersion on another version (both mean: ignore it).

    Reads the header and head (the first `probe_length` bytes, and the rest of the head
    when it is longer), then the index (one CRC32 over it); the result's position arrays
    are None and `positions_region` says where they are. Its `windows` are
    `windows_of(columns of each windows record)`, by default `built_windows`.
    """
    prefix = read(0, min(size, max(probe_length, HEADER_SIZE + RECORD_HEAD_SIZE)))
    _check_header(prefix, location)
    if size < HEADER_SIZE + RECORD_HEAD_SIZE:
        raise CorruptFile(location, HEADER_SIZE, "file too short for a head record")
    head_end = HEADER_SIZE + RECORD_HEAD_SIZE + RECORD_HEAD.unpack_from(prefix, HEADER_SIZE)[0]
    if head_end > len(prefix):
        if head_end > min(size, HEADER_SIZE + RECORD_HEAD_SIZE + MAX_PAYLOAD_LENGTH):
            raise CorruptFile(location, HEADER_SIZE, "the head record runs past the end")
        prefix = read(0, head_end)
    try:
        head = _decode_head(decode_payload(decode_frame_at(prefix, HEADER_SIZE).payload))
    except DecodeError as error:
        raise CorruptFile(location, HEADER_SIZE, f"checkpoint head: {error}") from None
    index_end = head_end + head["index_length"]
    positions_end = index_end + head["positions_length"]
    if positions_end + FOOTER_SIZE != size:
        raise CorruptFile(location, HEADER_SIZE, f"the head describes a file of "
                                                 f"{positions_end + FOOTER_SIZE} bytes, "
                                                 f"found {size}")
    index = read(head_end, head["index_length"])
    _check_region(index, head["index_crc"], head_end, location, "index")
    decoder = _CheckpointDecoder(head, windows_of or built_windows)
    records = 1
    for offset, payload in _iter_payloads(index, head_end, location):
        records += 1
        try:
            decoder.add(decode_index_payload(payload))
        except (DecodeError, ValueError, TypeError, IndexError) as error:
            raise CorruptFile(location, offset, f"checkpoint grammar: {error}") from None
    region = PositionsRegion(index_end, head["positions_length"], head["positions_crc"],
                             head["event_count"], records)
    try:
        return decoder.finish(region)
    except (DecodeError, ValueError, TypeError) as error:
        raise CorruptFile(location, index_end, f"checkpoint grammar: {error}") from None


def read_catalog_positions(
    read: ReadFunction, region: PositionsRegion, location: str,
) -> tuple[array, array, array]:
    """The event positions of a checkpoint (segments, offsets, lengths), read
    through `read` with the footer after them: one CRC32 over the region, then the
    footer's record count. CorruptFile names the file and the damaged spot; StoreError
    when the file is shorter than the region (it changed since its head was read)."""
    data = read(region.offset, region.length + FOOTER_SIZE)
    view = memoryview(data)
    positions = view[: region.length]
    _check_region(positions, region.crc, region.offset, location, "positions")
    footer_offset = region.offset + region.length
    footer = decode_footer_at_end(view[region.length:])
    if footer is None:
        raise CorruptFile(location, footer_offset, "the footer after the positions is damaged")
    arrays = (array("i"), array("q"), array("i"))
    records = region.records_before
    for offset, payload in _iter_payloads(positions, region.offset, location):
        records += 1
        try:
            _add_positions(arrays, decode_payload(payload), region.event_count)
        except (DecodeError, ValueError, TypeError) as error:
            raise CorruptFile(location, offset, f"checkpoint grammar: {error}") from None
    if len(arrays[0]) != region.event_count:
        raise CorruptFile(location, region.offset, f"the head says {region.event_count} "
                                                   f"event positions, found {len(arrays[0])}")
    if footer.record_count != records:
        raise CorruptFile(location, footer_offset, "footer does not match the records")
    return arrays


def _add_positions(arrays: tuple[array, array, array], value: Any, event_count: int) -> None:
    """Append one `positions` record's arrays (DecodeError when it is not one, its arrays
    differ in length, or they pass `event_count`). Each is copied once, from the bytes
    msgpack made, straight onto the end of its array."""
    if not (isinstance(value, list) and len(value) == 4 and value[0] == "positions"):
        raise DecodeError("expected a positions record")
    for target, data in zip(arrays, value[1:], strict=True):
        extend_array(target, data)
    if not len(arrays[0]) == len(arrays[1]) == len(arrays[2]) <= event_count:
        raise DecodeError("a positions record's arrays differ in length or overflow")


def _reader_of(view: memoryview, location: str) -> ReadFunction:
    """A `read` over bytes in memory (no copies)."""
    def read(offset: int, length: int) -> memoryview:
        if offset < 0 or offset + length > len(view):
            raise StoreError(f"{location}: {length} bytes at offset {offset} run past the end "
                             f"of the file ({len(view)} bytes)")
        return view[offset: offset + length]
    return read


def _check_header(data: Any, location: str) -> None:
    """Check a checkpoint's header (CorruptFile; UnsupportedVersion when another version)."""
    header = decode_header(data, location)
    if header.magic != MAGIC:
        raise CorruptFile(location, 0, f"expected magic {MAGIC!r}, found {header.magic!r}")


def _check_region(data: Any, crc: int, base: int, location: str, what: str) -> None:
    """Check the CRC32 of a run of records that starts at byte `base` of the file; on a
    mismatch, name the first damaged record (its own CRC), or the run as a whole."""
    if update_crc(0, data) == crc:
        return
    for item in iter_frames(data, 0):
        if not isinstance(item, Frame):
            reason = item.reason if not isinstance(item, Footer) else "unexpected footer"
            raise CorruptFile(location, base + item.offset, reason)
    raise CorruptFile(location, base, f"the {what} records do not match the CRC in the head")


def _iter_payloads(data: Any, base: int, location: str) -> Iterator[tuple[int, memoryview]]:
    """The offset in the file and payload of each record in `data` (which starts at byte
    `base`), by their length fields alone: the caller checked the CRC of all of them."""
    view = memoryview(data)
    offset = 0
    while offset < len(view):
        length = RECORD_HEAD.unpack_from(view, offset)[0] \
            if len(view) - offset >= RECORD_HEAD_SIZE else 0
        end = offset + RECORD_HEAD_SIZE + length
        if not 1 <= length <= MAX_PAYLOAD_LENGTH or end > len(view):
            raise CorruptFile(location, base + offset, "record length does not fit the records")
        yield base + offset, view[offset + RECORD_HEAD_SIZE: end]
        offset = end


def _decode_head(value: Any) -> dict[str, Any]:
    """The fields of a head record (DecodeError when it is not one)."""
    if not (isinstance(value, list) and value and value[0] == "head"
            and len(value) == len(HEAD_FIELDS) + 1):
        raise DecodeError("checkpoint does not start with a head record")
    head = dict(zip(HEAD_FIELDS, value[1:], strict=True))
    if not all(isinstance(head[name], int) and head[name] >= 0 for name in HEAD_FIELDS):
        raise DecodeError("checkpoint head fields are not natural numbers")
    return head


class _CheckpointDecoder:
    """Turns the index records of a checkpoint, in file order, into a `CatalogCheckpoint`
    whose positions are left where they are (`finish`)."""

    def __init__(self, head: dict[str, Any],
                 windows_of: Callable[[WindowRecords], Sequence[SessionWindow]]) -> None:
        self.head = head  # as `_decode_head` returns it
        self.windows_of = windows_of
        self.sealed_segments: tuple[tuple[int, int, int], ...] | None = None
        self.records: WindowRecords = []
        self.counts = array("i")
        self.events = 0  # event counts added so far
        self.keys: tuple[tuple[str, tuple[str, ...]], ...] | None = None
        self.transactions: tuple[array, array] | None = None

    def add(self, value: Any) -> None:
        """Take the next record's decoded payload (DecodeError when out of place)."""
        tag = value[0] if isinstance(value, (list, tuple)) and value else None
        if self.sealed_segments is None:
            if tag != "sealed":
                raise DecodeError("checkpoint has no sealed-segments record after its head")
            self.sealed_segments = tuple(_sealed_segment(item) for item in value[1])
        elif tag == "windows" and self.keys is None:
            self._add_windows(value)
        elif tag == "keys" and self.keys is None:
            self.keys = keys_of(value[1])  # its arrays decoded as tuples (`catalog_index`)
        elif tag == "transactions" and self.keys is not None and self.transactions is None:
            self.transactions = (decode_array("i", value[1]), decode_array("q", value[2]))
        else:
            raise DecodeError(f"unexpected checkpoint record {tag!r}")

    def _add_windows(self, value: Any) -> None:
        if len(value) != 4:
            raise DecodeError("a windows record does not have 4 fields")
        columns = decode_window_columns(value[1], value[2])
        counts = decode_array("i", value[3])
        if len(counts) != len(columns[0]) or (counts and min(counts) < 0):
            raise DecodeError("a windows record's event counts do not match its windows")
        end = self.events + sum(counts)
        if end > self.head["event_count"]:
            raise DecodeError("more event positions than the head says")
        self.records.append(columns)
        self.counts.extend(counts)
        self.events = end

    def finish(self, region: PositionsRegion) -> CatalogCheckpoint:
        """The checkpoint, once every record was added (DecodeError when one is missing
        or the counts disagree); `region` is where the file keeps its positions."""
        head = self.head
        if self.sealed_segments is None or self.keys is None or self.transactions is None:
            raise DecodeError("checkpoint records are missing")
        window_count, event_count = head["window_count"], head["event_count"]
        if (len(self.counts), self.events) != (window_count, event_count):
            raise DecodeError(f"head says {window_count} windows and {event_count} events, "
                              f"found {len(self.counts)} and {self.events}")
        transaction_segments, transaction_offsets = self.transactions
        if not len(transaction_segments) == len(transaction_offsets) == head["transaction_id"]:
            raise DecodeError("transaction start arrays do not match the transaction count")
        return CatalogCheckpoint(
            head["segment"], head["offset"], head["record_count"], head["records_crc"],
            bool(head["sealed"]), head["transaction_id"], head["commit_offset"],
            self.sealed_segments, self.windows_of(self.records), self.counts, None, None, None,
            self.keys, transaction_segments, transaction_offsets, region)


def _sealed_segment(item: Any) -> tuple[int, int, int]:
    if not (isinstance(item, list) and len(item) == 3
            and all(isinstance(number, int) for number in item)):
        raise DecodeError("a sealed segment is not [size, record_count, records_crc]")
    return (item[0], item[1], item[2])


def decode_window_columns(names: Any, columns: Any) -> list[list[Any]]:
    """One `windows` record's field columns in `WINDOW_FIELD_NAMES` order, the omitted
    fields' defaults filled in (DecodeError on unknown fields, ragged columns, or a
    session id, key or `extra` of the wrong type).

    >>> full = decode_window_columns(["session_key", "session_id"], [["k1", "k2"], ["a", "b"]])
    >>> full[:2], len(full) == len(WINDOW_FIELD_NAMES)
    ([['a', 'b'], ['k1', 'k2']], True)
    """
    if not isinstance(names, list) or not isinstance(columns, list) \
            or len(names) != len(columns):
        raise DecodeError("window columns do not match their field names")
    unknown = sorted(set(names) - set(WINDOW_FIELD_NAMES))
    if unknown or len(set(names)) != len(names):
        raise DecodeError(f"unknown or repeated window fields {unknown or names}")
    by_name = dict(zip(names, columns, strict=True))
    if not all(isinstance(column, (list, UnreadColumn)) for column in columns) \
            or len({len(column) for column in columns}) > 1:
        raise DecodeError("window columns differ in length")
    for name in ("session_id", "session_key"):
        if name not in by_name or not set(map(type, by_name[name])) <= {str}:
            raise DecodeError(f"window field {name} is missing or not a string")
    if not set(map(type, by_name.get("extra", []))) <= {dict}:
        raise DecodeError("window field extra is not a map")
    if tuple(names) == WINDOW_FIELD_NAMES:
        return columns
    windows = [SessionWindow(**dict(zip(names, values, strict=True)))
               for values in zip(*columns)]
    return [[getattr(window, name) for window in windows] for name in WINDOW_FIELD_NAMES]


def built_windows(records: WindowRecords) -> tuple[SessionWindow, ...]:
    """The windows of these records' columns, built now (`build_windows`)."""
    return tuple(chain.from_iterable(map(build_windows, records)))


#: Each field's slot setter, in field order (see `build_windows`).
_SLOT_SETTERS = tuple(getattr(SessionWindow, name).__set__ for name in WINDOW_FIELD_NAMES)


def build_windows(columns: list[list[Any]]) -> list[SessionWindow]:
    """`list(map(SessionWindow, *columns))` (the clear version, and the oracle of this
    one) for columns in `WINDOW_FIELD_NAMES` order, more cheaply: the windows
    are made empty and each field's slot is set for all of them in one C-level pass,
    instead of one frozen-dataclass `__init__` (15 `object.__setattr__` calls) each.
    That is what that `__init__` does, as `SessionWindow` has no `__post_init__`.

    >>> columns = [["a", "b"], ["k", "k"], [None, "a"], ["initial", "reset"], [True, False],
    ...            [None, "t"], ["chat", "chat"], [None, None], [None, None], [None, "p"],
    ...            [False, True], [False, False], [None, "g"], [None, 2.5], [{}, {"x": 1}]]
    >>> built, clear = build_windows(columns), list(map(SessionWindow, *columns))
    >>> built == clear and [w.extra for w in built] == [w.extra for w in clear]
    True
    """
    if hasattr(SessionWindow, "__post_init__"):  # pragma: no cover - a guard for later
        return list(map(SessionWindow, *columns))
    windows = list(map(object.__new__, [SessionWindow] * len(columns[0])))
    for setter, column in zip(_SLOT_SETTERS, columns, strict=True):
        any(map(setter, windows, column))  # each call returns None: runs to the end
    return windows


def describe_payload(value: Any) -> dict[str, Any]:
    """A readable dict of one checkpoint record, for `session-search dump`."""
    tag = value[0]
    if tag == "head":
        return {"kind": "head", **dict(zip(HEAD_FIELDS, value[1:], strict=True))}
    if tag == "sealed":
        return {"kind": "sealed", "segments": [
            {"segment": number, "size": size, "record_count": count,
             "records_crc": f"{crc:08x}"}  # as dump shows a footer's
            for number, (size, count, crc) in enumerate(value[1], start=1)]}
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
    if tag == "positions":
        return {"kind": "positions", "events": len(decode_array("q", value[2]))}
    raise DecodeError(f"unknown checkpoint record {tag!r}")
