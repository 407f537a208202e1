"""`session-search verify` of a SQLite partition: its FTS rows against a rebuild from its
transcript rows, and SQLite's own checks of the file.

Owns: what "the index of an agent database agrees with its transcripts" means, and its
report (a `report.VerifyReport`, so a store's report reads the same on every backend);
`repair_sqlite_backend` (`verify --repair`). Must not touch: the file (verify opens its
own read-only connection, `connection.ReadConnection`, and never writes a byte of the store's
folder), what is searchable (`engine.transcript.projection`), the tree rules
(`engine.transcript.tree`), the lifecycle (`engine.index.lifecycle`).

First the file, as SQLite sees it:

* `PRAGMA integrity_check` on the database: any answer but `ok` (a damaged b-tree, an
  index key that hides rows, a page used twice) is a problem naming the file; the index
  is then not compared (its rows would be read through the damage);
* FTS5's `INSERT INTO session_transcript_fts(session_transcript_fts)
  VALUES('integrity-check')`, which checks that the full-text index holds exactly the
  terms of the FTS rows. SQLite 3.40's `integrity_check` does not look inside FTS5 tables,
  and the command is an `INSERT` (it writes nothing, but SQLite refuses it on a read-only
  connection), so it runs on a snapshot of the database made with SQLite's backup API in
  a temporary folder, never on the store's file. Damage is a problem naming the file.

Then the rows, read in one read transaction (one snapshot), per window of
`session_windows` (the rules are the reference verifier's, `engine.diagnostics.verify`):

* a window whose index state is clean must hold exactly the FTS rows of its active path
  up to its watermark `indexed_seq` (`projection.index_entries`), compared as
  `(session_id, message_id, text, role, timestamp)`, the text as a UTF-8 column holds it;
  its state must name the leaf of that path, its active path rows
  (`session_transcript_active_events`) and counts must be the rebuild's;
* a window without state (its transcript predates the index) must hold no rows, and so
  must an incognito one (`SessionWindow.is_incognito`: never indexed; its state and
  active path are still checked);
* a window that needs a rebuild keeps stale rows until reconcile: they are counted as
  `stale`, not compared;
* FTS rows, map rows, states and active rows of a window with no transcript rows are
  orphans (`sweep_orphans` would delete them: run reconcile);
* the row map `session_transcript_fts_rows` and the FTS table must pair one to one: a map
  row without its FTS row, an FTS row without its map row, or a pair naming different
  messages, is a problem naming the rowid.

A row the rebuild expects and the index lacks is `missing`; one the index holds and the
rebuild does not is `unexpected`; a row of the right message whose text, role or time
differ is `differing` (listed with the fields). At most `report.MAX_LISTED` of each kind
are listed. A database OpenClaw wrote (layout `openclaw`, `verify --read-only`) is read
the same way (its queue is the needs-reconcile predicate; a cold window has no transcript
rows, so no row): OpenClaw 2026.9.6's own writer leaves exactly the rows, states and
active paths of a rebuild (`tests/diagnostics/test_sqlite_verify.py` checks a state it
wrote).

Repair (`repair_sqlite_backend`, the partition opened as the writer): a database that
SQLite reports damaged is not touched (only a backup holds what the damage lost: say
so); otherwise every window is rebuilt from its transcript rows and orphans are swept, in
one transaction (`SqliteBackend.rebuild_index`).

Cost: O(database bytes) for the checks (and one copy of the file in a temporary folder),
plus O(events + rows) for the comparison; every window's events are read once.
"""

from __future__ import annotations

import sqlite3
import tempfile
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from engine.backends.sqlite import schema
from engine.backends.sqlite.backend import SqliteBackend
from engine.backends.sqlite.connection import ReadConnection
from engine.backends.sqlite.refusals import damage_reported
from engine.backends.sqlite.storable import storable_text
from engine.backends.sqlite.writes import active_rows, read_events
from engine.backends.verify_report import MAX_LISTED, VerifyReport
from engine.errors import CorruptFile, StoreError
from engine.index.lifecycle import WindowIndexState
from engine.model import SessionWindow, StoredEvent
from engine.transcript.evidence import counted
from engine.transcript.projection import index_entries
from engine.transcript.tree import scan_tree

#: `(session_id, message_id, text, role, timestamp)`: what an FTS row says of a message.
Row = tuple[str, str, str, str, object]

FTS_INTEGRITY = ("INSERT INTO session_transcript_fts(session_transcript_fts) "
                 "VALUES('integrity-check')")


@dataclass(frozen=True, slots=True)
class StoredRows:
    """The index rows of one database, as read in one snapshot."""

    fts: dict[int, Row]  # FTS rowid -> row
    fts_map: dict[int, tuple[str, str | None]]  # map id -> (session_id, message_id)
    states: dict[str, WindowIndexState]
    active_counts: dict[str, tuple[int, int]]  # session_id -> (events, messages) of the state
    transcripts: frozenset[str]  # windows holding transcript rows


def integrity_problems(path: Path, connection: sqlite3.Connection) -> list[str]:
    """What `PRAGMA integrity_check` says is wrong with the database at `path` (read on
    `connection`), one problem naming the file, or none."""
    try:
        rows = [row[0] for row in connection.execute("PRAGMA integrity_check")]
    except sqlite3.DatabaseError as error:
        return [f"{path}: the database is damaged (integrity_check: {error})"]
    if rows == ["ok"]:
        return []
    shown = "; ".join(str(row) for row in rows[:3])
    more = f" (and {len(rows) - 3} more)" if len(rows) > 3 else ""
    return [f"{path}: the database is damaged: PRAGMA integrity_check reports {shown}{more}"]


def fts_integrity_problems(path: Path, connection: sqlite3.Connection) -> list[str]:
    """What FTS5's integrity check says of `session_transcript_fts`, run on a snapshot of
    the database (made from `connection`) in a temporary folder (see the module)."""
    with tempfile.TemporaryDirectory(prefix="session-search-verify-") as folder:
        copy = sqlite3.connect(Path(folder) / "snapshot.sqlite", isolation_level=None)
        try:
            connection.backup(copy)
            copy.execute(FTS_INTEGRITY)
        except sqlite3.DatabaseError as error:
            return [(f"{path}: the full-text index session_transcript_fts is damaged "
                    f"(FTS5 integrity-check: {error})")]
        finally:
            copy.close()
    return []


def read_stored_rows(connection: sqlite3.Connection) -> StoredRows:
    """The FTS rows, the row map, the states and the windows with transcript rows."""
    fts = {rowid: (session_id, message_id, text, role, timestamp)
           for rowid, session_id, message_id, text, role, timestamp in connection.execute(
               "SELECT rowid, session_id, message_id, text, role, timestamp "
               "FROM session_transcript_fts")}
    fts_map = {row_id: (session_id, message_id) for row_id, session_id, message_id in
               connection.execute("SELECT id, session_id, message_id "
                                  "FROM session_transcript_fts_rows")}
    states = {}
    active_counts = {}
    for session_id, indexed_seq, leaf, needs_rebuild, events, messages in connection.execute(
            "SELECT session_id, indexed_seq, leaf_event_id, needs_rebuild, "
            "active_event_count, active_message_count FROM session_transcript_index_state"):
        states[session_id] = WindowIndexState(indexed_seq, leaf, bool(needs_rebuild))
        active_counts[session_id] = (events, messages)
    transcripts = frozenset(row[0] for row in connection.execute(
        "SELECT DISTINCT session_id FROM transcript_events"))
    return StoredRows(fts, fts_map, states, active_counts, transcripts)


def map_problems(rows: StoredRows) -> list[str]:
    """Where the row map and the FTS table do not pair one to one."""
    problems = []
    for row_id in sorted(rows.fts_map.keys() - rows.fts.keys())[:MAX_LISTED]:
        session_id, message_id = rows.fts_map[row_id]
        problems.append(f"map row {row_id} of session_transcript_fts_rows (session "
                        f"{session_id!r}, message {message_id!r}) has no FTS row")
    for row_id in sorted(rows.fts.keys() - rows.fts_map.keys())[:MAX_LISTED]:
        session_id, message_id, *_ = rows.fts[row_id]
        problems.append(f"FTS row {row_id} (session {session_id!r}, message {message_id!r}) "
                        "has no row in session_transcript_fts_rows")
    paired = sorted(row_id for row_id in rows.fts.keys() & rows.fts_map.keys()
                    if rows.fts[row_id][:2] != rows.fts_map[row_id])
    for row_id in paired[:MAX_LISTED]:
        problems.append(f"FTS row {row_id} holds (session {rows.fts[row_id][0]!r}, message "
                        f"{rows.fts[row_id][1]!r}) but its map row names (session "
                        f"{rows.fts_map[row_id][0]!r}, message {rows.fts_map[row_id][1]!r})")
    return problems


def window_problems(connection: sqlite3.Connection, session_id: str, state: WindowIndexState,
                    covered: list[StoredEvent], counts: tuple[int, int]) -> list[str]:
    """What is wrong with a clean window's state and active path, against a rebuild from
    the events its watermark covers."""
    problems = []
    if covered and covered[-1].seq < state.indexed_seq:
        problems.append(f"index state of window {session_id!r} covers seq {state.indexed_seq},"
                        f" past its last event {covered[-1].seq}")
    tree = scan_tree(covered)
    if state.leaf_event_id != tree.leaf_id:
        problems.append(f"index state of window {session_id!r} names leaf "
                        f"{state.leaf_event_id!r}; its transcript's leaf is {tree.leaf_id!r}")
    expected = active_rows(session_id, tree.active_path())
    stored = [tuple(row) for row in connection.execute(
        "SELECT session_id, active_position, event_seq, message_position, context_eligible "
        "FROM session_transcript_active_events WHERE session_id = ? ORDER BY active_position",
        (session_id,))]
    if stored != expected:
        problems.append(f"active path of window {session_id!r} differs from the rebuild "
                        f"({counted(len(stored), 'row')} stored, {len(expected)} expected)")
    messages = sum(1 for row in expected if row[3] is not None)
    if counts != (len(expected), messages):
        problems.append(f"index state of window {session_id!r} counts {counts[0]} active "
                        f"events and {counts[1]} messages; the rebuild has {len(expected)} "
                        f"and {messages}")
    return problems


#: Every window with its key and incognito flag, per layout (OpenClaw stores no incognito
#: window in an agent database, and has no column for the flag).
WINDOWS_SQL: dict[schema.Layout, str] = {
    schema.OWN: ("SELECT w.session_id, w.session_key, coalesce(m.incognito, 0) "
                 "FROM session_windows AS w LEFT JOIN session_search_windows AS m "
                 "ON m.session_id = w.session_id ORDER BY w.rowid"),
    schema.OPENCLAW: "SELECT session_id, session_key, 0 FROM session_windows ORDER BY rowid",
}


def expected_rows(connection: sqlite3.Connection, layout: schema.Layout, rows: StoredRows,
                  report: VerifyReport) -> tuple[list[Row], list[str]]:
    """The FTS rows the database should hold (stale rows of dirty windows taken as they
    are), and what is wrong with the clean windows' states and active paths."""
    by_window: dict[str, list[Row]] = {}
    for row in rows.fts.values():
        by_window.setdefault(row[0], []).append(row)
    expected: list[Row] = []
    problems: list[str] = []
    for session_id, session_key, incognito in connection.execute(WINDOWS_SQL[layout]).fetchall():
        report.windows += 1
        state = rows.states.get(session_id)
        if state is None or session_id not in rows.transcripts:
            continue
        if state.needs_rebuild:
            stale = by_window.get(session_id, [])
            report.stale_rows += len(stale)
            expected.extend(stale)
            continue
        covered = [event for event in read_events(connection, session_id)
                   if event.seq <= state.indexed_seq]
        if not SessionWindow(session_id, session_key, incognito=bool(incognito)).is_incognito:
            expected.extend((entry.session_id, entry.message_id, storable_text(entry.text),
                             entry.role, entry.timestamp) for entry in index_entries(covered))
        problems.extend(window_problems(connection, session_id, state, covered,
                                        rows.active_counts[session_id]))
    return expected, problems


def orphan_windows(connection: sqlite3.Connection, rows: StoredRows) -> list[str]:
    """Windows with index rows, state or active rows but no transcript rows."""
    holding = {row[0] for row in rows.fts.values()}
    holding |= {session_id for session_id, _ in rows.fts_map.values()}
    holding |= set(rows.states)
    holding |= {row[0] for row in connection.execute(
        "SELECT DISTINCT session_id FROM session_transcript_active_events")}
    return sorted(holding - rows.transcripts)


def windows_needing_reconcile(connection: sqlite3.Connection, layout: schema.Layout) -> int:
    """How many windows need reconcile: the queue, or the predicate on an OpenClaw file."""
    if layout == schema.OWN:
        sql = "SELECT count(*) FROM session_search_reconcile_queue"
    else:
        sql = ("SELECT count(*) FROM session_windows AS pending WHERE "
               + schema.needs_reconcile_sql("pending.session_id"))
    return connection.execute(sql).fetchone()[0]


def compare_rows(committed: Iterable[Row], expected: Iterable[Row]) -> list[str]:
    """Missing, unexpected and differing rows (see the module)."""
    committed_rows, expected_rows_ = Counter(committed), Counter(expected)
    missing = list((expected_rows_ - committed_rows).elements())
    extra = list((committed_rows - expected_rows_).elements())
    extra_by_message: dict[tuple[str, str], list[Row]] = {}
    for row in extra:
        extra_by_message.setdefault(row[:2], []).append(row)
    differing: list[tuple[Row, Row]] = []
    still_missing: list[Row] = []
    for row in missing:
        candidates = extra_by_message.get(row[:2])
        if candidates:
            differing.append((row, candidates.pop(0)))
        else:
            still_missing.append(row)
    still_extra = [row for rows in extra_by_message.values() for row in rows]
    problems = []
    for row in still_missing[:MAX_LISTED]:
        problems.append(f"missing row (session {row[0]!r}, message {row[1]!r})")
    for row in still_extra[:MAX_LISTED]:
        problems.append(f"unexpected row (session {row[0]!r}, message {row[1]!r})")
    for wanted, found in differing[:MAX_LISTED]:
        fields = [name for name, left, right in zip(("text", "role", "timestamp"), wanted[2:],
                                                    found[2:], strict=True) if left != right]
        problems.append(f"differing row (session {wanted[0]!r}, message {wanted[1]!r}): its "
                        f"{', '.join(fields)} differ{'s' if len(fields) == 1 else ''} from "
                        "the transcript's")
    hidden = (max(0, len(still_missing) - MAX_LISTED) + max(0, len(still_extra) - MAX_LISTED)
              + max(0, len(differing) - MAX_LISTED))
    if hidden:
        problems.append(f"... and {hidden} more differing rows")
    return problems


def verify_sqlite_backend(backend: SqliteBackend) -> VerifyReport:
    """Check the database of `backend` (on a read-only connection of its own): SQLite's
    checks of the file, then its index rows against a rebuild from its transcript rows."""
    path = backend.path
    report = VerifyReport()
    reader = ReadConnection.open(path)
    connection = reader.connection
    try:
        damage = integrity_problems(path, connection)
        if damage:
            report.problems.extend(damage)
            report.problems.append("the index was not compared: the database is damaged "
                                   "(only a backup holds what the damage lost)")
            return report
        report.problems.extend(fts_integrity_problems(path, connection))
        with damage_reported(path):
            connection.execute("BEGIN")
            try:
                _compare(connection, reader.layout, report)
            finally:
                connection.execute("COMMIT")
    except (CorruptFile, StoreError) as error:
        report.problems.append(str(error))
    finally:
        connection.close()
    return report


def _compare(connection: sqlite3.Connection, layout: schema.Layout, report: VerifyReport) -> None:
    rows = read_stored_rows(connection)
    report.problems.extend(map_problems(rows))
    orphans = orphan_windows(connection, rows)
    for session_id in orphans:
        report.problems.append(f"orphan rows or state for window {session_id!r} (run reconcile)")
    committed = [row for row in rows.fts.values() if row[0] not in orphans]
    report.rows_committed = len(rows.fts)
    expected, state_problems = expected_rows(connection, layout, rows, report)
    report.rows_expected = len(expected)
    report.windows_needing_reconcile = windows_needing_reconcile(connection, layout)
    report.problems.extend(state_problems)
    report.problems.extend(compare_rows(committed, expected))


def repair_sqlite_backend(backend: SqliteBackend) -> list[str]:
    """Rebuild every window of a writer partition from its transcript rows and sweep
    orphans, in one transaction; a database SQLite reports damaged is left as it is (the
    line says why). Returns what was done, one line each."""
    path = backend.path
    reader = ReadConnection.open(path)
    try:
        damage = integrity_problems(path, reader.connection)
    finally:
        reader.connection.close()
    if damage:
        return [(f"{path}: not repaired: the database is damaged, and a rebuild would read "
                "through the damage; only a backup of the file holds what it lost")]
    windows = backend.rebuild_index()
    return [f"rebuilt the index from the transcripts ({counted(windows, 'window')})"]
