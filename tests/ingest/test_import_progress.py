"""What an import reports as it runs (progress phases) and when it is done (roles that are
never indexed), for every input form."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from engine.directory import MemoryDirectory
from engine.ingest import import_into_store, import_sources
from engine.ingest.batch import PROGRESS_EVERY
from engine.ingest.importer import source_lines
from engine.transcript.store import TranscriptStore

DEMO = Path(__file__).resolve().parents[2] / "engine" / "demo_corpus"


def demo_lines() -> int:
    files = [DEMO / "sessions.jsonl", *sorted((DEMO / "transcripts").iterdir())]
    return sum(len(path.read_bytes().splitlines()) for path in files)


def flat_file(path: Path, count: int) -> Path:
    path.write_text("".join(json.dumps({
        "sessionKey": "global", "sessionId": f"w{number // 100}", "messageId": f"m{number}",
        "role": "user" if number % 3 else "toolResult", "timestamp": number,
        "text": f"line {number}"}) + "\n" for number in range(count)), encoding="utf-8")
    return path


def test_source_lines_counts_every_jsonl_line_a_last_line_without_newline_included(
        tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_bytes(b'{"x": 1}\n{"x": 2}')
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.jsonl").write_bytes(b"{}\n{}\n{}\n")
    (tmp_path / "sub" / "notes.txt").write_bytes(b"not\ncounted\n")
    assert source_lines([tmp_path]) == 5
    assert source_lines([tmp_path / "a.jsonl", DEMO]) == 2 + demo_lines()


@pytest.mark.parametrize("lines", [5, PROGRESS_EVERY * 3 + 7])
def test_the_read_phase_counts_lines_up_to_the_estimate_then_the_commit(
        tmp_path: Path, lines: int) -> None:
    source = flat_file(tmp_path / "m.jsonl", lines)
    calls: list[tuple[str, int, int | None]] = []
    with TranscriptStore.create(MemoryDirectory()) as store:
        import_sources(store, [source], progress=lambda *call: calls.append(call))
    reads = [call for call in calls if call[0] == "read"]
    assert reads[0] == ("read", 0, lines) and reads[-1] == ("read", lines, lines)
    assert [done for _, done, _ in reads] == sorted(done for _, done, _ in reads)
    assert len(reads) == 2 + lines // PROGRESS_EVERY  # the start, every 256 records, the end
    assert calls[len(reads):] == [("commit", 0, None), ("commit", 1, 1)]


def test_import_into_a_store_reports_the_reconcile_phase(tmp_path: Path) -> None:
    calls: list[tuple[str, int, int | None]] = []
    outcome = import_into_store(tmp_path / "store", None, [DEMO],
                                progress=lambda *call: calls.append(call))
    reconciles = [call for call in calls if call[0] == "reconcile"]
    windows = outcome.reconciled
    assert windows >= 1
    # partitions report in agent order, each adding its windows to the total as it starts
    assert reconciles[0] == ("reconcile", 0, reconciles[0][2])
    assert reconciles[-1] == ("reconcile", windows, windows)
    assert [done for _, done, _ in reconciles] == sorted(done for _, done, _ in reconciles)
    assert all(done <= total <= windows for _, done, total in reconciles)
    assert ("read", demo_lines(), demo_lines()) in calls


def test_no_progress_callback_means_no_counting(tmp_path: Path) -> None:
    with TranscriptStore.create(MemoryDirectory()) as store:
        report = import_sources(store, [flat_file(tmp_path / "m.jsonl", 10)])
    assert (report.events, report.unindexed_roles) == (10, (("toolResult", 4),))


def test_the_corpus_form_counts_its_unindexed_roles_too() -> None:
    roles: Counter[str] = Counter()
    for path in (DEMO / "transcripts").iterdir():
        for line in path.read_text(encoding="utf-8").splitlines():
            event = json.loads(line)
            role = (event.get("message") or {}).get("role")
            if event.get("type") == "message" and isinstance(role, str):
                roles[role] += 1
    expected = tuple(sorted((role, count) for role, count in roles.items()
                            if role not in ("user", "assistant")))
    assert expected  # the demo has tool results: the count is not vacuous
    with TranscriptStore.create(MemoryDirectory()) as store:
        assert import_sources(store, [DEMO]).unindexed_roles == expected
