"""The SQLite write path: one transaction's rows, decided per event and written per table.

Owns: how `put_window`, `append_event`, `replace_transcript` and `delete_session` become
rows of the upstream tables (`engine.backends.sqlite.schema`), the rebuild of one window from its events
(reconcile), and the orphan sweep. Must not touch: what is searchable
(`engine.transcript.projection`), the forward indexer's decision
(`engine.backends.forward_indexing`), the tree rules (`engine.transcript.tree`), the
lifecycle (`engine.index.lifecycle`), the queue of windows needing reconcile (kept by the
schema's triggers), searching.

**Rows, as upstream writes them** (`appendTranscriptEventInTransaction` and
`createTranscriptIndexAppenderInTransaction`), for an event appended at `seq`:
* `transcript_events(session_id, seq, event_json, created_at, event_utf8_bytes)` —
  `event_json` is written with `ensure_ascii`, so every event (lone surrogates included)
  round-trips exactly, and its length is its UTF-8 size;
* `transcript_event_identities` when the event has a string `id` (a later event with the
  same id takes the identity, as it takes the node in the tree);
* when the forward indexer indexes it: the map row `session_transcript_fts_rows(id, …)` and
  the FTS row with the same rowid; when it becomes the leaf: its
  `session_transcript_active_events` row (position on the active path, message position,
  `context_eligible` = 0 when `message.excludeFromContext` is true);
* the window's `session_transcript_index_state`: watermark, leaf, dirty flag, active counts.

**One batch, one statement per table.** A transaction keeps a cursor per window it
appends to (newest `seq`, index state, active counts; read once) and gathers the rows;
they are written with one `executemany` per table when `FLUSH_EVENTS` events are
waiting, before `delete_session`, and at commit — states first, so that the queue
trigger on `transcript_events` finds each event already covered by its window's
watermark and does nothing. The SQL texts are constants, so every statement is prepared
once per connection. FTS row ids are assigned here, from the largest id in the map (what
`INTEGER PRIMARY KEY` would assign one insert at a time).

The gathered rows, their statements and cursors are `engine.backends.sqlite.write_rows`'s.

**A new window's whole transcript** (`append_transcript`, what an import that reconciles
after it hands over): a window the forward indexer would leave dirty (a rewind, a side
append, a new branch: `forward_indexing.forward_state`) is rebuilt once from its active
path instead of being indexed, marked dirty and rebuilt again by that reconcile; its FTS
rows are held (`write_rows.HeldRows`) and written by `finish`, at the commit, in
session-id order after every other row, with the rebuilds of the other windows the
transaction made that wait for reconcile: the rows and the order of the old path's
reconcile. A window the transaction did not make that waits for reconcile (or a read
inside the transaction) leaves them all to reconcile, as before.

**Window metadata.** `put_window` writes the upstream row (`session_windows`, plus the
key's `session_nodes` row, created on first use and pointed at the window when it is
`current`) and our row (`session_search_windows`, every field `SessionWindow` has).
Upstream's `created_at` is integral epoch milliseconds and never null: it holds the
window's `created_at` rounded, or the time of the write; ours holds it exactly.

**Incognito windows** (`SessionWindow.is_incognito`) keep their events, identities,
active path and state, and get no FTS row, by append or by rebuild: OpenClaw never writes
them to an agent database, so they neither match nor count in bm25 statistics.

**Replacing a transcript** (`replace_transcript`, behaviour.md §8.2) deletes the window's
`transcript_events` (their identities and active-path rows go with them, by their
foreign keys) and writes the new events' rows. Then, as `replacement.rebuild_is_deferred`
decides for the new events: the window is rebuilt at once (`rebuild_window_from`: its
FTS rows, active path and state, in this transaction), or its state gets
`needs_rebuild = 1` and its FTS rows stay, hidden from search, until reconcile.

Every `put_window`, `append_event` and `replace_transcript` is checked by
`engine.transcript.validation` first, as on every backend, so all refuse the same inputs
with the same message.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from engine.backends.forward_indexing import canonical_entry_id, classify_append, forward_state
from engine.backends.protocol import BackendTransaction
from engine.backends.replacement import rebuild_is_deferred
from engine.backends.sqlite.storable import is_storable, storable_text
from engine.backends.sqlite.write_rows import (  # noqa: F401 - INSERT_EVENT, write_identities: read as writes' by the bench's bare path
    INSERT_ACTIVE,
    INSERT_EVENT,
    INSERT_FTS,
    INSERT_FTS_ROW,
    UPSERT_STATE,
    HeldRows,
    PendingRows,
    WindowCursor,
    add_event_rows,
    context_eligibility,
    now_milliseconds,
    write_identities,
)
from engine.config import EngineConfig
from engine.errors import StoreError, unknown_session
from engine.index.lifecycle import WindowIndexState, rebuilt_state
from engine.model import IndexEntry, SessionWindow, StoredEvent, is_incognito_key
from engine.transcript import events as kinds
from engine.transcript.projection import extract_index_entry, index_entries
from engine.transcript.tree import TreeNode, scan_tree
from engine.transcript.validation import (
    check_event,
    check_privacy_change,
    check_replacement,
    check_window,
)

#: Gathered events written at once (bounds the memory of a large import).
FLUSH_EVENTS = 4096

INSERT_NODE = (
    "INSERT INTO session_nodes (session_key, current_session_id, entry_json, updated_at) "
    "VALUES (?, ?, ?, ?) ON CONFLICT (session_key) DO NOTHING"
)
POINT_NODE = (
    "UPDATE session_nodes SET current_session_id = ?, entry_json = ?, updated_at = ? "
    "WHERE session_key = ?"
)
UPSERT_WINDOW = (
    "INSERT INTO session_windows (session_id, session_key, previous_session_id, reason, "
    "created_at, updated_at, parent_session_key, spawned_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (session_id) DO UPDATE SET session_key = excluded.session_key, "
    "previous_session_id = excluded.previous_session_id, reason = excluded.reason, "
    "created_at = excluded.created_at, updated_at = excluded.updated_at, "
    "parent_session_key = excluded.parent_session_key, spawned_by = excluded.spawned_by"
)
UPSERT_WINDOW_METADATA = (
    'INSERT INTO session_search_windows (session_id, current, title, kind, owner_session_key, '
    'incognito, archived, "group", created_at, extra) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) '
    "ON CONFLICT (session_id) DO UPDATE SET current = excluded.current, "
    "title = excluded.title, kind = excluded.kind, "
    "owner_session_key = excluded.owner_session_key, incognito = excluded.incognito, "
    'archived = excluded.archived, "group" = excluded."group", '
    "created_at = excluded.created_at, extra = excluded.extra"
)
READ_CURSOR = (
    "SELECT (SELECT max(seq) FROM transcript_events WHERE session_id = ?1), "
    "state.indexed_seq, state.leaf_event_id, state.needs_rebuild, "
    "state.active_event_count, state.active_message_count, window.session_key, "
    "(SELECT incognito FROM session_search_windows WHERE session_id = ?1) "
    "FROM session_windows AS window "
    "LEFT JOIN session_transcript_index_state AS state ON state.session_id = window.session_id "
    "WHERE window.session_id = ?1"
)
READ_PRIVACY = (
    "SELECT window.session_key, (SELECT incognito FROM session_search_windows "
    "WHERE session_id = ?1) FROM session_windows AS window WHERE window.session_id = ?1"
)
LAST_FTS_ROW = "SELECT coalesce(max(id), 0) FROM session_transcript_fts_rows"
QUEUED_WINDOWS = "SELECT session_id FROM session_search_reconcile_queue ORDER BY session_id"
READ_EVENTS = (
    "SELECT seq, event_json, created_at FROM transcript_events WHERE session_id = ? ORDER BY seq"
)


class SqliteTransaction(BackendTransaction):
    """The write operations of one SQLite transaction (see `SqliteBackend.transaction`);
    `flush()` writes what it has gathered, the backend calls it before committing."""

    def __init__(self, connection: sqlite3.Connection, config: EngineConfig | None = None) -> None:
        self._connection = connection
        self._config = config or EngineConfig()
        self._cursors: dict[str, WindowCursor] = {}
        self._pending = PendingRows()
        self._next_row_id: int | None = None
        #: Windows rebuilt at once whose FTS rows wait for `finish` (`append_transcript`).
        self._held = HeldRows()
        #: Whether `append_transcript` was called (an import that reconciles after it).
        self._whole = False
        #: Windows that held no event and had no index state when first appended to.
        self._fresh: set[str] = set()

    # ---- windows ------------------------------------------------------------------

    def put_window(self, window: SessionWindow) -> None:
        """Insert a window, or replace the metadata of an existing one."""
        check_window(window)
        check_privacy_change(stored_window(self._connection, window.session_id), window)
        written = now_milliseconds()
        entry_json = json.dumps({"sessionId": window.session_id})
        self._connection.execute(INSERT_NODE, (window.session_key, window.session_id,
                                               entry_json, written))
        if window.current:
            self._connection.execute(POINT_NODE, (window.session_id, entry_json, written,
                                                  window.session_key))
        created_at = round(window.created_at) if window.created_at is not None else written
        self._connection.execute(UPSERT_WINDOW, (
            window.session_id, window.session_key, window.previous_session_id, window.reason,
            created_at, written, window.parent_session_key, window.spawned_by,
        ))
        self._connection.execute(UPSERT_WINDOW_METADATA, (
            window.session_id, int(window.current), window.title, window.kind,
            window.owner_session_key, int(window.incognito), int(window.archived),
            window.group, window.created_at,
            json.dumps(window.extra, ensure_ascii=True, sort_keys=True),
        ))

    def delete_session(self, session_key: str) -> int:
        """Delete every window of `session_key` with its events, index rows and state (none
        for a key SQLite cannot bind, which no window holds)."""
        if not is_storable(session_key):
            return 0
        self._pending.write(self._connection)
        session_ids = [row[0] for row in self._connection.execute(
            "SELECT session_id FROM session_windows WHERE session_key = ?", (session_key,))]
        self._connection.execute(
            "DELETE FROM session_transcript_fts_rows WHERE session_id IN "
            "(SELECT session_id FROM session_windows WHERE session_key = ?)", (session_key,))
        # Each window cascades to its events, identities, active path, state and metadata.
        self._connection.execute("DELETE FROM session_windows WHERE session_key = ?", (session_key,))
        self._connection.execute("DELETE FROM session_nodes WHERE session_key = ?", (session_key,))
        for session_id in session_ids:
            self._cursors.pop(session_id, None)
            self._held.drop(session_id)
        return len(session_ids)

    # ---- events -------------------------------------------------------------------

    def append_event(self, session_id: str, event: dict[str, Any], created_at: float | None = None) -> int:
        """Append one event, index it in this transaction when the lifecycle allows; return seq."""
        check_event(session_id, event, created_at)
        return self._append_checked(session_id, event, created_at)

    def append_transcript(self, session_id: str, events: Sequence[dict[str, Any]],
                          created_at: Sequence[float | None]) -> int:
        """Append `events` (seq 0, 1, ...), each stamped by its item of `created_at`, to
        a window that holds no event yet and has no index state (one put in this
        transaction), each event already checked as `append_event` checks it
        (`validation.check_event`); return how many.

        The rows are those `append_event` would leave once reconcile ran, each made once:
        a window the forward indexer leaves clean (`forward_indexing.forward_state`) is
        indexed event by event, as `append_event` does; one it would leave dirty (a
        rewind, a side append, a new branch) is rebuilt from its active path at once:
        its active rows and rebuilt state now, its FTS rows held (`HeldRows`) until
        `finish` adds them in session-id order after every other row of the transaction,
        where reconcile would have added them. When something else is left for reconcile
        in this partition at `finish` (or a read makes the transaction `flush` first, or
        the window gets another event), the held windows are left dirty instead, and
        reconcile rebuilds them with the rest, as before. Any other window takes
        `append_event`'s path."""
        cursor = self._cursor(session_id)
        self._whole = True
        events = list(events)
        stamps = [float(now_milliseconds()) if given is None else float(given)
                  for given in created_at]
        if len(stamps) != len(events):
            raise ValueError("append_transcript needs one stamp per event")
        if cursor.last_seq != -1 or cursor.state is not None or not events:
            for event, stamp in zip(events, stamps, strict=True):
                self._append_checked(session_id, event, stamp)
            return len(events)
        stored = [StoredEvent(session_id, seq, event, stamp)
                  for seq, (event, stamp) in enumerate(zip(events, stamps, strict=True))]
        dirty = forward_state(stored)
        if dirty is None or not dirty.needs_rebuild:
            for event, stamp in zip(events, stamps, strict=True):
                self._append_checked(session_id, event, stamp)
            return len(events)
        pending = self._pending
        for item in stored:
            add_event_rows(pending, session_id, item.seq, item.event, item.created_at)
        tree = scan_tree(stored)
        active = active_rows(session_id, tree.active_path())
        pending.active.extend(active)
        cursor.active_events = len(active)
        cursor.active_messages = sum(1 for row in active if row[3] is not None)
        cursor.state = rebuilt_state(stored[-1].seq, tree.leaf_id)
        cursor.last_seq = stored[-1].seq
        pending.states[session_id] = cursor
        entries = [] if cursor.incognito else index_entries(stored, tree)
        self._held.add(session_id, [(entry.message_id, entry.text, entry.role, entry.timestamp)
                                    for entry in entries], dirty)
        if len(pending.events) >= FLUSH_EVENTS:
            pending.write(self._connection)
        return len(events)

    def _append_checked(self, session_id: str, event: dict[str, Any],
                        created_at: float | None) -> int:
        """`append_event` after its check."""
        cursor = self._cursor(session_id)
        pending = self._pending
        if session_id in self._held:  # rebuilt at once, and now it goes on: as before,
            cursor.state = self._held.drop(session_id)  # it is left to reconcile
            pending.states[session_id] = cursor
        seq = cursor.last_seq + 1
        received = float(now_milliseconds()) if created_at is None else float(created_at)
        add_event_rows(pending, session_id, seq, event, received)
        stored = StoredEvent(session_id, seq, event, received)
        # Whether the event yields an index entry only tells `index` from `advance`
        # (`classify_append`'s table), so the entry is extracted for an event the
        # forward indexer takes, never for one of a dirty or deferred window.
        action, new_state = classify_append(cursor.state, stored, indexable=True)
        if action == "index":
            entry = None if cursor.incognito else extract_index_entry(stored)
            if entry is None:
                action = "advance"
            else:
                self._add_entry(entry)
        if action in ("index", "advance") and canonical_entry_id(event) is not None:
            self._add_active(session_id, cursor, seq, event)
        if action in ("index", "advance", "dirty"):
            cursor.state = new_state
            pending.states[session_id] = cursor
        cursor.last_seq = seq
        if len(pending.events) >= FLUSH_EVENTS:
            pending.write(self._connection)
        return seq

    def replace_transcript(
        self, session_id: str, events: Sequence[dict[str, Any]],
        created_at: float | Sequence[float | None] | None = None,
    ) -> int:
        """Replace every event of an existing window by `events`, stamped `created_at`
        (one for all, or one per event); rebuild its index now or mark it dirty (see the
        module docstring); return how many events."""
        self._cursor(session_id)  # UnknownSession before anything else
        events = list(events)
        stamps = check_replacement(session_id, events, created_at)
        deferred = rebuild_is_deferred(events, self._config)
        self._pending.write(self._connection)
        self._held.drop(session_id)  # its rows are the replacement's now
        self._connection.execute("DELETE FROM transcript_events WHERE session_id = ?",
                                 (session_id,))
        rows = PendingRows()
        stored = []
        for seq, (event, given) in enumerate(zip(events, stamps, strict=True)):
            received = float(now_milliseconds()) if given is None else float(given)
            add_event_rows(rows, session_id, seq, event, received)
            stored.append(StoredEvent(session_id, seq, event, received))
            if len(rows.events) >= FLUSH_EVENTS:
                rows.write(self._connection)
        rows.write(self._connection)
        self._cursors.pop(session_id, None)
        self._next_row_id = None  # a rebuild takes FTS row ids after the largest one
        if deferred:
            cursor = self._cursor(session_id)
            state = cursor.state or WindowIndexState()
            cursor.state = WindowIndexState(state.indexed_seq, state.leaf_event_id, True)
            cursor.active_events = cursor.active_messages = 0  # its active rows went with the events
            self._connection.execute(UPSERT_STATE, cursor.state_row(session_id,
                                                                    now_milliseconds()))
        else:
            rebuild_window_from(self._connection, session_id, stored)
        self._cursors.pop(session_id, None)
        return len(events)

    def flush(self) -> None:
        """Write the gathered rows (for a read inside the transaction). Windows whose FTS
        rows are held (`append_transcript`) are left dirty for reconcile instead: rows
        added now would precede those of windows appended later."""
        self._pending.write(self._connection)
        self._leave_held_to_reconcile()

    def finish(self) -> None:
        """Write every gathered row before the commit. After an `append_transcript`, the
        held windows' FTS rows come after all others, in session-id order, and so do the
        rebuilds of the windows this transaction made that wait for reconcile (a window
        too long to hand whole, one that went on after it was), read back as reconcile
        would: the rows of the reconcile that follows the import, in its order. When a
        window the transaction did not make waits for reconcile too, the held windows are
        left dirty instead, and reconcile rebuilds them all in its order."""
        self._pending.write(self._connection)
        if not self._whole:
            return
        queued = [row[0] for row in self._connection.execute(QUEUED_WINDOWS)]
        if any(session_id not in self._fresh for session_id in queued):
            self._leave_held_to_reconcile()
            return
        fts_map: list[tuple] = []
        fts: list[tuple] = []
        for session_id, rows in self._held.in_order(queued):
            if rows is None:
                self._write_fts(fts_map, fts)
                rebuild_window(self._connection, session_id)
                self._next_row_id = None  # the rebuild took ids after the largest one
                continue
            for message_id, text, role, timestamp in rows:
                row_id = self._next_fts_row()
                fts_map.append((row_id, session_id, message_id))
                fts.append((row_id, storable_text(text), session_id, message_id, role,
                            timestamp))
            if len(fts) >= FLUSH_EVENTS:
                self._write_fts(fts_map, fts)
        self._write_fts(fts_map, fts)

    def _write_fts(self, fts_map: list[tuple], fts: list[tuple]) -> None:
        if fts:
            self._connection.executemany(INSERT_FTS_ROW, fts_map)
            self._connection.executemany(INSERT_FTS, fts)
            fts_map.clear()
            fts.clear()

    def _leave_held_to_reconcile(self) -> None:
        """Mark every held window dirty, as the forward indexer had left it."""
        if not self._held:
            return
        for session_id, dirty in self._held.dirty_states().items():
            cursor = self._cursor(session_id)
            cursor.state = dirty
            self._pending.states[session_id] = cursor
        self._pending.write(self._connection)

    def _cursor(self, session_id: str) -> WindowCursor:
        cursor = self._cursors.get(session_id)
        if cursor is None:
            row = self._connection.execute(READ_CURSOR, (session_id,)).fetchone()
            if row is None:
                raise unknown_session(session_id)
            (last_seq, indexed_seq, leaf, needs_rebuild, active_events, active_messages,
             session_key, incognito) = row
            state = None
            if indexed_seq is not None:
                state = WindowIndexState(indexed_seq, leaf, bool(needs_rebuild))
            cursor = WindowCursor(-1 if last_seq is None else last_seq, state,
                                  active_events or 0, active_messages or 0,
                                  bool(incognito) or is_incognito_key(session_key))
            self._cursors[session_id] = cursor
            if last_seq is None and state is None:
                self._fresh.add(session_id)
        return cursor

    def _next_fts_row(self) -> int:
        if self._next_row_id is None:
            self._next_row_id = self._connection.execute(LAST_FTS_ROW).fetchone()[0] + 1
        row_id = self._next_row_id
        self._next_row_id += 1
        return row_id

    def _add_entry(self, entry: IndexEntry) -> None:
        row_id = self._next_fts_row()
        self._pending.fts_map.append((row_id, entry.session_id, entry.message_id))
        self._pending.fts.append((row_id, storable_text(entry.text), entry.session_id,
                                  entry.message_id, entry.role, entry.timestamp))

    def _add_active(self, session_id: str, cursor: WindowCursor, seq: int,
                    event: dict[str, Any]) -> None:
        is_message = kinds.event_type(event) == kinds.MESSAGE
        self._pending.active.append((
            session_id, cursor.active_events, seq,
            cursor.active_messages if is_message else None, context_eligibility(event),
        ))
        cursor.active_events += 1
        cursor.active_messages += int(is_message)


# --------------------------------------------------------------------------------------
# Reconcile
# --------------------------------------------------------------------------------------


def read_events(connection: sqlite3.Connection, session_id: str) -> list[StoredEvent]:
    """Every stored event of one window, in seq order (StoreError for an event OpenClaw
    stored compressed, which this engine cannot read)."""
    events = []
    for seq, event_json, created_at in connection.execute(READ_EVENTS, (session_id,)):
        if event_json is None:
            raise StoreError(f"session {session_id}: event {seq} is stored compressed "
                             "(event_zstd), which session-search cannot read")
        events.append(StoredEvent(session_id, seq, json.loads(event_json), created_at))
    return events


def stored_window(connection: sqlite3.Connection, session_id: str) -> SessionWindow | None:
    """What the database says of a window's privacy, as a `SessionWindow` holding only its
    key and incognito flag, or None when it holds no such window."""
    row = connection.execute(READ_PRIVACY, (session_id,)).fetchone()
    if row is None:
        return None
    return SessionWindow(session_id, row[0], incognito=bool(row[1]))


def rebuild_window(connection: sqlite3.Connection, session_id: str) -> int:
    """Replace one window's index rows, active path and state by a rebuild from its events;
    return how many events it read. An incognito window gets its active path and state
    and no FTS row."""
    events = read_events(connection, session_id)
    rebuild_window_from(connection, session_id, events)
    return len(events)


def rebuild_window_from(connection: sqlite3.Connection, session_id: str,
                        events: Sequence[StoredEvent]) -> None:
    """Replace one window's index rows, active path and state by a rebuild from `events`
    (all of its stored events, seq 0 first)."""
    connection.execute("DELETE FROM session_transcript_fts_rows WHERE session_id = ?", (session_id,))
    connection.execute("DELETE FROM session_transcript_active_events WHERE session_id = ?",
                       (session_id,))
    window = stored_window(connection, session_id)
    tree = scan_tree(events)
    entries = [] if window is not None and window.is_incognito else index_entries(events, tree)
    (last_row_id,) = connection.execute(LAST_FTS_ROW).fetchone()
    row_ids = range(last_row_id + 1, last_row_id + 1 + len(entries))
    connection.executemany(INSERT_FTS_ROW, [
        (row_id, entry.session_id, entry.message_id) for row_id, entry in zip(row_ids, entries)])
    connection.executemany(INSERT_FTS, [
        (row_id, storable_text(entry.text), entry.session_id, entry.message_id, entry.role,
         entry.timestamp) for row_id, entry in zip(row_ids, entries)])
    active = active_rows(session_id, tree.active_path())
    connection.executemany(INSERT_ACTIVE, active)
    last_seq = events[-1].seq if events else -1
    cursor = WindowCursor(last_seq, rebuilt_state(last_seq, tree.leaf_id), len(active),
                          sum(1 for row in active if row[3] is not None))
    connection.execute(UPSERT_STATE, cursor.state_row(session_id, now_milliseconds()))


def active_rows(session_id: str, path: Sequence[TreeNode]) -> list[tuple]:
    """The `session_transcript_active_events` rows of an active path (root first)."""
    rows = []
    messages = 0
    for position, node in enumerate(path):
        event = node.stored.event
        is_message = kinds.event_type(event) == kinds.MESSAGE
        rows.append((session_id, position, node.stored.seq, messages if is_message else None,
                     context_eligibility(event)))
        messages += int(is_message)
    return rows


def sweep_orphans(connection: sqlite3.Connection) -> None:
    """Delete index rows and states whose window has no transcript rows (§8.3)."""
    for table in ("session_transcript_active_events", "session_transcript_fts_rows",
                  "session_transcript_index_state"):
        connection.execute(
            f"DELETE FROM {table} WHERE session_id NOT IN "
            "(SELECT DISTINCT session_id FROM transcript_events)"
        )
