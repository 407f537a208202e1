"""A linked group table's counts checked on its tail alone (`StoredGroups.open_columns`,
issue 33, item 5).

Oracle: `check_columns` of the table's whole columns, which is what opening checked
before. A table that starts with the previous segment's table intact and is damaged in
the part after it (a NUL too many or too few, a role number naming no role) is refused
as before; an undamaged one opens linked.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.codec.framing import DecodeError
from engine.codec.group_table import StoredGroups, check_columns
from engine.codec.terms_file import _decode_group_table, _group_table_value

NAMES = ["user", "assistant"]
FIRST = (("w1", "user"), ("w1", "assistant"))


def opened_first() -> StoredGroups:
    return _decode_group_table(_group_table_value(FIRST))


def columns(sessions: str, numbers: bytes, names: list[str] | None = None) -> dict:
    return {"group_sessions": sessions, "group_roles": numbers,
            "role_names": NAMES if names is None else names}


def test_an_undamaged_tail_opens_linked():
    opened = _decode_group_table(columns("w1\x00w1\x00w2", b"\x00\x01\x00"), opened_first())
    assert opened.previous is not None
    assert opened.pairs() == FIRST + (("w2", "user"),)


@pytest.mark.parametrize("sessions, numbers, names", [
    ("w1\x00w1\x00w2\x00w3", b"\x00\x01\x00", None),  # a NUL too many in the tail
    ("w1\x00w1\x00w2", b"\x00\x01\x00\x01", None),  # a session id too few in the tail
    ("w1\x00w1\x00", b"\x00\x01\x00\x01", None),  # the same, the tail text one empty id
    ("w1\x00w1", b"\x00\x01\x00", None),  # a tail of roles and no session text at all
    ("w1\x00w1\x00w2", b"\x00\x01\x02", None),  # a tail role number naming no role
    ("w1\x00w1\x00w2", b"\x00\x01\x03", ["user", "assistant", "tool"]),  # one name more
])
def test_a_damaged_tail_after_an_intact_prefix_is_refused(sessions, numbers, names):
    known = opened_first()
    body = columns(sessions, numbers, names)
    with pytest.raises(DecodeError):
        check_columns(sessions, numbers, NAMES if names is None else names)
    with pytest.raises(DecodeError, match="do not match"):
        _decode_group_table(body, known)


def test_a_table_opened_without_its_previous_keeps_the_whole_check():
    with pytest.raises(DecodeError, match="do not match"):
        _decode_group_table(columns("w1\x00w1\x00w2\x00w3", b"\x00\x01\x00"))


session_ids = st.sampled_from(["w1", "w2", "w10", "", "x\u00e9"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(session_ids, st.integers(0, 1)), min_size=1, max_size=4),
       st.lists(st.tuples(session_ids, st.integers(0, 3)), max_size=4),
       st.integers(-2, 2), st.integers(0, 3))
def test_opening_refuses_exactly_what_the_whole_check_refuses(first, tail, extra_nuls,
                                                              names_kept):
    """The second table starts with the first one's columns; its tail may have NULs added
    or removed and role numbers past its names."""
    known = _decode_group_table(columns("\x00".join(s for s, _ in first),
                                        bytes(r for _, r in first)))
    sessions = "\x00".join(s for s, _ in first + tail)
    if extra_nuls > 0:
        sessions += "\x00" * extra_nuls
    elif extra_nuls < 0 and tail:
        cut = len("\x00".join(s for s, _ in first))
        sessions = sessions[:cut] + sessions[cut:].replace("\x00", "", -extra_nuls)
    numbers = bytes(r for _, r in first + tail)
    names = (NAMES + ["tool", "system"])[:max(2, names_kept)]
    try:
        check_columns(sessions, numbers, names)
    except DecodeError:
        with pytest.raises(DecodeError):
            _decode_group_table(columns(sessions, numbers, names), known)
    else:
        opened = _decode_group_table(columns(sessions, numbers, names), known)
        assert opened.size == len(numbers)
        assert opened.pairs() == tuple(zip(sessions.split("\x00"),
                                           (names[number] for number in numbers)))
