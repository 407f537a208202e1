"""The cases cover the specification, and docs/conformance.md shows which case pins what.

Every unit of `engine/conformance/spec_units.py` (behaviour.md's numbered rules of §3 to
§11, the upstream tests of §12, the seed's paragraphs) must be named by at least one
shipped case, and the coverage table of `docs/conformance.md` must be the one the cases
make (`python -m engine.conformance.coverage docs/conformance.md` rewrites it).
"""

from __future__ import annotations

from pathlib import Path

from engine.conformance.coverage import coverage_table, with_table
from engine.conformance.spec_units import SPEC_UNITS
from tests.conformance.suite import CASES

DOCUMENT = Path(__file__).resolve().parents[2] / "docs" / "conformance.md"


def test_the_documented_table_is_the_one_the_cases_make() -> None:
    text = DOCUMENT.read_text(encoding="utf-8")
    assert with_table(text, CASES) == text, (
        "docs/conformance.md's coverage table is stale: run "
        "python -m engine.conformance.coverage docs/conformance.md")


def test_every_unit_is_listed_once() -> None:
    units = [unit for unit, _ in SPEC_UNITS]
    assert len(units) == len(set(units))
    table = coverage_table(CASES)
    assert all(f"| {unit} |" in table for unit in units)


def test_every_unit_of_the_specification_has_a_case() -> None:
    from engine.conformance.coverage import uncovered

    missing = uncovered(CASES)
    assert missing == [], f"no case pins {', '.join(missing)}: write one (docs/conformance.md)"


def test_there_are_at_least_200_cases_with_unique_ids() -> None:
    ids = [case.id for case in CASES]
    assert len(ids) >= 200
    assert len(ids) == len(set(ids))
