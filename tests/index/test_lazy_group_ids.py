"""Numbering a loaded segment's stored group tail makes no `(session_id, role)` pair: the
query columns check that the tail's pairs are new one role at a time over sets of
session ids, and make `group_ids` only when something asks for it (issue 33, item 5).

Oracle: the clear path (`RowColumns.lazy_group_ids = False`), which checks the tail
through the dict of its pairs, as every open did before.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.codec.group_table import StoredGroups
from engine.config import EngineConfig
from engine.directory import MemoryDirectory
from engine.index.inverted_index import InvertedIndex
from engine.index.loading import load_index
from engine.index.row_columns import RowColumns
from engine.index.writer import flush_index
from engine.model import IndexEntry

ROLE_NAMES = ["user", "assistant", "tool"]


def chain(tails: list[list[tuple[str, int]]]) -> list[StoredGroups]:
    """Stored tables, each starting with the one before it and adding `tails[i]`'s pairs
    (duplicates allowed: a damaged table)."""
    tables: list[StoredGroups] = []
    pairs: list[tuple[str, int]] = []
    for tail in tails:
        pairs = pairs + tail
        sessions = "\x00".join(session_id for session_id, _role in pairs)
        numbers = bytes(role for _session_id, role in pairs)
        tables.append(StoredGroups.of_columns(sessions, numbers, ROLE_NAMES,
                                              tables[-1] if tables else None))
    return tables


def state(columns: RowColumns) -> tuple:
    return (columns.group_sessions, columns.group_roles, columns.numbered_like,
            columns.group_ids)


def take_all(tables: list[StoredGroups], lazy: bool) -> tuple[list[bool], RowColumns]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(RowColumns, "lazy_group_ids", lazy)
        columns = RowColumns()
        return [columns._take_tail(table) for table in tables], columns


tails = st.lists(st.lists(st.tuples(st.sampled_from(["w0", "w1", "w2", "w3"]),
                                    st.integers(0, 2)), min_size=1, max_size=5),
                 min_size=1, max_size=5)


@settings(max_examples=200, deadline=None)
@given(tails)
def test_taking_tails_agrees_with_the_clear_path(chained):
    tables = chain(chained)
    lazy_taken, lazy = take_all(tables, True)
    clear_taken, clear = take_all(tables, False)
    assert lazy_taken == clear_taken
    assert state(lazy) == state(clear)


@pytest.mark.parametrize("lazy", [True, False])
@pytest.mark.parametrize("damaged_tail", [
    [("w2", 0), ("w2", 0)],  # a pair twice within the tail
    [("w1", 0)],  # a pair the table it starts with numbers already
])
def test_a_damaged_tail_is_not_taken(monkeypatch, lazy, damaged_tail):
    first, damaged = chain([[("w1", 0), ("w1", 1)], damaged_tail])
    taken, columns = take_all([first], lazy)
    assert taken == [True]
    with monkeypatch.context() as patch:
        patch.setattr(RowColumns, "lazy_group_ids", lazy)
        assert not columns._take_tail(damaged)
    assert state(columns) == (["w1", "w1"], ["user", "assistant"], first,
                              {("w1", "user"): 0, ("w1", "assistant"): 1})


def test_a_loaded_index_makes_no_pair_until_asked():
    directory, config = MemoryDirectory(), EngineConfig(index_flush_documents=2)
    index = InvertedIndex(config=config)
    for number, (window, role) in enumerate([("w1", "user"), ("w1", "assistant"),
                                             ("w2", "user"), ("w3", "tool")]):
        index.add_entry(IndexEntry(window, f"m{number}", role, float(number), "a b", number),
                        ["a", "b"])
        flush_index(directory, index, "test", config)
    loaded = load_index(directory, "test", config=config)
    assert len(loaded.segments) > 1
    columns = loaded.view().rows
    assert columns.known_groups is None  # numbered from the stored tails alone
    assert columns.group_ids == {("w1", "user"): 0, ("w1", "assistant"): 1,
                                 ("w2", "user"): 2, ("w3", "tool"): 3}
    loaded.add_entry(IndexEntry("w1", "m9", "user", 9.0, "a", 9), ["a"])
    assert loaded.view().rows.groups[-1] == 0
