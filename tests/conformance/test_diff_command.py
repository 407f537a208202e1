"""`session-search diff`: an injected divergence is found, shrunk to a few messages and
printed as a case file that the right backend passes and the wrong one fails.

The wrong backends are `tests/conformance/faulty_backend.py`'s: `hide-ballast` drops the
hits whose excerpt says "ballast" (a difference with the reference backend), and
`reverse-odd-limits` reverses the hits of a search with an odd limit (a broken relation,
"the top k is a prefix of the top k+1", found with nothing to compare against). The same
seed finds the same difference; the reference and SQLite backends agree.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from engine.cli import main
from engine.conformance.case_files import cases_of_file

FAULTY = Path(__file__).resolve().parent / "faulty_backend.py"


def faulty(mode: str) -> str:
    return "exec:" + shlex.join([sys.executable, str(FAULTY), mode])


def diff(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["diff", "--quiet", *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def conform(capsys: pytest.CaptureFixture[str], cases: Path, backend: str) -> int:
    status = main(["conform", "--backend", backend, "--cases", str(cases), "--quiet"])
    capsys.readouterr()
    return status


def test_an_injected_divergence_is_shrunk_to_a_case_of_a_few_messages(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ("--backends", f"reference,{faulty('hide-ballast')}", "--generate", "40",
            "--queries", "60", "--seed", "3")
    status, out, err = diff(capsys, *argv)
    assert status == 1 and "hit-set" in err and "shrunk to" in err
    document = json.loads(out)
    (case,) = cases_of_file(document, "found.json")
    messages = [step["message"] for step in case.corpus if "message" in step]
    assert 1 <= len(messages) <= 3
    assert any("ballast" in message["text"] for message in messages)
    assert "--seed 3" in document["comment"][0]
    (tmp_path / "found").mkdir()
    (tmp_path / "found" / "found.json").write_text(out, encoding="utf-8")
    assert conform(capsys, tmp_path / "found", "reference") == 0
    assert conform(capsys, tmp_path / "found", faulty("hide-ballast")) == 1
    assert diff(capsys, *argv)[1] == out  # reproducible from the seed


def test_a_broken_relation_is_found_without_an_oracle(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    backend = faulty("reverse-odd-limits")
    status, out, err = diff(capsys, "--backends", f"{backend},{backend}", "--generate", "40",
                            "--queries", "60", "--seed", "3")
    assert status == 1 and "metamorphic:top-k-prefix" in err
    (tmp_path / "found").mkdir()
    (tmp_path / "found" / "found.json").write_text(out, encoding="utf-8")
    assert conform(capsys, tmp_path / "found", "reference") == 0
    assert conform(capsys, tmp_path / "found", backend) == 1


def test_the_reference_and_sqlite_backends_agree(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = diff(capsys, "--backends", "reference,sqlite", "--generate", "50",
                            "--queries", "80", "--seed", "11")
    assert (status, err) == (0, "")
    assert "agree, and every relation held" in out


def test_bad_backends_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["diff", "--backends", "reference"])
    assert exited.value.code == 2
    assert "--backends needs two backends: A,B" in capsys.readouterr().err
