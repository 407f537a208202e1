"""`encode_record` packs with a strict packer and falls back to its oracle,
`encode_frame(encode_payload(value))`, on a lone surrogate: the same bytes and the same
errors for any value, strings with lone surrogates among them."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.codec.framing import DecodeError, encode_frame, encode_payload, encode_record

#: Text with lone surrogates now and then (category Cs), as JSON escapes can make them.
_TEXTS = st.text(st.characters(blacklist_categories=()), max_size=12)
_SCALARS = (st.none() | st.booleans() | st.floats(allow_nan=False)
            | st.integers(-(2**64), 2**64) | _TEXTS)
_VALUES = st.recursive(
    _SCALARS,
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(_TEXTS, children, max_size=4),
    max_leaves=20,
)


def _outcome(make: Any, value: Any) -> tuple[str, Any]:
    try:
        return "bytes", make(value)
    except DecodeError as error:
        return "error", str(error)


@settings(max_examples=400, deadline=None)
@given(_VALUES)
def test_encode_record_is_its_oracle(value: Any) -> None:
    assert _outcome(encode_record, value) == _outcome(
        lambda item: encode_frame(encode_payload(item)), value)


@settings(max_examples=200, deadline=None)
@given(_VALUES, st.integers(0, 3))
def test_an_error_after_a_lone_surrogate_is_the_oracle_s(value: Any, where: int) -> None:
    items: list[Any] = ["\ud800", value, object(), 2**65]
    items.insert(where, value)
    assert _outcome(encode_record, items) == _outcome(
        lambda item: encode_frame(encode_payload(item)), items)


def test_a_lone_surrogate_is_kept() -> None:
    value = {"k\udc80": ["a\ud800b", "é"]}
    assert encode_record(value) == encode_frame(encode_payload(value))
