"""`session-search import`, `stats` (and the demo entry point): outputs, JSON, exit statuses, atomicity."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from engine.cli import main

DEMO = Path(__file__).resolve().parents[2] / "engine" / "demo_corpus"


def demo_records() -> list[dict]:
    """The demo corpus's windows, read straight from its `sessions.jsonl`."""
    return [json.loads(line) for line in (DEMO / "sessions.jsonl").read_text(
        encoding="utf-8").splitlines() if line.strip()]


def demo_keys() -> set[str]:
    """The session keys of the demo corpus."""
    return {record["sessionKey"] for record in demo_records()}


def count_demo() -> dict[str, int]:
    """The demo corpus's counts, read straight from its JSONL files."""
    records = demo_records()
    keys = demo_keys()
    events = 0
    for record in records:
        text = (DEMO / "transcripts" / f"{record['sessionId']}.jsonl").read_text(encoding="utf-8")
        events += sum(1 for line in text.splitlines() if line.strip())
    agents = {key.split(":")[1] for key in keys if key.startswith("agent:")}
    return {"agents": len(agents), "sessions": len(keys), "windows": len(records),
            "events": events}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_import_then_stats_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    status, out, err = run(capsys, "import", "--store", store, "--json", str(DEMO))
    assert (status, err) == (0, "")
    imported = json.loads(out)
    assert imported["imported"]["sources"] == [{"path": str(DEMO), "form": "corpus"}]
    assert imported["imported"]["windows"] == count_demo()["windows"]
    status, out, err = run(capsys, "stats", "--store", store, "--json")
    assert (status, err) == (0, "")
    stats = json.loads(out)
    assert {name: stats[name] for name in ("agents", "sessions", "windows", "events")} == (
        count_demo())
    assert stats["backend"] == "reference"
    partitions = sorted((tmp_path / "store" / "agents").iterdir())
    assert [folder.name for folder in partitions] == sorted(stats["partitions"]) == sorted(
        {key.split(":")[1] for key in demo_keys() if key.startswith("agent:")} | {"main"})
    assert stats["bytes"] == sum(
        (folder / "store.meta").stat().st_size
        + sum(path.stat().st_size for path in (folder / "transcripts").iterdir())
        for folder in partitions)
    per_agent = stats["partitions"].values()
    assert sum(counts["windows"] for counts in per_agent) == stats["windows"]
    assert sum(counts["events"] for counts in per_agent) == stats["events"]


def test_plain_outputs(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    status, out, _ = run(capsys, "import", "--store", store, str(DEMO))
    counts = count_demo()
    assert status == 0
    expected_start = (f"imported 1 source into {store}: {counts['windows']} windows, "
                      f"{counts['events']} events")
    assert out.startswith(expected_start)
    status, out, _ = run(capsys, "stats", "--store", store)
    lines = out.splitlines()
    assert lines[0] == f"store {store} (backend reference)"
    assert [line.split()[0] for line in lines[1:6]] == [
        "agents", "sessions", "windows", "events", "bytes"]
    assert [line.split()[1] for line in lines[1:5]] == [
        str(counts[name]) for name in ("agents", "sessions", "windows", "events")]
    assert lines[5].endswith(" KiB")  # bytes for people


def test_reimport_fails_with_exit_2_and_changes_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    store = str(tmp_path / "store")
    run(capsys, "import", "--store", store, str(DEMO))
    _, before, _ = run(capsys, "stats", "--store", store, "--json")
    status, out, err = run(capsys, "import", "--store", store, str(DEMO))
    assert (status, out) == (2, "")
    assert err == (f"session-search: error: {DEMO / 'sessions.jsonl'}:1: session window "
                   '"main-session" is already in the store; nothing was imported\n')
    assert run(capsys, "stats", "--store", store, "--json")[1] == before


def test_malformed_source_exit_2_names_file_and_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    store = str(tmp_path / "store")
    good = tmp_path / "good.jsonl"
    good.write_text('{"sessionKey": "global", "sessionId": "g", "messageId": "1", '
                    '"role": "user", "timestamp": 1, "text": "kept?"}\n', encoding="utf-8")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"sessionKey": "global", "sessionId": "h", "messageId": "1", '
                   '"role": "user", "timestamp": 1, "text": "fine"}\n{"sessionKey": "global"\n',
                   encoding="utf-8")
    run(capsys, "import", "--store", store, str(DEMO))
    _, before, _ = run(capsys, "stats", "--store", store, "--json")
    status, out, err = run(capsys, "import", "--store", store, str(good), str(bad))
    assert (status, out) == (2, "")
    assert err.startswith(f"session-search: error: {bad}:2: invalid JSON:")
    status, after, _ = run(capsys, "stats", "--store", store, "--json")
    assert (status, after) == (0, before)


def test_failed_first_import_leaves_no_store(capsys: pytest.CaptureFixture[str],
                                             tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"sessionKey": "global", "sessionId": "g", "messageId": "1", '
                   '"role": "user", "timestamp": 1, "text": "fine"}\n'
                   '{"sessionKey": "global", "sessionId": "g", "messageId": "2", \n',
                   encoding="utf-8")
    status, _, err = run(capsys, "import", "--store", str(tmp_path / "new"), str(bad))
    assert status == 2 and err.startswith(f"session-search: error: {bad}:2: ")
    assert not (tmp_path / "new").exists()
    (tmp_path / "empty").mkdir()
    status, _, _ = run(capsys, "import", "--store", str(tmp_path / "empty"), str(bad))
    assert status == 2 and list((tmp_path / "empty").iterdir()) == []


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SESSION_SEARCH_STORE", raising=False)
    assert run(capsys, "import", str(DEMO)) == (2, "", (
        "session-search: error: import needs a store: pass --store DIR or set "
        "SESSION_SEARCH_STORE=DIR\n"))
    with pytest.raises(SystemExit) as caught:
        main(["import", "--store", str(tmp_path / "s"), "--backend", "nope", str(DEMO)])
    assert caught.value.code == 2
    capsys.readouterr()
    status, _, err = run(capsys, "stats", "--store", str(tmp_path / "missing"))
    assert status == 2 and err == f"session-search: error: {tmp_path / 'missing'}: no " \
                                  "session-search store here\n"
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("x", encoding="utf-8")
    status, _, err = run(capsys, "import", "--store", str(tmp_path / "busy"), str(DEMO))
    assert status == 2 and "folder is not empty and holds no store" in err
    status, _, err = run(capsys, "import", "--store", str(tmp_path / "s"),
                         str(tmp_path / "nothing-here"))
    assert status == 2 and "no such file or directory" in err
    assert not (tmp_path / "s").exists()


def test_console_entry_point_runs_demo() -> None:
    completed = subprocess.run([sys.executable, "-m", "engine", "demo", "--json"],
                               capture_output=True, text=True, check=False, timeout=120)
    assert (completed.returncode, completed.stderr) == (0, "")
    stats = json.loads(completed.stdout)["stats"]
    assert {name: stats[name]["events"] for name in stats} == {
        "reference": count_demo()["events"], "sqlite": count_demo()["events"]}


def searchable_in_demo() -> int:
    """User/assistant messages with text on the active paths of the demo's windows that
    are not incognito (via the projection)."""
    from engine.model import StoredEvent, is_incognito_key
    from engine.transcript.projection import index_entries

    total = 0
    for line in (DEMO / "sessions.jsonl").read_text(encoding="utf-8").splitlines():
        window = json.loads(line)
        if window.get("incognito") or is_incognito_key(window["sessionKey"]):
            continue
        session_id = window["sessionId"]
        rows = (DEMO / "transcripts" / f"{session_id}.jsonl").read_text(
            encoding="utf-8").splitlines()
        events = [StoredEvent(session_id, seq, json.loads(row)) for seq, row in enumerate(rows)]
        total += len(index_entries(events))
    return total


@pytest.mark.parametrize("backend", ["reference", "sqlite"])
def test_import_indexes_every_searchable_message(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, backend: str
) -> None:
    store = str(tmp_path / backend)
    status, out, err = run(capsys, "import", "--store", store, "--backend", backend, "--json",
                           str(DEMO))
    assert (status, err) == (0, "")
    result = json.loads(out)
    assert result["backend"] == backend
    # The demo's rewound window is rebuilt from its active branch: by the reconcile after
    # the import (reference), or while the import reads it whole (SQLite), so that no
    # window is left for a reconcile (tests/ingest/test_whole_windows.py).
    assert result["reconciled"] == {"reference": 1, "sqlite": 0}[backend]
    assert result["stats"]["messagesIndexed"] == searchable_in_demo() == 57
    status, out, _ = run(capsys, "stats", "--store", store, "--json")
    stats = json.loads(out)
    assert (stats["backend"], stats["windows"]) == (backend, count_demo()["windows"])
    status, _, err = run(capsys, "import", "--store", store, "--backend",
                         "reference" if backend == "sqlite" else "sqlite", str(DEMO))
    assert status == 2 and "store was created for backend" in err


def test_no_reconcile_leaves_dirty_windows(capsys: pytest.CaptureFixture[str],
                                           tmp_path: Path) -> None:
    status, out, _ = run(capsys, "import", "--store", str(tmp_path / "s"), "--no-reconcile",
                         "--json", str(DEMO))
    result = json.loads(out)
    assert (status, result["reconciled"]) == (0, 0)
    assert result["stats"]["messagesIndexed"] < searchable_in_demo()
