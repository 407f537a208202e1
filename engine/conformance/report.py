"""How a conformance run is reported: a summary by spec section, readable failures, JUnit
XML for CI systems, and JSON.

Owns: turning a run's `Description` and `CaseOutcome`s into text, a summary table, JUnit
XML and a JSON document, and the one-line summary. Must not touch: running cases
(`engine.conformance.runner`) or the terminal (the command line draws the progress bar
and chooses where each text goes).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any
from xml.etree import ElementTree

from engine.conformance.case_files import DEFAULT_EXPECTATION_SET
from engine.conformance.runner import STATUSES, CaseOutcome, Description
from engine.conformance.spec_units import SPEC_UNITS, unit_group

#: The order of the summary's rows: the specification's own.
GROUP_ORDER = list(dict.fromkeys(unit_group(unit) for unit, _ in SPEC_UNITS))


def counts(outcomes: Sequence[CaseOutcome]) -> dict[str, int]:
    """How many cases ended in each status (every status, zeros included)."""
    tally = Counter(outcome.status for outcome in outcomes)
    return {status: tally.get(status, 0) for status in STATUSES}


def summary_line(description: Description, outcomes: Sequence[CaseOutcome]) -> str:
    """One line: the backend and its counts.

    >>> from engine.conformance.runner import Description
    >>> summary_line(Description("session-search", "0.1.0", None, frozenset(), {}), [])
    'conformance of session-search 0.1.0: 0 cases: 0 passed, 0 failed, 0 skipped'
    >>> summary_line(Description("pg", "1", None, frozenset(), {}, "postgres"), [])
    'conformance of pg 1 (postgres expectations): 0 cases: 0 passed, 0 failed, 0 skipped'
    """
    tally = counts(outcomes)
    parts = [f"{tally['passed']} passed", f"{tally['failed']} failed",
             f"{tally['skipped']} skipped"]
    if tally["expected-failure"]:
        parts.append(f"{tally['expected-failure']} known failures")
    if tally["fixed"]:
        parts.append(f"{tally['fixed']} listed as failing but passed")
    who = " ".join(part for part in (description.name, description.version) if part)
    if description.expectation_set != DEFAULT_EXPECTATION_SET:
        who += f" ({description.expectation_set} expectations)"
    return f"conformance of {who}: {len(outcomes)} cases: {', '.join(parts)}"


def section_rows(outcomes: Sequence[CaseOutcome]) -> list[tuple[str, dict[str, int]]]:
    """The summary by spec section: for each top-level part (`§5`, `§12`, `seed`) the
    counts of the cases that pin one of its units (a case counts once per part)."""
    by_group: dict[str, list[CaseOutcome]] = {}
    for outcome in outcomes:
        for group in dict.fromkeys(unit_group(unit) for unit in outcome.case.spec):
            by_group.setdefault(group, []).append(outcome)
    order = {group: number for number, group in enumerate(GROUP_ORDER)}
    return [(group, counts(by_group[group]))
            for group in sorted(by_group, key=lambda group: order.get(group, len(order)))]


def summary_table(outcomes: Sequence[CaseOutcome]) -> str:
    """The summary by spec section as a plain-text table."""
    header = ("section", "passed", "failed", "skipped", "known", "fixed")
    rows = [(group, str(tally["passed"]), str(tally["failed"]), str(tally["skipped"]),
             str(tally["expected-failure"]), str(tally["fixed"]))
            for group, tally in section_rows(outcomes)]
    widths = [max(len(row[column]) for row in [header, *rows]) for column in range(len(header))]
    return "\n".join("  ".join(cell.ljust(width) if column == 0 else cell.rjust(width)
                               for column, (cell, width) in enumerate(zip(row, widths)))
                     for row in [header, *rows])


def failure_text(outcome: CaseOutcome) -> str:
    """One unexpected outcome as readable text: its id, file, spec and the diff."""
    head = (f"{outcome.status.upper()} {outcome.case.id} ({outcome.case.source}; "
            f"{', '.join(outcome.case.spec)})")
    body = outcome.details()
    return head + ("\n" + "\n".join("  " + line for line in body.splitlines()) if body else "")


def text_report(description: Description, outcomes: Sequence[CaseOutcome]) -> str:
    """The whole readable report: each unexpected outcome, the table, the summary line."""
    parts = [failure_text(outcome) for outcome in outcomes if outcome.unexpected]
    parts.append(summary_table(outcomes))
    parts.append(summary_line(description, outcomes))
    return "\n\n".join(parts)


def junit_xml(description: Description, outcomes: Sequence[CaseOutcome]) -> str:
    """The run as JUnit XML: one testsuite, one testcase per case (its class the case's
    file), with `failure` (the diff), `skipped` and known failures as skipped with the
    reason, as CI systems read it."""
    tally = counts(outcomes)
    suite = ElementTree.Element("testsuite", {
        "name": f"session-search conformance: {description.name}",
        "tests": str(len(outcomes)), "failures": str(tally["failed"] + tally["fixed"]),
        "errors": "0", "skipped": str(tally["skipped"] + tally["expected-failure"]),
        "time": f"{sum(outcome.seconds for outcome in outcomes):.3f}"})
    for outcome in outcomes:
        case = ElementTree.SubElement(suite, "testcase", {
            "classname": outcome.case.source.removesuffix(".json").replace("/", "."),
            "name": outcome.case.id, "time": f"{outcome.seconds:.3f}"})
        if outcome.unexpected:
            failure = ElementTree.SubElement(case, "failure", {"message": outcome.reason})
            failure.text = outcome.details()
        elif outcome.status in ("skipped", "expected-failure"):
            ElementTree.SubElement(case, "skipped", {"message": outcome.reason})
    ElementTree.indent(suite)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            + ElementTree.tostring(suite, encoding="unicode") + "\n")


def json_report(description: Description, outcomes: Sequence[CaseOutcome]) -> dict[str, Any]:
    """The run as one JSON document: the backend, the counts, the sections, every case."""
    return {"backend": description.raw or {"name": description.name},
            "summary": counts(outcomes),
            "sections": {group: tally for group, tally in section_rows(outcomes)},
            "cases": [outcome.to_json() for outcome in outcomes]}
