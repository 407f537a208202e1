"""What a call's answer must be: the expectations of a case step, checked, and the diffs.

Owns: paths into a JSON answer (`hits[0].score`, `hits[*].messageId`, `hits.length`),
comparing JSON values under an order mode and a float tolerance, every expectation of a
call step (`EXPECT_KEYS` of `engine.conformance.case_files`), and `Mismatch`, a failed
expectation that renders as a readable diff. Must not touch: how the answer was
obtained (targets) or what a case is (case files, plan).

The expectations of a call step (`"expect": {...}`; any may be combined):

| key | holds when |
|---|---|
| `result` | the whole result equals this value |
| `match` | `{PATH: VALUE}`: the value at each path equals VALUE (`"$name"`: a saved value, also in `unordered` and `subset`) |
| `unordered` | `{PATH: [...]}`: the list at the path holds these items, in any order |
| `subset` | `{PATH: [...]}`: the list at the path holds at least these items |
| `prefix` | `{PATH: [...]}`: the list at the path starts with these items, in this order |
| `distinct` | `{PATH: [...]}`: the distinct values at the path are these, in any order |
| `contains` | `{PATH: TEXT}`: every string at the path contains TEXT |
| `atMost` | `{PATH: N}`: every number at the path is at most N |
| `absent` | `[PATH, ...]`: these members are not in the result |
| `members` | `{PATH: [NAME, ...]}`: each object at the path has exactly these members, in this order (the order a byte budget measures) |
| `wellFormed` | `[PATH, ...]`: every string there is well-formed UTF-16 (no lone surrogate) |
| `order` | how lists compare in `result` and `match`: `exact` (default), `set`, or `score-then-key` (scores must not rise; hits of equal score may come in any order) |
| `tolerance` | the relative difference allowed between two numbers that are not whole (default 1e-9) |
| `error` | `{"code"?, "message"?}`: the call must fail, with this code and message |
| `save` | `{NAME: PATH}`: remember a value for a later step's `"$NAME"` (in its params or its expectations) |

A call step with no `error` expectation must answer with a result. A path is member
names joined by dots; `[N]` picks an item of a list, `[*]` each item (the value is then
the list of what each item gives), and a final `length` is a list's item count or a
string's UTF-16 length, as in JavaScript.
"""

from __future__ import annotations

import difflib
import itertools
import json
import re
from dataclasses import dataclass
from typing import Any

#: The value of a path that leads nowhere.
MISSING = type("Missing", (), {"__repr__": lambda self: "<absent>"})()

DEFAULT_TOLERANCE = 1e-9
ORDER_MODES = ("exact", "set", "score-then-key")
_SEGMENT = re.compile(r"\[(\d+|\*)\]|\.?([^.\[\]]+)")


def parse_path(path: str) -> list[str | int]:
    """The segments of a path: names, list indexes, and `*`.

    >>> parse_path("hits[*].messageId"), parse_path("messages[0].__openclaw.id")
    (['hits', '*', 'messageId'], ['messages', 0, '__openclaw', 'id'])
    """
    segments: list[str | int] = []
    position = 0
    while position < len(path):
        found = _SEGMENT.match(path, position)
        if found is None:
            raise ValueError(f"cannot read the path {path!r} at {path[position:]!r}")
        index, name = found.groups()
        segments.append(name if name is not None else ("*" if index == "*" else int(index)))
        position = found.end()
    return segments


def utf16_length(text: str) -> int:
    """JavaScript's `length` of a string.

    >>> utf16_length("a\\U00010400")
    3
    """
    return len(text) + sum(1 for character in text if ord(character) > 0xFFFF)


def select(value: Any, path: str) -> Any:
    """The value at `path` in `value` (`MISSING` when it leads nowhere).

    >>> answer = {"hits": [{"messageId": "m1", "snippet": "ab"}, {"messageId": "m2"}]}
    >>> select(answer, "hits[*].messageId"), select(answer, "hits.length")
    (['m1', 'm2'], 2)
    >>> select(answer, "hits[1].snippet")
    <absent>
    """
    return _walk(value, parse_path(path))


def _walk(value: Any, segments: list[str | int]) -> Any:
    if not segments:
        return value
    segment, rest = segments[0], segments[1:]
    if segment == "*":
        if not isinstance(value, list):
            return MISSING
        return [_walk(item, rest) for item in value]
    if isinstance(segment, int):
        if isinstance(value, list) and segment < len(value):
            return _walk(value[segment], rest)
        return MISSING
    if segment == "length" and not rest and isinstance(value, (list, str)):
        return len(value) if isinstance(value, list) else utf16_length(value)
    if isinstance(value, dict) and segment in value:
        return _walk(value[segment], rest)
    return MISSING


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _score_key(item: Any) -> tuple[float, str]:
    score = item.get("score") if isinstance(item, dict) else None
    rest = {key: value for key, value in item.items() if key != "score"} if isinstance(
        item, dict) else item
    return (-score if _is_number(score) else 0.0,
            json.dumps(rest, sort_keys=True, ensure_ascii=False))


def equal(expected: Any, actual: Any, *, order: str = "exact",
          tolerance: float = DEFAULT_TOLERANCE) -> bool:
    """Whether two JSON values are equal under an order mode and a float tolerance.

    >>> equal([1, 2], [2, 1], order="set"), equal(1.0000000001, 1.0), equal(1, 1.5)
    (True, True, False)
    >>> equal([{"score": 2, "id": "a"}, {"score": 2, "id": "b"}],
    ...       [{"score": 2, "id": "b"}, {"score": 2, "id": "a"}], order="score-then-key")
    True
    """
    if _is_number(expected) and _is_number(actual):
        if expected == actual:
            return True
        return abs(expected - actual) <= tolerance * max(abs(expected), abs(actual))
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return False
        if order == "set":
            return _same_items(expected, actual, order, tolerance)
        if order == "score-then-key" and all(isinstance(item, dict) and _is_number(
                item.get("score")) for item in actual):
            scores = [item["score"] for item in actual]
            if any(later > earlier * (1 + tolerance) + tolerance
                   for earlier, later in itertools.pairwise(scores)):
                return False
            expected, actual = sorted(expected, key=_score_key), sorted(actual, key=_score_key)
        return all(equal(e, a, order=order, tolerance=tolerance)
                   for e, a in zip(expected, actual))
    if isinstance(expected, dict) and isinstance(actual, dict):
        return expected.keys() == actual.keys() and all(
            equal(expected[key], actual[key], order=order, tolerance=tolerance)
            for key in expected)
    return type(expected) is type(actual) and expected == actual


def _same_items(expected: list[Any], actual: list[Any], order: str, tolerance: float,
                *, at_least: bool = False) -> bool:
    """Every expected item matches its own actual item (all of them unless `at_least`)."""
    unused = list(actual)
    for item in expected:
        for position, candidate in enumerate(unused):
            if equal(item, candidate, order=order, tolerance=tolerance):
                del unused[position]
                break
        else:
            return False
    return at_least or not unused


@dataclass(frozen=True, slots=True)
class Mismatch:
    """One expectation that did not hold: which (`what`), the expected and the actual
    value, and a note saying how they differ when the values alone do not."""

    what: str
    expected: Any
    actual: Any
    note: str = ""

    def render(self, width: int = 40) -> str:
        """The mismatch as text: one line for short values, else a unified diff of the
        two values as indented JSON (at most `width` lines of it)."""
        expected, actual = _shown(self.expected), _shown(self.actual)
        head = f"{self.what}{': ' + self.note if self.note else ''}"
        if "\n" not in expected + actual and len(expected) + len(actual) < 160:
            return f"{head}\n  expected {expected}\n  actual   {actual}"
        lines = list(difflib.unified_diff(expected.splitlines(), actual.splitlines(),
                                          "expected", "actual", lineterm="", n=2))
        if len(lines) > width:
            lines = [*lines[:width], f"... ({len(lines) - width} more diff lines)"]
        return head + "\n" + "\n".join("  " + line for line in lines)

    def to_json(self) -> dict[str, Any]:
        return {"what": self.what, "expected": _jsonable(self.expected),
                "actual": _jsonable(self.actual), "note": self.note}


def _jsonable(value: Any) -> Any:
    return None if value is MISSING else value


def _shown(value: Any) -> str:
    if value is MISSING:
        return "<absent>"
    text = json.dumps(value, ensure_ascii=False)
    if len(text) < 100:
        return text
    return json.dumps(value, ensure_ascii=False, indent=1)


def _values(selected: Any, path: str) -> list[Any]:
    """The values a path gives, one each (a `[*]` path gives a list of them)."""
    if "[*]" in path and isinstance(selected, list):
        return list(selected)
    return [selected]


def with_saved(value: Any, saved: dict[str, Any]) -> Any:
    """`value` with every string `"$NAME"` that names a saved value replaced by it (a
    step passes on what an earlier one answered: a history cursor, a score).

    >>> with_saved({"cursor": "$older", "query": "$5"}, {"older": "abc"})
    {'cursor': 'abc', 'query': '$5'}
    """
    if isinstance(value, str) and value.startswith("$") and value[1:] in saved:
        return saved[value[1:]]
    if isinstance(value, list):
        return [with_saved(item, saved) for item in value]
    if isinstance(value, dict):
        return {key: with_saved(item, saved) for key, item in value.items()}
    return value


def check(expect: dict[str, Any], result: Any, error: dict[str, Any] | None,
          saved: dict[str, Any]) -> list[Mismatch]:
    """Every expectation of one call that does not hold, given its `result` or `error`;
    `saved` holds the values earlier steps saved and learns this step's."""
    if "error" in expect:
        wanted = expect["error"]
        if error is None:
            return [Mismatch("error", wanted, result, "the call succeeded")]
        return [Mismatch(f"error {name}", wanted[name], error.get(name))
                for name in ("code", "message") if name in wanted
                and wanted[name] != error.get(name)]
    if error is not None:
        return [Mismatch("result", expect.get("result", "a result"), {"error": error},
                         "the call failed")]
    order = expect.get("order", "exact")
    tolerance = expect.get("tolerance", DEFAULT_TOLERANCE)
    mismatches = []
    if "result" in expect and not equal(expect["result"], result, order=order,
                                        tolerance=tolerance):
        mismatches.append(Mismatch("result", expect["result"], result))
    for path, wanted in expect.get("match", {}).items():
        wanted, actual = with_saved(wanted, saved), select(result, path)
        if not equal(wanted, actual, order=order, tolerance=tolerance):
            mismatches.append(Mismatch(f"match {path}", wanted, actual))
    for path, wanted in expect.get("unordered", {}).items():
        wanted, actual = with_saved(wanted, saved), select(result, path)
        if not (isinstance(actual, list) and equal(wanted, actual, order="set",
                                                   tolerance=tolerance)):
            mismatches.append(Mismatch(f"unordered {path}", wanted, actual,
                                       "the items differ (in any order)"))
    for path, wanted in expect.get("subset", {}).items():
        wanted, actual = with_saved(wanted, saved), select(result, path)
        if not (isinstance(actual, list) and _same_items(wanted, actual, order, tolerance,
                                                         at_least=True)):
            mismatches.append(Mismatch(f"subset {path}", wanted, actual,
                                       "some expected items are missing"))
    for path, wanted in expect.get("prefix", {}).items():
        wanted, actual = with_saved(wanted, saved), select(result, path)
        if not (isinstance(actual, list) and isinstance(wanted, list)
                and equal(wanted, actual[:len(wanted)], order=order, tolerance=tolerance)):
            mismatches.append(Mismatch(f"prefix {path}", wanted, actual,
                                       "the list does not start with these items"))
    for path, wanted in expect.get("distinct", {}).items():
        actual = select(result, path)
        values = _values(actual, path)
        unique = [value for number, value in enumerate(values) if value not in values[:number]]
        if not equal(wanted, unique, order="set", tolerance=tolerance):
            mismatches.append(Mismatch(f"distinct {path}", wanted, unique,
                                       "the distinct values differ (in any order)"))
    for path, text in expect.get("contains", {}).items():
        actual = select(result, path)
        values = _values(actual, path)
        if not values or not all(isinstance(value, str) and text in value for value in values):
            mismatches.append(Mismatch(f"contains {path}", text, actual,
                                       f"every string must contain {text!r}"))
    for path, limit in expect.get("atMost", {}).items():
        actual = select(result, path)
        values = _values(actual, path)
        if not all(_is_number(value) and value <= limit for value in values):
            mismatches.append(Mismatch(f"atMost {path}", limit, actual,
                                       f"every value must be at most {limit}"))
    for path in expect.get("absent", []):
        actual = select(result, path)
        if actual is not MISSING:
            mismatches.append(Mismatch(f"absent {path}", MISSING, actual,
                                       "the member must not be there"))
    for path, names in expect.get("members", {}).items():
        actual = select(result, path)
        if not all(isinstance(value, dict) and list(value) == names
                   for value in _values(actual, path)):
            shown = [list(value) if isinstance(value, dict) else value
                     for value in _values(actual, path)]
            mismatches.append(Mismatch(f"members {path}", names, shown,
                                       "the members or their order differ"))
    for path in expect.get("wellFormed", []):
        actual = select(result, path)
        if not all(isinstance(value, str) and not re.search("[\ud800-\udfff]", value)
                   for value in _values(actual, path)):
            mismatches.append(Mismatch(f"wellFormed {path}", "well-formed UTF-16", actual,
                                       "a string holds a lone surrogate"))
    for name, path in expect.get("save", {}).items():
        saved[name] = select(result, path)
    return mismatches
