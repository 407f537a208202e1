"""The size of a value as JavaScript's `JSON.stringify` writes it, in UTF-8 bytes.

Owns: `json_bytes` (upstream's `jsonUtf8Bytes`) and `js_number`, the ECMAScript
`Number.prototype.toString` it needs. Must not touch: anything else. Every byte budget
of history (the Gateway's 6 MiB and `maxBytes`, the tool's 80 KiB) measures with it, so
a page is cut where OpenClaw cuts it.

What differs from Python's `json.dumps` and is emulated: no spaces after separators;
non-ASCII written as itself; a lone surrogate written as its `\\uXXXX` escape (well-formed
`JSON.stringify`); numbers as JavaScript prints them (`1790000000000`, not
`1790000000000.0`; `1e-7`, not `1e-07`; `0.00001`, not `1e-05`; an integer beyond 2^53 as
the double it becomes); NaN and infinities as `null`. Object key order does not change
a size, so it is not emulated.
"""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from typing import Any

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")

#: The largest integer a double holds exactly; larger ones print as doubles in JavaScript.
SAFE_INTEGER = 2 ** 53


def js_number(value: int | float) -> str:
    """A number as JavaScript's `String(value)` writes it (`null` when not finite, as
    `JSON.stringify` writes it).

    >>> [js_number(x) for x in (1790000000000.0, 1.5, 1e21, 1.5e22, 1e-7, 0.00001, -0.0)]
    ['1790000000000', '1.5', '1e+21', '1.5e+22', '1e-7', '0.00001', '0']
    >>> js_number(123456789012345678901234), js_number(float("nan")), js_number(2 ** 53)
    ('1.2345678901234569e+23', 'null', '9007199254740992')
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if -SAFE_INTEGER <= value <= SAFE_INTEGER:
            return str(value)
        value = float(value)
    if not math.isfinite(value):
        return "null"
    if value == 0:
        return "0"
    sign, digit_tuple, exponent = Decimal(repr(value)).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0") or "0"
    exponent = int(exponent) + len(digit_tuple) - len(digits)
    point = len(digits) + exponent  # the decimal point sits after `point` digits
    prefix = "-" if sign else ""
    if len(digits) <= point <= 21:
        return prefix + digits + "0" * (point - len(digits))
    if 0 < point <= 21:
        return prefix + digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return prefix + "0." + "0" * -point + digits
    shown = point - 1
    mantissa = digits if len(digits) == 1 else digits[0] + "." + digits[1:]
    return f"{prefix}{mantissa}e{'+' if shown > 0 else '-'}{abs(shown)}"


def js_json(value: Any) -> str:
    """`JSON.stringify(value)` (see the module docstring for what is emulated).

    >>> js_json({"a": [1.0, "é", None, True], "b": "\\ud800"})
    '{"a":[1,"é",null,true],"b":"\\\\ud800"}'
    """
    parts: list[str] = []
    _write(value, parts)
    return "".join(parts)


def json_bytes(value: Any) -> int:
    """The UTF-8 length of `js_json(value)`.

    >>> json_bytes(["é"]), json_bytes({"timestamp": 1790000000000.0})
    (6, 27)
    """
    return len(js_json(value).encode("utf-8"))


def _write(value: Any, parts: list[str]) -> None:
    if isinstance(value, str):
        parts.append(_string(value))
    elif value is None:
        parts.append("null")
    elif isinstance(value, (bool, int, float)):
        parts.append(js_number(value))
    elif isinstance(value, dict):
        parts.append("{")
        first = True
        for key, member in value.items():
            if not first:
                parts.append(",")
            first = False
            parts.append(_string(str(key)))
            parts.append(":")
            _write(member, parts)
        parts.append("}")
    elif isinstance(value, (list, tuple)):
        parts.append("[")
        for index, member in enumerate(value):
            if index:
                parts.append(",")
            _write(member, parts)
        parts.append("]")
    else:
        parts.append(_string(str(value)))


def _string(text: str) -> str:
    encoded = json.dumps(text, ensure_ascii=False)
    if _LONE_SURROGATE.search(encoded):
        encoded = _LONE_SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", encoded)
    return encoded
