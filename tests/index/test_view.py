"""`InvertedIndex.view()`: one read-only view per version, a new one after any change."""

from __future__ import annotations

from engine.config import EngineConfig
from engine.directory import MemoryDirectory
from engine.index.inverted_index import InvertedIndex
from engine.index.writer import flush_index
from engine.model import IndexEntry


def filled_index() -> InvertedIndex:
    index = InvertedIndex()
    for number, text in enumerate(["a b", "b c", "会议 a"]):
        index.add_entry(IndexEntry("w1", f"m{number}", "user", float(number), text, number),
                        text.split())
    return index


def test_the_same_view_until_the_index_changes():
    index = filled_index()
    view = index.view()
    assert index.view() is view
    assert (view.document_count, view.total_tokens, view.average_length) == (3, 6, 2.0)
    flush_index(MemoryDirectory(), index, "test", EngineConfig())  # same rows, same version
    assert index.view() is view
    index.generation += 1  # a commit that adds no row: a new view, the same term cache
    newer = index.view()
    assert newer is not view and newer.generation == view.generation + 1
    assert newer._terms is view._terms and newer.rows is view.rows


def test_a_change_of_rows_gives_a_view_with_new_statistics_and_postings():
    index = filled_index()
    view = index.view()
    assert list(view.term_columns("b", prefix=False).doc_ids) == [0, 1]
    index.delete_document(0)
    newer = index.view()
    assert newer is not view and newer._terms is not view._terms
    assert (newer.document_count, newer.total_tokens) == (2, 4)
    assert list(newer.term_columns("b", prefix=False).doc_ids) == [1]
    assert newer.non_ascii_rows() == [2] and newer.visible_texts() == ["会议 a"]
    index.add_entry(IndexEntry("w2", "n1", "assistant", 9.0, "会议", 9), ["会议"])
    latest = index.view()
    assert latest.non_ascii_rows() == [2, 3] and latest.document_count == 3
    assert list(latest.rows.lengths) == [2, 2, 2, 1]
    assert latest.window_states == {} and latest.cjk_candidates("会议") == {2, 3}
