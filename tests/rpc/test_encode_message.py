"""`encode_message` (one encoding, the surrogates escaped only when UTF-8 refuses the
text) is `message_line` encoded, the clear version: same bytes for any text."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.rpc.framing import encode_message, message_line

texts = st.text(st.one_of(st.characters(), st.sampled_from(["\ud800", "\udfff", "…", "\n", '"'])),
                max_size=20)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(texts, st.one_of(texts, st.floats(), st.integers(), st.lists(texts)),
                       max_size=4))
def test_encode_message_is_message_line_encoded(message):
    assert encode_message(message) == message_line(message).encode("utf-8")
