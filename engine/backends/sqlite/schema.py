"""The SQLite database layout: upstream OpenClaw's agent tables, our own tables, the pragmas.

Owns: the DDL of a database this backend creates, the pragmas of its connections, how a
connection is opened (writer, reader, reader that must not create a file), which layout
an existing file has, the SQL form of the needs-reconcile predicate, and which text SQLite
can store (`storable_text`, for writes and query terms alike). Must not touch:
what a write or a search does with the tables (`writes`, `search`), the lifecycle rules
themselves (`engine.index.lifecycle`), the query policy.

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
* `session_search_store(key, value)` — which backend and format made the file;
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

**Pragmas** are upstream's for an agent database on a local disk: `auto_vacuum =
INCREMENTAL` (a new file), `journal_mode = WAL`, `wal_autocheckpoint = 1000`,
`journal_size_limit = 64 MiB`, `foreign_keys = ON`, `busy_timeout = 5000`; a reader sets
`query_only = ON` and `trusted_schema = OFF`. One difference: `synchronous = FULL`
(upstream: `NORMAL`), because the backend protocol promises that a committed transaction
survives a power loss, which WAL with `NORMAL` does not.

**Opening a file read-only never changes a byte in its folder.** A WAL database opened
with `mode=ro` creates `-wal` and `-shm` files beside it when they are absent (a clean
close removes them) and leaves them there. So a reader opens with `immutable=1` when
there is no `-wal` file (no writer has the database open, and every commit is in the main
file), and with plain `mode=ro` otherwise (a writer is live: share its WAL index). A
reader opened immutable checks before each read whether a `-wal` has appeared since, and
reopens with `mode=ro` if so (`ReadConnection.current`). The cost of never writing: a
writer that opens the database while one read is running is not coordinated with that
read (an immutable connection takes no lock), so a checkpoint it runs at that moment
could give that one read an inconsistent view of the file; the next read is coordinated.

**Layouts.** A file this backend made has `session_search_store` (layout `OWN`); a file
the real OpenClaw wrote has the upstream tables without it (layout `OPENCLAW`), which a
reader searches as it is (the queue is then the predicate evaluated per search, as
upstream does) and a writer refuses.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from engine.directory import sync_folder
from engine.errors import CorruptFile, FileSystemError, StoreError, UsageError

BACKEND_NAME = "sqlite"
#: Version 2: the upstream agent layout (version 1 was one table set of our own).
FORMAT_VERSION = "2"
STATEMENT_CACHE_SIZE = 512
BUSY_TIMEOUT_MILLISECONDS = 5000

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


def ensure_own_indexes(connection: sqlite3.Connection) -> None:
    """Add the indexes of our own that a file made by an earlier build may lack (a
    writer, on open): each only speeds a statement up, none changes an answer."""
    connection.execute(DIRTY_WINDOWS_INDEX)


def _store_rows() -> str:
    return (
        f"INSERT INTO session_search_store VALUES ('backend', '{BACKEND_NAME}');\n"
        f"INSERT INTO session_search_store VALUES ('format_version', '{FORMAT_VERSION}');\n"
    )


WRITER_PRAGMAS = (
    f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MILLISECONDS}",
    "PRAGMA journal_mode = WAL",
    "PRAGMA wal_autocheckpoint = 1000",
    "PRAGMA journal_size_limit = 67108864",
    "PRAGMA synchronous = FULL",
    "PRAGMA foreign_keys = ON",
)
READER_PRAGMAS = (
    f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MILLISECONDS}",
    "PRAGMA cell_size_check = ON",
    "PRAGMA query_only = ON",
    "PRAGMA trusted_schema = OFF",
)


def _connect(target: str, *, uri: bool, any_thread: bool = False) -> sqlite3.Connection:
    return sqlite3.connect(target, uri=uri, isolation_level=None,
                           cached_statements=STATEMENT_CACHE_SIZE,
                           check_same_thread=not any_thread)


def create_database(path: Path) -> sqlite3.Connection:
    """Make a new database file at `path` with the whole layout; return its writer
    connection. StoreError when the file exists or cannot be made.

    Atomic: the layout is written to a temporary file beside `path` (`.new-NAME-PID`),
    checkpointed into it and closed, and only then renamed to `path`; when any step
    fails (a full disk) the temporary files are removed. So `path` is either a whole
    database or absent, never an empty or half-made file that later opens call corrupt.
    """
    if path.exists():
        raise StoreError(f"{path}: a sqlite store already exists here")
    temporary = path.with_name(f".new-{path.name}-{os.getpid()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _write_new_database(temporary)
        os.replace(temporary, path)
        sync_folder(path.parent)
        connection = _writer_connection(path)
    except (OSError, sqlite3.Error) as error:
        _remove_database_files(temporary)
        reason = error.strerror or error if isinstance(error, OSError) else error
        raise StoreError(f"{path}: cannot create the store: {reason}") from None
    except BaseException:
        _remove_database_files(temporary)
        raise
    return connection


def _write_new_database(path: Path) -> None:
    """Write the whole layout to a new database file at `path` and close it with every
    page in the file itself (no `-wal` left: raise when one is)."""
    connection = _connect(str(path), uri=False)
    try:
        connection.execute("PRAGMA auto_vacuum = INCREMENTAL")
        for pragma in WRITER_PRAGMAS:
            connection.execute(pragma)
        connection.executescript("BEGIN;" + UPSTREAM_TABLES + OWN_TABLES + _store_rows() + "COMMIT;")
        busy, _, _ = connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        if busy:
            raise sqlite3.OperationalError("the new database could not be checkpointed")
    finally:
        connection.close()
    if write_ahead_log(path).exists():
        raise sqlite3.OperationalError("the new database kept its write-ahead log at close")


def _remove_database_files(path: Path) -> None:
    """Remove a database file and the journal files beside it, those that exist."""
    for name in (path.name, path.name + "-wal", path.name + "-shm", path.name + "-journal"):
        try:
            (path.parent / name).unlink()
        except OSError:
            pass


def connect_writer(path: Path) -> sqlite3.Connection:
    """The writer connection of an existing database made here (layout `OWN`); the layout
    is read read-only first, so a database OpenClaw wrote is refused untouched."""
    probe = ReadConnection.open(path)
    probe.connection.close()
    if probe.layout != OWN:
        raise UsageError(f"{path}: this database was written by OpenClaw; "
                         "session-search opens it read-only")
    connection = _writer_connection(path)
    try:
        ensure_own_indexes(connection)
    except BaseException:
        connection.close()
        raise
    return connection


def _writer_connection(path: Path) -> sqlite3.Connection:
    """A connection to the database at `path` with the writer's pragmas set, usable from
    any thread: the store's background reconcile worker uses it too, and the partitioned
    store serializes every use of it with its lock (`engine.backends.background`)."""
    connection = _connect(str(path), uri=False, any_thread=True)
    try:
        for pragma in WRITER_PRAGMAS:
            connection.execute(pragma)
    except BaseException:
        connection.close()
        raise
    return connection


def write_ahead_log(path: Path) -> Path:
    """The `-wal` file beside the database `path`.

    >>> write_ahead_log(Path("/s/openclaw-agent.sqlite")).name
    'openclaw-agent.sqlite-wal'
    """
    return path.with_name(path.name + "-wal")


@dataclass(slots=True)
class ReadConnection:
    """A read-only connection that never creates a file beside the database (see the
    module docstring): immutable while the database has no `-wal` file."""

    path: Path
    connection: sqlite3.Connection
    immutable: bool
    layout: Layout
    wal: str = ""
    #: What searches may keep while the file is immutable (emptied when reopened):
    #: `engine.backends.sqlite.search.run_search`'s status answers.
    fixed_status: dict = field(default_factory=dict)

    #: The database file's (inode, size, modification time) when opened immutable.
    file_stamp: tuple[int, int, int] | None = None

    def __post_init__(self) -> None:
        self.wal = str(write_ahead_log(self.path))

    @classmethod
    def open(cls, path: Path) -> ReadConnection:
        """Open `path` read-only (CorruptFile when it is no database of a known layout)."""
        stamp = _file_stamp(path)  # before opening: a change after it is seen at once
        immutable = not write_ahead_log(path).exists()
        connection = _connect(_read_uri(path, immutable=immutable), uri=True)
        try:
            for pragma in READER_PRAGMAS:
                connection.execute(pragma)
            layout = read_layout(connection, path)
        except BaseException:
            connection.close()
            raise
        return cls(path, connection, immutable, layout, file_stamp=stamp if immutable else None)

    def current(self) -> sqlite3.Connection:
        """The connection to read with now: reopened with `mode=ro` if a writer has made a
        `-wal` file since this one was opened immutable, or has come and gone (its clean
        close removes the `-wal` after writing every page into the file, which changes
        the file's time or size)."""
        if self.immutable and (os.path.exists(self.wal)
                               or _file_stamp(self.path) != self.file_stamp):
            self.connection.close()
            self.connection = _connect(_read_uri(self.path, immutable=False), uri=True)
            for pragma in READER_PRAGMAS:
                self.connection.execute(pragma)
            self.immutable = False
            self.fixed_status.clear()
        return self.connection


def _file_stamp(path: Path) -> tuple[int, int, int] | None:
    """(inode, size, modification time) of `path`; None when it cannot be read."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    return (status.st_ino, status.st_size, status.st_mtime_ns)


def _read_uri(path: Path, *, immutable: bool) -> str:
    """The `file:` URI of a read-only open (`immutable=1` when asked).

    >>> _read_uri(Path("/s/a b.sqlite"), immutable=True)
    'file:///s/a%20b.sqlite?mode=ro&immutable=1'
    """
    return path.resolve().as_uri() + ("?mode=ro&immutable=1" if immutable else "?mode=ro")


#: SQLite's result codes for a file whose pages are damaged or that is no database.
DAMAGE_CODES = frozenset({"SQLITE_CORRUPT", "SQLITE_NOTADB"})


@contextmanager
def damage_reported(path: Path) -> Iterator[None]:
    """Report a damaged database as `CorruptFile` naming `path`: what SQLite says of its
    pages (malformed, not a database), a text value that is not UTF-8 (SQLite keeps no
    checksums, so a damaged byte in a row is found only when it no longer decodes), a
    JSON value that no longer parses. Any other SQLite error is a `StoreError` naming
    `path` (a busy database is not called damaged)."""
    try:
        yield
    except REPORTED_ERRORS as error:
        raise reported_error(path, error) from None


#: The errors `damage_reported` turns into `CorruptFile` or `StoreError`.
REPORTED_ERRORS = (UnicodeDecodeError, json.JSONDecodeError, sqlite3.Error)


def reported_error(path: Path, error: BaseException) -> CorruptFile | StoreError:
    """The engine's error for `error` (one of `REPORTED_ERRORS`) met reading `path`: the
    rule of `damage_reported`, for a caller that catches the error itself (a search
    does, sparing a context manager per call)."""
    if isinstance(error, (UnicodeDecodeError, json.JSONDecodeError)):
        return CorruptFile(str(path), 0, f"a row of the database is damaged ({error})")
    if is_damage(error):
        return CorruptFile(str(path), 0, f"the database is damaged ({error})")
    if is_system_refusal(error):
        return read_refused(path, error)
    return StoreError(f"{path}: {error}")


#: SQLite's result codes for a refusal of the system rather than of the file's pages: an
#: I/O error (a hot WAL whose shared-memory file cannot be made on a full disk), a full
#: disk, a file that cannot be opened or written.
SYSTEM_REFUSAL_CODES = ("SQLITE_IOERR", "SQLITE_FULL", "SQLITE_CANTOPEN", "SQLITE_READONLY",
                        "SQLITE_PERM")


def is_system_refusal(error: BaseException) -> bool:
    """Whether `error` is the system refusing SQLite a read or write (not damage)."""
    name = getattr(error, "sqlite_errorname", None) or ""
    return isinstance(error, sqlite3.Error) and name.startswith(SYSTEM_REFUSAL_CODES)


def read_refused(path: Path, error: BaseException) -> FileSystemError:
    """The error of a database the system would not let SQLite read: what SQLite said, its
    code, and that the file was neither changed nor judged damaged (an I/O error is not
    corruption; nothing acknowledged is lost, and the read works once the cause is gone).

    >>> str(read_refused(Path("a.sqlite"), OSError("disk I/O error")))
    'a.sqlite: cannot read: disk I/O error; the database was not changed and nothing in it was lost (free space or fix the disk, then try again)'
    """
    name = getattr(error, "sqlite_errorname", None)
    said = f"{error} ({name})" if name else str(error)
    return FileSystemError(str(path), "read", None,
                           f"{said}; the database was not changed and nothing in it was "
                           "lost (free space or fix the disk, then try again)")


def is_damage(error: BaseException) -> bool:
    """Whether `error`, met reading a database, says that the file is damaged (its pages,
    or a text value that is not UTF-8), not that it is busy or refused otherwise."""
    if isinstance(error, UnicodeDecodeError):
        return True
    return isinstance(error, sqlite3.Error) and (
        getattr(error, "sqlite_errorname", None) in DAMAGE_CODES
        or str(error).startswith("Could not decode to UTF-8"))


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


def is_storable(text: str) -> bool:
    """Whether SQLite can bind `text` as UTF-8 (no lone surrogate). No stored key or id
    holds one (the transcript checks refuse them), so a lookup by such a value finds
    nothing, on this backend as on the reference one.

    >>> is_storable("agent:main:x"), is_storable("agent:main:\\udc80")
    (True, False)
    """
    return storable_text(text) is text


def storable_text(text: str) -> str:
    """Text SQLite can store as UTF-8: lone surrogates become U+FFFD (a known divergence).

    >>> storable_text("a\\ud800b")
    'a\\ufffdb'
    """
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "".join("\ufffd" if 0xD800 <= ord(character) <= 0xDFFF else character
                       for character in text)
    return text
