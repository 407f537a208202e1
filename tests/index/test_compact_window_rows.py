"""The index holds each window's live doc ids compactly, and each segment's group table
shares the previous segment's pairs (issue 33, item 3).

Oracles: a window's doc ids are the live rows' doc ids of that window, read row by row
from `documents()` (what the set a window the index held before gave); a loaded group
table equals the one the terms file decodes alone.
"""

from __future__ import annotations

from array import array
from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.codec.group_table import share_prefix
from engine.codec.terms_file import open_terms_file
from engine.config import EngineConfig
from engine.directory import MemoryDirectory
from engine.index.inverted_index import InvertedIndex
from engine.index.loading import load_index, segment_file_names
from engine.index.writer import flush_index, merge_index
from engine.model import IndexEntry

PROFILE = "test"
WINDOWS = ["w0", "w1", "w2", "w3"]

operations = st.lists(st.one_of(
    st.tuples(st.just("add"), st.integers(0, len(WINDOWS) - 1), st.integers(1, 6)),
    st.tuples(st.just("delete"), st.integers(0, 1000), st.just(0)),
    st.tuples(st.just("delete_window"), st.integers(0, len(WINDOWS) - 1), st.just(0)),
    st.tuples(st.just("flush"), st.just(0), st.just(0)),
    st.tuples(st.just("merge"), st.just(0), st.just(0)),
    st.tuples(st.just("load"), st.just(0), st.just(0)),
    st.tuples(st.just("ask"), st.integers(0, len(WINDOWS) - 1), st.just(0)),
), max_size=30)


def expected_window_rows(index: InvertedIndex) -> dict[str, list[int]]:
    rows: dict[str, set[int]] = {}
    for record in index.documents():
        rows.setdefault(record.session_id, set()).add(record.doc_id)
    return {session_id: sorted(doc_ids) for session_id, doc_ids in rows.items()}


def add_rows(index: InvertedIndex, window: str, count: int) -> None:
    for _ in range(count):
        number = index.next_doc_id
        index.add_entry(IndexEntry(window, f"m{number}", "user", float(number),
                                   f"row {number}", number), ["row", str(number)])


@settings(max_examples=60, deadline=None)
@given(operations)
def test_window_doc_ids_are_the_live_rows_of_each_window(steps):
    directory = MemoryDirectory()
    config = EngineConfig()
    index = InvertedIndex()
    for operation, number, count in steps:
        if operation == "add":
            add_rows(index, WINDOWS[number], count)
        elif operation == "delete":
            live = list(index.live_doc_ids())
            if live:
                index.delete_document(live[number % len(live)])
        elif operation == "delete_window":
            expected = len(expected_window_rows(index).get(WINDOWS[number], []))
            assert index.delete_window_rows(WINDOWS[number]) == expected
        elif operation == "flush":
            flush_index(directory, index, PROFILE, config)
        elif operation == "merge":
            merge_index(directory, index, PROFILE, config)
        elif operation == "load":
            flush_index(directory, index, PROFILE, config)
            index = load_index(directory, PROFILE)
        else:
            index.window_doc_ids(WINDOWS[number])  # the per-window rows are made now
        expected = expected_window_rows(index)
        for window in WINDOWS:
            assert index.window_doc_ids(window) == expected.get(window, [])
    if index._by_session is not None:
        assert {type(rows) for rows in index._by_session.values()} <= {array}


def test_each_loaded_group_table_holds_the_previous_tables_pairs():
    directory = MemoryDirectory()
    config = EngineConfig(index_merge_segments=100)
    index = InvertedIndex()
    for window in WINDOWS:  # each flush brings one more window
        for earlier in WINDOWS[:WINDOWS.index(window) + 1]:
            add_rows(index, earlier, 2)
        flush_index(directory, index, PROFILE, config)
    for opened in (index, load_index(directory, PROFILE, config=config)):
        tables = [segment.documents.table.group_table for segment in opened.segments]
        assert len(tables) == len(WINDOWS)
        for previous, table in pairwise(tables):
            assert all(mine is theirs for mine, theirs in zip(table, previous, strict=False))
            assert len(table) > len(previous)
        for segment, table in zip(opened.segments, tables, strict=True):
            handle = directory.open_read(segment_file_names(segment.name)[0])
            alone = open_terms_file(handle.read, handle.size(), "terms").table.group_table
            assert table == alone


def test_a_table_that_does_not_start_with_the_known_pairs_is_kept_as_decoded():
    known = (("w1", "user"), ("w2", "user"))
    for decoded in [(("w1", "user"),), (("w2", "user"), ("w1", "user")), ()]:
        assert share_prefix(decoded, known) is decoded
    same = (("w1", "user"), ("w2", "user"))
    assert share_prefix(same, known) is known
