"""Rows loaded from a flushed segment read their texts from disk when asked (issue 5)."""

from __future__ import annotations

from engine.codec.terms_file import ROWS_PER_TEXT_RECORD
from engine.config import EngineConfig
from engine.directory import MemoryDirectory
from engine.index.inverted_index import InvertedIndex
from engine.index.loading import load_index
from engine.index.segment_rows import SegmentRows
from engine.index.writer import flush_index, merge_index
from engine.model import IndexEntry
from engine.search.fast_path import literal_candidates

PROFILE = "test"
ROW_COUNT = ROWS_PER_TEXT_RECORD * 2 + 5


def text_of(number: int) -> str:
    return f"会议 {number}" if number % 7 == 0 else f"row {number}"


def flushed_store() -> tuple[MemoryDirectory, InvertedIndex]:
    index = InvertedIndex()
    for number in range(ROW_COUNT):
        text = text_of(number)
        index.add_entry(IndexEntry("w", f"m{number}", "user", float(number), text, number),
                        text.split())
    directory = MemoryDirectory()
    flush_index(directory, index, PROFILE, EngineConfig())
    return directory, index


def test_loaded_rows_hold_the_segment_text_column_and_read_the_same_texts():
    directory, written = flushed_store()
    loaded = load_index(directory, PROFILE)
    records = list(loaded.documents())
    assert {record.stored_text.__class__ for record in records} == {SegmentRows}
    assert [record.text for record in records] == [text_of(number) for number in range(ROW_COUNT)]
    assert [record.text_is_ascii for record in records] == [
        number % 7 != 0 for number in range(ROW_COUNT)
    ]
    assert records == list(written.documents())


def test_cjk_candidates_of_a_loaded_index_come_from_the_stored_texts():
    directory, _written = flushed_store()
    loaded = load_index(directory, PROFILE)
    view = loaded.view()
    rows = view.rows
    expected = [number for number in range(ROW_COUNT) if number % 7 == 0]
    assert rows.non_ascii_rows == [] and not rows.non_ascii_ready  # listed when first needed
    assert view.non_ascii_rows() == expected
    assert rows.non_ascii_texts == []  # nothing read until a retry scans
    assert literal_candidates(view, "会议") == (expected, True)


def test_a_merge_of_loaded_rows_writes_their_texts_again():
    directory, _written = flushed_store()
    loaded = load_index(directory, PROFILE)
    loaded.delete_document(1)
    merge_index(directory, loaded, PROFILE, EngineConfig())
    reloaded = load_index(directory, PROFILE)
    assert [record.text for record in reloaded.documents()] == [
        text_of(number) for number in range(ROW_COUNT) if number != 1
    ]


def test_a_loaded_index_keeps_counts_and_tokens_of_its_tombstoned_rows_out():
    directory, written = flushed_store()
    written.delete_document(3)
    written.delete_document(ROW_COUNT - 1)
    flush_index(directory, written, PROFILE, EngineConfig())
    loaded = load_index(directory, PROFILE)
    assert (loaded.document_count, loaded.total_tokens) == (written.document_count,
                                                            written.total_tokens)
    assert [loaded.is_live(doc_id) for doc_id in (2, 3, ROW_COUNT - 1, ROW_COUNT)] == [
        True, False, False, False]
    assert list(loaded.live_doc_ids()) == [record.doc_id for record in written.documents()]
    assert loaded.window_doc_ids("w") == [record.doc_id for record in written.documents()]
    assert loaded.text(7) == text_of(7)


def test_a_later_flush_keeps_the_group_numbers_of_the_segment_before():
    directory, index = flushed_store()
    index.add_entry(IndexEntry("w2", "n1", "assistant", 1.0, "new row", 0), ["new", "row"])
    index.add_entry(IndexEntry("w", "n2", "user", 2.0, "old group", 1), ["old", "group"])
    flush_index(directory, index, PROFILE, EngineConfig())
    first, second = (segment.documents.table.group_table for segment in index.segments)
    assert second[: len(first)] == first and second[len(first):] == (("w2", "assistant"),)
    loaded = load_index(directory, PROFILE)
    rows = loaded.view().rows
    assert rows.group_sessions == ["w", "w2"] and rows.group_roles == ["user", "assistant"]
    assert (loaded.document_count, loaded.total_tokens) == (index.document_count,
                                                            index.total_tokens)


def test_bulk_texts_equal_one_text_at_a_time_across_segments_and_the_buffer():
    directory, index = flushed_store()
    index.add_entry(IndexEntry("w2", "n1", "user", 1.0, "buffered 会议", 0), ["buffered", "会议"])
    flush_index(directory, index, PROFILE, EngineConfig())
    index.add_entry(IndexEntry("w2", "n2", "user", 2.0, "still buffered", 1), ["still", "buffered"])
    index.delete_document(5)
    live = list(index.live_doc_ids())
    assert index.texts(live) == [index.text(doc_id) for doc_id in live]
    assert index.texts(live[::7]) == [index.text(doc_id) for doc_id in live[::7]]
    assert index.texts([]) == []
