"""The runner is itself tested: wrong backends fail exactly the cases they should.

Each wrong backend (`tests/conformance/faulty_backend.py`: it drops the last hit, swaps
two hits, changes an excerpt, gives a wrong error message, crashes on one case, hangs on
one case) runs through `session-search conform --backend exec:...` on the seven cases of
`tests/conformance/runner_cases/`, and the run must still finish with a report whose
failed cases are exactly those its fault reaches, each with its reason; the honest
backend passes them all. A crash or a hang fails its own case only: the runner restarts
the process and the cases after it pass.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from engine.cli import main

HERE = Path(__file__).resolve().parent
CASES = HERE / "runner_cases"
ALL = {"runner/two-hits", "runner/no-hits", "runner/refused", "runner/excerpt",
       "runner/crash-trigger", "runner/hang-trigger", "runner/after-a-restart"}


def conform(mode: str, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, dict]:
    """Run `conform` against the faulty backend in `mode`; its status and JSON report."""
    command = shlex.join([sys.executable, str(HERE / "faulty_backend.py"), mode])
    status = main(["conform", "--backend", f"exec:{command}", "--cases", str(CASES),
                   "--json", "--quiet", *extra])
    return status, json.loads(capsys.readouterr().out)


def failed(report: dict) -> dict[str, str]:
    return {case["id"]: case["reason"] for case in report["cases"] if case["status"] == "failed"}


@pytest.mark.parametrize(("mode", "expected"), [
    ("honest", set()),
    ("drop-last-hit", {"runner/two-hits", "runner/excerpt", "runner/crash-trigger",
                       "runner/hang-trigger", "runner/after-a-restart"}),
    ("swap-hits", {"runner/two-hits"}),
    ("change-excerpt", {"runner/excerpt"}),
    ("wrong-error-message", {"runner/refused"}),
])
def test_a_wrong_answer_fails_exactly_the_cases_it_reaches(
        mode: str, expected: set[str], capsys: pytest.CaptureFixture[str]) -> None:
    status, report = conform(mode, capsys)
    assert set(failed(report)) == expected
    assert report["summary"]["passed"] == len(ALL) - len(expected)
    assert status == (1 if expected else 0)
    for case in report["cases"]:
        if case["status"] == "failed":
            assert case["mismatches"], case  # each failure says what differed


def test_a_crash_fails_its_case_and_the_run_goes_on(capsys: pytest.CaptureFixture[str]) -> None:
    status, report = conform("crash-on-gamma", capsys)
    reasons = failed(report)
    assert set(reasons) == {"runner/crash-trigger"} and status == 1
    assert "ended before answering sessions.search" in reasons["runner/crash-trigger"]
    assert "exited with status 3" in reasons["runner/crash-trigger"]


def test_a_hang_times_out_its_case_and_the_run_goes_on(
        capsys: pytest.CaptureFixture[str]) -> None:
    status, report = conform("hang-on-delta", capsys, "--timeout", "2")
    reasons = failed(report)
    assert set(reasons) == {"runner/hang-trigger"} and status == 1
    assert "did not answer sessions.search within 2 s (timed out)" in reasons["runner/hang-trigger"]
    statuses = {case["id"]: case["status"] for case in report["cases"]}
    assert statuses["runner/after-a-restart"] == "passed"


def test_an_expectations_file_turns_a_known_failure_into_an_expected_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    expectations = tmp_path / "expected.json"
    expectations.write_text(json.dumps({"implementation": "swapper", "cases": {
        "runner/two-hits": {"status": "fail", "reason": "swaps the first two hits"},
        "runner/no-hits": {"status": "fail", "reason": "listed by mistake"}}}))
    status, report = conform("swap-hits", capsys, "--expectations", str(expectations))
    statuses = {case["id"]: case["status"] for case in report["cases"]}
    assert statuses["runner/two-hits"] == "expected-failure"
    assert statuses["runner/no-hits"] == "fixed"  # a listed failure that passes is reported
    assert status == 1  # ... and is unexpected
    expectations.write_text(json.dumps({"cases": {
        "runner/two-hits": {"status": "fail", "reason": "swaps the first two hits"}}}))
    status, report = conform("swap-hits", capsys, "--expectations", str(expectations))
    assert status == 0 and report["summary"]["expected-failure"] == 1
