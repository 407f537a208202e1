"""One pair of a stored group table, read without making the others
(`engine.codec.group_table.StoredGroups.pair`, issue 33, item 5).

Oracle: `pairs()`, the whole decoded table (itself held equal to the clear decode of each
table's own columns in tests/codec/test_group_table.py), for every chain of tables, with
some of the chain's tables decoded before, between and after the pairs are asked for.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.codec.group_table import StoredGroups
from engine.codec.terms_file import _decode_group_table, _group_table_value
from tests.codec.test_group_table import steps, tables_of


@settings(max_examples=200, deadline=None)
@given(steps, st.lists(st.integers(0, 7), max_size=8), st.data())
def test_a_pair_is_the_pair_of_the_decoded_table(chosen, decode_order, data):
    tables = tables_of(chosen)
    stored: list[StoredGroups] = []
    for table, (_kind, _pairs, decode_now) in zip(tables, chosen, strict=True):
        opened = _decode_group_table(_group_table_value(table), stored[-1] if stored else None)
        stored.append(opened)
        if decode_now:
            opened.pairs()
    asked = data.draw(st.lists(st.tuples(st.integers(0, 7), st.integers(0, 30)), max_size=20))
    for number, group in asked:  # single pairs first, in any order
        if number < len(stored) and group < len(tables[number]):
            assert stored[number].pair(group) == tables[number][group]
    for number in decode_order:  # then some tables decoded whole
        if number < len(stored):
            stored[number].pairs()
    for table, opened in zip(tables, stored, strict=True):
        assert [opened.pair(group) for group in range(len(table))] == list(opened.pairs())
        assert list(opened.pairs()) == list(table)


def test_a_pair_past_the_table_is_an_index_error():
    first = _decode_group_table(_group_table_value((("w1", "user"),)))
    second = _decode_group_table(_group_table_value((("w1", "user"), ("w2", "tool"))), first)
    assert second.previous is first and second.pair(1) == ("w2", "tool")
    for table in (first, second):
        with pytest.raises(IndexError):
            table.pair(table.size)
        with pytest.raises(IndexError):
            table.pair(-1)
