"""The SQLite database layout: upstream OpenClaw's agent tables, our own tables, and which
layout an existing file has.

Owns: the DDL of a database this backend creates (`UPSTREAM_TABLES`, `OWN_TABLES` and the
rows that name the store), which layout an existing file has (`read_layout`), and the SQL
form of the needs-reconcile predicate. Must not touch: the pragmas and how a connection
is opened (`connection`), how SQLite's errors are classified (`refusals`), what a write or
a search does with the tables (`writes`, `search`), the lifecycle rules themselves
(`engine.index.lifecycle`), the query policy.

**One database per agent, as upstream.** OpenClaw 2026.9.6 keeps one file per agent at
`<state>/agents/<agentId>/agent/openclaw-agent.sqlite` (behaviour.md §2.2). A database
made here has the same tables for everything the search, write and reconcile paths
touch, with upstream's column definitions, checks, indexes, foreign keys and the
`session_transcript_fts_rows` delete trigger, copied from a database the real OpenClaw
2026.9.6 wrote (schema version 23):

| table | holds |
|---|---|
| `session_nodes` | one row per session key; `current_session_id` names its live window |
| `session_windows` | one row per window (physical transcript) of a key |
| `transcript_events` | the raw events, `(session_id, seq)` |
| `transcript_event_identities` | `event_id` → `seq`, type and parent of every event with an id |
| `session_transcript_active_events` | the active path (root to leaf) of each window |
| `session_transcript_index_state` | per window: watermark, leaf, dirty flag, active counts |
| `session_transcript_fts`, `session_transcript_fts_rows` | the FTS5 index and its row map |
| `session_transcript_cold_archives`, `session_transcript_archives` | cold storage (§2.2), created empty |

Differences from upstream's DDL, each for a reason:
* `transcript_events` and `transcript_event_identities` are not `STRICT`: our `created_at`
  may be fractional epoch milliseconds (the engine accepts any finite number), which an
  upstream `STRICT` `INTEGER` column refuses; integral values are stored as integers, as
  upstream stores them;
* `session_windows` has no foreign key to `conversations`, a table outside the search
  path that is not created; upstream's canonical-validation triggers on `session_nodes`
  and `session_windows` (which feed `session_canonical_validation_pending`, also outside
  the search path) are left out.

**Our own tables** (every name starts with `session_search_`):
* `session_search_store(key, value)` — which backend and format made the file, and how
  many transactions committed (`generation`, moved by each commit: `COUNT_COMMIT_SQL`);
* `session_search_windows` — the window metadata upstream's `session_windows` has no column
  for (`current`, `title`, `kind`, `owner_session_key`, `incognito`, `archived`, `group`,
  the exact `created_at`, `extra` as JSON), one row per window, deleted with it;
* `session_search_reconcile_queue(session_id)` — the windows that need reconcile
  (`lifecycle.needs_reconcile`), kept exact by triggers on `transcript_events` and
  `session_transcript_index_state` in the transaction of every write, whoever writes. A
  search reads `indexing` from it in O(1), instead of evaluating the predicate over every
  window;
* `session_search_dirty_windows`, a partial index of the dirty windows' states: the
  windows a search leaves out (§5.3: `needs_rebuild != 0`, not every window in the
  queue: a lagging window's rows are a consistent prefix and stay searchable, as
  upstream's kernel keeps them), read without a pass over every state.

**Footprint: upstream's indexes, plus ours only where a statement needs one.** Every
index of `UPSTREAM_TABLES` is upstream's (a database OpenClaw writes has each), so it is
kept whether or not a statement of ours reads it. Beyond them a database made here has
exactly the indexes of `OWN_INDEXES`: these four, each read by a statement that runs all
the time (a test lists them and reads each one's query plan; what each saves is
measured in `bench/RESULTS.md`), and the primary key of `session_search_store`:

| index | the statement that reads it | without it |
|---|---|---|
| `session_search_dirty_windows` (partial: dirty windows only, empty when none is) | every search's exclusion of the dirty windows (`search.excluded_windows_sql`) | each search reads every window's state |
| `session_search_windows_archived` (partial: archived windows only) | every search's count of archived windows in scope (`search.status_statement`) and their exclusion | each search reads every window's metadata |
| the primary key of `session_search_reconcile_queue` (the table itself, `WITHOUT ROWID`) | `indexing` in every search's status and `index_status`, one probe; the reconcile's list of windows | each search evaluates the needs-reconcile predicate over every window, as upstream does |
| the primary key of `session_search_windows` | a window's metadata by id: the writer's cursor (`writes.READ_CURSOR`), every window read (`backend.WINDOW_SELECT`), the privacy check of `put_window` | each of those scans the table |

The queue's triggers are the other cost of our own: one per written event (`session_search_queue_after_event_insert`
runs for each row of `transcript_events`), paid so that the queue stays exact whoever
writes.

**Layouts.** A file this backend made has `session_search_store` (layout `OWN`); a file
the real OpenClaw wrote has the upstream tables without it (layout `OPENCLAW`), which a
reader searches as it is (the queue is then the predicate evaluated per search, as
upstream does) and a writer refuses.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Literal

from engine.backends.sqlite.refusals import is_system_refusal, read_refused
from engine.errors import CorruptFile

BACKEND_NAME = "sqlite"
#: Version 2: the upstream agent layout (version 1 was one table set of our own).
FORMAT_VERSION = "2"

Layout = Literal["session-search", "openclaw"]
OWN: Layout = "session-search"
OPENCLAW: Layout = "openclaw"

#: The dirty windows (`needs_rebuild != 0`), which every search leaves out (§5.3): a
#: partial index, so that the exclusion reads only them and not every window's state.
#: `IF NOT EXISTS`: the same statement makes it in a new file and adds it to a file an
#: earlier build made (`ensure_own_indexes`).
DIRTY_WINDOWS_INDEX = ("CREATE INDEX IF NOT EXISTS session_search_dirty_windows ON "
                       "session_transcript_index_state(session_id) WHERE needs_rebuild != 0;")

UPSTREAM_TABLES = """
CREATE TABLE session_nodes (
  session_key TEXT NOT NULL PRIMARY KEY,
  current_session_id TEXT NOT NULL,
  entry_json TEXT NOT NULL,
  legacy_acp_migration_json TEXT,
  entry_valid INTEGER NOT NULL DEFAULT 0 CHECK (entry_valid IN (-1, 0, 1)),
  updated_at INTEGER NOT NULL,
  status TEXT CHECK (status IS NULL OR status IN ('running', 'done', 'failed', 'killed', 'timeout')),
  created_at INTEGER,
  created_via TEXT CHECK (created_via IS NULL OR created_via IN ('operator', 'spawn', 'channel', 'cron', 'talk', 'run', 'plugin', 'internal')),
  created_actor_type TEXT CHECK (created_actor_type IS NULL OR created_actor_type IN ('human', 'agent', 'system')),
  created_actor_id TEXT,
  owner_actor_type TEXT,
  owner_actor_id TEXT,
  owner_assigned_by_type TEXT,
  owner_assigned_by_id TEXT,
  owner_assigned_at INTEGER,
  project_id TEXT,
  parent_session_key TEXT,
  spawned_by TEXT,
  fork_source_session_key TEXT,
  fork_source_session_id TEXT,
  fork_source_entry_id TEXT,
  label TEXT,
  display_name TEXT,
  category TEXT,
  icon TEXT,
  pinned_at INTEGER,
  archived_at INTEGER,
  last_read_at INTEGER,
  last_interaction_at INTEGER,
  last_activity_at INTEGER
) STRICT;
CREATE INDEX idx_agent_session_nodes_active
  ON session_nodes(session_key)
  WHERE archived_at IS NULL;
CREATE INDEX idx_agent_session_nodes_archived_at
  ON session_nodes(archived_at, session_key)
  WHERE archived_at IS NOT NULL;
CREATE INDEX idx_agent_session_nodes_current_session_id
  ON session_nodes(current_session_id);
CREATE INDEX idx_agent_session_nodes_entry_not_valid
  ON session_nodes(session_key)
  WHERE entry_valid != 1;
CREATE INDEX idx_agent_session_nodes_entry_valid_pending
  ON session_nodes(session_key)
  WHERE entry_valid = 0;
CREATE INDEX idx_agent_session_nodes_label
  ON session_nodes(label, session_key)
  WHERE label IS NOT NULL;
CREATE INDEX idx_agent_session_nodes_last_interaction_at
  ON session_nodes(last_interaction_at DESC, session_key);
CREATE INDEX idx_agent_session_nodes_parent_session_key
  ON session_nodes(parent_session_key, session_key);
CREATE INDEX idx_agent_session_nodes_spawned_by
  ON session_nodes(spawned_by, session_key);
CREATE INDEX idx_agent_session_nodes_status
  ON session_nodes(status, session_key)
  WHERE status IS NOT NULL;
CREATE INDEX idx_agent_session_nodes_updated_at
  ON session_nodes(updated_at DESC, session_key);

CREATE TABLE session_windows (
  session_id TEXT NOT NULL PRIMARY KEY,
  session_key TEXT NOT NULL,
  previous_session_id TEXT,
  reason TEXT CHECK (reason IS NULL OR reason IN ('initial', 'reset', 'rollover', 'fork', 'rewind', 'switch', 'recovery', 'compaction')),
  session_scope TEXT NOT NULL DEFAULT 'conversation' CHECK (session_scope IN ('conversation', 'shared-main', 'group', 'channel')),
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  transcript_updated_at INTEGER DEFAULT NULL,
  transcript_observed_at INTEGER DEFAULT NULL,
  session_entry_provenance INTEGER NOT NULL DEFAULT 0 CHECK (session_entry_provenance IN (0, 1)),
  acp_owned INTEGER NOT NULL DEFAULT 0 CHECK (acp_owned IN (0, 1)),
  plugin_owner_id TEXT,
  hook_external_content_source TEXT CHECK (hook_external_content_source IS NULL OR hook_external_content_source IN ('gmail', 'webhook')),
  started_at INTEGER,
  ended_at INTEGER,
  status TEXT CHECK (status IS NULL OR status IN ('running', 'done', 'failed', 'killed', 'timeout')),
  chat_type TEXT CHECK (chat_type IS NULL OR chat_type IN ('direct', 'group', 'channel')),
  channel TEXT,
  account_id TEXT,
  primary_conversation_id TEXT,
  model_provider TEXT,
  model TEXT,
  agent_harness_id TEXT,
  parent_session_key TEXT,
  spawned_by TEXT,
  display_name TEXT,
  FOREIGN KEY (session_key) REFERENCES session_nodes(session_key) ON DELETE CASCADE
) STRICT;
CREATE INDEX idx_agent_session_windows_conversation
  ON session_windows(primary_conversation_id, updated_at DESC, session_id)
  WHERE primary_conversation_id IS NOT NULL;
CREATE INDEX idx_agent_session_windows_created_at
  ON session_windows(created_at DESC, session_id);
CREATE INDEX idx_agent_session_windows_session_key
  ON session_windows(session_key, updated_at DESC, session_id);
CREATE INDEX idx_agent_session_windows_updated_at
  ON session_windows(updated_at DESC, session_id);

CREATE TABLE transcript_events (
  session_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  event_json TEXT,
  created_at INTEGER NOT NULL,
  event_zstd BLOB,
  event_utf8_bytes INTEGER CHECK (event_utf8_bytes IS NULL OR event_utf8_bytes >= 0),
  navigation_json TEXT,
  PRIMARY KEY (session_id, seq),
  FOREIGN KEY (session_id) REFERENCES "session_windows"(session_id) ON DELETE CASCADE,
  CHECK (
    (event_json IS NOT NULL AND event_zstd IS NULL)
    OR (
      event_json IS NULL AND event_zstd IS NOT NULL
      AND event_utf8_bytes IS NOT NULL
      AND event_utf8_bytes BETWEEN 1 AND 4194304
      AND length(event_zstd) BETWEEN 1 AND 4194304
      AND navigation_json IS NOT NULL
    )
  )
);

CREATE TABLE transcript_event_identities (
  session_id TEXT NOT NULL,
  event_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  event_type TEXT,
  parent_id TEXT,
  message_idempotency_key TEXT,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (session_id, event_id),
  FOREIGN KEY (session_id, seq) REFERENCES transcript_events(session_id, seq) ON DELETE CASCADE
);
CREATE INDEX idx_agent_transcript_event_identity_sequence
  ON transcript_event_identities(session_id, seq);
CREATE INDEX idx_agent_transcript_event_parent
  ON transcript_event_identities(session_id, parent_id)
  WHERE parent_id IS NOT NULL;
CREATE INDEX idx_agent_transcript_event_sequence
  ON transcript_event_identities(session_id, event_type, seq DESC);
CREATE UNIQUE INDEX idx_agent_transcript_message_idempotency
  ON transcript_event_identities(session_id, message_idempotency_key)
  WHERE message_idempotency_key IS NOT NULL;

CREATE TABLE session_transcript_active_events (
  session_id TEXT NOT NULL,
  active_position INTEGER NOT NULL CHECK (active_position >= 0),
  event_seq INTEGER NOT NULL,
  message_position INTEGER CHECK (message_position IS NULL OR message_position >= 0),
  context_eligible INTEGER,
  PRIMARY KEY (session_id, active_position),
  FOREIGN KEY (session_id, event_seq) REFERENCES transcript_events(session_id, seq) ON DELETE CASCADE
) STRICT;
CREATE UNIQUE INDEX idx_agent_transcript_active_event_seq
  ON session_transcript_active_events(session_id, event_seq);
CREATE UNIQUE INDEX idx_agent_transcript_active_messages
  ON session_transcript_active_events(session_id, message_position)
  WHERE message_position IS NOT NULL;
CREATE INDEX idx_agent_transcript_context_pending
  ON session_transcript_active_events(session_id)
  WHERE context_eligible IS NULL;

CREATE TABLE session_transcript_index_state (
  session_id TEXT NOT NULL PRIMARY KEY,
  indexed_seq INTEGER NOT NULL,
  leaf_event_id TEXT,
  needs_rebuild INTEGER NOT NULL DEFAULT 0,
  active_event_count INTEGER NOT NULL DEFAULT 0,
  active_message_count INTEGER NOT NULL DEFAULT 0,
  updated_at INTEGER NOT NULL,
  FOREIGN KEY (session_id) REFERENCES session_windows(session_id) ON DELETE CASCADE
) STRICT;

CREATE VIRTUAL TABLE session_transcript_fts USING fts5(
  text,
  session_id UNINDEXED,
  message_id UNINDEXED,
  role UNINDEXED,
  timestamp UNINDEXED,
  tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TABLE session_transcript_fts_rows (
  id INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL,
  message_id TEXT
) STRICT;
CREATE INDEX idx_session_transcript_fts_rows_session_message
  ON session_transcript_fts_rows(session_id, message_id);
CREATE TRIGGER session_transcript_fts_rows_after_delete
AFTER DELETE ON session_transcript_fts_rows
BEGIN
  DELETE FROM session_transcript_fts WHERE rowid = OLD.id;
END;

CREATE TABLE session_transcript_cold_archives (
  session_id TEXT NOT NULL PRIMARY KEY,
  generation TEXT NOT NULL,
  archive_name TEXT NOT NULL UNIQUE,
  archive_sha256 TEXT NOT NULL CHECK (length(archive_sha256) = 64),
  event_count INTEGER NOT NULL CHECK (event_count >= 1),
  raw_bytes INTEGER NOT NULL CHECK (raw_bytes >= 0),
  archive_bytes INTEGER NOT NULL CHECK (archive_bytes >= 0),
  last_seq INTEGER NOT NULL,
  archived_at INTEGER NOT NULL,
  storage TEXT NOT NULL CHECK (storage IN ('file', 'sqlite')),
  archive_blob BLOB,
  FOREIGN KEY (session_id) REFERENCES "session_windows"(session_id) ON DELETE CASCADE,
  CHECK (length(archive_name) > 0 AND archive_name NOT IN ('.', '..') AND archive_name NOT LIKE '%/%' AND archive_name NOT LIKE '%\\%'),
  CHECK ((storage = 'file' AND archive_blob IS NULL) OR (storage = 'sqlite' AND archive_blob IS NOT NULL))
) STRICT;
CREATE TABLE session_transcript_archives (
  session_id TEXT NOT NULL,
  generation TEXT NOT NULL,
  session_key TEXT NOT NULL,
  reason TEXT NOT NULL CHECK (reason IN ('deleted', 'reset')),
  encoding TEXT NOT NULL CHECK (encoding IN ('identity', 'zstd')),
  archive_blob BLOB NOT NULL,
  archive_sha256 TEXT NOT NULL CHECK (length(archive_sha256) = 64),
  archive_name TEXT NOT NULL UNIQUE,
  created_at INTEGER NOT NULL,
  published_at INTEGER,
  publish_attempts INTEGER NOT NULL DEFAULT 0 CHECK (publish_attempts >= 0),
  last_publish_attempt_at INTEGER,
  last_publish_error TEXT,
  PRIMARY KEY (session_id, generation),
  CHECK (archive_name NOT LIKE '%/%' AND archive_name NOT LIKE '%\\%')
) STRICT;
CREATE INDEX idx_agent_session_transcript_archives_pending
  ON session_transcript_archives(created_at, session_id, generation)
  WHERE published_at IS NULL;
CREATE INDEX idx_agent_session_transcript_archives_retention
  ON session_transcript_archives(created_at, session_id, generation);
"""


def needs_reconcile_sql(session_id: str) -> str:
    """`lifecycle.needs_reconcile` as an SQL condition on the window `session_id` (an SQL
    expression): it has an event past its watermark, where a window without a state or
    with `needs_rebuild` has the watermark -1. One probe of each primary key.

    >>> "coalesce" in needs_reconcile_sql("NEW.session_id")
    True
    """
    return (
        "EXISTS (SELECT 1 FROM transcript_events AS pending_event"
        f" WHERE pending_event.session_id = {session_id}"
        " AND pending_event.seq > coalesce((SELECT pending_state.indexed_seq"
        " FROM session_transcript_index_state AS pending_state"
        f" WHERE pending_state.session_id = {session_id}"
        " AND pending_state.needs_rebuild = 0), -1))"
    )


def _requeue(session_id: str) -> str:
    """Trigger statements that recompute whether `session_id` is in the queue."""
    return (
        f"  DELETE FROM session_search_reconcile_queue WHERE session_id = {session_id};\n"
        f"  INSERT INTO session_search_reconcile_queue (session_id) SELECT {session_id}"
        f" WHERE {needs_reconcile_sql(session_id)};\n"
    )


def _requeue_trigger(name: str, timing: str, table: str, row: str, when: str = "") -> str:
    """A trigger recomputing whether the window of `row` (`NEW` or `OLD`) is queued."""
    condition = f"WHEN {when}\n" if when else ""
    return (f"CREATE TRIGGER session_search_queue_after_{name}\n{timing} ON {table}\n"
            f"{condition}BEGIN\n{_requeue(row + '.session_id')}END;\n")


_MOVED = "OLD.session_id IS NOT NEW.session_id"
_QUEUE_TRIGGERS = "".join((
    _requeue_trigger("event_delete", "AFTER DELETE", "transcript_events", "OLD"),
    _requeue_trigger("event_update", "AFTER UPDATE OF session_id, seq", "transcript_events", "NEW"),
    _requeue_trigger("event_move", "AFTER UPDATE OF session_id", "transcript_events", "OLD", _MOVED),
    _requeue_trigger("state_insert", "AFTER INSERT", "session_transcript_index_state", "NEW"),
    _requeue_trigger("state_update", "AFTER UPDATE", "session_transcript_index_state", "NEW"),
    _requeue_trigger("state_move", "AFTER UPDATE OF session_id", "session_transcript_index_state",
                     "OLD", _MOVED),
    _requeue_trigger("state_delete", "AFTER DELETE", "session_transcript_index_state", "OLD"),
))


OWN_TABLES = f"""
CREATE TABLE session_search_store (key TEXT NOT NULL PRIMARY KEY, value TEXT NOT NULL) STRICT;
CREATE TABLE session_search_windows (
  session_id TEXT NOT NULL PRIMARY KEY,
  current INTEGER NOT NULL,
  title TEXT,
  kind TEXT NOT NULL,
  owner_session_key TEXT,
  incognito INTEGER NOT NULL,
  archived INTEGER NOT NULL,
  "group" TEXT,
  created_at REAL,
  extra TEXT NOT NULL,
  FOREIGN KEY (session_id) REFERENCES session_windows(session_id) ON DELETE CASCADE
) STRICT;
CREATE INDEX session_search_windows_archived
  ON session_search_windows(session_id)
  WHERE archived != 0;
CREATE TABLE session_search_reconcile_queue (session_id TEXT NOT NULL PRIMARY KEY) STRICT, WITHOUT ROWID;
{DIRTY_WINDOWS_INDEX}

CREATE TRIGGER session_search_queue_after_event_insert
AFTER INSERT ON transcript_events
WHEN NOT EXISTS (SELECT 1 FROM session_transcript_index_state AS covering
  WHERE covering.session_id = NEW.session_id AND covering.needs_rebuild = 0
    AND covering.indexed_seq >= NEW.seq)
BEGIN
  INSERT OR IGNORE INTO session_search_reconcile_queue (session_id) VALUES (NEW.session_id);
END;
{_QUEUE_TRIGGERS}"""


#: The indexes a database made here has beyond upstream's (see the module docstring), as
#: `sqlite_schema` names them (the primary keys of our rowid tables included; the
#: reconcile queue, `WITHOUT ROWID`, is its own primary key and has no entry).
OWN_INDEXES = frozenset({
    "session_search_dirty_windows",
    "session_search_windows_archived",
    "sqlite_autoindex_session_search_windows_1",
    "sqlite_autoindex_session_search_store_1",
})


def ensure_own_indexes(connection: sqlite3.Connection) -> None:
    """Add the indexes of our own that a file made by an earlier build may lack (a
    writer, on open): each only speeds a statement up, none changes an answer."""
    connection.execute(DIRTY_WINDOWS_INDEX)


#: Each commit of a writer counts itself in `session_search_store` (key `generation`),
#: inside the transaction it ends, so the count and the data land together (the witness
#: a store's cross-agent commit reads: `engine.store.commit_journal`).
COUNT_COMMIT_SQL = (
    "INSERT INTO session_search_store (key, value) VALUES ('generation', '1') "
    "ON CONFLICT (key) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)")
COMMIT_GENERATION_SQL = "SELECT value FROM session_search_store WHERE key = 'generation'"


def store_rows() -> str:
    """The rows of `session_search_store` that name the backend and format of a new file."""
    return (
        f"INSERT INTO session_search_store VALUES ('backend', '{BACKEND_NAME}');\n"
        f"INSERT INTO session_search_store VALUES ('format_version', '{FORMAT_VERSION}');\n"
    )


def read_layout(connection: sqlite3.Connection, path: Path) -> Layout:
    """Which layout the database at `path` has (CorruptFile when none we read)."""
    try:
        tables = {row[0] for row in connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name IN "
            "('session_search_store', 'session_transcript_fts', 'session_windows', "
            "'store_meta')")}
        if "session_search_store" in tables:
            rows = dict(connection.execute("SELECT key, value FROM session_search_store"))
            if rows.get("backend") != BACKEND_NAME or rows.get("format_version") != FORMAT_VERSION:
                raise CorruptFile(str(path), 0, f"unexpected store metadata {rows!r}")
            return OWN
    except (sqlite3.DatabaseError, UnicodeDecodeError) as error:
        if is_system_refusal(error):
            raise read_refused(path, error) from None
        raise CorruptFile(str(path), 0, f"not a session-search sqlite store ({error})") from None
    if "store_meta" in tables:
        raise CorruptFile(str(path), 0, "a sqlite store of format 1 (an earlier session-search); "
                          "import its sources into a new store")
    if {"session_transcript_fts", "session_windows"} <= tables:
        return OPENCLAW
    raise CorruptFile(str(path), 0, "not a session-search sqlite store (no session tables)")
