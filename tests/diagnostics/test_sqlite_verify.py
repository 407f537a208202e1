"""`verify` of a SQLite store: its FTS rows against a rebuild from its transcript rows, and
SQLite's own checks of each agent database.

The store is the demo corpus on the SQLite backend; each test damages one agent's
database by hand (with `sqlite3`, as a bug or another program could) and checks that
`verify` says what is wrong, naming the row or the file, through the Python API
(`verify_store`, `verify_sqlite_backend`) and the command line (`session-search verify
--store DIR`: exit status 1). A clean store, also one whose rewound windows still wait
for a reconcile, passes; its counts are the reference store's.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from engine.backends.sqlite.verify import verify_sqlite_backend
from engine.diagnostics.verify import verify_store
from engine.ingest.into_store import import_into_store
from engine.store.registry import open_store

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "engine" / "demo_corpus"
PAGE_SIZE = 4096


def database_of(store: Path, agent: str = "main") -> Path:
    return store / "agents" / agent / "agent" / "openclaw-agent.sqlite"


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "lite"
    import_into_store(path, "sqlite", [DEMO])
    return path


def problems_of(store: Path) -> list[str]:
    """`verify_store`'s problems for the store at `store`."""
    opened = open_store(store, "verify", accept_lost_commits=True)
    try:
        return verify_store(opened).problems
    finally:
        opened.close()


def verify_command(store: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "engine", "verify", "--store", str(store),
                           *extra], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          check=False)


def tamper(database: Path, *statements: tuple[str, tuple]) -> None:
    """Run `statements` on `database` as another program would."""
    connection = sqlite3.connect(database, isolation_level=None)
    try:
        for sql, values in statements:
            connection.execute(sql, values)
    finally:
        connection.close()


def fts_row(database: Path, message_id: str) -> tuple[int, str]:
    """The FTS rowid and session id of `message_id`'s row."""
    connection = sqlite3.connect(database)
    try:
        return connection.execute("SELECT rowid, session_id FROM session_transcript_fts "
                                  "WHERE message_id = ?", (message_id,)).fetchone()
    finally:
        connection.close()


def test_a_clean_store_passes_with_the_reference_stores_counts(store: Path,
                                                               tmp_path: Path) -> None:
    reference = tmp_path / "reference"
    import_into_store(reference, "reference", [DEMO])
    reports = []
    for path in (store, reference):
        opened = open_store(path, "verify", accept_lost_commits=True)
        try:
            reports.append(verify_store(opened).to_json())
        finally:
            opened.close()
    assert reports[0]["ok"] and reports[0]["problems"] == []
    counted = ("windows", "rowsCommitted", "rowsExpected", "staleRows", "windowsNeedingReconcile")
    assert [reports[0][name] for name in counted] == [reports[1][name] for name in counted]
    completed = verify_command(store)
    assert (completed.returncode, completed.stderr) == (0, "")
    assert completed.stdout.startswith("OK: the index matches its transcripts\n")


def test_a_store_waiting_for_reconcile_passes_with_its_stale_rows(tmp_path: Path) -> None:
    store = tmp_path / "pending"
    import_into_store(store, "sqlite", [DEMO], reconcile=False)
    report = json.loads(verify_command(store, "--json").stdout)
    assert (report["ok"], report["windowsNeedingReconcile"]) == (True, 1)
    assert report["staleRows"] > 0


def test_a_deleted_row_is_missing(store: Path) -> None:
    database = database_of(store)
    row_id, session_id = fts_row(database, "main-u1")
    tamper(database, ("DELETE FROM session_transcript_fts_rows WHERE id = ?", (row_id,)))
    assert problems_of(store) == [
        f"agent main: missing row (session {session_id!r}, message 'main-u1')"]
    completed = verify_command(store)
    assert completed.returncode == 1
    assert f"missing row (session {session_id!r}, message 'main-u1')" in completed.stdout


def test_an_fts_row_deleted_without_its_map_row_is_named(store: Path) -> None:
    database = database_of(store)
    row_id, session_id = fts_row(database, "main-u1")
    tamper(database, ("DELETE FROM session_transcript_fts WHERE rowid = ?", (row_id,)))
    assert problems_of(store) == [
        (f"agent main: map row {row_id} of session_transcript_fts_rows (session "
        f"{session_id!r}, message 'main-u1') has no FTS row"),
        f"agent main: missing row (session {session_id!r}, message 'main-u1')"]


def test_an_extra_row_is_unexpected(store: Path) -> None:
    database = database_of(store)
    _, session_id = fts_row(database, "main-u1")
    tamper(database,
           (("INSERT INTO session_transcript_fts_rows (id, session_id, message_id) "
            "VALUES (9000, ?, 'forged')"), (session_id,)),
           (("INSERT INTO session_transcript_fts (rowid, text, session_id, message_id, role, "
            "timestamp) VALUES (9000, 'forged words', ?, 'forged', 'user', 1)"), (session_id,)))
    assert problems_of(store) == [
        f"agent main: unexpected row (session {session_id!r}, message 'forged')"]
    completed = verify_command(store, "--json")
    assert completed.returncode == 1
    assert json.loads(completed.stdout)["partitions"]["main"]["problems"] == [
        f"unexpected row (session {session_id!r}, message 'forged')"]


def test_a_changed_text_differs_from_the_transcript(store: Path) -> None:
    database = database_of(store)
    row_id, session_id = fts_row(database, "main-u1")
    tamper(database, (("UPDATE session_transcript_fts SET text = 'tampered words' "
                      "WHERE rowid = ?"), (row_id,)))
    assert problems_of(store) == [
        (f"agent main: differing row (session {session_id!r}, message 'main-u1'): its text "
        "differs from the transcript's")]
    assert verify_command(store).returncode == 1


def test_a_row_of_an_incognito_window_is_unexpected(store: Path) -> None:
    """An incognito window keeps its transcript and never an index row."""
    tamper(database_of(store),
           (("INSERT INTO session_transcript_fts_rows (id, session_id, message_id) "
            "VALUES (9000, 'incognito-private', 'leaked')"), ()),
           (("INSERT INTO session_transcript_fts (rowid, text, session_id, message_id, role, "
            "timestamp) VALUES (9000, 'private words', 'incognito-private', 'leaked', "
            "'user', 1)"), ()))
    assert problems_of(store) == [
        "agent main: unexpected row (session 'incognito-private', message 'leaked')"]


def test_rows_of_a_window_without_transcript_are_orphans(store: Path) -> None:
    database = database_of(store, "work")
    tamper(database,
           (("INSERT INTO session_transcript_fts_rows (id, session_id, message_id) "
            "VALUES (9000, 'ghost', 'g1')"), ()),
           (("INSERT INTO session_transcript_fts (rowid, text, session_id, message_id, role, "
            "timestamp) VALUES (9000, 'ghost words', 'ghost', 'g1', 'user', 1)"), ()))
    assert problems_of(store) == [
        "agent work: orphan rows or state for window 'ghost' (run reconcile)"]


def test_a_state_that_names_another_leaf_is_named(store: Path) -> None:
    database = database_of(store)
    _, session_id = fts_row(database, "main-u1")
    tamper(database, (("UPDATE session_transcript_index_state SET leaf_event_id = 'elsewhere' "
                      "WHERE session_id = ?"), (session_id,)))
    [problem] = problems_of(store)
    assert problem.startswith(f"agent main: index state of window {session_id!r} names leaf "
                              "'elsewhere'; its transcript's leaf is ")


def test_a_damaged_full_text_index_is_named_with_its_file(store: Path) -> None:
    """The FTS content changed behind FTS5's back: its index no longer matches it."""
    database = database_of(store)
    row_id, session_id = fts_row(database, "main-u1")
    tamper(database, (("UPDATE session_transcript_fts_content SET c0 = 'unindexed words' "
                      "WHERE id = ?"), (row_id,)))
    problems = problems_of(store)
    assert problems[0].startswith(
        f"agent main: {database}: the full-text index session_transcript_fts is damaged "
        "(FTS5 integrity-check: ")
    assert problems[1:] == [(f"agent main: differing row (session {session_id!r}, message "
                            "'main-u1'): its text differs from the transcript's")]
    completed = verify_command(store)
    assert completed.returncode == 1 and str(database) in completed.stdout


def damage_an_index_page(database: Path, index: str) -> None:
    """Flip a byte in the cell area of the root page of `index` (a leaf in so small a
    database): a key changes, so the index no longer matches its table."""
    connection = sqlite3.connect(database)
    try:
        (root,) = connection.execute("SELECT rootpage FROM sqlite_master WHERE name = ?",
                                     (index,)).fetchone()
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        connection.close()
    data = bytearray(database.read_bytes())
    data[(root - 1) * PAGE_SIZE + PAGE_SIZE - 3] ^= 0x5A
    database.write_bytes(bytes(data))


def test_a_damaged_database_is_named_and_its_rows_are_not_compared(store: Path) -> None:
    database = database_of(store)
    damage_an_index_page(database, "idx_session_transcript_fts_rows_session_message")
    opened = open_store(store, "verify", accept_lost_commits=True)
    try:
        report = verify_sqlite_backend(opened.partition("main"))  # type: ignore[arg-type]
    finally:
        opened.close()
    assert report.problems[0].startswith(
        f"{database}: the database is damaged: PRAGMA integrity_check reports ")
    assert report.problems[1:] == [("the index was not compared: the database is damaged "
                                   "(only a backup holds what the damage lost)")]
    completed = verify_command(store)
    assert completed.returncode == 1 and f"{database}: the database is damaged" in completed.stdout
    repaired = verify_command(store, "--repair")
    assert repaired.returncode == 1
    assert f"{database}: not repaired: the database is damaged" in repaired.stdout


def test_repair_rebuilds_the_rows_from_the_transcripts(store: Path) -> None:
    database = database_of(store)
    row_id, _ = fts_row(database, "main-u1")
    tamper(database,
           ("UPDATE session_transcript_fts SET text = 'tampered words' WHERE rowid = ?",
            (row_id,)),
           (("INSERT INTO session_transcript_fts_rows (id, session_id, message_id) "
            "VALUES (9000, 'ghost', 'g1')"), ()))
    assert verify_command(store).returncode == 1
    repaired = verify_command(store, "--repair")
    assert (repaired.returncode, repaired.stderr) == (0, "")
    assert "repaired: rebuilt the index from the transcripts (16 windows)\n" in repaired.stdout
    assert problems_of(store) == []


def test_a_state_the_real_openclaw_wrote_verifies_without_a_byte_changed(
        tmp_path: Path) -> None:
    """OpenClaw's own transcript writer (two agents) indexes as a rebuild does: its FTS
    rows, states and active paths are what verify rebuilds, and `verify --read-only`
    writes nothing to the state (the builder skips without an OpenClaw install)."""
    from tests.backends.test_sqlite_openclaw_state import build_openclaw_state, digests

    build_openclaw_state(tmp_path, [])
    state = tmp_path / "state"
    before = digests(state), sorted(str(path) for path in state.rglob("*"))
    opened = open_store(state, "verify", read_only=True)
    try:
        report = verify_store(opened)
    finally:
        opened.close()
    assert (report.ok, report.total("rows_committed")) == (True, report.total("rows_expected"))
    assert report.total("rows_committed") > 0
    completed = verify_command(state, "--backend", "sqlite", "--read-only")
    assert (completed.returncode, completed.stderr) == (0, "")
    assert completed.stdout.startswith("OK: the index matches its transcripts\n")
    assert (digests(state), sorted(str(path) for path in state.rglob("*"))) == before
