"""The SQLite FTS5 backend: the upstream schema and search kernel, on Python's `sqlite3`.

Owns: one database file `<folder>/openclaw-agent.sqlite` (upstream's name; a partitioned
store keeps one per agent, in `agents/<agentId>/agent/`, as OpenClaw does) holding the
windows, the raw events, the index state and the FTS5 index; same-transaction forward
indexing; reconcile; and the search kernel of behaviour.md §5 (scope, dirty exclusion, two-stage query,
`bm25()`/`snippet()`, the CJK retry of §7.1). Must not touch: what is searchable
(`engine.transcript.projection`), the index-state decisions (`engine.index.lifecycle`,
`engine.backends.forward_indexing`), the query policy (`engine.query.user_query`,
`engine.query.cjk`), hit assembly and its bounds (`engine.search.hits`). Those are shared with the reference backend so that the two
agree by construction; this module only turns them into SQL.

Schema (behaviour.md §2.2, plus our window metadata and a `store_meta` table):

* `session_windows(session_id PK, session_key, previous_session_id, reason, current,
  title, kind, spawned_by, owner_session_key, parent_session_key, incognito, archived,
  "group", created_at, extra)` — `extra` is JSON;
* `transcript_events(session_id, seq, event_json, created_at, PK(session_id, seq))` —
  `event_json` is written with `ensure_ascii`, so every event (lone surrogates included)
  round-trips exactly;
* `session_transcript_index_state(session_id PK, indexed_seq, leaf_event_id,
  needs_rebuild, active_event_count, active_message_count, fts_row_count, updated_at)`;
* `session_transcript_fts` — `fts5(text, session_id UNINDEXED, message_id UNINDEXED,
  role UNINDEXED, timestamp UNINDEXED, tokenize = 'unicode61 remove_diacritics 2')`;
* `session_transcript_fts_rows(id = FTS rowid, session_id, message_id)` — the row map;
  an insert writes the map row, then the FTS row with that rowid; a delete trigger on the
  map deletes the FTS row.

Durability: `synchronous=FULL` with the **rollback journal** (`journal_mode=DELETE`), not
WAL. Reasons: the store stays one self-contained file (copying the directory copies the
store), a reader can open it with `mode=ro` without write access to the directory (WAL
readers need the `-shm` file), and there is a single writer, so WAL's concurrent
reader/writer advantage is not needed. Every `transaction()` is `BEGIN IMMEDIATE … COMMIT`.

Search (`search`), for a validated query (trim, 4096 UTF-16 units, `clamp_limit`):
1. Scope (§5.3): `session_keys=None` → `session_key GLOB 'agent:<id>:*'` (the id's `*`, `?`,
   `[` written as character classes, so `_` and every other character is literal) or
   `session_key IN ('global', 'unknown')`; a non-empty tuple → `IN (SELECT value FROM
   json_each(?))` (one bound JSON array: 33,000 keys need no 33,000 parameters); `()` →
   every window. Plus `session_id = ?`. `agent_id=None` means the default agent `main`.
2. Excluded: archived windows (counted as `archived_transcripts_excluded` within the
   scope) and windows for which `lifecycle.needs_reconcile` holds (no state but events,
   `needs_rebuild`, or lagging watermark). `indexing` = any window in the store needs
   reconcile.
3. Word search: `MATCH fts5_match_expression(terms)`, ordered `rank ASC, timestamp DESC,
   message_id ASC` (then `session_id ASC, rowid ASC`, our deterministic tie-breaks where the baseline
   leaves the order open), or `timestamp DESC, rowid DESC` for `recent`; `LIMIT limit + 1`
   row ids in a materialised CTE, then `snippet(…, 0, '', '', ' … ', 48)` for those rows
   only.
4. CJK retry (§7.1): only when step 3 returned no row and `cjk.retry_plan` applies. Each CJK
   term is `text LIKE ? ESCAPE '\\'`; the word terms, if any, stay a MATCH (then `bm25()`
   and `snippet()` come from it); without word terms the score is 0 and the excerpt is
   `cjk.substring_excerpt`. Same scope, exclusions, order and `limit + 1`.
5. Hits (`engine.search.hits`, as for the reference): timestamp finite else 0; score
   `-rank` finite else 0; snippet bounded to 500 UTF-16 units + `…`.

Writing: every `put_window` and `append_event` is checked by `engine.transcript.validation`
first, as on every backend, so both refuse the same inputs with the same message.

Reading: `windows`, `window`, `windows_of`, `session_keys`, `events`, `event_count` read the
transcript tables (never the index), with the same names as `TranscriptStore`, so the
importers (`engine.ingest.import_sources`) and history readers can use this store too.

Cost: every search first evaluates the needs-reconcile predicate over all windows (one
indexed `max(seq)` per window), because dirty windows must be excluded and `indexing`
reported; the CJK retry without word terms scans the FTS `text` column of the scope.

Known divergences from the reference engine:
* message text containing lone surrogates cannot be stored as UTF-8, so the FTS `text`
  column holds U+FFFD in their place (the tokens are the same: FTS5 reads a surrogate as
  U+FFFD, a separator); excerpts show U+FFFD where the reference shows the surrogate;
* `recent` order breaks timestamp ties by FTS rowid (insertion order, renewed when a
  reconcile rebuilds a window), as upstream does.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any

from engine.backends.forward_indexing import classify_append
from engine.backends.protocol import Backend, BackendTransaction, Maintenance
from engine.errors import (
    CorruptFile,
    QueryError,
    StoreError,
    StoreLocked,
    UnknownSession,
    UsageError,
)
from engine.index.lifecycle import WindowIndexState, needs_reconcile, rebuilt_state
from engine.model import (
    DEFAULT_AGENT_ID,
    SEARCHABLE_ROLES,
    IndexEntry,
    SearchHit,
    SearchRequest,
    SearchResult,
    SessionWindow,
    StoredEvent,
    agent_id_of,
)
from engine.progress import StepProgress
from engine.query.cjk import (
    like_pattern,
    partition_terms,
    retry_prefix,
    substring_excerpt,
    substring_needles,
)
from engine.query.user_query import (
    clamp_limit,
    fts5_match_expression,
    split_terms,
    validate_request,
)
from engine.search.hits import search_hit
from engine.transcript.projection import extract_index_entry, index_entries
from engine.transcript.tree import scan_tree
from engine.transcript.validation import check_event, check_window, unknown_session

DATABASE_NAME = "openclaw-agent.sqlite"
BACKEND_NAME = "sqlite"
FORMAT_VERSION = "1"
SNIPPET_SQL = "snippet(session_transcript_fts, 0, '', '', ' … ', 48)"
GLOB_SPECIALS = {"*": "[*]", "?": "[?]", "[": "[[]"}

SCHEMA = """
CREATE TABLE store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE session_windows (
    session_id TEXT PRIMARY KEY,
    session_key TEXT NOT NULL,
    previous_session_id TEXT,
    reason TEXT NOT NULL,
    current INTEGER NOT NULL,
    title TEXT,
    kind TEXT NOT NULL,
    spawned_by TEXT,
    owner_session_key TEXT,
    parent_session_key TEXT,
    incognito INTEGER NOT NULL,
    archived INTEGER NOT NULL,
    "group" TEXT,
    created_at REAL,
    extra TEXT NOT NULL
);
CREATE INDEX session_windows_by_key ON session_windows (session_key);
CREATE TABLE transcript_events (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    event_json TEXT NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (session_id, seq)
);
CREATE TABLE session_transcript_index_state (
    session_id TEXT PRIMARY KEY,
    indexed_seq INTEGER NOT NULL,
    leaf_event_id TEXT,
    needs_rebuild INTEGER NOT NULL DEFAULT 0,
    active_event_count INTEGER,
    active_message_count INTEGER,
    fts_row_count INTEGER,
    updated_at REAL
);
CREATE VIRTUAL TABLE session_transcript_fts USING fts5 (
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
    message_id TEXT NOT NULL
);
CREATE INDEX session_transcript_fts_rows_by_session ON session_transcript_fts_rows (session_id);
CREATE TRIGGER session_transcript_fts_rows_delete AFTER DELETE ON session_transcript_fts_rows
BEGIN
    DELETE FROM session_transcript_fts WHERE rowid = old.id;
END;
"""

WINDOW_COLUMNS = (
    "session_id", "session_key", "previous_session_id", "reason", "current", "title", "kind",
    "spawned_by", "owner_session_key", "parent_session_key", "incognito", "archived", "group",
    "created_at", "extra",
)


def glob_literal(text: str) -> str:
    """`text` as a GLOB pattern matching only itself (`*`, `?`, `[` as classes).

    >>> glob_literal("a*b?[c]_d")
    'a[*]b[?][[]c]_d'
    """
    return "".join(GLOB_SPECIALS.get(character, character) for character in text)


def storable_text(text: str) -> str:
    """Text SQLite can store as UTF-8: lone surrogates become U+FFFD (a known divergence).

    >>> storable_text("a\\ud800b")
    'a\\ufffdb'
    """
    if not any(0xD800 <= ord(character) <= 0xDFFF for character in text):
        return text
    return "".join("\ufffd" if 0xD800 <= ord(character) <= 0xDFFF else character for character in text)


# --------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------


class SqliteTransaction(BackendTransaction):
    """The write operations of one SQLite transaction (see `SqliteBackend.transaction`)."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection

    def put_window(self, window: SessionWindow) -> None:
        """Insert a window, or replace the metadata of an existing one."""
        check_window(window)
        values = asdict(window)
        values["current"] = int(window.current)
        values["incognito"] = int(window.incognito)
        values["archived"] = int(window.archived)
        values["extra"] = json.dumps(window.extra, ensure_ascii=True, sort_keys=True)
        columns = ", ".join(f'"{name}"' for name in WINDOW_COLUMNS)
        placeholders = ", ".join(f":{name}" for name in WINDOW_COLUMNS)
        updates = ", ".join(f'"{name}" = excluded."{name}"' for name in WINDOW_COLUMNS[1:])
        self._connection.execute(
            f"INSERT INTO session_windows ({columns}) VALUES ({placeholders}) "
            f"ON CONFLICT (session_id) DO UPDATE SET {updates}",
            values,
        )

    def append_event(self, session_id: str, event: dict[str, Any], created_at: float | None = None) -> int:
        """Append one event, index it in this transaction when the lifecycle allows; return seq."""
        check_event(session_id, event, created_at)
        if self._connection.execute(
            "SELECT 1 FROM session_windows WHERE session_id = ?", (session_id,)
        ).fetchone() is None:
            raise unknown_session(session_id)
        (last_seq,) = self._connection.execute(
            "SELECT coalesce(max(seq), -1) FROM transcript_events WHERE session_id = ?", (session_id,)
        ).fetchone()
        seq = last_seq + 1
        received = time.time() * 1000.0 if created_at is None else float(created_at)
        self._connection.execute(
            "INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES (?, ?, ?, ?)",
            (session_id, seq, json.dumps(event, ensure_ascii=True), received),
        )
        stored = StoredEvent(session_id, seq, event, received)
        entry = extract_index_entry(stored)
        action, new_state = classify_append(
            read_state(self._connection, session_id), stored, indexable=entry is not None
        )
        if action == "index" and entry is not None:
            insert_index_entry(self._connection, entry)
        if action in ("index", "advance", "dirty") and new_state is not None:
            write_state(self._connection, session_id, new_state)
        return seq

    def delete_session(self, session_key: str) -> int:
        """Delete every window of `session_key` with its events, index rows and state."""
        session_ids = [
            row[0]
            for row in self._connection.execute(
                "SELECT session_id FROM session_windows WHERE session_key = ?", (session_key,)
            )
        ]
        for session_id in session_ids:
            delete_window_rows(self._connection, session_id)
        return len(session_ids)


def read_state(connection: sqlite3.Connection, session_id: str) -> WindowIndexState | None:
    """The index state of one window, or None when it has none."""
    row = connection.execute(
        "SELECT indexed_seq, leaf_event_id, needs_rebuild FROM session_transcript_index_state "
        "WHERE session_id = ?",
        (session_id,),
    ).fetchone()
    if row is None:
        return None
    return WindowIndexState(indexed_seq=row[0], leaf_event_id=row[1], needs_rebuild=bool(row[2]))


def write_state(connection: sqlite3.Connection, session_id: str, state: WindowIndexState) -> None:
    """Upsert the index state of one window."""
    connection.execute(
        "INSERT INTO session_transcript_index_state "
        "(session_id, indexed_seq, leaf_event_id, needs_rebuild, fts_row_count, updated_at) "
        "VALUES (?, ?, ?, ?, (SELECT count(*) FROM session_transcript_fts_rows WHERE session_id = ?), ?) "
        "ON CONFLICT (session_id) DO UPDATE SET indexed_seq = excluded.indexed_seq, "
        "leaf_event_id = excluded.leaf_event_id, needs_rebuild = excluded.needs_rebuild, "
        "fts_row_count = excluded.fts_row_count, updated_at = excluded.updated_at",
        (session_id, state.indexed_seq, state.leaf_event_id, int(state.needs_rebuild), session_id,
         time.time() * 1000.0),
    )


def insert_index_entry(connection: sqlite3.Connection, entry: IndexEntry) -> None:
    """The map row first, then the FTS row with the same rowid (upstream order)."""
    cursor = connection.execute(
        "INSERT INTO session_transcript_fts_rows (session_id, message_id) VALUES (?, ?)",
        (entry.session_id, entry.message_id),
    )
    connection.execute(
        "INSERT INTO session_transcript_fts (rowid, text, session_id, message_id, role, timestamp) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (cursor.lastrowid, storable_text(entry.text), entry.session_id, entry.message_id,
         entry.role, entry.timestamp),
    )


def delete_window_rows(connection: sqlite3.Connection, session_id: str) -> None:
    """Remove a window and everything derived from it (the trigger drops FTS rows)."""
    connection.execute("DELETE FROM session_transcript_fts_rows WHERE session_id = ?", (session_id,))
    connection.execute("DELETE FROM session_transcript_index_state WHERE session_id = ?", (session_id,))
    connection.execute("DELETE FROM transcript_events WHERE session_id = ?", (session_id,))
    connection.execute("DELETE FROM session_windows WHERE session_id = ?", (session_id,))


def read_events(connection: sqlite3.Connection, session_id: str) -> list[StoredEvent]:
    """Every stored event of one window, in seq order."""
    return [
        StoredEvent(session_id, seq, json.loads(event_json), created_at)
        for seq, event_json, created_at in connection.execute(
            "SELECT seq, event_json, created_at FROM transcript_events WHERE session_id = ? ORDER BY seq",
            (session_id,),
        )
    ]


# --------------------------------------------------------------------------------------
# The backend
# --------------------------------------------------------------------------------------


class SqliteBackend(Backend, Maintenance):
    """A store directory holding one SQLite database with the upstream FTS5 schema
    (capabilities: `Backend`, `Maintenance`; every read sees the latest commit, so it
    needs no `Refreshable`)."""

    name = BACKEND_NAME

    def __init__(self, directory: Path, connection: sqlite3.Connection, *, writer: bool) -> None:
        self.directory = directory
        self.path = directory / DATABASE_NAME
        self._connection = connection
        self._writer = writer

    # ---- registry contract -------------------------------------------------------

    @classmethod
    def claims(cls, path: str | os.PathLike[str]) -> bool:
        """Whether `path` is a directory holding this backend's database file."""
        return (Path(path) / DATABASE_NAME).is_file()

    @classmethod
    def create(cls, path: str | os.PathLike[str]) -> SqliteBackend:
        """Make a new store at directory `path` (created if missing) and open it as writer."""
        directory = Path(path)
        database = directory / DATABASE_NAME
        if database.exists():
            raise StoreError(f"{directory}: a sqlite store already exists here")
        try:
            directory.mkdir(parents=True, exist_ok=True)
            connection = _connect_writer(database)
            connection.executescript(
                "BEGIN;" + SCHEMA
                + f"INSERT INTO store_meta VALUES ('backend', '{BACKEND_NAME}');"
                + f"INSERT INTO store_meta VALUES ('format_version', '{FORMAT_VERSION}');"
                + "COMMIT;"
            )
        except (OSError, sqlite3.Error) as error:
            raise StoreError(f"{database}: cannot create the store: {error}") from error
        return cls(directory, connection, writer=True)

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, writer: bool = False) -> SqliteBackend:
        """Open an existing store; a reader opens the file read-only (`mode=ro`)."""
        directory = Path(path)
        database = directory / DATABASE_NAME
        if not database.is_file():
            raise StoreError(f"{directory}: no sqlite store here ({DATABASE_NAME} is missing)")
        try:
            if writer:
                connection = _connect_writer(database)
            else:
                connection = sqlite3.connect(
                    database.resolve().as_uri() + "?mode=ro", uri=True, isolation_level=None
                )
                connection.execute("PRAGMA busy_timeout = 5000")
            rows = dict(connection.execute("SELECT key, value FROM store_meta").fetchall())
        except sqlite3.DatabaseError as error:
            raise CorruptFile(str(database), 0, f"not a session-search sqlite store ({error})") from error
        if rows.get("backend") != BACKEND_NAME or rows.get("format_version") != FORMAT_VERSION:
            connection.close()
            raise CorruptFile(str(database), 0, f"unexpected store metadata {rows!r}")
        return cls(directory, connection, writer=writer)

    # ---- writing ----------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[SqliteTransaction]:
        """One `BEGIN IMMEDIATE … COMMIT` transaction; an exception rolls it back."""
        self._require_writer()
        try:
            self._connection.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as error:
            if "locked" in str(error) or "busy" in str(error):
                raise StoreLocked(f"{self.path}: another writer holds the database") from error
            raise StoreError(f"{self.path}: {error}") from error
        try:
            yield SqliteTransaction(self._connection)
        except sqlite3.Error as error:
            self._rollback()
            raise StoreError(f"{self.path}: write failed: {error}") from error
        except BaseException:
            self._rollback()
            raise
        try:
            self._connection.execute("COMMIT")
        except sqlite3.Error as error:
            self._rollback()
            raise StoreError(f"{self.path}: commit failed: {error}") from error

    def _rollback(self) -> None:
        """Roll back if SQLite has not already done so (it does after some errors)."""
        if self._connection.in_transaction:
            self._connection.execute("ROLLBACK")

    def reconcile(self, progress: StepProgress | None = None) -> int:
        """Rebuild every window that needs it (one transaction each); sweep orphan rows.

        Returns the number of windows rebuilt; `progress(done, total)` is called first and
        after each.
        """
        self._require_writer()
        rebuilt = 0
        work = self._windows_needing_reconcile()
        if progress is not None:
            progress(0, len(work))
        for session_id in work:
            with self.transaction():
                self._rebuild_window(session_id)
            rebuilt += 1
            if progress is not None:
                progress(rebuilt, len(work))
        with self.transaction():
            self._sweep_orphans()
        return rebuilt

    def _rebuild_window(self, session_id: str) -> None:
        events = read_events(self._connection, session_id)
        self._connection.execute("DELETE FROM session_transcript_fts_rows WHERE session_id = ?", (session_id,))
        for entry in index_entries(events):
            insert_index_entry(self._connection, entry)
        last_seq = events[-1].seq if events else -1
        write_state(self._connection, session_id, rebuilt_state(last_seq, scan_tree(events).leaf_id))

    def _sweep_orphans(self) -> None:
        """Index rows and states whose window has no transcript rows (§8.3)."""
        for table in ("session_transcript_fts_rows", "session_transcript_index_state"):
            self._connection.execute(
                f"DELETE FROM {table} WHERE session_id NOT IN "
                "(SELECT DISTINCT session_id FROM transcript_events)"
            )

    def index_status(self) -> bool:
        """True when any window needs reconcile (the `indexing` flag of §8.4)."""
        return bool(self._windows_needing_reconcile())

    def _windows_needing_reconcile(self) -> list[str]:
        rows = self._connection.execute(
            "SELECT w.session_id, s.indexed_seq, s.leaf_event_id, s.needs_rebuild, "
            "(SELECT coalesce(max(e.seq), -1) FROM transcript_events AS e WHERE e.session_id = w.session_id) "
            "FROM session_windows AS w LEFT JOIN session_transcript_index_state AS s "
            "ON s.session_id = w.session_id ORDER BY w.session_id"
        ).fetchall()
        needing = []
        for session_id, indexed_seq, leaf_event_id, needs_rebuild, last_seq in rows:
            state = None
            if indexed_seq is not None:
                state = WindowIndexState(indexed_seq, leaf_event_id, bool(needs_rebuild))
            if needs_reconcile(state, last_seq):
                needing.append(session_id)
        return needing

    # ---- searching --------------------------------------------------------------

    def search(self, request: SearchRequest) -> SearchResult:
        """The store-level search of behaviour.md §5 (see the module docstring)."""
        query = validate_request(request)
        limit = clamp_limit(request.limit)
        # A lone surrogate cannot be bound as UTF-8; FTS5 reads one as U+FFFD (a separator),
        # and so does the unicode61 profile, so the replacement keeps the query's meaning.
        terms = [storable_text(term) for term in split_terms(query)]
        dirty = self._windows_needing_reconcile()
        scope_sql, scope_parameters = scope_predicate(request)
        filters = _Filters(scope_sql, scope_parameters, dirty, request)
        try:
            rows = self._word_rows(filters, terms, request, limit)
            if not rows:
                rows = self._retry_rows(filters, terms, request, limit)
            archived = self._count_archived(scope_sql, scope_parameters, request.session_id)
        except sqlite3.Error as error:
            raise StoreError(f"{self.path}: search failed: {error}") from error
        except UnicodeEncodeError as error:
            raise QueryError(f"a search parameter is not valid UTF-8 text: {error}") from None
        hits = [hit for hit in (_hit_from_row(row) for row in rows) if hit is not None]
        return SearchResult(
            hits=tuple(hits[:limit]),
            truncated=len(rows) > limit,
            indexing=bool(dirty),
            archived_transcripts_excluded=archived,
        )

    def _word_rows(self, filters: _Filters, terms: list[str], request: SearchRequest, limit: int) -> list[tuple]:
        expression = fts5_match_expression(terms, prefix=request.match == "prefix")
        return self._two_stage(filters, expression, [], request.order, limit)

    def _retry_rows(self, filters: _Filters, terms: list[str], request: SearchRequest, limit: int) -> list[tuple]:
        word_terms, cjk_terms = partition_terms(terms)
        if not cjk_terms:
            return []
        needles = substring_needles(cjk_terms)
        if word_terms:
            expression = fts5_match_expression(word_terms, prefix=retry_prefix(terms, request.match))
            return self._two_stage(filters, expression, needles, request.order, limit)
        return self._substring_only(filters, needles, request.order, limit)

    def _two_stage(
        self, filters: _Filters, expression: str, needles: Sequence[str], order: str, limit: int
    ) -> list[tuple]:
        """Stage 1: limit+1 candidate rowids in order; stage 2: snippet() for those only."""
        like_sql = "".join(" AND f.text LIKE ? ESCAPE '\\'" for _ in needles)
        order_sql = _order_sql(order, ranked=True)
        where_sql, parameters = filters.where_sql()
        candidates = self._connection.execute(
            "WITH candidates AS MATERIALIZED ("
            " SELECT f.rowid AS row_id, bm25(session_transcript_fts) AS bm25_rank, w.session_key AS session_key"
            " FROM session_transcript_fts AS f"
            " JOIN session_windows AS w ON w.session_id = f.session_id"
            f" WHERE session_transcript_fts MATCH ?{like_sql} AND {where_sql}"
            f" ORDER BY {order_sql} LIMIT ?)"
            " SELECT row_id, bm25_rank, session_key FROM candidates",
            [expression, *(like_pattern(needle) for needle in needles), *parameters, limit + 1],
        ).fetchall()
        if not candidates:
            return []
        details = {
            row[0]: row[1:]
            for row in self._connection.execute(
                "SELECT f.rowid, f.session_id, f.message_id, f.role, f.timestamp, "
                f"{SNIPPET_SQL} FROM session_transcript_fts AS f "
                "WHERE session_transcript_fts MATCH ? AND f.rowid IN (SELECT value FROM json_each(?))",
                (expression, json.dumps([row[0] for row in candidates])),
            )
        }
        return [
            (session_key, *details[row_id][:4], details[row_id][4], rank)
            for row_id, rank, session_key in candidates
            if row_id in details
        ]

    def _substring_only(self, filters: _Filters, needles: Sequence[str], order: str, limit: int) -> list[tuple]:
        """The retry without word terms: LIKE only, score 0, `substring_excerpt`."""
        like_sql = " AND ".join("f.text LIKE ? ESCAPE '\\'" for _ in needles)
        where_sql, parameters = filters.where_sql()
        rows = self._connection.execute(
            "SELECT w.session_key, f.session_id, f.message_id, f.role, f.timestamp, f.text, 0.0"
            " FROM session_transcript_fts AS f"
            " JOIN session_windows AS w ON w.session_id = f.session_id"
            f" WHERE {like_sql} AND {where_sql}"
            f" ORDER BY {_order_sql(order, ranked=False)} LIMIT ?",
            [*(like_pattern(needle) for needle in needles), *parameters, limit + 1],
        ).fetchall()
        return [(*row[:5], substring_excerpt(row[5], needles), row[6]) for row in rows]

    def _count_archived(self, scope_sql: str, scope_parameters: list[Any], session_id: str | None) -> int:
        session_sql = " AND w.session_id = ?" if session_id is not None else ""
        (count,) = self._connection.execute(
            f"SELECT count(*) FROM session_windows AS w WHERE w.archived != 0 AND {scope_sql}{session_sql}",
            [*scope_parameters, *([session_id] if session_id is not None else [])],
        ).fetchone()
        return count

    # ---- reading the transcripts (history and importers read these, never the index) --

    def windows(self) -> list[SessionWindow]:
        """Every window, in first-insertion order."""
        return [_window_from_row(row) for row in self._connection.execute(
            f"SELECT {_WINDOW_SELECT} FROM session_windows ORDER BY rowid")]

    def window(self, session_id: str) -> SessionWindow:
        """One window (UnknownSession if absent)."""
        row = self._connection.execute(
            f"SELECT {_WINDOW_SELECT} FROM session_windows WHERE session_id = ?", (session_id,)
        ).fetchone()
        if row is None:
            raise UnknownSession(f"unknown session id {session_id!r}")
        return _window_from_row(row)

    def windows_of(self, session_key: str) -> list[SessionWindow]:
        """The windows of one session key, in first-insertion order."""
        return [_window_from_row(row) for row in self._connection.execute(
            f"SELECT {_WINDOW_SELECT} FROM session_windows WHERE session_key = ? ORDER BY rowid",
            (session_key,))]

    def session_keys(self) -> list[str]:
        """Every session key holding a window, in order of first appearance."""
        return [row[0] for row in self._connection.execute(
            "SELECT session_key FROM session_windows GROUP BY session_key ORDER BY min(rowid)")]

    def events(self, session_id: str) -> list[StoredEvent]:
        """Every event of a window in seq order (UnknownSession if the window is absent)."""
        self.window(session_id)
        return read_events(self._connection, session_id)

    def event_count(self, session_id: str) -> int:
        """How many events a window has (UnknownSession if absent)."""
        self.window(session_id)
        (count,) = self._connection.execute(
            "SELECT count(*) FROM transcript_events WHERE session_id = ?", (session_id,)).fetchone()
        return count

    # ---- inspection -------------------------------------------------------------

    def stats(self) -> dict[str, int]:
        """Counts: agents, sessions (keys), windows, events, messages indexed, bytes."""
        keys = [row[0] for row in self._connection.execute("SELECT DISTINCT session_key FROM session_windows")]
        agents = {agent_id_of(key) for key in keys} - {None}
        (windows,) = self._connection.execute("SELECT count(*) FROM session_windows").fetchone()
        (events,) = self._connection.execute("SELECT count(*) FROM transcript_events").fetchone()
        (messages,) = self._connection.execute("SELECT count(*) FROM session_transcript_fts_rows").fetchone()
        return {
            "agents": len(agents),
            "sessions": len(keys),
            "windows": windows,
            "events": events,
            "messages_indexed": messages,
            "bytes": self.path.stat().st_size if self.path.exists() else 0,
        }

    def close(self) -> None:
        """Close the connection (idempotent)."""
        self._connection.close()

    def _require_writer(self) -> None:
        if not self._writer:
            raise UsageError(f"{self.path}: the store was opened read-only")


def search_database(path: str | os.PathLike[str], request: SearchRequest) -> SearchResult:
    """Search the store at `path` read-only; a store that does not exist gives no hits.

    The upstream kernel's rule (behaviour.md §5.2, test "returns empty results without
    creating a missing database"): the request is still validated, nothing is created.
    """
    validate_request(request)
    if not SqliteBackend.claims(path):
        return SearchResult(hits=(), truncated=False, indexing=False)
    backend = SqliteBackend.open(path)
    try:
        return backend.search(request)
    finally:
        backend.close()


# --------------------------------------------------------------------------------------
# SQL pieces
# --------------------------------------------------------------------------------------


class _Filters:
    """The WHERE conditions every search stage shares (scope, exclusions, session, role)."""

    def __init__(self, scope_sql: str, scope_parameters: list[Any], dirty: list[str], request: SearchRequest):
        self.scope_sql = scope_sql
        self.scope_parameters = scope_parameters
        self.dirty = dirty
        self.request = request

    def where_sql(self) -> tuple[str, list[Any]]:
        parts = [self.scope_sql, "w.archived = 0"]
        parameters: list[Any] = list(self.scope_parameters)
        if self.dirty:
            parts.append("f.session_id NOT IN (SELECT value FROM json_each(?))")
            parameters.append(json.dumps(self.dirty))
        if self.request.session_id is not None:
            parts.append("f.session_id = ?")
            parameters.append(self.request.session_id)
        if self.request.role is not None:
            parts.append("f.role = ?")
            parameters.append(self.request.role)
        return " AND ".join(parts), parameters


def scope_predicate(request: SearchRequest) -> tuple[str, list[Any]]:
    """The §5.3 window scope over alias `w`, with its parameters."""
    if request.session_keys is None:
        agent_id = request.agent_id if request.agent_id is not None else DEFAULT_AGENT_ID
        pattern = "agent:" + glob_literal(agent_id) + ":*"
        return "(w.session_key GLOB ? OR w.session_key IN ('global', 'unknown'))", [pattern]
    if len(request.session_keys) == 0:
        return "1", []
    return "w.session_key IN (SELECT value FROM json_each(?))", [json.dumps(list(request.session_keys))]


def _order_sql(order: str, *, ranked: bool) -> str:
    if order == "recent":
        return "f.timestamp DESC, f.rowid DESC"
    rank = "bm25_rank ASC, " if ranked else ""
    return rank + "f.timestamp DESC, f.message_id ASC, f.session_id ASC, f.rowid ASC"


def _hit_from_row(row: tuple) -> SearchHit | None:
    """A hit from (session_key, session_id, message_id, role, timestamp, snippet, rank)."""
    session_key, session_id, message_id, role, timestamp, snippet, rank = row
    if not all(isinstance(value, str) for value in (session_key, session_id, message_id, snippet)):
        return None
    if role not in SEARCHABLE_ROLES:
        return None
    return search_hit(session_key=session_key, session_id=session_id, message_id=message_id,
                      role=role, timestamp=timestamp, excerpt=snippet, rank=rank)


_WINDOW_SELECT = ", ".join(f'"{name}"' for name in WINDOW_COLUMNS)


def _window_from_row(row: tuple) -> SessionWindow:
    """A `SessionWindow` from a `session_windows` row in `WINDOW_COLUMNS` order."""
    values = dict(zip(WINDOW_COLUMNS, row, strict=True))
    for flag in ("current", "incognito", "archived"):
        values[flag] = bool(values[flag])
    values["extra"] = json.loads(values["extra"])
    return SessionWindow(**values)


def _connect_writer(database: Path) -> sqlite3.Connection:
    connection = sqlite3.connect(str(database), isolation_level=None)
    connection.execute("PRAGMA journal_mode = DELETE")
    connection.execute("PRAGMA synchronous = FULL")
    connection.execute("PRAGMA busy_timeout = 5000")
    return connection
