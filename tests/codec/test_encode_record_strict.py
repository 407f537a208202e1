"""`encode_record` packs with a strict packer and falls back to its oracle,
`encode_frame(encode_payload(value))`, on a lone surrogate: the same bytes and the same
errors for any value, strings with lone surrogates among them."""

from __future__ import annotations

from typing import Any

import msgpack
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.codec.framing import (
    _PACKERS,
    PACKER_KEPT_BYTES,
    DecodeError,
    encode_frame,
    encode_payload,
    encode_record,
)

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


def test_a_common_record_is_packed_by_the_strict_packer() -> None:
    """The strict packer is the one a record without a lone surrogate goes through (a
    mutant making every record by the oracle keeps no strict packer)."""
    _PACKERS.strict = None
    encode_record(["é", {"a": 1}])
    assert isinstance(getattr(_PACKERS, "strict", None), msgpack.Packer)


def test_a_failed_pack_lets_its_packer_go() -> None:
    """A record that fell back on a lone surrogate, or failed, after the strict packer
    grew its buffer does not keep that buffer for the thread's next record."""
    large = ["x" * 1000] * (PACKER_KEPT_BYTES // 1000 + 1)
    for value in (large + ["\ud800"], large + [object()]):
        encode_record(["é"])
        try:
            encode_record(value)
        except DecodeError:
            pass
        assert getattr(_PACKERS, "strict", None) is None
