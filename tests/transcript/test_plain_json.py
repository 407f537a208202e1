"""`validation.json_value_problem` answers what its clear walk answers
(`walked_json_problem`) for any value: its shortcut for plain JSON (`_plain_json`) says
only "nothing wrong", and only where the walk finds nothing; subclasses, other types,
integers past 64 bits, non-string keys and values nested past the limit are the walk's."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.transcript.validation import (
    MAX_JSON_DEPTH,
    _plain_json,
    json_value_problem,
    walked_json_problem,
)


class Text(str):
    """A string subclass (the walk accepts it as a string)."""


SCALARS = st.one_of(
    st.none(), st.booleans(), st.floats(), st.text(max_size=5),
    st.integers(-2**63 - 2, 2**64 + 1), st.builds(Text, st.text(max_size=3)),
    st.sampled_from([b"x", (1, 2), frozenset({1}), 2**70, -2**70, 1j]))
KEYS = st.one_of(st.text(max_size=4), st.builds(Text, st.text(max_size=2)),
                 st.sampled_from([1, None, 2.5]))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(KEYS, inner, max_size=4),
    st.builds(OrderedDict, st.dictionaries(st.text(max_size=3), inner, max_size=3))),
    max_leaves=25)


@settings(max_examples=600, deadline=None)
@given(st.one_of(st.lists(VALUES, max_size=4), st.dictionaries(KEYS, VALUES, max_size=5)))
def test_the_shortcut_answers_as_the_walk(value: Any) -> None:
    walked = walked_json_problem(value, "event")
    assert json_value_problem(value, "event") == walked
    if _plain_json(value, 1):
        assert walked is None


def nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth - 1):
        value = [value]
    return value


def test_the_depth_limit_is_the_walks() -> None:
    for depth in (MAX_JSON_DEPTH - 1, MAX_JSON_DEPTH, MAX_JSON_DEPTH + 1):
        value = {"deep": nested(depth - 1)} if depth > 1 else {}
        assert json_value_problem(value, "event") == walked_json_problem(value, "event")
    assert json_value_problem(nested(MAX_JSON_DEPTH), "event") is None
    assert json_value_problem(nested(MAX_JSON_DEPTH + 1), "event") is not None


def test_a_deep_caller_falls_back_to_the_walk() -> None:
    def at_depth(frames: int) -> str | None:
        if frames:
            return at_depth(frames - 1)
        return json_value_problem(nested(MAX_JSON_DEPTH), "event")

    import sys
    # Deep enough that the shortcut's MAX_JSON_DEPTH levels overflow the stack (the
    # test's own frames come on top): the walk answers instead.
    assert at_depth(sys.getrecursionlimit() - MAX_JSON_DEPTH) is None
