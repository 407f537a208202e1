"""The three macros a case file may write in place of a long value.

Owns: expanding `{"$repeat": ..., "times": n}`, `{"$join": [...]}` and
`{"$generate": "format {i}", "count": n}` anywhere in a JSON value. Must not touch:
what a value means (the case's step decides), files, or any backend: a backend under
test never sees a macro, only the values the runner expands them to.

Why macros: some cases need a value too long to write out (a query of 4,097 `x`, a
message of 60 words before its match, 33,000 session keys) and a reader must still see
what it is. The rules:

* `{"$repeat": TEXT, "times": N}` is TEXT written N times (TEXT may itself be a macro);
* `{"$join": [A, B, ...]}` joins strings into one string, or lists into one list;
* `{"$generate": FORMAT, "count": N}` is the list FORMAT.format(i=0), ..., i=N-1 (Python's
  format: `{i}` is the number, `{i:03d}` the number zero-padded to 3 digits).

Any other object or list is expanded member by member; an object with a key starting
with `$` that is not a macro is an error (`MacroError`), so a typo is never sent.
"""

from __future__ import annotations

from typing import Any


class MacroError(ValueError):
    """A macro written wrong; the message says which and how."""


def _count(value: dict[str, Any], name: str, macro: str) -> int:
    number = value.get(name)
    if isinstance(number, bool) or not isinstance(number, int) or number < 0:
        raise MacroError(f"{macro} needs \"{name}\": a whole number of at least 0")
    return number


def expand(value: Any) -> Any:
    """`value` with every macro replaced by what it stands for.

    >>> expand({"$repeat": "ab", "times": 3})
    'ababab'
    >>> expand({"$join": ["x ", {"$repeat": "y", "times": 2}]})
    'x yy'
    >>> expand({"keys": {"$join": [["main"], {"$generate": "k{i:02d}", "count": 2}]}})
    {'keys': ['main', 'k00', 'k01']}
    >>> expand({"$repaet": "x"})
    Traceback (most recent call last):
    ...
    engine.conformance.macros.MacroError: unknown macro $repaet (expected $repeat, $join or $generate)
    """
    if isinstance(value, list):
        return [expand(item) for item in value]
    if not isinstance(value, dict):
        return value
    macros = [key for key in value if isinstance(key, str) and key.startswith("$")]
    if not macros:
        return {key: expand(item) for key, item in value.items()}
    name = macros[0]
    if name == "$repeat":
        _only(value, name, ("times",))
        text = expand(value[name])
        if not isinstance(text, str):
            raise MacroError("$repeat repeats a string")
        return text * _count(value, "times", name)
    if name == "$join":
        _only(value, name, ())
        parts = expand(value[name])
        if not isinstance(parts, list) or not parts:
            raise MacroError("$join joins a non-empty list of strings, or of lists")
        if all(isinstance(part, str) for part in parts):
            return "".join(parts)
        if all(isinstance(part, list) for part in parts):
            return [item for part in parts for item in part]
        raise MacroError("$join joins strings with strings, or lists with lists")
    if name == "$generate":
        _only(value, name, ("count",))
        pattern = value[name]
        if not isinstance(pattern, str):
            raise MacroError("$generate needs a format string, such as \"agent:main:k{i}\"")
        try:
            return [pattern.format(i=number) for number in range(_count(value, "count", name))]
        except (KeyError, IndexError, ValueError) as error:
            raise MacroError(f"$generate: the format {pattern!r} does not work ({error})") from None
    raise MacroError(f"unknown macro {name} (expected $repeat, $join or $generate)")


def _only(value: dict[str, Any], name: str, others: tuple[str, ...]) -> None:
    extra = sorted(set(value) - {name, *others})
    if extra:
        raise MacroError(f"{name} takes only {', '.join((name, *others))}, not "
                         f"{', '.join(extra)}")
