"""A live import of an OpenClaw state with one bad file among good ones of several agents
(`engine.ingest.set_aside`), as a user runs it (`session-search import --openclaw-state`,
then `watch`): everything valid is imported, the bad file is set aside with one warning
naming its file and line, later imports neither import it nor warn again while it is
unchanged, and it is imported once it is mended. A database that cannot be read and an
agent's `sessions.json` that is not JSON are set aside the same way, on both backends.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_watch_command import found, interrupted, wait_until_found, watching
from tests.ingest.test_openclaw_state import HEADER, message, write_jsonl


def agent_sessions(state: Path, agent: str) -> Path:
    return state / "agents" / agent / "sessions"


def write_agent(state: Path, agent: str, files: dict[str, list[dict]]) -> None:
    """Agent `agent` with a transcript per entry of `files` (session id -> events), each
    the current window of key `agent:<agent>:<session id>`."""
    sessions = agent_sessions(state, agent)
    sessions.mkdir(parents=True, exist_ok=True)
    (sessions / "sessions.json").write_text(json.dumps({
        f"agent:{agent}:{session_id}": {"sessionId": session_id} for session_id in files}),
        encoding="utf-8")
    for session_id, events in files.items():
        write_jsonl(sessions / f"{session_id}.jsonl", [HEADER, *events])


def build_three_agents(state: Path) -> Path:
    write_agent(state, "main", {"m1": [message("a0000001", None, "user", "alpha main")]})
    write_agent(state, "ops", {"o1": [message("b0000001", None, "user", "bravo ops")],
                               "o2": [message("b0000002", None, "user", "charlie ops")]})
    write_agent(state, "work", {"w1": [message("c0000001", None, "user", "delta work")]})
    return state


def live_import(session_search, store: Path, state: Path, backend: str):
    return session_search("import", "--store", str(store), "--backend", backend,
                          "--openclaw-state", str(state), "--json")


BACKENDS = ("reference", "sqlite", "postgres")


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_bad_file_is_set_aside_and_everything_else_is_imported(
        session_search, tmp_path: Path, backend: str) -> None:
    state = build_three_agents(tmp_path / "state")
    bad = agent_sessions(state, "ops") / "o2.jsonl"
    bad.write_text(bad.read_text(encoding="utf-8") + '{"type": "message", "id": "zz"\n'
                   + json.dumps(message("b0000003", "b0000002", "user", "echo ops")) + "\n",
                   encoding="utf-8")
    store = tmp_path / "store"
    first = live_import(session_search, store, state, backend)
    assert first.status == 0, first.err
    assert first.err == (f"session-search: warning: {bad}:3: invalid JSON: Expecting ',' "
                         "delimiter at column 31; this source is set aside (the rest was "
                         "imported) until it changes\n")
    imported = json.loads(first.out)["imported"]
    assert imported["added"] == 3 and imported["setAside"] == [
        {"source": "agents/ops/sessions/o2.jsonl", "reason": first.err.split("warning: ")[1]
         .split("; this source")[0]}]
    for word, expected in (("alpha", True), ("bravo", True), ("delta", True),
                           ("charlie", False), ("echo", False)):
        assert found(session_search, store, word) is expected, word

    # a new file of another agent comes in; the bad one, unchanged, stays aside silently
    write_agent(state, "lab", {"l1": [message("d0000001", None, "user", "foxtrot lab")]})
    second = live_import(session_search, store, state, backend)
    assert (second.status, second.err) == (0, "")
    assert json.loads(second.out)["imported"]["added"] == 1
    assert len(json.loads(second.out)["imported"]["setAside"]) == 1
    assert found(session_search, store, "foxtrot")

    # mended: imported, no longer aside
    lines = bad.read_text(encoding="utf-8").splitlines(keepends=True)
    bad.write_text("".join(line for line in lines if '"zz"' not in line), encoding="utf-8")
    third = live_import(session_search, store, state, backend)
    assert (third.status, third.err) == (0, "")
    assert json.loads(third.out)["imported"]["setAside"] == []
    assert found(session_search, store, "charlie") and found(session_search, store, "echo")


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_bad_line_appended_to_an_imported_file_keeps_its_window_as_it_was(
        session_search, tmp_path: Path, backend: str) -> None:
    state = build_three_agents(tmp_path / "state")
    store = tmp_path / "store"
    assert live_import(session_search, store, state, backend).status == 0
    grown = agent_sessions(state, "main") / "m1.jsonl"
    with grown.open("a", encoding="utf-8") as handle:
        handle.write("[1, 2]\n")
    with (agent_sessions(state, "work") / "w1.jsonl").open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(message("c0000002", "c0000001", "user", "golf work")) + "\n")
    outcome = live_import(session_search, store, state, backend)
    assert outcome.status == 0 and outcome.err.count("warning:") == 1
    assert f"{grown}:3: " in outcome.err
    assert found(session_search, store, "golf") and found(session_search, store, "alpha")
    stats = json.loads(session_search("stats", "--store", str(store), "--json").out)
    assert (stats["windows"], stats["events"]) == (4, 9)  # 4 headers, 4 messages, golf


def test_a_sessions_index_that_is_not_json_sets_its_agent_folder_aside(
        session_search, tmp_path: Path) -> None:
    state = build_three_agents(tmp_path / "state")
    index = agent_sessions(state, "ops") / "sessions.json"
    index.write_text("{broken", encoding="utf-8")
    store = tmp_path / "store"
    outcome = live_import(session_search, store, state, "reference")
    assert outcome.status == 0 and outcome.err.startswith(f"session-search: warning: {index}:1:")
    # ops's transcripts are not filed under "unknown" meanwhile: the whole folder waits
    assert not found(session_search, store, "bravo") and found(session_search, store, "delta")


def test_a_database_that_cannot_be_read_is_set_aside(session_search, tmp_path: Path) -> None:
    state = build_three_agents(tmp_path / "state")
    database = state / "agents" / "ops" / "agent" / "openclaw-agent.sqlite"
    database.parent.mkdir(parents=True)
    database.write_bytes(b"this is not a database" * 100)
    store = tmp_path / "store"
    outcome = live_import(session_search, store, state, "sqlite")
    assert outcome.status == 0 and outcome.err.startswith(
        f"session-search: warning: {database}: cannot read the OpenClaw database")
    assert found(session_search, store, "alpha") and found(session_search, store, "bravo")


def test_watch_imports_around_a_bad_file_and_warns_once(session_search, tmp_path: Path) -> None:
    state = build_three_agents(tmp_path / "state")
    bad = agent_sessions(state, "ops") / "o2.jsonl"
    with bad.open("a", encoding="utf-8") as handle:
        handle.write("{not json\n")
    store = tmp_path / "store"
    with watching("--openclaw-state", str(state), "--store", str(store)) as watcher:
        wait_until_found(session_search, store, "delta", watcher)
        write_agent(state, "lab", {"l1": [message("d0000001", None, "user", "foxtrot lab")]})
        wait_until_found(session_search, store, "foxtrot", watcher)
        out, err = interrupted(watcher)
    assert watcher.returncode == 0
    assert err.count("warning:") == 1 and f"{bad}:3: invalid JSON" in err
    assert "(0 failed)" in out.splitlines()[-1]
