"""A terms file's group table kept as stored (`engine.codec.group_table`, issue 33, item 5).

Oracle: the clear decode of each table's own columns (`decode_pairs`), which is what the
reader made at open before. A linked table shares its previous table's pair objects, in
whatever order the tables' pairs are made.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.codec.framing import DecodeError
from engine.codec.group_table import StoredGroups, check_columns, decode_pairs
from engine.codec.terms_file import _decode_group_table, _group_table_value

SESSIONS = ["w0", "w1", "w10", "w", "x\u00e9", ""]
ROLES = ["user", "assistant", "tool", "system"]
PAIRS = [(session_id, role) for session_id in SESSIONS for role in ROLES]

steps = st.lists(st.tuples(
    st.sampled_from(["extend", "same", "other"]),
    st.lists(st.sampled_from(PAIRS), max_size=6, unique=True),
    st.booleans(),  # make this table's pairs before the next one opens
), min_size=1, max_size=8)


def tables_of(chosen: list[tuple[str, list[tuple[str, str]], bool]]) -> list[tuple]:
    """The pairs of each table: the previous table and new pairs, the same, or others."""
    tables: list[tuple] = []
    for kind, pairs, _decode in chosen:
        previous = tables[-1] if tables else ()
        if kind == "extend":
            table = previous + tuple(pair for pair in pairs if pair not in previous)
        elif kind == "same":
            table = previous
        else:
            table = tuple(pairs)
        tables.append(table or (("w0", "user"),))
    return tables


@settings(max_examples=200, deadline=None)
@given(steps, st.lists(st.integers(0, 7), max_size=8))
def test_stored_tables_make_the_pairs_of_their_own_columns(chosen, decode_order):
    tables = tables_of(chosen)
    stored: list[StoredGroups] = []
    for table, (_kind, _pairs, decode_now) in zip(tables, chosen, strict=True):
        body = _group_table_value(table)
        known = stored[-1] if stored else None
        opened = _decode_group_table(body, known)
        assert opened.size == len(table)
        stored.append(opened)
        if decode_now:
            opened.pairs()
    for number in decode_order:  # the rest made in any order
        if number < len(stored):
            stored[number].pairs()
    for number, (table, opened) in enumerate(zip(tables, stored, strict=True)):
        body = _group_table_value(table)
        assert opened.pairs() == decode_pairs(body["group_sessions"], body["group_roles"],
                                              body["role_names"]) == table
        previous = tables[number - 1] if number else ()
        if previous and table[:len(previous)] == previous:
            assert all(mine is theirs for mine, theirs
                       in zip(opened.pairs(), stored[number - 1].pairs(), strict=False))


@settings(max_examples=100, deadline=None)
@given(steps)
def test_a_linked_tail_is_what_follows_the_previous_table(chosen):
    tables = tables_of(chosen)
    known = None
    for table in tables:
        opened = _decode_group_table(_group_table_value(table), known)
        if opened.previous is not None:
            start = opened.previous.size
            assert table[:start] == known.pairs()
            assert list(zip(opened.tail_sessions(), opened.tail_roles())) == list(table[start:])
        else:
            assert list(zip(opened.tail_sessions(), opened.tail_roles())) == list(table)
        known = opened


def test_a_table_that_only_looks_like_a_prefix_is_not_linked():
    first = _decode_group_table(_group_table_value((("w1", "user"),)))
    longer_id = _decode_group_table(_group_table_value((("w10", "user"),)), first)
    other_role = _decode_group_table(_group_table_value((("w1", "tool"), ("w1", "user"))),
                                     first)
    assert longer_id.previous is None and longer_id.pairs() == (("w10", "user"),)
    assert other_role.previous is None
    assert other_role.pairs() == (("w1", "tool"), ("w1", "user"))


@pytest.mark.parametrize("sessions, numbers, names", [
    ("w1", b"\x00\x00", ["user"]),
    ("w1\x00w2", b"\x00", ["user"]),
    ("w1", b"\x01", ["user"]),
    ("w1", "x", ["user"]),
    (b"w1", b"\x00", ["user"]),
    ("w1", b"\x00", [1]),
])
def test_malformed_columns_are_refused_at_open(sessions, numbers, names):
    with pytest.raises(DecodeError):
        check_columns(sessions, numbers, names)
