"""A checkpoint's `keys` record is decoded as tuples and kept as decoded (issue 33, item 5):
the same keys as the clear way (each pair copied into tuples), and the same errors for a
body of another shape.

Oracle: `keys_of` over the body decoded as lists (the clear way, as before).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.codec.catalog_keys import decode_index_payload, keys_of
from engine.codec.framing import DecodeError, decode_payload, encode_payload

names = st.text(alphabet="ab:é会\ud800", max_size=40)


def outcome(body: object) -> object:
    try:
        return keys_of(body)
    except (DecodeError, TypeError, ValueError) as error:
        return type(error), str(error)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(names, st.lists(names, max_size=4)), max_size=20))
def test_decoded_keys_are_the_clear_ones_and_kept_as_decoded(pairs):
    payload = encode_payload(["keys", [[key, session_ids] for key, session_ids in pairs]])
    value = decode_index_payload(payload)
    clear = tuple((key, tuple(session_ids)) for key, session_ids in pairs)
    assert value[0] == "keys" and keys_of(value[1]) == clear
    assert keys_of(value[1]) is value[1]  # no copy of the decoded body
    assert keys_of(decode_payload(payload)[1]) == clear


@pytest.mark.parametrize("body", [
    [["k", ["w1"], "x"]], [["k"]], [["k", "w1"]], [[1, ["w1"]]], [["k", [2]]], [["k", None]],
    [5], [], [["k", []]], [[["k"], ["w1"]]], {"k": ["w1"]},
], ids=repr)
def test_a_body_of_any_shape_gives_what_the_clear_way_gives(body):
    payload = encode_payload(["keys", body])
    assert outcome(decode_index_payload(payload)[1]) == outcome(decode_payload(payload)[1])


def test_other_records_decode_as_before():
    for value in (["sealed", [[1, 2, 3]]], ["transactions", b"", b""], ["key", [1]]):
        payload = encode_payload(value)
        assert decode_index_payload(payload) == decode_payload(payload) == value
