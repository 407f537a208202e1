"""`jsonl._whole_object` (the decoder's scanner from the first character, then only JSON
whitespace) makes the object `_DECODER.decode` makes of the same text, and None wherever
that raises or makes something else than an object (its oracle), or where the text
starts with JSON whitespace (left to `parse_line`, which reads it as before);
`line_object` so of raw lines, bad UTF-8 included."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.ingest.jsonl import _DECODER, _whole_object, line_object

#: Values, bad text and every kind of whitespace around them.
BODIES = st.sampled_from([
    '{"a": 1}', '{"b": [1, 2.5, null, true, {"c": "\\u00e9"}]}', "{}", "[1]", '"s"', "3",
    "null", '{"a": NaN}', '{"a": -Infinity}', '{"a": 1', '{"a": 1} {"b": 2}', '{"a": 1}]',
    '{"deep": ' + "[" * 3000 + "]" * 3000 + "}", '{"n": 123456789012345678901234567890}',
    '{"lone": "\\ud800"}', "", "x",
])
SPACES = st.sampled_from(["", " ", "\t", "\n", "\r\n", "\x0c", "\x0b", "\u00a0", "  \n", "\ufeff"])


def oracle(text: str) -> Any:
    if text[:1] in (" ", "\t", "\n", "\r"):
        return None
    try:
        value = _DECODER.decode(text)
    except (ValueError, RecursionError):
        return None
    return value if type(value) is dict else None


@settings(max_examples=400, deadline=None)
@given(SPACES, BODIES, SPACES, SPACES)
def test_whole_object_is_what_the_decoder_makes(before: str, body: str, after: str,
                                                 end: str) -> None:
    text = before + body + after + end
    assert _whole_object(text) == oracle(text)
    raw = text.encode("utf-8", "surrogatepass")
    assert line_object(raw) == (oracle(text) if raw.isascii() or _utf8(raw) else None)


def _utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def test_bad_utf8_and_a_constant_are_none() -> None:
    assert line_object(b'{"a": "\xff"}\n') is None
    assert _whole_object('{"a": Infinity}') is None
    assert _whole_object(json.dumps({"a": [1, {"b": None}]}) + " \r\n") == {"a": [1, {"b": None}]}
