"""`session-search verify` of a PostgreSQL partition: its message rows against a rebuild from
its transcript rows, and each row's stored tsvector against the configuration.

Owns: what "the index of a partition's schema agrees with its transcripts" means on
PostgreSQL and its report (a `VerifyReport`, as on every backend), and
`repair_postgres_backend` (`verify --repair`). Must not touch: the rows (verify only
reads, in one read-only REPEATABLE READ transaction: one snapshot), what is searchable
(`engine.transcript.projection`), the tree rules, the lifecycle; the comparison of row
lists is the SQLite verifier's (`engine.backends.sqlite.verify.compare_rows`), so the
reports read alike.

The rules are the SQLite verifier's, per window of `session_windows`:
* a clean window (a state with `indexed_seq`, not dirty) must hold exactly the message
  rows of its active path up to its watermark, compared as `(session_id, message_id,
  text, role, timestamp)` with the text as the row stores it (`postgres_text`); its
  state must name the leaf of that path, and its `last_seq` the newest event's seq;
* a window without state, or an incognito one, holds no rows; a dirty window's rows are
  stale (counted, not compared);
* message rows, or a state past the empty one, of a window without events are orphans;
* each row's stored `lexemes` must equal `to_tsvector` of its text under the partition's
  configuration now: a difference means the configuration (the `unaccent` rules, the
  server's locale) changed since the row was written, and the row would be searched with
  the old analysis (repair rewrites every row).
"""

from __future__ import annotations

import psycopg

from engine.backends.postgres.backend import PostgresBackend
from engine.backends.postgres.schema import CONFIGURATION, lexemes_sql
from engine.backends.postgres.writes import Statements, read_events
from engine.backends.sqlite.verify import Row, compare_rows
from engine.backends.verify_report import MAX_LISTED, VerifyReport
from engine.index.documents import postgres_text
from engine.model import SessionWindow
from engine.transcript.evidence import counted
from engine.transcript.projection import index_entries
from engine.transcript.tree import scan_tree


def verify_postgres_backend(backend: PostgresBackend) -> VerifyReport:
    """Check one partition's schema (one snapshot, nothing written)."""
    report = VerifyReport()
    sql = Statements(backend.partition.schema)

    def compared(connection: psycopg.Connection) -> None:
        with connection.transaction():
            connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            _compare(connection, sql, report)

    try:
        backend.read(compared)
    except psycopg.Error as error:
        report.problems.append(f"{backend.location}: cannot be read: {error}")
    return report


def _compare(connection: psycopg.Connection, sql: Statements, report: VerifyReport) -> None:
    rows: dict[str, list[Row]] = {}
    for session_id, message_id, text, role, timestamp in connection.execute(
            f"SELECT session_id, message_id, text, role, timestamp FROM "
            f"{sql.table('session_transcript_messages')} ORDER BY id"):
        rows.setdefault(session_id, []).append((session_id, message_id, text, role, timestamp))
    report.rows_committed = sum(len(found) for found in rows.values())
    with_events = {row[0] for row in connection.execute(
        f"SELECT DISTINCT session_id FROM {sql.table('transcript_events')}")}
    committed: list[Row] = []
    expected: list[Row] = []
    for session_id, key, incognito, last_seq, indexed_seq, leaf, dirty in connection.execute(
            f"SELECT w.session_id, w.session_key, w.incognito, s.last_seq, s.indexed_seq, "
            f"s.leaf_event_id, s.needs_rebuild FROM {sql.table('session_windows')} AS w "
            f"LEFT JOIN {sql.table('session_transcript_index_state')} AS s "
            "ON s.session_id = w.session_id ORDER BY w.row_order").fetchall():
        report.windows += 1
        stored = rows.get(session_id, [])
        if session_id not in with_events:
            if stored or indexed_seq not in (None, -1):
                report.problems.append(f"orphan rows or state for window {session_id!r} "
                                       "(run reconcile)")
            continue
        committed.extend(stored)
        if indexed_seq is None:
            continue
        if dirty:
            report.stale_rows += len(stored)
            expected.extend(stored)
            continue
        events = read_events(connection, sql, session_id)
        covered = [event for event in events if event.seq <= indexed_seq]
        if events[-1].seq != last_seq:
            report.problems.append(f"index state of window {session_id!r} says its last event "
                                   f"is seq {last_seq}; it is {events[-1].seq}")
        if covered and covered[-1].seq < indexed_seq:
            report.problems.append(f"index state of window {session_id!r} covers seq "
                                   f"{indexed_seq}, past its last event {covered[-1].seq}")
        tree = scan_tree(covered)
        if leaf != tree.leaf_id:
            report.problems.append(f"index state of window {session_id!r} names leaf {leaf!r}; "
                                   f"its transcript's leaf is {tree.leaf_id!r}")
        if not SessionWindow(session_id, key, incognito=incognito).is_incognito:
            expected.extend((entry.session_id, entry.message_id, postgres_text(entry.text),
                             entry.role, entry.timestamp) for entry in index_entries(covered, tree))
    report.rows_expected = len(expected)
    report.windows_needing_reconcile = connection.execute(
        f"SELECT count(*) FROM {sql.table('session_transcript_index_state')} WHERE last_seq > "
        "CASE WHEN indexed_seq IS NULL OR needs_rebuild THEN -1 ELSE indexed_seq END"
    ).fetchone()[0]
    report.problems.extend(compare_rows(committed, expected))
    report.problems.extend(_vector_problems(connection, sql))


def _vector_problems(connection: psycopg.Connection, sql: Statements) -> list[str]:
    """Rows whose stored tsvector is not what the configuration gives their text now."""
    stale = connection.execute(
        f"SELECT session_id, message_id FROM {sql.table('session_transcript_messages')} "
        f"WHERE lexemes IS DISTINCT FROM {lexemes_sql('%s')} ORDER BY id",
        (f'"{sql.schema}".{CONFIGURATION}',)).fetchall()
    problems = [f"row (session {session_id!r}, message {message_id!r}): its stored tsvector "
                "is not what the configuration gives its text now (the unaccent rules or the "
                "locale changed; run verify --repair)" for session_id, message_id in
                stale[:MAX_LISTED]]
    if len(stale) > MAX_LISTED:
        problems.append(f"... and {len(stale) - MAX_LISTED} more rows with a stale tsvector")
    return problems


def repair_postgres_backend(backend: PostgresBackend) -> list[str]:
    """Rebuild every window of a writer partition from its transcript rows (rows and
    tsvectors written again) and sweep orphans, in one transaction."""
    windows = backend.rebuild_index()
    return [f"rebuilt the index from the transcripts ({counted(windows, 'window')})"]
