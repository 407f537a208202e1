"""Opening an index makes no group-table pair; the query columns number a loaded
segment's groups from its stored tail (issue 33, item 5).

Oracle: the same columns made after every segment's pairs were made first (the clear
`RowColumns._translation` path, what every open did before), and each live row's
`(session_id, role)` read from its record.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.config import EngineConfig
from engine.directory import MemoryDirectory
from engine.index.inverted_index import InvertedIndex
from engine.index.loading import load_index
from engine.index.row_columns import RowColumns
from engine.index.writer import flush_index, merge_index
from engine.model import IndexEntry

PROFILE = "test"
WINDOWS = ["w0", "w1", "w10", "w2"]
ROLES = ["user", "assistant", "tool"]

operations = st.lists(st.one_of(
    st.tuples(st.just("add"), st.integers(0, len(WINDOWS) - 1), st.integers(0, 2),
              st.integers(1, 4)),
    st.tuples(st.just("delete_window"), st.integers(0, len(WINDOWS) - 1), st.just(0), st.just(0)),
    st.tuples(st.just("flush"), st.just(0), st.just(0), st.just(0)),
    st.tuples(st.just("merge"), st.just(0), st.just(0), st.just(0)),
    st.tuples(st.just("view"), st.just(0), st.just(0), st.just(0)),
), max_size=25)


def add_rows(index: InvertedIndex, window: str, role: str, count: int) -> None:
    for _ in range(count):
        number = index.next_doc_id
        index.add_entry(IndexEntry(window, f"m{number}", role, float(number),
                                   f"row {number}", number), ["row", str(number)])


def column_pairs(columns: RowColumns, index: InvertedIndex) -> dict[int, tuple[str, str]]:
    """Each live row's pair as the columns name it."""
    return {doc_id: (columns.group_sessions[columns.groups[doc_id]],
                     columns.group_roles[columns.groups[doc_id]])
            for doc_id in index.live_doc_ids()}


@settings(max_examples=80, deadline=None)
@given(operations, st.booleans())
def test_loaded_columns_number_groups_as_the_clear_path(steps, add_after_load):
    directory = MemoryDirectory()
    config = EngineConfig(index_flush_documents=4, index_merge_segments=3)
    index = InvertedIndex(config=config)
    for operation, window, role, count in steps:
        if operation == "add":
            add_rows(index, WINDOWS[window], ROLES[role], count)
        elif operation == "delete_window":
            index.delete_window_rows(WINDOWS[window])
        elif operation == "flush":
            flush_index(directory, index, PROFILE, config)
        elif operation == "merge":
            merge_index(directory, index, PROFILE, config)
        else:
            index.view()
    flush_index(directory, index, PROFILE, config)
    lazy = load_index(directory, PROFILE, config=config)
    clear = load_index(directory, PROFILE, config=config)
    assert not any(segment.documents.table.stored_groups.decoded for segment in lazy.segments)
    for segment in clear.segments:
        assert segment.documents.table.group_table  # every pair made first
    opened = [lazy, clear]
    if add_after_load:  # buffered rows after the loaded segments, one new window
        for loaded in opened:
            add_rows(loaded, "w3", "user", 2)
            add_rows(loaded, WINDOWS[0], "tool", 1)
    lazy_columns, clear_columns = (loaded.view().rows for loaded in opened)
    assert not any(segment.documents.table.stored_groups.decoded for segment in lazy.segments)
    expected = {record.doc_id: (record.session_id, record.role) for record in lazy.documents()}
    assert column_pairs(lazy_columns, lazy) == column_pairs(clear_columns, clear) == expected
    assert lazy_columns.group_sessions == clear_columns.group_sessions
    assert lazy_columns.group_roles == clear_columns.group_roles
    assert lazy_columns.group_ids == clear_columns.group_ids
    assert list(lazy_columns.groups) == list(clear_columns.groups)
    for segment in lazy.segments:  # made afterwards, the pairs are still the file's
        alone = load_index(directory, PROFILE, config=config)
        assert segment.documents.table.group_table == next(
            other.documents.table.group_table for other in alone.segments
            if other.name == segment.name)
