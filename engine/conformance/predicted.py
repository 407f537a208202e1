"""A backend's own expectations in the case files, made from the engine that predicts it.

Owns: running cases on the engine that predicts the backends of an expectation set
(`PREDICTORS`: `reference:postgres`, the reference engine in its postgres expectation
mode, for `postgres`), deriving a call's `expectOn` entry from its expectation and the
answer the predictor gave (`derived_expect`), and writing that entry into the case file
as a member of the call's step (`with_step_member`), leaving every other byte of the
file as it was written. Must not touch: what a case is or may say
(`engine.conformance.case_files`), how a call runs or compares (`targets`, `compare`),
or the engine's answers themselves.

Why the entries are generated, and from the predictor rather than from the backend: the
reference engine is the oracle, so a case's PostgreSQL expectation is what the reference
says PostgreSQL answers (the `pg` profile's tokens, `ts_rank` in Python); the real server
is then held to it (`session-search conform --backend postgres`), and a difference is a
bug in one of them, found, instead of the server's answer copied into the oracle.
Why a case differs is not something an answer can tell: a human writes it first, as
the case's `differsOn` entry (the part of the specification that lets the backend
differ, and how), and only a case that says why gets generated expectations.

Run from the checkout's root (it rewrites the case files in place):

    python -m engine.conformance.predicted postgres [--case ID-PREFIX ...] [--cases DIR]

Every selected case runs on the predictor, each call expecting what the set is held to
(its `expectOn` entry, else its `expect`). A call whose expectation does not hold gets
`expectOn.SET` derived from the answer: a whole `result`, the values of `match` paths
and `unordered` lists, the first items of `prefix` lists and the `distinct` values are
the answer's; the other expectations (`error`, `subset`, `contains`, `atMost`, `absent`,
`members`, `wellFormed`, `order`, `tolerance`, `save`) are kept as written, and if the
answer breaks one of them the case is reported for a human instead of rewritten. A case
that fails without a `differsOn` entry for the set is reported, not rewritten, and so is
one whose `differsOn` entry is idle (it passes without any override). Exit status 1 when
anything was reported.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.conformance.case_files import CASES_FOLDER, Case, load_cases
from engine.conformance.compare import MISSING, check, select, with_saved
from engine.conformance.plan import plan_case
from engine.conformance.runner import select_cases
from engine.conformance.targets import InProcessTarget, Target

#: The in-process backend that predicts the backends of each expectation set.
PREDICTORS: dict[str, str] = {"postgres": "reference:postgres"}

#: Expectations whose values are the answer's own (the others are kept as written).
DERIVED_KEYS = ("result", "match", "unordered", "prefix", "distinct")

#: The width the generated members are folded to (the case files' own is about this).
LINE_WIDTH = 100


@dataclass(frozen=True, slots=True)
class Override:
    """One call's expectation for a set: the case, the index of its step, the entry."""

    case: Case
    step: int
    expect: dict[str, Any]


class NotDerivable(ValueError):
    """The answer breaks an expectation whose value cannot come from an answer."""


def derived_expect(expect: dict[str, Any], result: Any, saved: dict[str, Any]) -> dict[str, Any]:
    """`expect` with the values that did not hold replaced by the answer's (`result`);
    `NotDerivable` when the answer breaks an expectation kept as written.

    >>> derived_expect({"match": {"hits[*].id": ["a", "b"], "truncated": False}},
    ...                {"hits": [{"id": "b"}, {"id": "a"}], "truncated": False}, {})
    {'match': {'hits[*].id': ['b', 'a'], 'truncated': False}}
    >>> derived_expect({"prefix": {"hits[*].id": ["a"]}, "atMost": {"hits.length": 2}},
    ...                {"hits": [{"id": "b"}, {"id": "a"}]}, {})
    {'prefix': {'hits[*].id': ['b']}, 'atMost': {'hits.length': 2}}
    """
    settings = {key: expect[key] for key in ("order", "tolerance") if key in expect}
    derived: dict[str, Any] = {}
    for key, value in expect.items():
        if key == "result":
            holds = not check({**settings, "result": value}, result, None, dict(saved))
            derived[key] = value if holds else result
        elif key in DERIVED_KEYS:
            derived[key] = {}
            for path, wanted in value.items():
                holds = not check({**settings, key: {path: wanted}}, result, None, dict(saved))
                derived[key][path] = wanted if holds else _answered(key, path, wanted, result)
        else:
            derived[key] = value
    problems = check(derived, result, None, dict(saved))
    if problems:
        raise NotDerivable("; ".join(f"{problem.what}: {problem.note or 'differs'}"
                                     for problem in problems))
    return derived


def _answered(key: str, path: str, wanted: Any, result: Any) -> Any:
    """What an expectation of kind `key` at `path` says of the answer `result`."""
    actual = select(result, path)
    if actual is MISSING:
        raise NotDerivable(f"{key} {path}: the answer has nothing there")
    if key == "prefix" and isinstance(actual, list) and isinstance(wanted, list):
        return actual[:len(wanted)]
    if key == "distinct":
        values = actual if "[*]" in path and isinstance(actual, list) else [actual]
        return [value for number, value in enumerate(values) if value not in values[:number]]
    return actual


# ----- running the predictor ----------------------------------------------------------


def predicted_overrides(target: Target, case: Case, expectation_set: str) -> list[Override]:
    """Run `case` on `target` (the predictor), each call expecting what `expectation_set`
    is held to; the expectation each call that did not hold should have instead."""
    overrides = []
    saved: dict[str, Any] = {}
    if target.call("conformance.reset", {}).error is not None:
        raise NotDerivable(f"{case.id}: conformance.reset failed")
    for call in plan_case(case, expectation_set):
        reply = target.call(call.method, with_saved(call.params, saved))
        if call.expect is None:
            if reply.error is not None:
                raise NotDerivable(f"{case.id}: set-up failed at {call.label()}: "
                                   f"{reply.error.get('message')}")
            continue
        before = dict(saved)
        if not check(call.expect, reply.result, reply.error, saved):
            continue
        if reply.error is not None or "error" in call.expect or call.step is None:
            raise NotDerivable(f"{case.id} at {call.label()}: an error is no answer to "
                               "derive from")
        try:
            overrides.append(Override(case, call.step,
                                      derived_expect(call.expect, reply.result, before)))
        except NotDerivable as reason:
            raise NotDerivable(f"{case.id} at {call.label()}: {reason}") from None
    return overrides


# ----- writing a member into a case file's text --------------------------------------

_DECODER = json.JSONDecoder()


def _skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position] in " \t\r\n":
        position += 1
    return position


def _members(text: str, position: int) -> list[tuple[str, int, int, int]]:
    """The members of the JSON object starting at `position`: (name, where the name
    starts, where the value starts, where it ends)."""
    members = []
    position = _skip_space(text, position + 1)
    while text[position] != "}":
        name_start = position
        name, position = _DECODER.raw_decode(text, position)
        position = _skip_space(text, position)
        value_start = _skip_space(text, position + 1)  # past the ':'
        _, value_end = _DECODER.raw_decode(text, value_start)
        members.append((name, name_start, value_start, value_end))
        position = _skip_space(text, value_end)
        if text[position] == ",":
            position = _skip_space(text, position + 1)
    return members


def _items(text: str, position: int) -> list[int]:
    """Where each item of the JSON array starting at `position` starts."""
    starts = []
    position = _skip_space(text, position + 1)
    while text[position] != "]":
        starts.append(position)
        _, position = _DECODER.raw_decode(text, position)
        position = _skip_space(text, position)
        if text[position] == ",":
            position = _skip_space(text, position + 1)
    return starts


def folded(value: Any, indent: int, width: int = LINE_WIDTH, column: int | None = None) -> str:
    """`value` as JSON written from `column` (default `indent`) of a line indented by
    `indent`: on one line when it fits in `width`, else one member or item a line,
    indented two more, the closing bracket at `indent`.

    >>> print(folded({"a": [1, 2], "b": "x" * 8}, 0, width=16))
    {
      "a": [1, 2],
      "b": "xxxxxxxx"
    }
    """
    one_line = json.dumps(value, ensure_ascii=False)
    start = indent if column is None else column
    if start + len(one_line) <= width or not isinstance(value, (dict, list)) or not value:
        return one_line
    inner = " " * (indent + 2)
    if isinstance(value, dict):
        lines = []
        for name, item in value.items():
            label = json.dumps(name, ensure_ascii=False) + ": "
            lines.append(inner + label + folded(item, indent + 2, width,
                                               indent + 2 + len(label)))
        return "{\n" + ",\n".join(lines) + "\n" + " " * indent + "}"
    lines = [inner + folded(item, indent + 2, width) for item in value]
    return "[\n" + ",\n".join(lines) + "\n" + " " * indent + "]"


def with_step_member(text: str, case_id: str, step: int, name: str, value: Any) -> str:
    """The case file `text` with member `name` of step `step` of case `case_id` set to
    `value` (after the step's last member, or in place of the member it replaces), every
    other byte kept.

    >>> text = '{"cases": [{"id": "a/b", "steps": [\\n  {"call": "x", "expect": {}}\\n]}]}'
    >>> print(with_step_member(text, "a/b", 0, "expectOn", {"postgres": {}}))
    {"cases": [{"id": "a/b", "steps": [
      {"call": "x", "expect": {}, "expectOn": {"postgres": {}}}
    ]}]}
    """
    root = {member[0]: member for member in _members(text, _skip_space(text, 0))}
    for case_start in _items(text, root["cases"][2]):
        case = {member[0]: member for member in _members(text, case_start)}
        if json.loads(text[case["id"][2]:case["id"][3]]) == case_id:
            break
    else:
        raise KeyError(f"no case {case_id}")
    step_start = _items(text, case["steps"][2])[step]
    members = _members(text, step_start)
    existing = next((member for member in members if member[0] == name), None)
    label = json.dumps(name) + ": "
    if existing is not None:
        indent = existing[1] - (text.rfind("\n", 0, existing[1]) + 1)
        return (text[:existing[2]] + folded(value, indent, column=indent + len(label))
                + text[existing[3]:])
    last = members[-1]
    if "\n" in text[step_start:last[1]]:  # one member a line: a new line, same indent
        indent = last[1] - (text.rfind("\n", 0, last[1]) + 1)
        addition = ",\n" + " " * indent + label + folded(value, indent,
                                                         column=indent + len(label))
    else:
        addition = f", {json.dumps(name)}: {json.dumps(value, ensure_ascii=False)}"
    return text[:last[3]] + addition + text[last[3]:]


# ----- the command ---------------------------------------------------------------------


def fill_expectations(expectation_set: str, cases: Sequence[Case], folder: Path,
                      report: Any = print) -> int:
    """Run `cases` on the predictor of `expectation_set` and write the overrides their
    failing calls need into the files under `folder`; the number of cases `report` was
    told of (a case without its `differsOn` entry, or one whose answer cannot become an
    expectation)."""
    target = InProcessTarget(PREDICTORS[expectation_set])
    problems = 0
    try:
        for case in cases:
            try:
                overrides = predicted_overrides(target, case, expectation_set)
            except NotDerivable as reason:
                report(f"{case.id}: not rewritten: {reason}")
                problems += 1
                continue
            if not overrides:
                overridden = any(expectation_set in step.get("expectOn", {})
                                 for step in case.steps)
                if case.differs_on(expectation_set) is not None and not overridden:
                    report(f"{case.id}: differsOn.{expectation_set} says why it differs, but "
                           f"it passes on {PREDICTORS[expectation_set]} as it is: remove it")
                    problems += 1
                continue
            if case.differs_on(expectation_set) is None:
                report(f"{case.id}: fails on {PREDICTORS[expectation_set]} but says nowhere "
                       f"why ({len(overrides)} call(s)): write differsOn.{expectation_set} "
                       "first (docs/conformance.md)")
                problems += 1
                continue
            path = folder / case.source
            text = path.read_text(encoding="utf-8")
            for override in overrides:
                step = case.steps[override.step]
                entry = {**step.get("expectOn", {}), expectation_set: override.expect}
                text = with_step_member(text, case.id, override.step, "expectOn", entry)
            path.write_text(text, encoding="utf-8")
            report(f"{case.id}: expectOn.{expectation_set} written for step(s) "
                   f"{', '.join(str(override.step) for override in overrides)}")
    finally:
        target.close()
    return problems


def main(arguments: Sequence[str]) -> int:
    """`python -m engine.conformance.predicted SET [--case ID ...] [--cases DIR]`."""
    parser = argparse.ArgumentParser(
        prog="python -m engine.conformance.predicted",
        description="Write the expectations of an expectation set into the case files, "
                    "from the answers of the engine that predicts its backends.")
    parser.add_argument("expectation_set", choices=sorted(PREDICTORS))
    parser.add_argument("--case", nargs="+", default=(), metavar="ID",
                        help="only the cases whose id starts with one of these")
    parser.add_argument("--cases", metavar="DIR", default=None,
                        help="the folder of case files (default: the shipped ones)")
    args = parser.parse_args(arguments)
    folder = Path(args.cases) if args.cases else CASES_FOLDER
    cases = select_cases(load_cases(folder), ids=args.case)
    return 1 if fill_expectations(args.expectation_set, cases, folder) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
