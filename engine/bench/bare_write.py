"""The bare upstream write path: a corpus's final rows into the upstream tables, one transaction.

Owns: reading a benchmark corpus (a corpus directory, a flat messages file, or the OpenClaw
state folder made of one by `engine.bench.state_folder`) into the
rows OpenClaw's agent database holds once every message is indexed, and writing them with
one `executemany` per table in one transaction. Must not touch: the backend's write path
(`engine.backends.sqlite.writes`, which this is measured against), timing, statistics.

It is the floor an import into SQLite can reach: no validation, no per-event lifecycle
decision, no reconcile. Each window's events are read whole; the rules that say what the
rows are come from the engine's pure modules, so the rows equal those of the backend after
its import and reconcile (`engine.transcript.tree`: the active path;
`engine.transcript.projection`: the FTS entries). The database has the upstream tables of
`engine.backends.sqlite.schema` only (none of ours, no reconcile-queue triggers) and
upstream's pragmas as they are (`synchronous = NORMAL`).

Rows per window, as upstream writes them: `session_nodes` (one per key, the current
window), `session_windows`, `transcript_events`, `transcript_event_identities`,
`session_transcript_active_events`, `session_transcript_fts_rows` + `session_transcript_fts`
(same rowid), `session_transcript_index_state` (watermark at the last event).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from engine.backends.sqlite import schema, storable, writes
from engine.ingest.flat import message_event
from engine.ingest.openclaw_state import canonical_key
from engine.ingest.records import window_from_record
from engine.model import SessionWindow, StoredEvent
from engine.transcript.events import event_type
from engine.transcript.projection import index_entries
from engine.transcript.tree import scan_tree

#: Upstream's agent-database pragmas, unchanged.
UPSTREAM_PRAGMAS = (
    "PRAGMA busy_timeout = 5000",
    "PRAGMA journal_mode = WAL",
    "PRAGMA wal_autocheckpoint = 1000",
    "PRAGMA journal_size_limit = 67108864",
    "PRAGMA synchronous = NORMAL",
    "PRAGMA foreign_keys = ON",
)
#: Gathered events written at once.
FLUSH_EVENTS = 4096
#: An OpenClaw state folder (openclaw-state-format.md): `agents/<agentId>/sessions/`
#: holding `sessions.json`, live transcripts and reset archives `<id>.jsonl.reset.<stamp>`.
AGENTS_FOLDER = "agents"
SESSIONS_FOLDER = "sessions"
INDEX_FILE = "sessions.json"
RESET_MARKER = ".jsonl.reset."
#: The window id the engine's importer gives a reset archive: `<base>.reset.<stamp>`.
ARCHIVE_ID_MARKER = ".reset."


def read_corpus(source: Path) -> Iterator[tuple[SessionWindow, list[dict[str, Any]]]]:
    """Each window of a corpus directory, flat messages file or OpenClaw state folder
    (`engine.bench.state_folder`), with its events in order."""
    if (source / AGENTS_FOLDER).is_dir():
        yield from read_state_folder(source)
        return
    if source.is_dir():
        with open(source / "sessions.jsonl", encoding="utf-8") as sessions:
            for line in sessions:
                window = window_from_record(json.loads(line))
                with open(source / "transcripts" / f"{window.session_id}.jsonl",
                          encoding="utf-8") as transcript:
                    yield window, [json.loads(event) for event in transcript]
        return
    windows: dict[str, tuple[SessionWindow, list[dict[str, Any]]]] = {}
    with open(source, encoding="utf-8") as flat:
        for line in flat:
            record = json.loads(line)
            entry = windows.get(record["sessionId"])
            if entry is None:
                entry = windows[record["sessionId"]] = (
                    SessionWindow(record["sessionId"], record["sessionKey"]), [])
            parent = entry[1][-1]["id"] if entry[1] else None
            entry[1].append(message_event(record, parent))
    yield from windows.values()


def read_state_folder(state: Path) -> Iterator[tuple[SessionWindow, list[dict[str, Any]]]]:
    """Each transcript of a state folder as a window and its events, the bare way: the
    key from `sessions.json` (its entry's `sessionId` names the live window and, as the
    base of their names, the key's reset archives), every line parsed, nothing checked."""
    for agent in sorted((state / AGENTS_FOLDER).iterdir()):
        sessions = agent / SESSIONS_FOLDER
        if not sessions.is_dir():
            continue
        index_path = sessions / INDEX_FILE
        index = (json.loads(index_path.read_text(encoding="utf-8"))
                 if index_path.is_file() else {})
        keys = {entry["sessionId"]: canonical_key(agent.name, key)
                for key, entry in index.items()}
        for path in sorted(sessions.iterdir()):
            name = path.name
            if RESET_MARKER in name:
                base, stamp = name.split(RESET_MARKER, 1)
                window = SessionWindow(f"{base}{ARCHIVE_ID_MARKER}{stamp}",
                                       keys.get(base, "unknown"), current=False)
            elif name.endswith(".jsonl"):
                session_id = name[: -len(".jsonl")]
                window = SessionWindow(session_id, keys.get(session_id, "unknown"),
                                       current=session_id in keys)
            else:
                continue
            with open(path, encoding="utf-8") as transcript:
                yield window, [json.loads(line) for line in transcript]


class BareRows:
    """The rows gathered for the next `executemany`, one list per upstream table."""

    def __init__(self) -> None:
        self.tables: dict[str, list[tuple]] = {
            sql: [] for sql in (INSERT_NODE, INSERT_WINDOW, writes.INSERT_EVENT,
                                INSERT_IDENTITY, writes.INSERT_ACTIVE, writes.INSERT_FTS_ROW,
                                writes.INSERT_FTS, INSERT_STATE)
        }
        self.events = 0
        self.next_row_id = 1

    def add_window(self, window: SessionWindow, events: list[dict[str, Any]], now: int) -> None:
        """The rows of one window and its events."""
        tables = self.tables
        session_id = window.session_id
        tables[INSERT_NODE].append((window.session_key, session_id,
                                    json.dumps({"sessionId": session_id}), now, window.current))
        tables[INSERT_WINDOW].append((session_id, window.session_key, now, now))
        stored = []
        for seq, event in enumerate(events):
            text = json.dumps(event, ensure_ascii=True)
            tables[writes.INSERT_EVENT].append((session_id, seq, text, now, len(text)))
            if isinstance(event.get("id"), str):
                parent = event.get("parentId")
                tables[INSERT_IDENTITY].append((session_id, event["id"], seq, event_type(event),
                                                parent if isinstance(parent, str) else None, now))
            stored.append(StoredEvent(session_id, seq, event, now))
        tree = scan_tree(stored)
        active = writes.active_rows(session_id, tree.active_path())
        tables[writes.INSERT_ACTIVE].extend(active)
        # An incognito window is stored and never indexed, as by the backend.
        for entry in () if window.is_incognito else index_entries(stored, tree):
            row_id = self.next_row_id
            self.next_row_id += 1
            tables[writes.INSERT_FTS_ROW].append((row_id, session_id, entry.message_id))
            tables[writes.INSERT_FTS].append((row_id, storable.storable_text(entry.text), session_id,
                                              entry.message_id, entry.role, entry.timestamp))
        if events:
            tables[INSERT_STATE].append((session_id, len(events) - 1, tree.leaf_id, len(active),
                                         sum(1 for row in active if row[3] is not None), now))
        self.events += len(events)

    def write(self, connection: sqlite3.Connection) -> None:
        """One `executemany` per table (in foreign-key order), then start afresh."""
        for sql, rows in self.tables.items():
            if rows:
                connection.executemany(sql, rows)
                rows.clear()
        self.events = 0


#: A key's node names its current window (else its first).
INSERT_NODE = ("INSERT INTO session_nodes (session_key, current_session_id, entry_json, updated_at) "
               "VALUES (?1, ?2, ?3, ?4) ON CONFLICT (session_key) DO UPDATE SET "
               "current_session_id = excluded.current_session_id, entry_json = excluded.entry_json "
               "WHERE ?5")
INSERT_WINDOW = ("INSERT INTO session_windows (session_id, session_key, created_at, updated_at) "
                 "VALUES (?, ?, ?, ?)")
INSERT_IDENTITY = ("INSERT OR REPLACE INTO transcript_event_identities (session_id, event_id, seq, "
                   "event_type, parent_id, created_at) VALUES (?, ?, ?, ?, ?, ?)")
INSERT_STATE = ("INSERT INTO session_transcript_index_state (session_id, indexed_seq, "
                "leaf_event_id, needs_rebuild, active_event_count, active_message_count, "
                "updated_at) VALUES (?, ?, ?, 0, ?, ?, ?)")


def bare_import(source: Path, database: Path) -> dict[str, int]:
    """Write the corpus at `source` into a new upstream database file `database` in one
    transaction; return the counts `windows`, `events`, `messages_indexed`."""
    database.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(str(database), isolation_level=None)
    try:
        connection.execute("PRAGMA auto_vacuum = INCREMENTAL")
        for pragma in UPSTREAM_PRAGMAS:
            connection.execute(pragma)
        connection.executescript(schema.UPSTREAM_TABLES)
        now = int(time.time() * 1000)
        rows = BareRows()
        connection.execute("BEGIN IMMEDIATE")
        for window, events in read_corpus(source):
            rows.add_window(window, events, now)
            if rows.events >= FLUSH_EVENTS:
                rows.write(connection)
        rows.write(connection)
        connection.execute("COMMIT")
        counts = {name: connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
                  for name, table in (("windows", "session_windows"),
                                      ("events", "transcript_events"),
                                      ("messages_indexed", "session_transcript_fts_rows"))}
    finally:
        connection.close()
    return counts
