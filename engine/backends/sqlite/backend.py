"""The SQLite FTS5 backend: one agent's upstream OpenClaw database, on Python's `sqlite3`.

Owns: opening and creating one database file (`SqliteBackend.create_file`, `open_file`;
`create` and `open` take the folder of the file `<folder>/openclaw-agent.sqlite`,
upstream's name, which is how the partitioned store opens an agent's partition in
`agents/<agentId>/agent/`),
its transactions, reconcile, and the reading side of the backend protocol (windows,
events, stats). Must not touch: the layout (`engine.backends.sqlite.schema`), the pragmas and
how a connection is opened (`engine.backends.sqlite.connection`), what SQLite's errors mean
(`engine.backends.sqlite.refusals`),
how writes become rows (`engine.backends.sqlite.writes`), the search statements
(`engine.backends.sqlite.search`); nor anything those modules leave to the shared rules
(projection, lifecycle, query policy, hit assembly).

**One file, one agent.** Upstream OpenClaw keeps one database per agent at
`<state>/agents/<agentId>/agent/openclaw-agent.sqlite` (behaviour.md §2.2), so bm25's
row count, document frequencies and average length are per agent. A `SqliteBackend` is one
such database: the partitioned store opens one per agent at that path and merges their
results as the Gateway does (behaviour.md §6 step 5).

**A database OpenClaw wrote** (layout `openclaw`: the upstream tables without ours) opens
read-only and is searched as it is, without writing a byte of its folder
(`connection.ReadConnection`); opening it as a writer is refused.

Transactions: every `transaction()` is `BEGIN IMMEDIATE … COMMIT`; the rows it gathered
are written before the commit (`writes.SqliteTransaction.flush`), and a read through the
backend inside an open transaction writes them first, so it sees them. Reconcile rebuilds
the windows of the reconcile queue in transactions of about `RECONCILE_BATCH_EVENTS`
events, then sweeps orphaned index rows; the store's background worker runs the same
work in smaller pieces (`reconcile_batch`, `sweep_orphans`; `engine.store.background`),
on the writer's connection, which is opened usable from any thread
(`connection._writer_connection`) because the partitioned store serializes every use of it.

Reading: `windows`, `window`, `windows_of`, `session_keys`, `events`, `event_count` read the
transcript tables (never the index), with the same names as `TranscriptStore`, so the
importers (`engine.ingest.import_sources`) and history readers can use this store too.
Every read (and reconcile) reports a damaged database as `CorruptFile` naming the file
(`refusals.damage_reported`), never as a raw `sqlite3` or decoding error. A
window of a database OpenClaw wrote reads with upstream's columns and our defaults for
the fields upstream has no column for (`kind` chat, `title` its display name, `current`
from its session node, `archived` when it has a cold archive).
"""

from __future__ import annotations

import functools
import json
import os
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from engine.backends.protocol import (
    Backend,
    Compactable,
    Generational,
    Interruptible,
    Maintenance,
    ReconcileBatch,
    ReconcilesInBatches,
    SearchesPartitions,
)
from engine.backends.reconcile_loop import reconcile_front, reconcile_pending
from engine.backends.sqlite import refusals, schema
from engine.backends.sqlite.connection import (
    ReadConnection,
    connect_writer,
    create_database,
    write_ahead_log,
)
from engine.backends.sqlite.schema import BACKEND_NAME, OWN, Layout, needs_reconcile_sql
from engine.backends.sqlite.search import run_search
from engine.backends.sqlite.storable import is_storable
from engine.config import EngineConfig
from engine.errors import (
    CorruptFile,
    QueryError,
    StoreError,
    StoreLocked,
    UnknownSession,
    UsageError,
)
from engine.model import SearchRequest, SearchResult, SessionWindow, StoredEvent, agent_id_of
from engine.progress import StepProgress
from engine.query.checked_request import check_request

if TYPE_CHECKING:  # imported by `compact`, which makes one: a search never needs it
    from types import ModuleType

    from engine.backends.sqlite.writes import SqliteTransaction
    from engine.transcript.compaction import CompactionOutcome

#: The database file of a registry store directory.
DATABASE_NAME = "openclaw-agent.sqlite"
#: Reconcile commits after rebuilding windows holding about this many events.
RECONCILE_BATCH_EVENTS = 50_000
#: Whether a window is still in the reconcile queue; the index rows one window holds;
#: the windows with index rows or state but no transcript rows (what `sweep_orphans`
#: deletes).
QUEUED = "SELECT 1 FROM session_search_reconcile_queue WHERE session_id = ?"
WINDOW_ROWS = "SELECT count(*) FROM session_transcript_fts_rows WHERE session_id = ?"
ORPHANED_WINDOWS = (
    "SELECT count(*) FROM (SELECT session_id FROM session_transcript_active_events "
    "UNION SELECT session_id FROM session_transcript_fts_rows "
    "UNION SELECT session_id FROM session_transcript_index_state) "
    "WHERE session_id NOT IN (SELECT DISTINCT session_id FROM transcript_events)")

WINDOW_COLUMNS = (
    "session_id", "session_key", "previous_session_id", "reason", "current", "title", "kind",
    "spawned_by", "owner_session_key", "parent_session_key", "incognito", "archived", "group",
    "created_at", "extra",
)
#: `WINDOW_COLUMNS` read from a database of each layout (windows `w`, our metadata `m`).
WINDOW_SELECT: dict[Layout, str] = {
    schema.OWN: (
        "SELECT w.session_id, w.session_key, w.previous_session_id, w.reason, m.current, "
        'm.title, m.kind, w.spawned_by, m.owner_session_key, w.parent_session_key, '
        'm.incognito, m.archived, m."group", m.created_at, m.extra '
        "FROM session_windows AS w JOIN session_search_windows AS m ON m.session_id = w.session_id"
    ),
    schema.OPENCLAW: (
        "SELECT w.session_id, w.session_key, w.previous_session_id, coalesce(w.reason, 'initial'), "
        "EXISTS (SELECT 1 FROM session_nodes AS n WHERE n.session_key = w.session_key "
        "AND n.current_session_id = w.session_id), w.display_name, 'chat', w.spawned_by, NULL, "
        "w.parent_session_key, 0, EXISTS (SELECT 1 FROM session_transcript_cold_archives AS a "
        "WHERE a.session_id = w.session_id), NULL, w.created_at, '{}' FROM session_windows AS w"
    ),
}


_Method = TypeVar("_Method", bound=Callable[..., Any])


def _write_path() -> ModuleType:
    """`engine.backends.sqlite.writes`, imported by the first write, maintenance call or
    transcript read: a process that only searches (a fresh `search` command) never loads
    the write path, nor the transcript layer under it (start-up: `engine.cli`)."""
    from engine.backends.sqlite import writes

    return writes


def _damage_reported(method: _Method) -> _Method:
    """A read of the database that reports damage as `CorruptFile` naming the file
    (`refusals.damage_reported`)."""
    @functools.wraps(method)
    def reading(self: SqliteBackend, *arguments: Any, **options: Any) -> Any:
        try:
            return method(self, *arguments, **options)
        except refusals.REPORTED_ERRORS as error:
            raise refusals.reported_error(self.path, error) from None

    return reading  # type: ignore[return-value]


class SqliteBackend(Backend, Maintenance, ReconcilesInBatches, Interruptible, Compactable,
                    SearchesPartitions, Generational):
    """One SQLite database with the upstream agent layout (capabilities: `Backend`,
    `Maintenance`, `ReconcilesInBatches`, `Interruptible`, `Compactable`,
    `SearchesPartitions`; every read sees the latest commit, so it needs no
    `Refreshable`)."""

    name = BACKEND_NAME

    def __init__(self, path: Path, *, writer: sqlite3.Connection | None = None,
                 reader: ReadConnection | None = None, layout: Layout = OWN,
                 config: EngineConfig | None = None) -> None:
        self.path = path
        #: The tunables its writes read (the §8.2 limits of a replaced transcript); a
        #: test may set another before writing.
        self.config = config or EngineConfig()
        self.directory = path.parent
        self.layout = layout
        self._writer = writer
        self._reader = reader
        self._open_transaction: SqliteTransaction | None = None
        #: The writer's kept status answers, valid while its `total_changes` stays
        #: `_status_changes` (`_fixed_status`).
        self._writer_status: dict = {}
        self._status_changes = -1

    @property
    def _connection(self) -> sqlite3.Connection:
        """The connection to use now (a reader's may be reopened, see `ReadConnection`)."""
        if self._writer is not None:
            return self._writer
        assert self._reader is not None
        return self._reader.current()

    # ---- opening ------------------------------------------------------------------

    @classmethod
    def claims(cls, path: str | os.PathLike[str]) -> bool:
        """Whether `path` is a store directory holding this backend's database file."""
        return (Path(path) / DATABASE_NAME).is_file()

    @classmethod
    def create(cls, path: str | os.PathLike[str]) -> SqliteBackend:
        """Make a new store at directory `path` (created if missing) and open it as writer."""
        return cls.create_file(Path(path) / DATABASE_NAME)

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, writer: bool = False) -> SqliteBackend:
        """Open the store at directory `path`; a reader never writes to it."""
        database = Path(path) / DATABASE_NAME
        if not database.is_file():
            raise StoreError(f"{path}: no sqlite store here ({DATABASE_NAME} is missing)")
        return cls.open_file(database, writer=writer)

    @classmethod
    def create_file(cls, path: str | os.PathLike[str]) -> SqliteBackend:
        """Make a new database at file `path` (its folder created if missing), as writer."""
        database = Path(path)
        return cls(database, writer=create_database(database), layout=OWN)

    @classmethod
    def open_file(cls, path: str | os.PathLike[str], *, writer: bool = False) -> SqliteBackend:
        """Open the database at file `path`: as writer (one made here), or read-only (also
        one OpenClaw wrote), without creating or changing any file."""
        database = Path(path)
        if not database.is_file():
            raise StoreError(f"{database}: no sqlite database here")
        try:
            if writer:
                return cls(database, writer=connect_writer(database), layout=OWN)
            reader = ReadConnection.open(database)
        except (sqlite3.DatabaseError, UnicodeDecodeError) as error:  # a damaged schema, too
            if refusals.is_system_refusal(error):
                raise refusals.read_refused(database, error) from None
            if not refusals.is_damage(error):
                raise StoreError(f"{database}: {error}") from None
            raise CorruptFile(str(database), 0,
                              f"not a session-search sqlite store ({error})") from None
        return cls(database, reader=reader, layout=reader.layout)

    # ---- writing ------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[SqliteTransaction]:
        """One `BEGIN IMMEDIATE … COMMIT` transaction; an exception rolls it back."""
        connection = self._writer_connection()
        try:
            connection.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as error:
            if "locked" in str(error) or "busy" in str(error):
                raise StoreLocked(f"{self.path}: another writer holds the database") from error
            raise StoreError(f"{self.path}: {error}") from error
        transaction = _write_path().SqliteTransaction(connection, self.config)
        self._open_transaction = transaction
        try:
            yield transaction
            transaction.finish()
        except sqlite3.Error as error:
            self._rollback()
            raise StoreError(f"{self.path}: write failed: {error}") from error
        except BaseException:
            self._rollback()
            raise
        finally:
            self._open_transaction = None
        try:
            connection.execute(schema.COUNT_COMMIT_SQL)
            connection.execute("COMMIT")
        except sqlite3.Error as error:
            self._rollback()
            raise StoreError(f"{self.path}: commit failed: {error}") from error

    def commit_generation(self) -> int:
        """How many transactions committed: a row of `session_search_store` that each
        commit moves on in the same transaction (0 for a database OpenClaw wrote)."""
        if self.layout != OWN:
            return 0
        row = self._reading().execute(schema.COMMIT_GENERATION_SQL).fetchone()
        return int(row[0]) if row is not None else 0

    def generation_files(self) -> str:
        """The database and its write-ahead log (the newest commits may be in the log)."""
        return f"{self.path} (with its write-ahead log {self.path}-wal)"

    def _rollback(self) -> None:
        """Roll back if SQLite has not already done so (it does after some errors)."""
        if self._writer is not None and self._writer.in_transaction:
            self._writer.execute("ROLLBACK")

    def _writer_connection(self) -> sqlite3.Connection:
        if self._writer is None:
            raise UsageError(f"{self.path}: the store was opened read-only")
        return self._writer

    def _fixed_status(self, connection: sqlite3.Connection) -> dict | None:
        """The status answers a search may keep on `connection` (see
        `engine.backends.sqlite.search.run_search`), or None: the writer's, emptied when
        its connection has changed a row since (`total_changes` counts every row a
        statement or trigger of it inserted, updated or deleted), and none inside an open
        transaction (a rollback would undo rows without moving that count); an immutable
        reader's; none for a reader that shares a live writer's file."""
        if self._writer is not None:
            if connection.in_transaction:  # what it reads may still be rolled back,
                return None                # which does not move total_changes
            changes = connection.total_changes
            if changes != self._status_changes:
                self._writer_status.clear()
                self._status_changes = changes
            return self._writer_status
        reader = self._reader
        if reader is not None and reader.immutable:
            return reader.fixed_status
        return None

    def _reading(self) -> sqlite3.Connection:
        """The connection to read with, after writing what an open transaction gathered."""
        if self._open_transaction is not None:
            self._open_transaction.flush()
        return self._connection

    # ---- maintenance --------------------------------------------------------------

    @_damage_reported
    def reconcile(self, progress: StepProgress | None = None) -> int:
        """Rebuild every window that needs it; sweep orphan rows. Returns the windows
        rebuilt; `progress(done, total)` is called first and after each batch's commit."""
        connection = self._writer_connection()
        rebuilt = reconcile_pending(
            self._windows_needing_reconcile(), self.transaction,
            lambda session_id: _write_path().rebuild_window(connection, session_id),
            progress, RECONCILE_BATCH_EVENTS)
        with self.transaction():
            _write_path().sweep_orphans(connection)
        return rebuilt

    @_damage_reported
    def index_status(self) -> bool:
        """True when any window needs reconcile (the `indexing` flag of §8.4)."""
        if self.layout == OWN:
            sql = "SELECT EXISTS (SELECT 1 FROM session_search_reconcile_queue)"
        else:
            sql = ("SELECT EXISTS (SELECT 1 FROM session_windows AS pending WHERE "
                   + needs_reconcile_sql("pending.session_id") + ")")
        return bool(self._reading().execute(sql).fetchone()[0])

    @_damage_reported
    def rebuild_index(self) -> int:
        """Rebuild every window's index rows, active path and state from its transcript
        rows and sweep orphans, in one transaction (`verify --repair`, as
        `ReferenceBackend.rebuild_index`); return the number of windows rebuilt."""
        connection = self._writer_connection()
        with self.transaction():
            windows = [row[0] for row in connection.execute(
                "SELECT DISTINCT session_id FROM transcript_events ORDER BY session_id")]
            for session_id in windows:
                _write_path().rebuild_window(connection, session_id)
            _write_path().sweep_orphans(connection)
        return len(windows)

    def _windows_needing_reconcile(self) -> list[str]:
        return [row[0] for row in self._reading().execute(
            "SELECT session_id FROM session_search_reconcile_queue ORDER BY session_id")]

    @_damage_reported
    def windows_needing_reconcile(self) -> list[str]:
        """Session ids of the windows in the reconcile queue (§8.3), in session-id order
        (`ReconcilesInBatches`)."""
        self._writer_connection()
        return self._windows_needing_reconcile()

    @_damage_reported
    def reconcile_batch(self, pending: Sequence[str], max_events: int,
                        stop: Callable[[], bool]) -> ReconcileBatch:
        """In one `BEGIN IMMEDIATE` transaction, rebuild windows from the front of
        `pending` that are still queued, until about `max_events` events were read or
        `stop()` (`ReconcilesInBatches`)."""
        connection = self._writer_connection()
        return reconcile_front(
            pending, max_events, stop, self.transaction,
            lambda session_id: connection.execute(QUEUED, (session_id,)).fetchone() is not None,
            lambda session_id: _write_path().rebuild_window(connection, session_id),
            lambda session_id: connection.execute(WINDOW_ROWS, (session_id,)).fetchone()[0])

    @_damage_reported
    def sweep_orphans(self) -> int:
        """Drop the index rows and states of windows without transcript rows, in one
        transaction (`ReconcilesInBatches`); the number of such windows."""
        connection = self._writer_connection()
        with self.transaction():
            (orphans,) = connection.execute(ORPHANED_WINDOWS).fetchone()
            _write_path().sweep_orphans(connection)
        return orphans

    # ---- searching ----------------------------------------------------------------

    def interrupt(self) -> None:
        """Stop the statement running on this database now (`sqlite3.Connection.interrupt`,
        which SQLite allows from any thread); the search running it fails."""
        connection = self._writer
        if connection is None and self._reader is not None:
            connection = self._reader.connection
        if connection is not None:
            connection.interrupt()

    def search(self, request: SearchRequest) -> SearchResult:
        """The store-level search of behaviour.md §5 (`engine.backends.sqlite.search`)."""
        return self.search_partitions((self,), request)[0]

    @classmethod
    def search_partitions(cls, partitions: Sequence[SqliteBackend],
                          request: SearchRequest) -> list[SearchResult]:
        """`search(request)` on each partition, in one call (`SearchesPartitions`): a
        search across agents asks every database the same request, and a call per
        partition through the store's layers costs as much Python as the statement's
        own binding does. A request the store checked is used as it is; a plain one
        (the backend used on its own) is checked here, once for every partition."""
        checked = check_request(request)
        results = []
        for partition in partitions:
            try:  # what opening the read reports, as every read does (`_damage_reported`)
                connection = partition._reading()
                fixed_status = partition._fixed_status(connection)
            except refusals.REPORTED_ERRORS as error:
                raise refusals.reported_error(partition.path, error) from None
            try:
                results.append(run_search(connection, partition.layout, checked,
                                          fixed_status=fixed_status))
            except sqlite3.Error as error:
                raise StoreError(f"{partition.path}: search failed: {error}") from error
            except UnicodeEncodeError as error:
                raise QueryError(
                    f"a search parameter is not valid UTF-8 text: {error}") from None
            except refusals.REPORTED_ERRORS as error:  # a row that no longer decodes
                raise refusals.reported_error(partition.path, error) from None
        return results

    # ---- reading the transcripts (history and importers read these, never the index) --

    @_damage_reported
    def windows(self) -> list[SessionWindow]:
        """Every window, in first-insertion order."""
        return [_window_from_row(row) for row in self._reading().execute(
            WINDOW_SELECT[self.layout] + " ORDER BY w.rowid")]

    @_damage_reported
    def window(self, session_id: str) -> SessionWindow:
        """One window (UnknownSession if absent)."""
        connection = self._reading()
        row = connection.execute(
            WINDOW_SELECT[self.layout] + " WHERE w.session_id = ?", (session_id,)).fetchone()
        if row is None:
            # A miss is rare: look at the table itself, past its index (a full scan), so a
            # damaged index that hides the window is named as damage, not as a wrong id.
            if connection.execute("SELECT EXISTS (SELECT 1 FROM session_windows "
                                  "WHERE +session_id = ?)", (session_id,)).fetchone()[0]:
                raise CorruptFile(str(self.path), 0, f"window {session_id!r} is in the table "
                                  "session_windows but its index does not find it")
            raise UnknownSession(f"unknown session id {session_id!r}")
        return _window_from_row(row)

    @_damage_reported
    def windows_of(self, session_key: str) -> list[SessionWindow]:
        """The windows of one session key, in first-insertion order (none for a key
        SQLite cannot bind, which no window holds)."""
        if not is_storable(session_key):
            return []
        return [_window_from_row(row) for row in self._reading().execute(
            WINDOW_SELECT[self.layout] + " WHERE w.session_key = ? ORDER BY w.rowid",
            (session_key,))]

    @_damage_reported
    def session_keys(self) -> list[str]:
        """Every session key holding a window, in order of first appearance."""
        return [row[0] for row in self._reading().execute(
            "SELECT session_key FROM session_windows GROUP BY session_key ORDER BY min(rowid)")]

    @_damage_reported
    def events(self, session_id: str) -> list[StoredEvent]:
        """Every event of a window in seq order (UnknownSession if the window is absent)."""
        self.window(session_id)
        return _write_path().read_events(self._reading(), session_id)

    @_damage_reported
    def event_count(self, session_id: str) -> int:
        """How many events a window has (UnknownSession if absent)."""
        self.window(session_id)
        (count,) = self._reading().execute(
            "SELECT count(*) FROM transcript_events WHERE session_id = ?", (session_id,)).fetchone()
        return count

    def compact(self) -> CompactionOutcome:
        """Reclaim the pages deleted rows left (writer only): `VACUUM`, then a
        truncating checkpoint so the write-ahead log gives its space back too. SQLite
        rewrites the file itself, crash-safely (through the write-ahead log); readers
        see the same rows before and after. A full disk is a StoreError naming the
        file, and the database stays as it was."""
        connection = self._writer_connection()
        if self._open_transaction is not None:
            raise UsageError(f"{self.path}: cannot compact the database inside a transaction")
        before = self._file_bytes()
        try:
            connection.execute("VACUUM")
            connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        except sqlite3.DatabaseError as error:
            if refusals.is_damage(error):
                raise CorruptFile(str(self.path), 0, str(error)) from None
            raise StoreError(f"{self.path}: the compaction (VACUUM) failed: {error}; the "
                             "database is as it was") from None
        reclaimed = max(before - self._file_bytes(), 0)
        from engine.transcript.compaction import CompactionOutcome

        return CompactionOutcome(1 if reclaimed else 0, reclaimed, kind="database")

    def _file_bytes(self) -> int:
        """The bytes of the database file and its write-ahead log."""
        files = (self.path, write_ahead_log(self.path))
        return sum(file.stat().st_size for file in files if file.exists())

    # ---- inspection ---------------------------------------------------------------

    @_damage_reported
    def stats(self) -> dict[str, int]:
        """Counts: agents, sessions (keys), windows, events, messages indexed, bytes (the
        database file and its write-ahead log)."""
        connection = self._reading()
        keys = [row[0] for row in connection.execute("SELECT DISTINCT session_key FROM session_windows")]
        agents = {agent_id_of(key) for key in keys} - {None}
        (windows,) = connection.execute("SELECT count(*) FROM session_windows").fetchone()
        (events,) = connection.execute("SELECT count(*) FROM transcript_events").fetchone()
        (messages,) = connection.execute("SELECT count(*) FROM session_transcript_fts_rows").fetchone()
        files = (self.path, write_ahead_log(self.path))
        return {
            "agents": len(agents),
            "sessions": len(keys),
            "windows": windows,
            "events": events,
            "messages_indexed": messages,
            "bytes": sum(file.stat().st_size for file in files if file.exists()),
        }

    def close(self) -> None:
        """Close the connection (idempotent)."""
        if self._writer is not None:
            self._writer.close()
        if self._reader is not None:
            self._reader.connection.close()


def search_database(path: str | os.PathLike[str], request: SearchRequest) -> SearchResult:
    """Search the store directory (or database file) at `path` read-only; one that does not
    exist gives no hits.

    The upstream kernel's rule (behaviour.md §5.2, test "returns empty results without
    creating a missing database"): the request is still checked, nothing is created.
    """
    request = check_request(request)
    location = Path(path)
    database = location if location.is_file() else location / DATABASE_NAME
    if not database.is_file():
        return SearchResult(hits=(), truncated=False, indexing=False)
    backend = SqliteBackend.open_file(database)
    try:
        return backend.search(request)
    finally:
        backend.close()


def _window_from_row(row: tuple) -> SessionWindow:
    """A `SessionWindow` from a row in `WINDOW_COLUMNS` order."""
    values = dict(zip(WINDOW_COLUMNS, row, strict=True))
    for flag in ("current", "incognito", "archived"):
        values[flag] = bool(values[flag])
    values["extra"] = json.loads(values["extra"])
    return SessionWindow(**values)
