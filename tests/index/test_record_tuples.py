"""`DocumentRecord` and `RankedRow` are `NamedTuple`s made in C (`tuple.__new__`), and
still compare as the frozen dataclasses they were: a record by its fields and its text,
not by where the text is read from (a flushed segment's rows, or the string itself)."""

from __future__ import annotations

from operator import eq, ne

from engine.config import EngineConfig
from engine.directory import MemoryDirectory
from engine.index.documents import DocumentRecord
from engine.index.inverted_index import InvertedIndex
from engine.index.loading import load_index
from engine.index.segment_rows import SegmentRows
from engine.index.writer import flush_index
from engine.model import IndexEntry
from engine.search.order import RankedRow

PROFILE = "test"


def loaded_and_written() -> tuple[list[DocumentRecord], list[DocumentRecord]]:
    index = InvertedIndex()
    for number in range(5):
        text = f"row {number}"
        index.add_entry(IndexEntry("w", f"m{number}", "user", float(number), text, number),
                        text.split())
    written = list(index.documents())  # held in memory, before the flush
    directory = MemoryDirectory()
    flush_index(directory, index, PROFILE, EngineConfig())
    return list(load_index(directory, PROFILE).documents()), written


def test_a_record_read_from_a_segment_equals_the_one_written_and_is_not_unequal():
    loaded, written = loaded_and_written()
    assert {record.stored_text.__class__ for record in loaded} == {SegmentRows}
    assert {record.stored_text.__class__ for record in written} == {str}
    for read, held in zip(loaded, written, strict=True):
        # A tuple's own `!=` would compare the text sources and find them different.
        assert eq(read, held) and not ne(read, held)
        assert hash(read) == hash(held)
        assert read.non_ascii is False and held.non_ascii is None


def test_records_differing_in_a_field_or_the_text_are_unequal():
    record = DocumentRecord(0, "w", "m", "user", 1.0, "a b", 2, 0)
    for other in (record._replace(stored_text="a c"), record._replace(seq=1),
                  record._replace(timestamp=None)):
        assert ne(record, other) and not eq(record, other)
    assert record == record._replace(non_ascii=False)  # the flag is not the text


def test_a_record_is_not_equal_to_the_tuple_of_its_fields():
    record = DocumentRecord(0, "w", "m", "user", 1.0, "a b", 2, 0)
    fields = tuple(record)
    assert ne(record, fields) and not eq(record, fields)
    assert ne(fields, record) and not eq(fields, record)


def test_a_ranked_row_made_in_c_equals_one_made_by_its_constructor():
    record = DocumentRecord(3, "w", "m", "user", 1.0, "a b", 2, 0)
    made = tuple.__new__(RankedRow, (record, -1.5, ((0, 1, 2),), False))
    assert made == RankedRow(record, -1.5, ((0, 1, 2),))
    assert (made.record, made.rank, made.phrase_hits, made.by_substring) == (
        record, -1.5, ((0, 1, 2),), False)
