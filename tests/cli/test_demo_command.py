"""`session-search demo`: the README's main job on the bundled corpus.

Checks what a user sees: both backends hold the corpus's counts, every showcase query
returns what the specification says, and the backends agree on every one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.cli import main

DEMO = Path(__file__).resolve().parents[2] / "engine" / "demo_corpus"


def run_demo(capsys: pytest.CaptureFixture[str], *arguments: str) -> tuple[int, str, str]:
    status = main(["demo", *arguments])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.fixture(scope="module")
def report() -> dict:
    import io
    from contextlib import redirect_stdout

    buffer = io.StringIO()
    with redirect_stdout(buffer):
        status = main(["demo", "--json"])
    assert status == 0
    return json.loads(buffer.getvalue())


def by_query(report: dict, query: str, match: str = "exact") -> dict:
    return next(q for q in report["queries"] if q["query"] == query and q["match"] == match)


def test_every_backend_holds_the_corpus(report: dict) -> None:
    windows = len((DEMO / "sessions.jsonl").read_text(encoding="utf-8").splitlines())
    assert {name: stats["windows"] for name, stats in report["stats"].items()} == {
        "reference": windows, "sqlite": windows}
    assert report["stats"]["reference"]["messagesIndexed"] == 57


def test_the_backends_agree_on_every_showcase(report: dict) -> None:
    assert [q["differingBackends"] for q in report["queries"]] == [[]] * len(report["queries"])
    assert report["allBackendsAgree"] is True


def test_showcase_answers_follow_the_specification(report: dict) -> None:
    cafe = by_query(report, "cafe")["result"]["hits"]
    assert len(cafe) == 2 and all("café" in hit["snippet"].lower() for hit in cafe)
    assert [hit["snippet"] for hit in by_query(report, "οσ")["result"]["hits"]] == ["ΟΣ ος"]
    assert by_query(report, "per session communi")["result"]["hits"] == []
    prefix = by_query(report, "per session communi", "prefix")["result"]["hits"]
    assert [hit["snippet"] for hit in prefix] == ["Per-session communication controls in UI"]
    assert by_query(report, "deployment - failed")["result"]["hits"] == []
    cjk = by_query(report, "会议")["result"]["hits"]
    assert [hit["snippet"] for hit in cjk] == ["明天下午三点开项目评审会议讨论排期"]
    keys = {hit["sessionKey"] for hit in by_query(report, "namespace")["result"]["hits"]}
    assert keys == {"agent:work_team:main"}  # its own partition: not workxteam, not global
    keys = {hit["sessionKey"] for hit in by_query(report, "namespace check")["result"]["hits"]}
    assert keys == {"global", "unknown"}  # they belong to the default agent, main
    recent = by_query(report, "the")["result"]
    stamps = [hit["timestamp"] for hit in recent["hits"]]
    assert len(stamps) == 3 and stamps == sorted(stamps, reverse=True) and recent["truncated"]


def test_plain_output_names_each_rule_and_the_verdict(capsys: pytest.CaptureFixture[str],
                                                      tmp_path: Path) -> None:
    status, out, err = run_demo(capsys, "--keep", str(tmp_path / "stores"))
    assert (status, err) == (0, "")
    assert "CJK retry" in out and "same result on reference, sqlite" in out
    *_, agreement, conformance = out.rstrip().splitlines()
    assert agreement == "every backend returned identical results"
    assert conformance.startswith("conformance on the bundled corpus: ")
    cases = int(conformance.split(": ")[1].split()[0])
    assert cases > 10 and f"passed {cases} on reference, {cases} on sqlite" in conformance
    assert sorted(path.name for path in (tmp_path / "stores").iterdir()) == [
        "reference", "sqlite"]
