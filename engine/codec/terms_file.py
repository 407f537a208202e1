"""The terms file of an index segment: its row table and its term dictionary, read lazily.

Owns: the bytes of `index/segment-NNNNNN.terms` (format version 2, the only one read),
and reading them by offset. Must not touch: the columns record's bytes
(`engine.codec.columns_record`, split out of this module, whose `_from_bytes` and
`_to_bytes` the table record's offsets use too), files (a reader is handed a
`read(offset, length)` function), posting lists (they live in the segment's postings
file; this file only says where), index types (rows are plain values here).

Byte grammar (a `framing` file of kind `terms`)::

    terms file   := header(magic "SS.TERMS", version 2) table_record columns_record
                    text_record* term_record* footer
    table_record := ["table", table]
    table        := map with these keys, in this order:
      first_doc_id  int   the table covers doc ids first_doc_id .. first_doc_id + span - 1
      span          int   (a "slot" is one doc id of that range, whether it has a row or not;
                          the first and last slots always hold rows: a writer spans the
                          rows it writes, and a reader bounds an unread table by them)
      group_table   [[session_id, role], ...]   distinct pairs, in order of first use;
                    or instead, as columns (written when no session id holds a NUL and
                    there are at most 256 roles; a group table is then the zip of):
      group_sessions str             the pairs' session ids joined with NUL
      group_roles   bin[groups]      u8 per pair: index into role_names
      role_names    [role, ...]
      odd_timestamps [[slot, value], ...]  timestamps a double does not hold: nil, text,
                                     NaN, an int beyond 2**53 (the FTS5 column is untyped)
      text_offsets  bin[8 * (k + 1)] u64 per text record: where it starts in the file,
                                     then where the term records start
      term_offsets  bin[8 * (t + 1)] u64 per term record: where it starts, then where
                                     the footer starts
      term_firsts   [term, ...]      the first term of each term record
      term_count    int              entries in all term records
    columns_record := ["columns", bin]   the per-slot columns, concatenated, in this
                    order (every one little-endian, COLUMN_BYTES_PER_SLOT bytes a slot):
      present       [span] u8        1 where the slot holds a row, 0 where none (a row
                                     deleted before the segment was written)
      flags         [span] u8        bit 0: the text holds a non-ASCII character;
                                     bits 1-2: the timestamp's kind, 0 = a float (in
                                     timestamps), 1 = an int (in timestamps, exact),
                                     2 = anything else (in odd_timestamps)
      lengths       [span] u32       the row's token count (0: no row)
      groups        [span] u32       index into group_table
      seqs          [span] i64       the transcript event of the row
      timestamps    [span] f64       (see flags)
                    The bin always has the 32-bit msgpack header (0xc6), so its bytes
                    start at byte COLUMNS_PREFIX_SIZE of the record's payload, and the
                    record ends where text record 0 starts.
    text_record  := ["texts", [message_ids, texts]]   the slots k * ROWS_PER_TEXT_RECORD
                    .. (k + 1) * ROWS_PER_TEXT_RECORD - 1 (fewer in the last record); a
                    slot without a row has message id nil and text ""
    term_record  := ["terms", [entry, ...]]   at most TERMS_PER_RECORD entries
    entry        := [term, document_frequency, offset, length]
                    terms strictly increase across all records; offset/length is the
                    byte range of the term's record in the postings file; entries are
                    packed in msgpack's shortest form, which a probe looks for (`entry_start`)

Every `bin` column is little-endian. The offsets are absolute file offsets: they are
fixed-width, so the table record's size does not depend on their values, and the encoder
writes the table once with zeros to learn that size, then once more with the real ones.

Why this shape (a store must reopen fast and small at a million rows): opening a segment
reads the header, the table record (`TableHead`) and the footer; the columns record is
read the first time the table's columns are asked for (`TermsFileReader.table`: a
search reads only the columns of the segments whose rows it reads), and each
typed per-slot column is a view of the bytes read, cast to its type (no copy: a copy
into an `array` per column cost as much as the read); a row costs 26 bytes and no Python
object. The columns have a record of their own rather than `bin` values inside the
table's map because msgpack would copy each one out of the map, a large share of the
time opening a large index took. Message ids and texts (most of the file) are read one
record at a time when a returned hit or a CJK retry needs them, and the term dictionary
one record of `TERMS_PER_RECORD` terms at a time, found by bisecting `term_firsts`
(decoded with tuples for arrays and checked a column at a time). The group table is
checked at open and its pairs made on first use (`engine.codec.group_table`). Slots
rather than packed rows make a doc id's column index one subtraction, at the price of a
few bytes per row deleted before its segment was written.

Integrity: opening checks the header (kind and version), the footer (record count and
placement must agree with the table's offsets) and the table record's CRC; the columns
record's CRC and size are checked when it is first read. Every other record's CRC is
checked when it is read, so damage raises `CorruptFile` with the file and offset then;
`check_terms_file` walks and checks every record and that every row's group is in the
group table (used by `verify` and `dump`).

`RowTable` is a NamedTuple, not a frozen dataclass: loading an index (a search's
start-up) imports this module, and a NamedTuple's class costs far less to make.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from itertools import islice
from operator import itemgetter, lt
from typing import Any, ClassVar, NamedTuple

from engine.codec import FILE_KINDS
from engine.codec.columns_record import (
    COLUMN_BYTES_PER_SLOT,
    COLUMNS_KIND,
    COLUMNS_PREFIX_SIZE,
    _from_bytes,
    _to_bytes,
    columns_of,
    encode_columns_record,
)
from engine.codec.framing import (
    FOOTER_SIZE,
    HEADER_SIZE,
    RECORD_HEAD,
    RECORD_HEAD_SIZE,
    DecodeError,
    decode_footer_at_end,
    decode_header,
    decode_payload,
    decode_sealed_frames,
    decode_whole_record,
    encode_footer,
    encode_header,
    encode_payload,
    encode_record,
    update_crc,
)
from engine.codec.group_table import GroupTable, StoredGroups
from engine.codec.group_table import decode_group_table as _decode_group_table
from engine.errors import CorruptFile, StoreError, UnsupportedVersion

MAGIC = FILE_KINDS["terms"].magic
TABLE_KIND = "table"
TEXTS_KIND = "texts"
TERMS_KIND = "terms"
ROWS_PER_TEXT_RECORD = 64
TERMS_PER_RECORD = 512
NON_ASCII_FLAG = 1
TIMESTAMP_SHIFT = 1
FLOAT_TIMESTAMP, INT_TIMESTAMP, ODD_TIMESTAMP = 0, 1, 2
#: Every int of at most this magnitude is exactly a double.
EXACT_INT = 2**53

#: `(doc_id, session_id, message_id, role, timestamp, length, seq, text)`, doc ids
#: increasing: what a segment writes for each row.
DocumentRow = tuple[int, str, str, str, Any, int, int, str]
#: `(term, document_frequency, offset, length)`
TermEntry = tuple[str, int, int, int]
#: `read(offset, length)`: exactly that many bytes of the file (StoreError otherwise).
ReadFunction = Callable[[int, int], bytes]
Column = array | memoryview  # a typed per-slot column: an array, or a view cast to its type


def timestamp_kind(value: object) -> int:
    """How a row's timestamp is stored: FLOAT_TIMESTAMP, INT_TIMESTAMP or ODD_TIMESTAMP.

    >>> [timestamp_kind(value) for value in (2.5, 7, None, "x", float("nan"), 2**60, True)]
    [0, 1, 2, 2, 2, 2, 2]
    """
    if value.__class__ is float:
        return ODD_TIMESTAMP if math.isnan(value) else FLOAT_TIMESTAMP  # type: ignore[arg-type]
    if value.__class__ is int and -EXACT_INT <= value <= EXACT_INT:  # type: ignore[operator]
        return INT_TIMESTAMP
    return ODD_TIMESTAMP


class RowTable(NamedTuple):
    """The decoded table record: per-slot columns (see the grammar) and where the rest is.

    Slot `i` is doc id `first_doc_id + i`; `present[i]` says whether it holds a row.
    The typed columns are arrays when built, typed views of the bytes when read.
    """

    first_doc_id: int
    span: int
    present: bytes
    lengths: Column
    seqs: Column
    groups: Column
    stored_groups: StoredGroups
    timestamps: Column
    flags: bytes
    odd_timestamps: dict[int, Any]
    text_offsets: array
    term_offsets: array
    term_firsts: tuple[str, ...]
    term_count: int

    @property
    def group_table(self) -> GroupTable:
        """The distinct `(session_id, role)` pairs, in order (made on first use:
        `engine.codec.group_table`)."""
        return self.stored_groups.pairs()

    def timestamp(self, slot: int) -> Any:
        """The timestamp of the row in `slot`, with the type it was written with.

        >>> table = build_table([(4, "w", "m", "user", 3, 1, 0, "x")], [])[0]
        >>> table.timestamp(0), table.timestamp(0).__class__.__name__
        (3, 'int')
        """
        kind = (self.flags[slot] >> TIMESTAMP_SHIFT) & 3
        if kind == FLOAT_TIMESTAMP:
            return self.timestamps[slot]
        if kind == INT_TIMESTAMP:
            return int(self.timestamps[slot])
        return self.odd_timestamps[slot]


class TableHead(NamedTuple):
    """The table record without the per-slot columns: what opening a terms file reads
    (`TermsFileReader.head`; the columns record is read when `table` is first asked for)."""

    first_doc_id: int
    span: int
    stored_groups: StoredGroups
    odd_timestamps: dict[int, Any]
    text_offsets: array
    term_offsets: array
    term_firsts: tuple[str, ...]
    term_count: int

    @property
    def group_table(self) -> GroupTable:
        """`RowTable.group_table`."""
        return self.stored_groups.pairs()

    def with_columns(self, columns: dict[str, Any]) -> RowTable:
        """The whole table: this head and the per-slot `columns` (`columns_of`)."""
        return RowTable(self.first_doc_id, self.span, columns["present"], columns["lengths"],
                        columns["seqs"], columns["groups"], self.stored_groups,
                        columns["timestamps"], columns["flags"], self.odd_timestamps,
                        self.text_offsets, self.term_offsets, self.term_firsts,
                        self.term_count)


def build_table(
    rows: Sequence[DocumentRow], entries: Sequence[TermEntry],
    group_prefix: Sequence[tuple[str, str]] = (),
) -> tuple[RowTable, list[list[Any]]]:
    """The table of `rows` (doc ids increasing, non-empty) with zero offsets, and the
    `[message_ids, texts]` body of each text record. The group table starts with
    `group_prefix` (distinct pairs), so rows keep the group numbers an earlier
    segment gave their pairs."""
    first = rows[0][0]
    span = rows[-1][0] - first + 1
    present = bytearray(span)
    lengths = array("I", bytes(4 * span))
    seqs = array("q", bytes(8 * span))
    groups = array("I", bytes(4 * span))
    timestamps = array("d", bytes(8 * span))
    flags = bytearray(span)
    odd: dict[int, Any] = {}
    group_ids: dict[tuple[str, str], int] = {pair: number for number, pair in enumerate(group_prefix)}
    message_ids: list[str | None] = [None] * span
    texts = [""] * span
    for doc_id, session_id, message_id, role, timestamp, length, seq, text in rows:
        slot = doc_id - first
        present[slot] = 1
        lengths[slot] = length
        seqs[slot] = seq
        groups[slot] = group_ids.setdefault((session_id, role), len(group_ids))
        kind = timestamp_kind(timestamp)
        if kind == ODD_TIMESTAMP:
            odd[slot] = timestamp
        else:
            timestamps[slot] = timestamp
        flags[slot] = (kind << TIMESTAMP_SHIFT) | (0 if text.isascii() else NON_ASCII_FLAG)
        message_ids[slot] = message_id
        texts[slot] = text
    bodies = [
        [message_ids[begin: begin + ROWS_PER_TEXT_RECORD], texts[begin: begin + ROWS_PER_TEXT_RECORD]]
        for begin in range(0, span, ROWS_PER_TEXT_RECORD)
    ]
    term_records = -(-len(entries) // TERMS_PER_RECORD)
    table = RowTable(
        first, span, bytes(present), lengths, seqs, groups,
        StoredGroups.of_pairs(tuple(group_ids)), timestamps,
        bytes(flags), odd, array("Q", bytes(8 * (len(bodies) + 1))),
        array("Q", bytes(8 * (term_records + 1))),
        tuple(entries[begin][0] for begin in range(0, len(entries), TERMS_PER_RECORD)),
        len(entries),
    )
    return table, bodies


def _table_value(table: RowTable) -> list[Any]:
    return [TABLE_KIND, {
        "first_doc_id": table.first_doc_id,
        "span": table.span,
        **_group_table_value(table.group_table),
        "odd_timestamps": [[slot, value] for slot, value in sorted(table.odd_timestamps.items())],
        "text_offsets": _to_bytes(table.text_offsets),
        "term_offsets": _to_bytes(table.term_offsets),
        "term_firsts": list(table.term_firsts),
        "term_count": table.term_count,
    }]


def _group_table_value(group_table: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """The group table as columns (one string and one byte a pair, much faster to decode
    than a list of pairs), or as pairs when columns cannot hold it.

    >>> _group_table_value([("w1", "user"), ("w1", "assistant"), ("w2", "user")])
    {'group_sessions': 'w1\\x00w1\\x00w2', 'group_roles': b'\\x00\\x01\\x00', 'role_names': ['user', 'assistant']}
    >>> _group_table_value([("a\\x00b", "user")])
    {'group_table': [['a\\x00b', 'user']]}
    """
    roles: dict[str, int] = {}
    numbers = [roles.setdefault(role, len(roles)) for _session_id, role in group_table]
    if len(roles) > 256 or any("\x00" in session_id for session_id, _role in group_table):
        return {"group_table": [list(pair) for pair in group_table]}
    return {"group_sessions": "\x00".join(session_id for session_id, _role in group_table),
            "group_roles": bytes(numbers), "role_names": list(roles)}


def encode_table_record(table: RowTable) -> bytes:
    """The framed table record of `table` (its offsets as they stand)."""
    return encode_record(_table_value(table))


def encode_text_record(body: list[list[Any]]) -> bytes:
    """The framed text record of `[message_ids, texts]`."""
    return encode_record([TEXTS_KIND, body])


def encode_term_record(entries: Iterable[Sequence[Any]]) -> bytes:
    """The framed term record of `entries` (at most `TERMS_PER_RECORD`, in order)."""
    return encode_record([TERMS_KIND, [list(entry) for entry in entries]])


def encode_terms_file(
    rows: Sequence[DocumentRow], terms: Iterable[TermEntry],
    group_prefix: Sequence[tuple[str, str]] = (),
) -> bytes:
    """The whole terms file of `rows` (doc ids increasing, at least one) and `terms`;
    `group_prefix` starts the group table (see `build_table`).

    >>> rows = [(4, "w", "m1", "user", 1.5, 2, 0, "hi there"), (6, "w", "m2", "user", None, 1, 1, "é")]
    >>> data = encode_terms_file(rows, [("hi", 1, 16, 20), ("there", 1, 36, 20)])
    >>> reader = open_terms_file(lambda offset, length: data[offset: offset + length], len(data), "t")
    >>> reader.table.first_doc_id, reader.table.span, reader.table.present, reader.table.timestamp(2)
    (4, 3, b'\\x01\\x00\\x01', None)
    >>> reader.text_record(0), reader.term_record(0)[1]
    ([['m1', None, 'm2'], ['hi there', '', 'é']], ('there', 1, 36, 20))
    """
    entries = [tuple(entry) for entry in terms]
    table, bodies = build_table(rows, entries, group_prefix)  # type: ignore[arg-type]
    text_records = [encode_text_record(body) for body in bodies]
    term_records = [encode_term_record(entries[begin: begin + TERMS_PER_RECORD])
                    for begin in range(0, len(entries), TERMS_PER_RECORD)]
    columns_record = encode_columns_record(table)
    table_size = len(encode_table_record(table))
    position = HEADER_SIZE + table_size + len(columns_record)
    for offsets, records in ((table.text_offsets, text_records), (table.term_offsets, term_records)):
        for number, record in enumerate(records):
            offsets[number] = position
            position += len(record)
        offsets[len(records)] = position
    table_record = encode_table_record(table)
    assert len(table_record) == table_size, "fixed-width offsets keep the table's size"
    records = [table_record, columns_record, *text_records, *term_records]
    crc = 0
    for record in records:
        crc = update_crc(crc, record)
    return encode_header(MAGIC) + b"".join(records) + encode_footer(len(records), crc)


def table_span(body: Any) -> tuple[int, int]:
    """`(first_doc_id, span)` of a table record's map (DecodeError when unusable)."""
    if not isinstance(body, dict):
        raise DecodeError("table is not a map")
    first, span = body.get("first_doc_id"), body.get("span")
    if not (isinstance(first, int) and isinstance(span, int) and first >= 0 and span > 0):
        raise DecodeError("table has a bad first_doc_id or span")
    return first, span


def _decode_head(body: Any, known_groups: StoredGroups | None = None) -> TableHead:
    """A table record's map as a `TableHead` (DecodeError on any inconsistency);
    `known_groups` as in `_decode_group_table`."""
    first, span = table_span(body)
    try:
        group_table = _decode_group_table(body, known_groups)
        odd = {slot: value for slot, value in body["odd_timestamps"]}
        text_records = -(-span // ROWS_PER_TEXT_RECORD)
        text_offsets = _from_bytes("Q", body["text_offsets"], text_records + 1, "text_offsets")
        term_firsts = tuple(body["term_firsts"])
        term_offsets = _from_bytes("Q", body["term_offsets"], len(term_firsts) + 1, "term_offsets")
        term_count = body["term_count"]
    except (KeyError, TypeError, ValueError) as error:
        raise DecodeError(f"table record is malformed: {error!r}") from None
    if text_offsets[-1] != term_offsets[0]:
        raise DecodeError("term records do not follow the text records")
    return TableHead(first, span, group_table, odd, text_offsets, term_offsets, term_firsts,
                     term_count)


class TermsFileReader:
    """An opened terms file: its table's head in memory (`head`), its columns read when
    `table` is first asked for, text and term records read on demand.

    `read(offset, length)` returns bytes of the file; `size` is its length. CorruptFile
    (naming `location` and the offset) on damage found at open or in a record read later
    (the columns record: at the first read of `table`, every read until it is intact);
    UnsupportedVersion (naming `location`) at open when the header has another version.
    """

    #: False: read and check the columns record at open (the clear path, the tests' oracle).
    lazy_columns: ClassVar[bool] = True

    def __init__(self, read: ReadFunction, size: int, location: str,
                 known_groups: StoredGroups | None = None) -> None:
        self._read = read
        self.location = location
        if size < HEADER_SIZE + RECORD_HEAD_SIZE + FOOTER_SIZE:
            raise CorruptFile(location, 0, f"terms file of {size} bytes is too short")
        try:
            head = read(0, HEADER_SIZE + RECORD_HEAD_SIZE)
            if decode_header(head, location).magic != MAGIC:
                raise CorruptFile(location, 0, "not a terms file")
            length = RECORD_HEAD.unpack_from(head, HEADER_SIZE)[0]
            if HEADER_SIZE + RECORD_HEAD_SIZE + length + FOOTER_SIZE > size:
                raise CorruptFile(location, HEADER_SIZE, "table record runs past the end")
            value = self._record_at(HEADER_SIZE, RECORD_HEAD_SIZE + length)
            if not (isinstance(value, list) and len(value) == 2 and value[0] == TABLE_KIND):
                raise CorruptFile(location, HEADER_SIZE, "first record is not the row table")
            self._columns_where = (HEADER_SIZE + RECORD_HEAD_SIZE + length, size)
            try:
                self.head = table = _decode_head(value[1], known_groups)
            except DecodeError as error:
                raise CorruptFile(location, HEADER_SIZE, str(error)) from None
            footer = decode_footer_at_end(read(size - FOOTER_SIZE, FOOTER_SIZE))
        except StoreError as error:
            if isinstance(error, (CorruptFile, UnsupportedVersion)):
                raise
            raise CorruptFile(location, 0, str(error)) from None  # the file is too short
        columns_at = self._columns_where[0]
        records = 2 + len(table.text_offsets) - 1 + len(table.term_offsets) - 1
        if table.text_offsets[0] != columns_at + RECORD_HEAD_SIZE + COLUMNS_PREFIX_SIZE \
                + COLUMN_BYTES_PER_SLOT * table.span:
            raise CorruptFile(location, columns_at, "text records do not follow the columns")
        if footer is None:
            raise CorruptFile(location, size - FOOTER_SIZE, "terms file has no intact footer")
        if footer.record_count != records or table.term_offsets[-1] != size - FOOTER_SIZE:
            raise CorruptFile(location, size - FOOTER_SIZE,
                              "footer does not agree with the table's record offsets")
        if not self.lazy_columns:
            self.table  # noqa: B018 (read now)

    def __getattr__(self, name: str) -> Any:
        """`table` until it is first read: the head and the columns record, read and
        checked now (then kept as an attribute, which later reads find without a call)."""
        if name != "table":
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        offset, size = self._columns_where
        span = self.head.span
        length = RECORD_HEAD_SIZE + COLUMNS_PREFIX_SIZE + COLUMN_BYTES_PER_SLOT * span
        if offset + length + FOOTER_SIZE > size:
            raise CorruptFile(self.location, offset, "columns record runs past the end")
        try:
            columns = columns_of(decode_whole_record(self._read(offset, length)), span)
        except CorruptFile:
            raise
        except (DecodeError, StoreError) as error:
            raise CorruptFile(self.location, offset, str(error)) from None
        table = self.table = self.head.with_columns(columns)
        return table

    def _record_at(self, offset: int, length: int, *, use_list: bool = True) -> Any:
        """The msgpack value of the framed record at `offset` (`length` bytes framed;
        arrays as tuples when not `use_list`)."""
        try:
            return decode_payload(decode_whole_record(self._read(offset, length)),
                                  use_list=use_list)
        except DecodeError as error:
            raise CorruptFile(self.location, offset, str(error)) from None
        except StoreError as error:
            raise CorruptFile(self.location, offset, str(error)) from None

    def text_record(self, number: int) -> list[list[Any]]:
        """`[message_ids, texts]` of slots `number * ROWS_PER_TEXT_RECORD ..`."""
        offsets = self.head.text_offsets
        offset = offsets[number]
        value = self._record_at(offset, offsets[number + 1] - offset)
        expected = min(ROWS_PER_TEXT_RECORD, self.head.span - number * ROWS_PER_TEXT_RECORD)
        if not (isinstance(value, list) and len(value) == 2 and value[0] == TEXTS_KIND
                and isinstance(value[1], list) and len(value[1]) == 2
                and all(isinstance(column, list) and len(column) == expected
                        for column in value[1])
                and all(isinstance(text, str) for text in value[1][1])):
            raise CorruptFile(self.location, offset, f"texts record {number} is not "
                              f"{expected} message ids and texts")
        return value[1]

    def term_record(self, number: int) -> list[TermEntry]:
        """The entries of term record `number`, as tuples."""
        return self.term_record_columns(number)[1]

    def term_record_columns(self, number: int) -> tuple[list[str], list[TermEntry]]:
        """Term record `number`'s terms (increasing) and its entries, as tuples."""
        return self._term_columns(number, *self._term_record_bytes(number))

    def term_record_if_held(self, number: int, term: str) -> tuple[list[str], list] | None:
        """`term_record_columns(number)`, or None, the record not decoded nor its entries
        checked, when its bytes (CRC-checked first) lack `entry_start(term)`."""
        offset, data = self._term_record_bytes(number)
        first = self.head.term_firsts[number]
        held = term == first or data.find(entry_start(term), RECORD_HEAD_SIZE) >= 0
        return self._term_columns(number, offset, data) if held else None

    def _term_record_bytes(self, number: int) -> tuple[int, bytes]:
        """Where term record `number` starts, and its framed bytes, CRC-checked."""
        offset, end = self.head.term_offsets[number: number + 2]
        try:
            data = self._read(offset, end - offset)
            decode_whole_record(data)
        except (DecodeError, StoreError) as error:
            raise CorruptFile(self.location, offset, str(error)) from None
        return offset, data if isinstance(data, bytes) else bytes(data)

    def _term_columns(self, number: int, offset: int,
                      data: bytes) -> tuple[list[str], list[TermEntry]]:
        """Term record `number`'s columns from its CRC-checked bytes `data` (at `offset`)."""
        try:
            value = decode_payload(memoryview(data)[RECORD_HEAD_SIZE:], use_list=False)
        except DecodeError as error:
            raise CorruptFile(self.location, offset, str(error)) from None
        try:
            if not (isinstance(value, tuple) and len(value) == 2 and value[0] == TERMS_KIND
                    and isinstance(value[1], tuple)):
                raise DecodeError(f"record {number} of the term dictionary is not a terms record")
            # The entries come as tuples; checked a column at a time in C (`map`).
            entries: list[TermEntry] = list(value[1])
            if set(map(type, entries)) - {tuple} or set(map(len, entries)) - {4}:
                raise DecodeError(f"an entry of term record {number} is not 4 values")
            terms = list(map(itemgetter(0), entries))
            if not entries or terms[0] != self.head.term_firsts[number]:
                raise DecodeError(f"term record {number} does not start with its listed first term")
            if set(map(type, terms)) - {str} or not all(map(lt, terms, islice(terms, 1, None))):
                raise DecodeError(f"terms of record {number} are not strictly increasing strings")
        except (DecodeError, TypeError, ValueError) as error:
            raise CorruptFile(self.location, offset, str(error)) from None
        return terms, entries

    def term_record_of(self, term: str) -> int:
        """The number of the only term record that can hold `term` (-1: none can)."""
        return bisect_right(self.head.term_firsts, term) - 1


def entry_start(term: str) -> bytes:
    """The bytes an entry of `term` starts with in a term record (a 4-item array's head,
    the term packed in msgpack's shortest form, as the writer's packer writes it).

    >>> entry_start("quokka")
    b'\\x94\\xa6quokka'
    """
    return b"\x94" + encode_payload(term)


def open_terms_file(read: ReadFunction, size: int, location: str,
                    known_groups: StoredGroups | None = None) -> TermsFileReader:
    """Open the terms file of `size` bytes read through `read` (CorruptFile names any
    damage at open; UnsupportedVersion another version). `known_groups`, the previous
    segment's group table, is linked where it starts this one's (`StoredGroups`)."""
    return TermsFileReader(read, size, location, known_groups)


def check_terms_file(data: bytes, location: str) -> int:
    """Check a whole terms file (every record's CRC and shape); return its row count."""
    decode_sealed_frames(data, location, MAGIC)
    reader = open_terms_file(lambda offset, length: data[offset: offset + length], len(data),
                             location)
    table = reader.table
    if table.groups and max(table.groups) >= len(table.group_table):
        raise CorruptFile(location, HEADER_SIZE, "a row names a group beyond the group table")
    for number in range(len(reader.table.text_offsets) - 1):
        reader.text_record(number)
    for number in range(len(reader.table.term_offsets) - 1):
        reader.term_record(number)
    return sum(reader.table.present)


def describe_payload(value: Any) -> dict[str, Any]:
    """A readable dict of one terms-file record, for `session-search dump`."""
    kind, body = value
    if kind == TABLE_KIND:
        first, span = table_span(body)
        return {"kind": kind, "first_doc_id": first, "span": span,
                "groups": _decode_group_table(body).size,
                "odd_timestamps": len(body["odd_timestamps"]),
                "text_records": len(body["text_offsets"]) // 8 - 1,
                "term_records": len(body["term_firsts"]), "terms": body["term_count"]}
    if kind == COLUMNS_KIND:
        span = len(body) // COLUMN_BYTES_PER_SLOT
        return {"kind": kind, "slots": span, "rows": sum(body[:span]),
                "non_ascii_rows": sum(flag & NON_ASCII_FLAG for flag in body[span: 2 * span])}
    if kind == TEXTS_KIND:
        return {"kind": kind, "message_ids": list(body[0]), "texts": list(body[1])}
    if kind == TERMS_KIND:
        return {"kind": kind, "entries": [list(entry) for entry in body]}
    raise DecodeError(f"unknown terms-file record {kind!r}")
