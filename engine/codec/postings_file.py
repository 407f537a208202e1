"""The postings file of an index segment: one posting list per term, as packed arrays.

Owns: the bytes of `index/segment-NNNNNN.postings` (format version 2, the only one
read), reading one list by offset, and checking a file. Must not touch: files
(a reader is handed a `read(offset, length)` function; the index writer stores what
this module returns), terms (the terms file maps each term to the byte range of its
record here), index types.

Byte grammar (a `framing` file of kind `postings`)::

    postings file := header(magic "SS.POSTS", version 2) list_record* footer
    list_record   := one framed record per term, in term order; its payload is
                     ["postings", doc_type, doc_ids, count_type, counts,
                      position_type, positions]                     (msgpack array)
    doc_ids       := bin: the list's doc ids, strictly increasing
    counts        := bin: per doc id, how many positions it has (>= 1)
    positions     := bin: every document's token positions, document after document,
                     each document's strictly increasing; sum(counts) items
    *_type        := the `array` typecode of the column after it: "B" (u8), "H" (u16),
                     "I" (u32) or "Q" (u64), the smallest that holds its largest value;
                     every column is little-endian

Why arrays: a query's first read of a long list (the most common word is in 70% of a
million rows) costs three `array.frombytes` (C copies) instead of decoding one msgpack
array per document, and a flush writes each list with a few C calls. The files are
larger than delta-coded varints would be; the page cache holds them.

Integrity: opening a segment checks only the file's header (kind and version) and
footer (`check_postings_ends`); a record's CRC and shape are checked when its list is read
(CorruptFile naming the file and the record's offset); `check_postings_file` checks every
record (`verify`, `dump`).

`PostingArrays` is a NamedTuple, not a frozen dataclass: loading an index (a search's
start-up) imports this module, and a NamedTuple's class costs a fraction of a frozen
dataclass's to make.
"""

from __future__ import annotations

import sys
import zlib
from array import array
from collections.abc import Callable, Iterable, Sequence
from itertools import accumulate, pairwise
from typing import Any, NamedTuple

from engine.codec import FILE_KINDS
from engine.codec.framing import (
    FOOTER_SIZE,
    HEADER_SIZE,
    MAX_PAYLOAD_LENGTH,
    RECORD_HEAD,
    DecodeError,
    bin_head,
    decode_footer_at_end,
    decode_header,
    decode_payload,
    decode_sealed_frames,
    decode_whole_record,
    encode_footer,
    encode_header,
    encode_record,
    update_crc,
)
from engine.errors import CorruptFile, StoreError

MAGIC = FILE_KINDS["postings"].magic
LIST_KIND = "postings"
#: `read(offset, length)`: exactly that many bytes of the file (StoreError otherwise).
ReadFunction = Callable[[int, int], bytes]
#: One row's positions in a paired list: a sequence, or a bare int for a single one.
Positions = Sequence[int] | int

#: Unsigned typecodes by size, with the first value each cannot hold.
_TYPECODE_LIMITS = (("B", 1 << 8), ("H", 1 << 16), ("I", 1 << 32), ("Q", 1 << 64))
_TYPECODE_WIDTHS = {"B": 1, "H": 2, "I": 4, "Q": 8}


def smallest_typecode(largest: int) -> str:
    """The smallest unsigned `array` typecode whose items hold `largest`.

    >>> [smallest_typecode(value) for value in (0, 255, 256, 70000, 2**40)]
    ['B', 'B', 'H', 'I', 'Q']
    """
    for typecode, limit in _TYPECODE_LIMITS:
        if largest < limit:
            return typecode
    raise ValueError(f"{largest} does not fit in 64 bits")


def _packed(values: Sequence[int]) -> tuple[str, bytes]:
    """`(typecode, little-endian bytes)` of non-negative ints in the smallest typecode.

    An unsigned `array` of a wider typecode (the index's write buffer keeps its columns
    so) is narrowed by slicing its bytes in C rather than converted item by item: a
    little-endian value's low bytes come first.

    >>> _packed(array("I", [1, 300])) == _packed([1, 300]), _packed(array("Q", [7]))
    (True, ('B', b'\\x07'))
    """
    if _LITTLE_ENDIAN and isinstance(values, array) and values.typecode in _WIDER:
        raw = values.tobytes()
        step = values.itemsize
        if len(values) <= _SHORT_COLUMN:  # `max` over a few items beats slicing bytes
            largest = max(values, default=0)
            typecode = ("B" if largest < 0x100 else "H" if largest < 0x10000
                        else "I" if largest < 0x100000000 else "Q")
        else:
            typecode = _narrowest_typecode(raw, step, len(values))
        width = _TYPECODE_WIDTHS[typecode]
        if width == step:
            return typecode, raw
        if width == 1:
            return typecode, raw[0::step]
        narrowed = bytearray(len(values) * width)
        for byte in range(width):
            narrowed[byte::width] = raw[byte::step]
        return typecode, bytes(narrowed)
    packed = array(smallest_typecode(max(values, default=0)), values)
    if sys.byteorder != "little":
        packed.byteswap()
    return packed.typecode, packed.tobytes()


def _narrowest_typecode(raw: bytes, step: int, count: int) -> str:
    """`smallest_typecode` of the largest of `count` little-endian unsigned items of
    `step` bytes in `raw`, found from the bytes in C instead of by `max` over the items
    (each of which `max` would make an int of): the highest byte of any item that is not
    zero decides the width (`bytes.count` of zeros over that byte of every item). `raw`
    may be a byte view of the array itself (`_packed_view`).

    >>> values = array("I", [1, 300, 7])
    >>> _narrowest_typecode(values.tobytes(), 4, 3) == smallest_typecode(max(values))
    True
    >>> _narrowest_typecode(memoryview(values).cast("B"), 4, 3)
    'H'
    """
    for byte in range(step - 1, 0, -1):
        if bytes(raw[byte::step]).count(0) != count:  # some item has a non-zero byte here
            return _TYPECODE_OF_TOP_BYTE[byte]
    return "B"


#: The smallest typecode holding values whose highest non-zero byte is the index.
_TYPECODE_OF_TOP_BYTE = ("B", "H", "I", "I", "Q", "Q", "Q", "Q")
#: Whether this machine stores an `array`'s items little-endian (`_packed` slices them).
_LITTLE_ENDIAN = sys.byteorder == "little"
#: The longest column whose typecode `_packed` finds by `max` over its items rather than
#: by counting zero bytes (`_narrowest_typecode`), which costs more calls.
_SHORT_COLUMN = 32
#: Unsigned `array` typecodes `_packed` narrows by slicing bytes (4 or 8 bytes an item).
_WIDER = frozenset(typecode for typecode in ("I", "L", "Q") if array(typecode).itemsize in (4, 8))


def _packed_view(values: Sequence[int]) -> tuple[str, bytes | memoryview]:
    """`_packed(values)`, its bytes a view of `values` itself (no copy) when `values` is an
    unsigned `array` already of the smallest typecode (a merged list's columns, as a rule)
    on a little-endian machine; a view holds the array's buffer until it is let go.

    >>> column = array("H", [1, 300])
    >>> typecode, view = _packed_view(column)
    >>> (typecode, bytes(view)) == _packed(column), isinstance(view, memoryview)
    (True, True)
    >>> _packed_view(array("I", [1, 300])) == _packed(array("I", [1, 300]))
    True
    """
    if (_LITTLE_ENDIAN and isinstance(values, array)
            and _TYPECODE_WIDTHS.get(_UNSIGNED.get(values.typecode, "")) == values.itemsize):
        view = memoryview(values).cast("B")
        typecode = _narrowest_typecode(view, values.itemsize, len(values))
        if _TYPECODE_WIDTHS[typecode] == values.itemsize:
            return typecode, view
        view.release()
    return _packed(values)


#: Each unsigned `array` typecode as the file names its width ("L": "I" or "Q", by size).
_UNSIGNED = {"B": "B", "H": "H", "I": "I", "L": "IQ"[array("L").itemsize // 8], "Q": "Q"}


def _packed_one(value: int) -> tuple[str, bytes]:
    """`_packed([value])`, without making an array.

    >>> _packed_one(300) == _packed([300])
    True
    """
    for typecode, limit in _TYPECODE_LIMITS:
        if value < limit:
            return typecode, value.to_bytes(_TYPECODE_WIDTHS[typecode], "little")
    raise ValueError(f"{value} does not fit in 64 bits")


def _unpacked(typecode: Any, data: Any, name: str) -> array:
    if typecode not in ("B", "H", "I", "Q") or not isinstance(data, bytes):
        raise DecodeError(f"posting list column {name} is not a typed byte array")
    values = array(typecode)
    if len(data) % values.itemsize:
        raise DecodeError(f"posting list column {name} has a partial item")
    values.frombytes(data)
    if sys.byteorder != "little":
        values.byteswap()
    return values


class PostingArrays(NamedTuple):
    """One decoded posting list: doc ids, each one's position count, all positions."""

    doc_ids: array
    counts: array
    positions: array

    def pairs(self) -> list[tuple[int, tuple[int, ...]]]:
        """`(doc_id, positions)` per document (the clear shape, for tests and merges).

        >>> decode_posting_value(encode_posting_value([3, 7], [[0, 4], 2])).pairs()
        [(3, (0, 4)), (7, (2,))]
        """
        starts = list(accumulate(self.counts, initial=0))
        values = self.positions
        return [(doc_id, tuple(values[start:end]))
                for doc_id, start, end in zip(self.doc_ids, starts, starts[1:])]


def encode_posting_value(doc_ids: Sequence[int], positions: Sequence[Positions]) -> list[Any]:
    """The msgpack value of one posting list given as parallel columns: the doc ids
    (increasing) and each document's positions (increasing; a bare int is one position).

    >>> encode_posting_value([3, 7], [[0, 4], 2])
    ['postings', 'B', b'\\x03\\x07', 'B', b'\\x02\\x01', 'B', b'\\x00\\x04\\x02']
    """
    if len(doc_ids) == 1:  # most terms of a segment are in one row: no arrays needed
        item = positions[0]
        if item.__class__ is int:
            return [LIST_KIND, *_packed_one(doc_ids[0]), "B", b"\x01", *_packed_one(item)]  # type: ignore[arg-type]
    doc_type, doc_bytes = _packed(doc_ids)
    if int in map(type, positions) and len(set(map(type, positions))) == 1:  # one position each
        position_type, position_bytes = _packed(positions)  # type: ignore[arg-type]
        return [LIST_KIND, doc_type, doc_bytes, "B", b"\x01" * len(positions),
                position_type, position_bytes]
    counts = [1 if item.__class__ is int else len(item) for item in positions]  # type: ignore[arg-type]
    flat: list[int] = []
    for item in positions:
        if item.__class__ is int:
            flat.append(item)  # type: ignore[arg-type]
        else:
            flat.extend(item)  # type: ignore[arg-type]
    count_type, count_bytes = _packed(counts)
    position_type, position_bytes = _packed(flat)
    return [LIST_KIND, doc_type, doc_bytes, count_type, count_bytes, position_type, position_bytes]


def encode_flat_posting_value(doc_ids: Sequence[int], counts: Sequence[int],
                              positions: Sequence[int]) -> list[Any]:
    """`encode_posting_value` of a list given as its three columns (each document's
    position count, then every position, document after document): the same bytes,
    made by a few C calls (a merge joins the columns it read this way).

    >>> encode_flat_posting_value([3, 7], [2, 1], [0, 4, 2]) == encode_posting_value([3, 7], [[0, 4], 2])
    True
    """
    doc_type, doc_bytes = _packed(doc_ids)
    count_type, count_bytes = _packed(counts)
    position_type, position_bytes = _packed(positions)
    return [LIST_KIND, doc_type, doc_bytes, count_type, count_bytes, position_type, position_bytes]


#: The msgpack bytes a posting record's payload starts with: a 7-item array, then the
#: string "postings".
_PAYLOAD_PREFIX = b"\x97\xa8postings"
#: The msgpack bytes of each typecode string (a 1-character str).
_TYPECODE_BYTES = {typecode: b"\xa1" + typecode.encode() for typecode in _TYPECODE_WIDTHS}
#: The payload's middle for a list of one row holding one position: the count column
#: (typecode "B", one byte 1) between the doc id column and the position column.
_ONE_COUNT = b"\xa1B\xc4\x01\x01"


#: `bin_head(length)` of each length below 256.
_SHORT_BIN_HEADS = tuple(bytes((0xC4, length)) for length in range(0x100))


def _column_bytes(values: Sequence[int]) -> bytes:
    """One column of a payload: its typecode's msgpack string, then its packed values as
    a msgpack `bin` (what `encode_payload` makes of `_packed(values)`)."""
    typecode, packed = _packed(values)
    length = len(packed)
    return (_TYPECODE_BYTES[typecode] + (_SHORT_BIN_HEADS[length] if length < 0x100
                                          else bin_head(length)) + packed)


def _one_value_bytes(value: int) -> bytes:
    """`_column_bytes([value])`, without making an array.

    >>> _one_value_bytes(300) == _column_bytes([300])
    True
    """
    typecode, packed = _packed_one(value)
    return _TYPECODE_BYTES[typecode] + bytes((0xC4, len(packed))) + packed


#: `_one_value_bytes(value)` of each value below 256 (a position, as a rule).
_SMALL_VALUE_BYTES = tuple(b"\xa1B\xc4\x01" + bytes((value,)) for value in range(256))
#: How many bytes of records `PostingsFileWriter.add_flat_lists` writes at a time.
_HELD_RECORD_BYTES = 1 << 16
#: The fewest positions of a flat list `PostingsFileWriter.add` writes as pieces
#: (`flat_posting_record_pieces`) rather than as one record's bytes.
_PIECED_POSITIONS = 1 << 14


def encode_flat_posting_record(doc_ids: Sequence[int], counts: Sequence[int],
                               positions: Sequence[int]) -> bytes:
    """The framed record of one posting list given as its three columns: the same bytes
    as `encode_record(encode_flat_posting_value(doc_ids, counts, positions))` (its
    oracle, `tests/codec/test_postings_file.py`), written here byte by byte (the msgpack
    heads of a 7-item array, short strings and `bin`s) instead of through msgpack
    objects: a flush writes one record per term of its segment.

    >>> from engine.codec.framing import encode_record
    >>> encode_flat_posting_record([3, 7], [2, 1], [0, 4, 2]) == encode_record(
    ...     encode_flat_posting_value([3, 7], [2, 1], [0, 4, 2]))
    True
    """
    if len(doc_ids) == 1 and len(positions) == 1:  # most terms of a segment: one row, once
        payload = b"".join((_PAYLOAD_PREFIX, _one_value_bytes(doc_ids[0]), _ONE_COUNT,
                            _one_value_bytes(positions[0])))
    else:
        payload = b"".join((_PAYLOAD_PREFIX, _column_bytes(doc_ids), _column_bytes(counts),
                            _column_bytes(positions)))
    if len(payload) > MAX_PAYLOAD_LENGTH:
        raise DecodeError(f"record payload of {len(payload)} bytes is out of range")
    return RECORD_HEAD.pack(len(payload), zlib.crc32(payload)) + payload


def flat_posting_record_pieces(doc_ids: Sequence[int], counts: Sequence[int],
                               positions: Sequence[int]) -> list[bytes | memoryview]:
    """`encode_flat_posting_record(doc_ids, counts, positions)` as pieces whose join is
    its bytes (its oracle, `tests/codec/test_record_pieces.py`): the record head, then the
    payload's pieces, each column already of its smallest typecode a view of its array
    (`_packed_view`), so a long list is not copied whole to be written.

    >>> pieces = flat_posting_record_pieces(array("I", [3, 7]), [2, 1], array("B", [0, 4, 2]))
    >>> b"".join(pieces) == encode_flat_posting_record([3, 7], [2, 1], [0, 4, 2])
    True
    """
    pieces: list[bytes | memoryview] = [b"", _PAYLOAD_PREFIX]
    for column in (doc_ids, counts, positions):
        typecode, packed = _packed_view(column)
        pieces += (_TYPECODE_BYTES[typecode] + bin_head(len(packed)), packed)
    length = sum(map(len, pieces))
    if length > MAX_PAYLOAD_LENGTH:
        raise DecodeError(f"record payload of {length} bytes is out of range")
    crc = 0
    for piece in pieces:
        crc = zlib.crc32(piece, crc)
    pieces[0] = RECORD_HEAD.pack(length, crc)
    return pieces


def decode_posting_value(value: Any) -> PostingArrays:
    """A record's msgpack value as arrays (DecodeError when it is not a posting list
    record or its columns' sizes are inconsistent; the invariants of the values are
    `check_posting_arrays`'s).

    >>> decode_posting_value([[7, [3, 4], [[0, 4], [2]]]])
    Traceback (most recent call last):
    ...
    engine.codec.framing.DecodeError: record is not a posting list
    """
    if not (isinstance(value, list) and value[:1] == [LIST_KIND]):
        raise DecodeError("record is not a posting list")
    if len(value) != 7:
        raise DecodeError("posting list record does not have 7 items")
    doc_ids = _unpacked(value[1], value[2], "doc_ids")
    counts = _unpacked(value[3], value[4], "counts")
    positions = _unpacked(value[5], value[6], "positions")
    if len(doc_ids) != len(counts) or sum(counts) != len(positions):
        raise DecodeError("posting list columns disagree in length")
    return PostingArrays(doc_ids, counts, positions)


def check_posting_arrays(lists: PostingArrays) -> None:
    """The invariants the query path does not check (DecodeError): doc ids strictly
    increase, every count is at least 1, each document's positions strictly increase.

    >>> check_posting_arrays(decode_posting_value(
    ...     ["postings", "B", b"\\x02\\x01", "B", b"\\x01\\x01", "B", b"\\x00\\x00"]))
    Traceback (most recent call last):
    ...
    engine.codec.framing.DecodeError: doc ids do not increase after 2
    """
    doc_ids = lists.doc_ids
    for earlier, later in pairwise(doc_ids):
        if later <= earlier:
            raise DecodeError(f"doc ids do not increase after {earlier}")
    for doc_id, positions in lists.pairs():
        if not positions:
            raise DecodeError(f"document {doc_id} has no positions")
        if any(later <= earlier for earlier, later in pairwise(positions)):
            raise DecodeError(f"positions of document {doc_id} do not increase")


def encode_postings_file(
    lists: Iterable[tuple[str, Sequence[int], Sequence[Positions]]
                    | tuple[str, Sequence[int], Sequence[int], Sequence[int]]],
) -> tuple[bytes, dict[str, tuple[int, int, int]]]:
    """The whole file, and `{term: (document_frequency, offset, length)}` of each record.

    `lists` is every `(term, doc_ids, positions)` in term order (see `encode_posting_value`),
    or `(term, doc_ids, counts, positions)` given flat (`encode_flat_posting_record`).

    >>> data, slots = encode_postings_file([("a", [0], [1]), ("b", [0, 2], [0, [5, 6]])])
    >>> read = lambda offset, length: data[offset: offset + length]
    >>> slots["b"][0], read_posting_record(read, *slots["b"][1:], "x").pairs()
    (2, [(0, (0,)), (2, (5, 6))])
    """
    parts = [encode_header(MAGIC)]
    offset = HEADER_SIZE
    slots: dict[str, tuple[int, int, int]] = {}
    for term, doc_ids, *columns in lists:
        record = encode_list_record(doc_ids, *columns)
        slots[term] = (len(doc_ids), offset, len(record))
        parts.append(record)
        offset += len(record)
    records = b"".join(parts[1:])
    return parts[0] + records + encode_footer(len(slots), update_crc(0, records)), slots


def encode_list_record(doc_ids: Sequence[int], *columns: Sequence[Any]) -> bytes:
    """The framed record of one list: `columns` is `(positions,)` (`encode_posting_value`)
    or `(counts, positions)` given flat (`encode_flat_posting_record`)."""
    if len(columns) == 1:
        return encode_record(encode_posting_value(doc_ids, columns[0]))
    return encode_flat_posting_record(doc_ids, *columns)


class PostingsFileWriter:
    """A postings file written record by record through `write` (a merge writes each
    term's list as it is made, never the whole file): the bytes `encode_postings_file`
    returns for the same lists (its oracle).

    >>> lists = [("a", [0], [1]), ("b", [0, 2], [1, 2], [0, 5, 6])]
    >>> pieces = []
    >>> writer = PostingsFileWriter(pieces.append)
    >>> slots = {term: writer.add(doc_ids, *columns) for term, doc_ids, *columns in lists}
    >>> writer.finish()
    >>> (b"".join(pieces), slots) == encode_postings_file(lists)
    True
    """

    def __init__(self, write: Callable[[bytes], None]) -> None:
        self._write = write
        self._offset = HEADER_SIZE
        self._crc = 0
        self._count = 0
        write(encode_header(MAGIC))

    def add(self, doc_ids: Sequence[int], *columns: Sequence[Any]) -> tuple[int, int, int]:
        """Write the next term's list (terms in order; `columns` as `encode_list_record`
        takes them); return its `(document_frequency, offset, length)`."""
        if len(columns) == 2 and len(columns[1]) >= _PIECED_POSITIONS:
            return self._add_pieces(len(doc_ids), flat_posting_record_pieces(doc_ids, *columns))
        record = encode_list_record(doc_ids, *columns)
        self._write(record)
        self._crc = update_crc(self._crc, record)
        self._count += 1
        slot = (len(doc_ids), self._offset, len(record))
        self._offset += len(record)
        return slot

    def _add_pieces(self, document_frequency: int, pieces: list[bytes | memoryview]
                    ) -> tuple[int, int, int]:
        """`add` of a long list's record as pieces (`flat_posting_record_pieces`), each
        let go once written `_HELD_RECORD_BYTES` at a time (copies: `write` may keep them)."""
        length = 0
        while pieces:
            piece = memoryview(pieces.pop(0))
            self._crc = zlib.crc32(piece, self._crc)
            for start in range(0, len(piece), _HELD_RECORD_BYTES):
                self._write(bytes(piece[start: start + _HELD_RECORD_BYTES]))
            length += len(piece)
            piece.release()
        self._count += 1
        slot = (document_frequency, self._offset, length)
        self._offset += length
        return slot

    def add_flat_lists(self, lists: Iterable[tuple[str, Sequence[int], Sequence[int], Sequence[int]]]
                       ) -> list[tuple[str, int, int, int]]:
        """`add` of every `(term, doc_ids, counts, positions)` of `lists` (terms in order,
        the columns flat, as a write buffer's flush hands them); return each term's
        `(term, document_frequency, offset, length)`. The same bytes as `add` one list
        at a time (its oracle, `tests/index/test_flush_records.py`): the record of each
        list is made in one loop (`encode_flat_posting_record`'s steps, a list of one row
        and one position, most of a segment's, without a call), and the records are
        written and checksummed `_HELD_RECORD_BYTES` at a time rather than one by one."""
        entries: list[tuple[str, int, int, int]] = []
        held: list[bytes] = []
        held_bytes = 0
        offset = self._offset
        head, crc32, column, one = RECORD_HEAD.pack, zlib.crc32, _column_bytes, _one_value_bytes
        small, prefix, one_count = _SMALL_VALUE_BYTES, _PAYLOAD_PREFIX, _ONE_COUNT
        wide = _TYPECODE_BYTES["H"] + b"\xc4\x02"  # a 16-bit value's head
        for term, doc_ids, counts, positions in lists:
            if len(doc_ids) == 1 and len(positions) == 1:
                doc_id, position = doc_ids[0], positions[0]
                payload = b"".join((prefix, small[doc_id] if 0 <= doc_id < 256
                                    else wide + doc_id.to_bytes(2, "little") if 0 < doc_id < 65536
                                    else one(doc_id), one_count,
                                    small[position] if 0 <= position < 256 else one(position)))
            else:
                payload = b"".join((prefix, column(doc_ids), column(counts), column(positions)))
                if len(payload) > MAX_PAYLOAD_LENGTH:
                    raise DecodeError(f"record payload of {len(payload)} bytes is out of range")
            record = head(len(payload), crc32(payload)) + payload
            entries.append((term, len(doc_ids), offset, len(record)))
            offset += len(record)
            held.append(record)
            held_bytes += len(record)
            if held_bytes >= _HELD_RECORD_BYTES:
                self._write_held(held, offset)
                held, held_bytes = [], 0
        if held:
            self._write_held(held, offset)
        return entries

    def _write_held(self, records: list[bytes], end: int) -> None:
        """Write `records` (the file's next ones, ending at offset `end`) at once."""
        chunk = b"".join(records)
        self._write(chunk)
        self._crc = update_crc(self._crc, chunk)
        self._count += len(records)
        self._offset = end

    def finish(self) -> None:
        """Seal the file (its footer)."""
        self._write(encode_footer(self._count, self._crc))


def read_posting_record(read: ReadFunction, offset: int, length: int, location: str) -> PostingArrays:
    """The posting list whose record is the `length` bytes at `offset` (CorruptFile,
    naming `location` and `offset`, on any damage)."""
    try:
        return decode_posting_value(decode_payload(decode_whole_record(read(offset, length))))
    except (DecodeError, StoreError) as error:
        if isinstance(error, CorruptFile):
            raise
        raise CorruptFile(location, offset, str(error)) from None


def check_postings_ends(read: ReadFunction, size: int, location: str) -> int:
    """Check a postings file's header and footer only; return its list count.

    What opening a segment checks (the index is read lazily, not loaded whole).
    """
    if size < HEADER_SIZE + FOOTER_SIZE:
        raise CorruptFile(location, 0, "postings file is too short")
    if decode_header(read(0, HEADER_SIZE), location).magic != MAGIC:
        raise CorruptFile(location, 0, "not a postings file")
    footer = decode_footer_at_end(read(size - FOOTER_SIZE, FOOTER_SIZE))
    if footer is None:
        raise CorruptFile(location, size - FOOTER_SIZE, "postings file has no intact footer")
    return footer.record_count


def check_postings_file(data: bytes, location: str, *, decode_lists: bool = False) -> int:
    """Check a whole postings file; return the list count.

    Always: the header, the footer, and every record's CRC (any damaged byte is found and
    named). With `decode_lists`, also every list's shape and invariants
    (`check_posting_arrays`).
    """
    frames = decode_sealed_frames(data, location, MAGIC)
    if decode_lists:
        for frame in frames:
            try:
                check_posting_arrays(decode_posting_value(decode_payload(frame.payload)))
            except DecodeError as error:
                raise CorruptFile(location, frame.offset, str(error)) from None
    return len(frames)


def describe_payload(value: Any) -> dict[str, Any]:
    """A readable dict of one posting-list record, for `session-search dump`."""
    pairs = decode_posting_value(value).pairs()
    return {
        "kind": "postings",
        "documents": len(pairs),
        "postings": [[doc_id, list(positions)] for doc_id, positions in pairs],
    }
