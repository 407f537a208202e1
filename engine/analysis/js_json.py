"""JavaScript's `JSON.stringify`, for measuring what a tool's answer weighs.

Owns: `js_json` (the text JavaScript's `JSON.stringify` makes of a JSON value) and
`js_json_bytes` (its UTF-8 length). The agent tool's 32 KiB results budget and every
history byte budget (6 MiB, `maxBytes`, the tool's 80 KiB) are measured on that text, so
it sits here, below both (text measured in JavaScript's terms, beside `utf16`), so the numbers must be written as JavaScript writes them (`1.375e-6` is
`0.000001375`, `1e21` is `1e+21`, `3.0` is `3`), a lone surrogate as its `\\uXXXX`
escape (well-formed `JSON.stringify`) and an object's keys in JavaScript's property order
(array indices first). Must not touch: what is measured or the limits.

>>> js_json({"score": 1.375e-06, "timestamp": 123.0, "text": "é\\n"})
'{"score":0.000001375,"timestamp":123,"text":"é\\\\n"}'
>>> js_json_bytes(["é"])
6
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
            "\t": "\\t"}


def js_number(value: float | int) -> str:
    """ECMAScript `Number::toString` of a finite number (`null` for NaN and infinities,
    as `JSON.stringify` writes them).

    >>> [js_number(x) for x in (0.0, -0.0, 5, 2.5, 1e21, 1.5e-7, 1e-6, 123456789012.5)]
    ['0', '0', '5', '2.5', '1e+21', '1.5e-7', '0.000001', '123456789012.5']
    """
    if isinstance(value, bool):
        raise TypeError("a boolean is not a number")
    number = float(value)
    if not math.isfinite(number):
        return "null"
    if number == 0:
        return "0"
    sign = "-" if number < 0 else ""
    digits_tuple, exponent = Decimal(repr(abs(number))).normalize().as_tuple()[1:]
    digits = "".join(str(digit) for digit in digits_tuple)
    count = len(digits)
    point = count + int(exponent)  # value = 0.digits × 10^point
    if count <= point <= 21:
        return sign + digits + "0" * (point - count)
    if 0 < point <= 21:
        return sign + digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return sign + "0." + "0" * (-point) + digits
    shown = point - 1
    mantissa = digits[0] + ("." + digits[1:] if count > 1 else "")
    return f"{sign}{mantissa}e{'+' if shown >= 0 else '-'}{abs(shown)}"


def js_string(text: str) -> str:
    """`JSON.stringify` of a string.

    A Python string is read as the UTF-16 code units it encodes to: a high surrogate
    followed by a low one is one character to JavaScript (written as that character), any
    other surrogate is lone (written as its escape).

    >>> js_string('a"b' + chr(1) + chr(0xDC80))
    '"a\\\\"b\\\\u0001\\\\udc80"'
    >>> js_string(chr(0xD83D) + chr(0xDE00)) == '"\U0001f600"'
    True
    >>> js_string(chr(0xDE00) + chr(0xD83D))
    '"\\\\ude00\\\\ud83d"'
    """
    parts = ['"']
    position, length = 0, len(text)
    while position < length:
        character = text[position]
        code = ord(character)
        position += 1
        if character in _ESCAPES:
            parts.append(_ESCAPES[character])
        elif 0xD800 <= code <= 0xDBFF and position < length and (
                0xDC00 <= (low := ord(text[position])) <= 0xDFFF):
            parts.append(chr(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)))
            position += 1
        elif code < 0x20 or 0xD800 <= code <= 0xDFFF:
            parts.append(f"\\u{code:04x}")
        else:
            parts.append(character)
    parts.append('"')
    return "".join(parts)


def _is_array_index(key: str) -> bool:
    """Whether JavaScript orders `key` as an array index (`0` to `2**32 - 2`, canonical).

    >>> [_is_array_index(key) for key in ("0", "12", "012", "-1", "4294967294", "4294967295")]
    [True, True, False, False, True, False]
    """
    return key.isascii() and key.isdigit() and (key == "0" or key[0] != "0") and (
        int(key) <= 2**32 - 2)


def _property_order(keys: list[str]) -> list[str]:
    """The order JavaScript enumerates an object's own keys in: array indices ascending,
    then the other keys as they were inserted.

    >>> _property_order(["b", "10", "a", "2"])
    ['2', '10', 'b', 'a']
    """
    indices = sorted((key for key in keys if _is_array_index(key)), key=int)
    return indices + [key for key in keys if not _is_array_index(key)]


def js_json(value: Any) -> str:
    """`JSON.stringify(value)` for None, booleans, numbers, strings, lists and dicts."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (int, float)):
        return js_number(value)
    if isinstance(value, str):
        return js_string(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(js_json(item) for item in value) + "]"
    if isinstance(value, dict):
        keys = _property_order([str(key) for key in value])
        items = {str(key): item for key, item in value.items()}
        return "{" + ",".join(f"{js_string(key)}:{js_json(items[key])}" for key in keys) + "}"
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def js_json_bytes(value: Any) -> int:
    """The UTF-8 length of `JSON.stringify(value)` (its text is always well-formed)."""
    return len(js_json(value).encode("utf-8"))
