"""The PostgreSQL write path: one transaction's rows, decided per event and written per table.

Owns: how `put_window`, `append_event`, `replace_transcript` and `delete_session` become
rows of a partition's schema (`engine.backends.postgres.schema`), the rebuild of one
window from its events (reconcile), and the orphan sweep. Must not touch: what is
searchable (`engine.transcript.projection`), the forward indexer's decision
(`engine.backends.forward_indexing`), the §8.2 rule (`engine.backends.replacement`), the
tree rules (`engine.transcript.tree`), the lifecycle (`engine.index.lifecycle`), opening
connections and committing (the backend), searching.

Rows, for an event appended at `seq` (the same decisions as the SQLite backend's, from the
same shared functions, so that the backends agree on which rows are searchable):
* `transcript_events(session_id, seq, event_json, created_at, event_utf8_bytes)`, the
  JSON written with `ensure_ascii` (every event, lone surrogates included, round-trips, and
  PostgreSQL text never meets a NUL);
* when the forward indexer indexes it, one `session_transcript_messages` row (its tsvector
  is the row's generated column, so the message and its index entry are one row);
* the window's `session_transcript_index_state` row: `last_seq` moves with every append,
  the watermark, leaf and dirty flag as `classify_append` decides.

**One batch, one statement per table.** A transaction keeps a cursor per window it appends
to (read once) and gathers rows; they are written with one `COPY` per table (events,
messages) and one batched upsert of the states when `FLUSH_EVENTS` events wait, before any
other statement of the transaction, and at commit. Message ids come from the table's
identity column, in insertion order (the order `recent` breaks timestamp ties by, as
SQLite's rowid).

**Incognito windows** keep their events and state and get no message row.

**Identifiers PostgreSQL cannot hold.** PostgreSQL text holds no NUL: a window whose
string fields, or an event whose `id`, hold one is refused with `InputError` (nothing is
written); a message's text is stored as `engine.index.documents.postgres_text` says.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import psycopg

from engine.backends.forward_indexing import classify_append
from engine.backends.postgres.connection import check_storable, is_storable
from engine.backends.protocol import BackendTransaction
from engine.backends.replacement import rebuild_is_deferred
from engine.config import EngineConfig
from engine.errors import unknown_session
from engine.index.documents import postgres_text
from engine.index.lifecycle import WindowIndexState, rebuilt_state
from engine.model import IndexEntry, SessionWindow, StoredEvent, is_incognito_key
from engine.transcript.projection import extract_index_entry, index_entries
from engine.transcript.tree import scan_tree
from engine.transcript.validation import (
    check_event,
    check_privacy_change,
    check_replacement,
    check_window,
)

#: Gathered events written at once (bounds the memory of a large import).
FLUSH_EVENTS = 4096
WINDOW_TEXT_FIELDS = ("session_id", "session_key", "previous_session_id", "title", "kind",
                      "spawned_by", "owner_session_key", "parent_session_key", "group")


def now_milliseconds() -> float:
    """The time of a write (epoch milliseconds)."""
    return float(int(time.time() * 1000))


@dataclass(frozen=True, slots=True)
class Statements:
    """The SQL of one partition's schema (its name is checked: `[a-z_][a-z0-9_]*`)."""

    schema: str

    def table(self, name: str) -> str:
        return f'"{self.schema}".{name}'

    @property
    def read_cursor(self) -> str:
        return (f"SELECT w.session_key, w.incognito, s.last_seq, s.indexed_seq, "
                f"s.leaf_event_id, s.needs_rebuild FROM {self.table('session_windows')} AS w "
                f"LEFT JOIN {self.table('session_transcript_index_state')} AS s "
                "ON s.session_id = w.session_id WHERE w.session_id = %s")

    @property
    def upsert_window(self) -> str:
        columns = ("session_id, session_key, previous_session_id, reason, current, title, "
                   'kind, spawned_by, owner_session_key, parent_session_key, incognito, '
                   'archived, "group", created_at, extra')
        updates = ", ".join(f"{name} = excluded.{name}" for name in (
            "session_key", "previous_session_id", "reason", "current", "title", "kind",
            "spawned_by", "owner_session_key", "parent_session_key", "incognito", "archived",
            '"group"', "created_at", "extra"))
        return (f"INSERT INTO {self.table('session_windows')} ({columns}) VALUES "
                f"({', '.join(['%s'] * 15)}) ON CONFLICT (session_id) DO UPDATE SET {updates}")

    @property
    def upsert_state(self) -> str:
        return (f"INSERT INTO {self.table('session_transcript_index_state')} (session_id, "
                "last_seq, indexed_seq, leaf_event_id, needs_rebuild, updated_at) VALUES "
                "(%s, %s, %s, %s, %s, %s) ON CONFLICT (session_id) DO UPDATE SET "
                "last_seq = excluded.last_seq, indexed_seq = excluded.indexed_seq, "
                "leaf_event_id = excluded.leaf_event_id, "
                "needs_rebuild = excluded.needs_rebuild, updated_at = excluded.updated_at")

    @property
    def copy_events(self) -> str:
        return (f"COPY {self.table('transcript_events')} (session_id, seq, event_json, "
                "created_at, event_utf8_bytes) FROM STDIN")

    @property
    def copy_messages(self) -> str:
        return (f"COPY {self.table('session_transcript_messages')} (session_id, session_key, "
                "message_id, role, timestamp, seq, text) FROM STDIN")

    @property
    def read_events(self) -> str:
        return (f"SELECT seq, event_json, created_at FROM {self.table('transcript_events')} "
                "WHERE session_id = %s ORDER BY seq")


@dataclass(slots=True)
class WindowCursor:
    """What one transaction knows about a window it appends to (changes as it appends)."""

    session_key: str
    incognito: bool
    last_seq: int
    state: WindowIndexState | None

    def state_row(self, session_id: str, updated_at: float) -> tuple:
        state = self.state
        return (session_id, self.last_seq, None if state is None else state.indexed_seq,
                None if state is None else state.leaf_event_id,
                False if state is None else state.needs_rebuild, updated_at)


def event_row(session_id: str, seq: int, event: dict[str, Any], received: float) -> tuple:
    """The `transcript_events` row of one event."""
    event_json = json.dumps(event, ensure_ascii=True)
    return (session_id, seq, event_json, received, len(event_json))


def message_row(entry: IndexEntry, session_key: str) -> tuple:
    """The `session_transcript_messages` row of one index entry."""
    return (entry.session_id, session_key, entry.message_id, entry.role, entry.timestamp,
            entry.seq, postgres_text(entry.text))


def check_event_identity(session_id: str, event: dict[str, Any]) -> None:
    """Refuse an event whose `id` PostgreSQL cannot store (its message id, its leaf)."""
    event_id = event.get("id")
    if isinstance(event_id, str):
        check_storable(event_id, f"session {session_id}: event id")


def copy_rows(connection: psycopg.Connection, statement: str, rows: Sequence[tuple]) -> None:
    """Write `rows` with one `COPY`."""
    if not rows:
        return
    with connection.cursor() as cursor, cursor.copy(statement) as copy:
        for row in rows:
            copy.write_row(row)


class PostgresTransaction(BackendTransaction):
    """The write operations of one transaction on one partition (see
    `PostgresBackend.transaction`); `flush()` writes what it gathered."""

    def __init__(self, connection: psycopg.Connection, statements: Statements,
                 config: EngineConfig | None = None) -> None:
        self._connection = connection
        self._sql = statements
        self._config = config or EngineConfig()
        self._cursors: dict[str, WindowCursor] = {}
        self._events: list[tuple] = []
        self._messages: list[tuple] = []
        self._states: dict[str, WindowCursor] = {}

    # ---- windows ------------------------------------------------------------------

    def put_window(self, window: SessionWindow) -> None:
        """Insert a window, or replace the metadata of an existing one (its message rows
        follow a new key)."""
        check_window(window)
        for name in WINDOW_TEXT_FIELDS:
            check_storable(getattr(window, name), name)
        self.flush()
        stored = stored_window(self._connection, self._sql, window.session_id)
        check_privacy_change(stored, window)
        self._connection.execute(self._sql.upsert_window, (
            window.session_id, window.session_key, window.previous_session_id, window.reason,
            window.current, window.title, window.kind, window.spawned_by,
            window.owner_session_key, window.parent_session_key, window.incognito,
            window.archived, window.group, window.created_at,
            json.dumps(window.extra, ensure_ascii=True, sort_keys=True)))
        if stored is None:
            self._connection.execute(
                f"INSERT INTO {self._sql.table('session_transcript_index_state')} "
                "(session_id, updated_at) VALUES (%s, %s)",
                (window.session_id, now_milliseconds()))
        elif stored.session_key != window.session_key:
            self._connection.execute(
                f"UPDATE {self._sql.table('session_transcript_messages')} SET session_key = %s "
                "WHERE session_id = %s", (window.session_key, window.session_id))
        self._cursors.pop(window.session_id, None)

    def delete_session(self, session_key: str) -> int:
        """Delete every window of `session_key`, with its events, rows and state."""
        if not is_storable(session_key):
            return 0
        self.flush()
        deleted = [row[0] for row in self._connection.execute(
            f"DELETE FROM {self._sql.table('session_windows')} WHERE session_key = %s "
            "RETURNING session_id", (session_key,))]
        for session_id in deleted:
            self._cursors.pop(session_id, None)
        return len(deleted)

    # ---- events -------------------------------------------------------------------

    def append_event(self, session_id: str, event: dict[str, Any],
                     created_at: float | None = None) -> int:
        """Append one event, index it in this transaction when the lifecycle allows; return seq."""
        check_event(session_id, event, created_at)
        check_event_identity(session_id, event)
        cursor = self._cursor(session_id)
        seq = cursor.last_seq + 1
        received = now_milliseconds() if created_at is None else float(created_at)
        self._events.append(event_row(session_id, seq, event, received))
        stored = StoredEvent(session_id, seq, event, received)
        entry = None if cursor.incognito else extract_index_entry(stored)
        action, new_state = classify_append(cursor.state, stored, indexable=entry is not None)
        if action == "index" and entry is not None:
            self._messages.append(message_row(entry, cursor.session_key))
        if action in ("index", "advance", "dirty"):
            cursor.state = new_state
        cursor.last_seq = seq
        self._states[session_id] = cursor
        if len(self._events) >= FLUSH_EVENTS:
            self.flush()
        return seq

    def replace_transcript(
        self, session_id: str, events: Sequence[dict[str, Any]],
        created_at: float | Sequence[float | None] | None = None,
    ) -> int:
        """Replace every event of an existing window by `events`; rebuild its rows now or
        mark it dirty (behaviour.md §8.2); return how many events."""
        self._cursor(session_id)  # UnknownSession before anything else
        events = list(events)
        stamps = check_replacement(session_id, events, created_at)
        for event in events:
            check_event_identity(session_id, event)
        deferred = rebuild_is_deferred(events, self._config)
        self.flush()
        self._connection.execute(
            f"DELETE FROM {self._sql.table('transcript_events')} WHERE session_id = %s",
            (session_id,))
        stored = [StoredEvent(session_id, seq, event,
                              now_milliseconds() if given is None else float(given))
                  for seq, (event, given) in enumerate(zip(events, stamps, strict=True))]
        copy_rows(self._connection, self._sql.copy_events,
                  [event_row(session_id, item.seq, item.event, item.created_at)
                   for item in stored])
        cursor = self._cursors.pop(session_id)
        if deferred:
            state = cursor.state or WindowIndexState()
            cursor.state = WindowIndexState(state.indexed_seq, state.leaf_event_id, True)
            cursor.last_seq = len(stored) - 1
            self._connection.execute(self._sql.upsert_state,
                                     cursor.state_row(session_id, now_milliseconds()))
        else:
            rebuild_window_from(self._connection, self._sql, session_id, stored)
        return len(events)

    def flush(self) -> None:
        """Write the gathered rows (before any other statement, and before the commit)."""
        if self._events:
            copy_rows(self._connection, self._sql.copy_events, self._events)
            self._events = []
        if self._messages:
            copy_rows(self._connection, self._sql.copy_messages, self._messages)
            self._messages = []
        if self._states:
            updated_at = now_milliseconds()
            with self._connection.cursor() as cursor:
                cursor.executemany(self._sql.upsert_state, [
                    state.state_row(session_id, updated_at)
                    for session_id, state in self._states.items()])
            self._states = {}

    def _cursor(self, session_id: str) -> WindowCursor:
        cursor = self._cursors.get(session_id)
        if cursor is None:
            if not is_storable(session_id):
                raise unknown_session(session_id)
            row = self._connection.execute(self._sql.read_cursor, (session_id,)).fetchone()
            if row is None:
                raise unknown_session(session_id)
            session_key, incognito, last_seq, indexed_seq, leaf, needs_rebuild = row
            state = None
            if indexed_seq is not None:
                state = WindowIndexState(indexed_seq, leaf, bool(needs_rebuild))
            cursor = WindowCursor(session_key, bool(incognito) or is_incognito_key(session_key),
                                  -1 if last_seq is None else last_seq, state)
            self._cursors[session_id] = cursor
        return cursor


# --------------------------------------------------------------------------------------
# Reading back, rebuilding, sweeping
# --------------------------------------------------------------------------------------


def read_events(connection: psycopg.Connection, statements: Statements,
                session_id: str) -> list[StoredEvent]:
    """Every stored event of one window, in seq order."""
    return [StoredEvent(session_id, seq, json.loads(event_json), created_at)
            for seq, event_json, created_at in connection.execute(statements.read_events,
                                                                   (session_id,))]


def stored_window(connection: psycopg.Connection, statements: Statements,
                  session_id: str) -> SessionWindow | None:
    """What the schema says of a window's key and privacy, or None when it has no such
    window."""
    if not is_storable(session_id):
        return None
    row = connection.execute(
        f"SELECT session_key, incognito FROM {statements.table('session_windows')} "
        "WHERE session_id = %s", (session_id,)).fetchone()
    return None if row is None else SessionWindow(session_id, row[0], incognito=row[1])


def rebuild_window(connection: psycopg.Connection, statements: Statements,
                   session_id: str) -> int:
    """Replace one window's message rows and state by a rebuild from its events; return
    how many events it read."""
    events = read_events(connection, statements, session_id)
    rebuild_window_from(connection, statements, session_id, events)
    return len(events)


def rebuild_window_from(connection: psycopg.Connection, statements: Statements,
                        session_id: str, events: Sequence[StoredEvent]) -> None:
    """Replace one window's message rows and state by a rebuild from `events` (all of its
    stored events, seq 0 first); an incognito window gets its state and no row."""
    connection.execute(f"DELETE FROM {statements.table('session_transcript_messages')} "
                       "WHERE session_id = %s", (session_id,))
    window = stored_window(connection, statements, session_id)
    tree = scan_tree(events)
    entries = [] if window is None or window.is_incognito else index_entries(events, tree)
    key = "" if window is None else window.session_key
    copy_rows(connection, statements.copy_messages, [message_row(entry, key)
                                                     for entry in entries])
    last_seq = events[-1].seq if events else -1
    cursor = WindowCursor(key, False, last_seq, rebuilt_state(last_seq, tree.leaf_id))
    connection.execute(statements.upsert_state, cursor.state_row(session_id, now_milliseconds()))


#: The windows with message rows or an index state past the empty one, but no events.
ORPHANED_WINDOWS = (
    "SELECT s.session_id FROM {state} AS s WHERE (s.indexed_seq IS NOT NULL OR "
    "EXISTS (SELECT 1 FROM {messages} AS m WHERE m.session_id = s.session_id)) "
    "AND NOT EXISTS (SELECT 1 FROM {events} AS e WHERE e.session_id = s.session_id)"
)


def sweep_orphans(connection: psycopg.Connection, statements: Statements) -> int:
    """Drop the message rows and reset the states of windows without events (§8.3);
    return how many windows had some."""
    orphans = [row[0] for row in connection.execute(ORPHANED_WINDOWS.format(
        state=statements.table("session_transcript_index_state"),
        messages=statements.table("session_transcript_messages"),
        events=statements.table("transcript_events")))]
    if orphans:
        connection.execute(f"DELETE FROM {statements.table('session_transcript_messages')} "
                           "WHERE session_id = ANY(%s)", (orphans,))
        connection.execute(
            f"UPDATE {statements.table('session_transcript_index_state')} SET last_seq = -1, "
            "indexed_seq = NULL, leaf_event_id = NULL, needs_rebuild = false "
            "WHERE session_id = ANY(%s)", (orphans,))
    return len(orphans)
