"""Running cases against a target: each on an empty store, each with its outcome.

Owns: `describe_target` (what `conformance.describe` says, or why it says nothing),
`run_case` (reset, corpus, configuration, steps, every expectation checked), `run_cases`
(all of them in order, with the per-case progress callback and the restart after a
crash or a hang), the expectations file (`Expectations`: the cases an implementation is
known to fail, each with its reason) and `CaseOutcome`, what became of one case. Must
not touch: how a call travels (`engine.conformance.targets`), how values compare
(`engine.conformance.compare`) or how a run is reported (`engine.conformance.report`).

Statuses: `passed`; `failed` (an expectation did not hold, a set-up call failed, or the
backend crashed or hung: `reason` says which); `skipped` (the backend lacks a feature or
method the case needs, answered a call with the skip code -32002, or the expectations
file says to skip it); `expected-failure` (failed, and the expectations file lists it);
`fixed` (the expectations file lists it as failing, and it passed). `failed` and `fixed`
are the unexpected results: a run with any of them exits with status 1.

An expectations file (JSON; docs/conformance.md):

    {"implementation": "openclaw 2026.9.6", "comment": "...",
     "cases": {"CASE-ID": {"status": "fail" | "skip", "reason": "why"}},
     "features": {"FEATURE": {"status": "fail" | "skip", "reason": "why"}}}

An entry under `features` applies to every case tagged with that feature.

Which answers a case expects: those of the expectation set the backend names in its
`conformance.describe` answer (`expectationSet`, `sqlite` when it names none; a name
that is no set is a `TargetFailure`), `engine.conformance.plan` picks each call's.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.conformance.case_files import (
    DEFAULT_EXPECTATION_SET,
    EXPECTATION_SETS,
    Case,
    CaseFileError,
)
from engine.conformance.compare import Mismatch, check, with_saved
from engine.conformance.plan import plan_case
from engine.conformance.targets import SKIPPED, Target, TargetFailure

STATUSES = ("passed", "failed", "skipped", "expected-failure", "fixed")
UNEXPECTED = ("failed", "fixed")


@dataclass(frozen=True, slots=True)
class Description:
    """What a backend says of itself (`conformance.describe`): `expectation_set` is the
    set of expectations it is held to (`expectationSet`; `sqlite` when it says none)."""

    name: str
    version: str
    methods: frozenset[str] | None
    unsupported_features: frozenset[str]
    raw: dict[str, Any]
    expectation_set: str = DEFAULT_EXPECTATION_SET


def describe_target(target: Target) -> Description:
    """Ask `target` to describe itself; `TargetFailure` when it cannot."""
    reply = target.call("conformance.describe", {})
    if reply.error is not None:
        raise TargetFailure(f"conformance.describe failed: {reply.error.get('message')} "
                            f"(code {reply.error.get('code')}); a backend under test must "
                            "answer the set-up methods (docs/conformance.md)")
    raw = reply.result if isinstance(reply.result, dict) else {}
    methods = raw.get("methods")
    expectation_set = raw.get("expectationSet", DEFAULT_EXPECTATION_SET)
    if not isinstance(expectation_set, str) or expectation_set not in EXPECTATION_SETS:
        raise TargetFailure(f"conformance.describe names the expectation set "
                            f"{expectation_set!r}; the sets are {', '.join(EXPECTATION_SETS)} "
                            "(docs/conformance.md)")
    return Description(
        name=str(raw.get("name", target.name)), version=str(raw.get("version", "")),
        methods=frozenset(methods) if isinstance(methods, list) else None,
        unsupported_features=frozenset(raw.get("unsupportedFeatures") or ()), raw=raw,
        expectation_set=expectation_set)


@dataclass(frozen=True, slots=True)
class Expected:
    """One entry of an expectations file: `fail` or `skip`, and why."""

    status: str
    reason: str


@dataclass(frozen=True, slots=True)
class Expectations:
    """The known failures and skips of one implementation."""

    implementation: str = ""
    cases: dict[str, Expected] = field(default_factory=dict)
    features: dict[str, Expected] = field(default_factory=dict)

    def of(self, case: Case) -> Expected | None:
        """The entry that applies to `case`: its own, else one of its features'."""
        if case.id in self.cases:
            return self.cases[case.id]
        for feature in case.features:
            if feature in self.features:
                return self.features[feature]
        return None

    @classmethod
    def read(cls, path: Path) -> Expectations:
        """An expectations file; `CaseFileError` naming the file and the entry when it is
        not valid."""
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as error:
            raise CaseFileError(f"{path}: cannot read the expectations file ({error})") from None
        if not isinstance(document, dict) or set(document) - {"implementation", "comment",
                                                              "cases", "features"}:
            raise CaseFileError(f"{path}: an expectations file is an object with "
                                "implementation, comment, cases and features")
        entries: dict[str, dict[str, Expected]] = {}
        for group in ("cases", "features"):
            entries[group] = {}
            for name, entry in (document.get(group) or {}).items():
                if (not isinstance(entry, dict) or entry.get("status") not in ("fail", "skip")
                        or not isinstance(entry.get("reason"), str) or not entry["reason"]):
                    raise CaseFileError(f"{path}: {group}.{name} must be {{\"status\": "
                                        "\"fail\" | \"skip\", \"reason\": \"why\"}")
                entries[group][name] = Expected(entry["status"], entry["reason"])
        return cls(str(document.get("implementation", "")), entries["cases"],
                   entries["features"])


@dataclass(frozen=True, slots=True)
class CaseOutcome:
    """What became of one case: its status, why (for anything but a pass), the
    mismatches with the call each came from, and the seconds it took."""

    case: Case
    status: str
    reason: str = ""
    mismatches: tuple[tuple[str, Mismatch], ...] = ()
    seconds: float = 0.0

    @property
    def unexpected(self) -> bool:
        return self.status in UNEXPECTED

    def details(self) -> str:
        """The reason and every mismatch as readable text (the report's diff)."""
        parts = [self.reason] if self.reason else []
        for label, mismatch in self.mismatches:
            parts.append(f"at {label}\n{mismatch.render()}")
        return "\n".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.case.id, "file": self.case.source, "spec": list(self.case.spec),
                "features": list(self.case.features), "status": self.status,
                "reason": self.reason, "seconds": round(self.seconds, 4),
                "mismatches": [{"call": label, **mismatch.to_json()}
                               for label, mismatch in self.mismatches]}


def _skip_reason(case: Case, description: Description) -> str | None:
    lacking = sorted(set(case.features) & description.unsupported_features)
    if lacking:
        return f"the backend does not support {', '.join(lacking)}"
    if description.methods is not None:
        missing = sorted({call.method for call in plan_case(case)} - description.methods)
        if missing:
            return f"the backend does not offer {', '.join(missing)}"
    return None


def _raw_outcome(target: Target, case: Case, expectation_set: str
                 ) -> tuple[str, str, list[tuple[str, Mismatch]]]:
    """Run one case, expecting what `expectation_set` is held to: (status, reason,
    mismatches), before the expectations file."""
    calls = plan_case(case, expectation_set)
    reply = target.call("conformance.reset", {})
    if reply.error is not None:
        return "failed", f"conformance.reset failed: {reply.error.get('message')}", []
    saved: dict[str, Any] = {}
    mismatches: list[tuple[str, Mismatch]] = []
    for call in calls:
        reply = target.call(call.method, with_saved(call.params, saved))
        if reply.error is not None and reply.error.get("code") == SKIPPED:
            return "skipped", f"{call.method}: {reply.error.get('message')}", []
        if call.expect is None:
            if reply.error is not None:
                return "failed", (f"set-up failed at {call.label()}: "
                                  f"{reply.error.get('message')} (code {reply.error.get('code')})"
                                  ), mismatches
            continue
        for mismatch in check(call.expect, reply.result, reply.error, saved):
            mismatches.append((call.label(), mismatch))
    if mismatches:
        return "failed", f"{len(mismatches)} expectation(s) did not hold", mismatches
    return "passed", "", []


def run_case(target: Target, case: Case, description: Description,
             expected: Expected | None = None) -> CaseOutcome:
    """Run one case on `target` (restarting it after a crash or a hang) and weigh the
    outcome against its expectations-file entry."""
    started = time.perf_counter()
    if expected is not None and expected.status == "skip":
        return CaseOutcome(case, "skipped", f"the expectations file skips it: {expected.reason}")
    reason = _skip_reason(case, description)
    if reason is not None:
        return CaseOutcome(case, "skipped", reason)
    try:
        status, reason, mismatches = _raw_outcome(target, case, description.expectation_set)
    except TargetFailure as failure:
        target.restart()
        status, reason, mismatches = "failed", str(failure), []
    seconds = time.perf_counter() - started
    if expected is not None and status == "failed":
        return CaseOutcome(case, "expected-failure", f"known: {expected.reason}",
                           tuple(mismatches), seconds)
    if expected is not None and status == "passed":
        return CaseOutcome(case, "fixed", "it passes although the expectations file lists "
                           f"it as failing ({expected.reason}): remove the entry", (), seconds)
    return CaseOutcome(case, status, reason, tuple(mismatches), seconds)


Progress = Callable[[int, int, CaseOutcome], None]


def run_cases(target: Target, cases: Sequence[Case], *,
              expectations: Expectations | None = None,
              progress: Progress | None = None) -> tuple[Description, list[CaseOutcome]]:
    """Describe `target`, then run every case; `progress(done, total, outcome)` after each."""
    expectations = expectations or Expectations()
    description = describe_target(target)
    outcomes = []
    for number, case in enumerate(cases, start=1):
        outcome = run_case(target, case, description, expectations.of(case))
        outcomes.append(outcome)
        if progress is not None:
            progress(number, len(cases), outcome)
    return description, outcomes


def select_cases(cases: Sequence[Case], features: Sequence[str] = (),
                 ids: Sequence[str] = ()) -> list[Case]:
    """The cases tagged with any of `features` (all when none) whose id starts with one
    of `ids` (all when none)."""
    chosen = [case for case in cases if not features or set(case.features) & set(features)]
    return [case for case in chosen if not ids or any(case.id.startswith(prefix)
                                                      for prefix in ids)]
