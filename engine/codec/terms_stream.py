"""A terms file written piece by piece: the merge of index segments, never held whole.

Owns: making the terms file (`engine.codec.terms_file`'s grammar) of rows taken from
other terms files, a text record and a term record at a time: the merged row table
(`merged_table`, from the source tables' columns alone), the text records re-cut from
the sources' (`merged_text_bodies`, one source record read at a time), the term records
kept apart on a scratch file while the postings file is written (`TermRecordSpool`),
and the file itself (`write_terms_file`, table first with zero offsets, then patched);
and the terms file of rows held in memory written the same way (`write_rows_terms_file`:
a write buffer's flush, whose encoded records are then never held all at once).
Must not touch: files (it is handed a `FileSink`), index types, which rows are live (a
caller names the deleted doc ids).

`engine.codec.terms_file.encode_terms_file` is the oracle: for the same rows, terms and
group prefix, `write_terms_file` and `write_rows_terms_file` write the same bytes
(`tests/codec/test_terms_stream.py`).
What it holds at once: the new table's per-slot columns (`COLUMN_BYTES_PER_SLOT` bytes a
slot), one source and one new text record, `TERMS_PER_RECORD` term entries, and the first
term and size of each term record.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Container, Iterable, Iterator, Sequence
from itertools import compress, islice, repeat
from typing import Any, Protocol

from engine.codec.columns_record import columns_record_pieces
from engine.codec.framing import HEADER_SIZE, combine_crc, encode_footer, encode_header, update_crc
from engine.codec.group_table import StoredGroups
from engine.codec.terms_file import (
    MAGIC,
    ROWS_PER_TEXT_RECORD,
    TERMS_PER_RECORD,
    DocumentRow,
    RowTable,
    TermEntry,
    build_table,
    encode_table_record,
    encode_term_record,
    encode_text_record,
)

#: `text_record(number)`: `[message_ids, texts]` of a source's text record `number`.
TextRecordFunction = Callable[[int], list[list[Any]]]


class FileSink(Protocol):
    """Where a file is written (`engine.directory.AtomicWriteHandle` is one)."""

    def write(self, data: bytes) -> None: ...

    def size(self) -> int: ...

    def write_at(self, offset: int, data: bytes) -> None: ...

    def read(self, offset: int, length: int) -> bytes: ...


class TermRecordSpool:
    """Term entries, in term order, written as term records to a scratch `sink` (read
    back by `records`), with what the table needs of them: each record's first term
    and the entry count."""

    def __init__(self, sink: FileSink) -> None:
        self._sink = sink
        self._pending: list[TermEntry] = []
        self._sizes: list[int] = []
        self.firsts: list[str] = []
        self.count = 0

    def add(self, entry: TermEntry) -> None:
        """The next term's entry `(term, document_frequency, offset, length)`."""
        self._pending.append(entry)
        if len(self._pending) == TERMS_PER_RECORD:
            self._write_pending()

    def _write_pending(self) -> None:
        record = encode_term_record(self._pending)
        self._sink.write(record)
        self._sizes.append(len(record))
        self.firsts.append(self._pending[0][0])
        self.count += len(self._pending)
        self._pending = []

    def finish(self) -> None:
        """Write the last, partial record."""
        if self._pending:
            self._write_pending()

    def records(self) -> Iterator[bytes]:
        """Every term record written, in order, read back from the sink one at a time."""
        offset = 0
        for size in self._sizes:
            yield self._sink.read(offset, size)
            offset += size


def live_bounds(tables: Sequence[RowTable], deleted: Container[int]) -> tuple[int, int] | None:
    """The least and the greatest doc id of a row of `tables` (in doc-id order) not in
    `deleted`, or None when there is none."""
    first = last = None
    for table in tables:
        for slot in compress(range(table.span), table.present):
            if table.first_doc_id + slot not in deleted:
                first = table.first_doc_id + slot
                break
        if first is not None:
            break
    for table in reversed(tables):
        for slot in compress(range(table.span - 1, -1, -1), table.present[::-1]):
            if table.first_doc_id + slot not in deleted:
                last = table.first_doc_id + slot
                break
        if last is not None:
            break
    return None if first is None or last is None else (first, last)


def merged_table(
    tables: Sequence[RowTable], deleted: Container[int], bounds: tuple[int, int],
    group_prefix: Sequence[tuple[str, str]], term_firsts: Sequence[str], term_count: int,
) -> RowTable:
    """The table of the rows of `tables` (disjoint, in doc-id order) not in `deleted`,
    spanning `bounds` (`live_bounds`), with zero offsets: what `build_table` makes of
    those rows read back, copied column by column (no text is read). Each pair of the
    group table is numbered at its first row, after `group_prefix`'s, as there."""
    first, last = bounds
    span = last - first + 1
    present = bytearray(span)
    flags = bytearray(span)
    lengths = array("I", bytes(4 * span))
    seqs = array("q", bytes(8 * span))
    groups = array("I", bytes(4 * span))
    timestamps = array("d", bytes(8 * span))
    odd: dict[int, Any] = {}
    group_ids = {pair: number for number, pair in enumerate(group_prefix)}
    for table in tables:
        base = table.first_doc_id - first
        source_groups, group_table = table.groups, table.group_table
        source_odd = table.odd_timestamps
        numbers: dict[int, int] = {}
        for slot in compress(range(table.span), table.present):
            if table.first_doc_id + slot in deleted:
                continue
            new = base + slot
            present[new] = 1
            flags[new] = table.flags[slot]
            lengths[new] = table.lengths[slot]
            seqs[new] = table.seqs[slot]
            timestamps[new] = table.timestamps[slot]
            group = source_groups[slot]
            number = numbers.get(group)
            if number is None:
                number = numbers[group] = group_ids.setdefault(group_table[group], len(group_ids))
            groups[new] = number
            if slot in source_odd:
                odd[new] = source_odd[slot]
    text_records = -(-span // ROWS_PER_TEXT_RECORD)
    return RowTable(first, span, bytes(present), lengths, seqs, groups,
                    StoredGroups.of_pairs(tuple(group_ids)),
                    timestamps, bytes(flags), odd, array("Q", bytes(8 * (text_records + 1))),
                    array("Q", bytes(8 * (len(term_firsts) + 1))), tuple(term_firsts), term_count)


def merged_text_bodies(
    sources: Sequence[tuple[RowTable, TextRecordFunction]], deleted: Container[int],
    bounds: tuple[int, int],
) -> Iterator[list[list[Any]]]:
    """The `[message_ids, texts]` of each text record of the merged table spanning
    `bounds`, cut from the sources' text records (each read once, in order): a slot
    without a live row has message id None and text "", as `build_table` writes it."""
    slots = _merged_slots(sources, deleted, bounds)
    while chunk := list(islice(slots, ROWS_PER_TEXT_RECORD)):
        message_ids, texts = zip(*chunk, strict=True)
        yield [list(message_ids), list(texts)]


def _merged_slots(
    sources: Sequence[tuple[RowTable, TextRecordFunction]], deleted: Container[int],
    bounds: tuple[int, int],
) -> Iterator[tuple[Any, str]]:
    """`(message_id, text)` of each slot of the merged table spanning `bounds`."""
    first, last = bounds
    next_doc_id = first
    for table, text_record in sources:
        source_first, present = table.first_doc_id, table.present
        begin = max(first, source_first) - source_first
        end = min(last + 1, source_first + table.span) - source_first
        for number in range(begin // ROWS_PER_TEXT_RECORD, -(-end // ROWS_PER_TEXT_RECORD)):
            record_ids, record_texts = text_record(number)
            record_first = number * ROWS_PER_TEXT_RECORD
            for slot in range(max(begin, record_first),
                              min(end, record_first + ROWS_PER_TEXT_RECORD)):
                doc_id = source_first + slot
                yield from repeat(_NO_ROW, doc_id - next_doc_id)  # doc ids no source holds
                next_doc_id = doc_id + 1
                if present[slot] and doc_id not in deleted:
                    yield record_ids[slot - record_first], record_texts[slot - record_first]
                else:
                    yield _NO_ROW


#: The message id and text of a slot without a row.
_NO_ROW: tuple[Any, str] = (None, "")


def write_terms_file(
    sink: FileSink, table: RowTable, text_bodies: Iterable[list[list[Any]]],
    term_records: Iterable[bytes],
) -> None:
    """Write the terms file of `table` (offsets zero, `term_firsts` and `term_count` set),
    its text records' bodies and its framed term records to `sink`, which holds nothing
    yet: the bytes `encode_terms_file` makes of the same rows and terms.

    The table record goes first with zero offsets (fixed width: the same size), is
    written again once the offsets are known, and the footer's CRC of every record
    combines the real table record's CRC with that of the rest (`combine_crc`).
    """
    sink.write(encode_header(MAGIC))
    table_record = encode_table_record(table)
    sink.write(table_record)
    position = HEADER_SIZE + len(table_record)
    rest_crc = 0
    for piece in columns_record_pieces(table):
        sink.write(piece)
        rest_crc = update_crc(rest_crc, piece)
        position += len(piece)
    records = 2
    for offsets, framed in ((table.text_offsets, map(encode_text_record, text_bodies)),
                            (table.term_offsets, term_records)):
        number = 0
        for record in framed:
            offsets[number] = position
            sink.write(record)
            rest_crc = update_crc(rest_crc, record)
            position += len(record)
            number += 1
        if number != len(offsets) - 1:
            raise ValueError(f"{number} records written, the table names {len(offsets) - 1}")
        offsets[number] = position
        records += number
    real_table_record = encode_table_record(table)
    if len(real_table_record) != len(table_record):
        raise AssertionError("fixed-width offsets keep the table's size")
    sink.write_at(HEADER_SIZE, real_table_record)
    rest_length = position - HEADER_SIZE - len(table_record)
    records_crc = combine_crc(update_crc(0, real_table_record), rest_crc, rest_length)
    sink.write(encode_footer(records, records_crc))


def write_rows_terms_file(
    sink: FileSink, rows: Sequence[DocumentRow], entries: Sequence[TermEntry],
    group_prefix: Sequence[tuple[str, str]] = (),
) -> None:
    """Write `encode_terms_file(rows, entries, group_prefix)` to `sink` (which holds
    nothing yet) a record at a time: the same bytes, without the whole file and its
    encoded text records held at once (a write buffer's flush)."""
    table, bodies = build_table(rows, entries, group_prefix)
    term_records = (encode_term_record(entries[begin: begin + TERMS_PER_RECORD])
                    for begin in range(0, len(entries), TERMS_PER_RECORD))
    write_terms_file(sink, table, bodies, term_records)
