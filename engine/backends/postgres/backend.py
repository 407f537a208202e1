"""The PostgreSQL backend: one agent's partition as one schema of a PostgreSQL database.

Owns: `PostgresBackend`: creating a partition (its schema, migrated, and the folder's
`postgres.json`), opening one (checking that the schema is there and is the one the file
names), its transactions, reconcile, compaction, and the reading side of the backend
protocol (windows, events, stats). Must not touch: the layout (`schema`), where a
partition lives and how the server is reached (`connection`), how writes become rows
(`writes`), the search statement (`search`); nor the rules those leave to the shared
modules (projection, lifecycle, query policy, hit assembly).

Connections: each partition holds one connection of its own, in autocommit mode; a write
transaction is `connection.transaction()` (BEGIN … COMMIT), so the partitions of a store
transaction commit one by one as the store's journal orders them
(`engine.store.transaction`). A read through the backend inside an open transaction
writes what the transaction gathered first and reads on the same connection, so it sees
it; every other read is one statement (one snapshot): a search is one statement, plus one
for the CJK retry. Reads always see the latest commit, so there is no `Refreshable`.
A read-only partition opened with `pooled=True` (a long-running reader: `serve`) holds
no connection of its own: each read borrows one from its server's pool, which replaces
connections that died (`pool`'s docstring says why); `interrupt` cancels what it lent.

Commit count (`Generational`): the `generation` row of `session_search_store`, moved by
the same transaction as the rows.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import psycopg

from engine.backends.postgres import writes
from engine.backends.postgres.connection import (
    PARTITION_FILE,
    PartitionFile,
    connect,
    connection_string,
    creation_dsn,
    is_storable,
    new_partition_file,
    read_partition_file,
    server_label,
    write_partition_file,
)
from engine.backends.postgres.pool import acquire_pool, read_pooled, release_pool
from engine.backends.postgres.schema import (
    BACKEND_NAME,
    FORMAT_VERSION,
    applied_version,
    check_database,
    migrate,
    schema_exists,
)
from engine.backends.postgres.search import run_search, search_answer
from engine.backends.protocol import (
    AnswersLate,
    Backend,
    Compactable,
    Generational,
    Interruptible,
    Maintenance,
    ReconcileBatch,
    ReconcilesInBatches,
)
from engine.backends.reconcile_loop import reconcile_front, reconcile_pending
from engine.config import EngineConfig
from engine.errors import StoreError, UnknownSession, UnsupportedVersion, UsageError
from engine.model import SearchRequest, SearchResult, SessionWindow, StoredEvent, agent_id_of
from engine.progress import StepProgress
from engine.query.checked_request import check_request
from engine.search.merge import PartitionAnswer

if TYPE_CHECKING:
    from engine.transcript.compaction import CompactionOutcome

Value = TypeVar("Value")

#: Reconcile commits after rebuilding windows holding about this many events.
RECONCILE_BATCH_EVENTS = 50_000
WINDOW_COLUMNS = (
    "session_id", "session_key", "previous_session_id", "reason", "current", "title", "kind",
    "spawned_by", "owner_session_key", "parent_session_key", "incognito", "archived", "group",
    "created_at", "extra",
)
#: The needs-reconcile predicate (behaviour.md §8.3) over a state row (the partial index's).
NEEDS_RECONCILE = ("last_seq > CASE WHEN indexed_seq IS NULL OR needs_rebuild THEN -1 "
                   "ELSE indexed_seq END")
TABLES = ("session_windows", "transcript_events", "session_transcript_index_state",
          "session_transcript_messages", "session_search_store")


class PostgresBackend(Backend, Maintenance, ReconcilesInBatches, Interruptible, AnswersLate,
                      Compactable, Generational):
    """One partition's schema (capabilities: `Backend`, `Maintenance`,
    `ReconcilesInBatches`, `Interruptible`, `AnswersLate`, `Compactable`,
    `Generational`)."""

    name = BACKEND_NAME

    def __init__(self, folder: Path, partition: PartitionFile,
                 connection: psycopg.Connection | None, *, writer: bool,
                 config: EngineConfig | None = None, pool: tuple[Any, str] | None = None
                 ) -> None:
        """Use `create` or `open` (`pool`: the server's pool and its connection string,
        for a read-only partition that reads through it instead of `connection`)."""
        self.folder = folder
        self.partition = partition
        self.config = config or EngineConfig()
        self.is_writer = writer
        self._connection = connection
        self._pool = pool
        #: The pool's connections this partition has lent out now (`interrupt`).
        self._lent: set[psycopg.Connection] = set()
        self._lent_lock = threading.Lock()
        self._sql = writes.Statements(partition.schema)
        self._open_transaction: writes.PostgresTransaction | None = None
        self.location = f"{partition.server} schema {partition.schema}"

    # ---- opening ------------------------------------------------------------------

    @classmethod
    def claims(cls, path: str | os.PathLike[str]) -> bool:
        """Whether folder `path` holds a postgres partition's file."""
        return (Path(path) / PARTITION_FILE).is_file()

    @classmethod
    def create(cls, path: str | os.PathLike[str], *, dsn: str | None = None) -> PostgresBackend:
        """Make a new partition for folder `path` (its schema on the server `dsn`, else
        `SESSION_SEARCH_PG_DSN`), opened as the writer."""
        folder = Path(path)
        server = creation_dsn(dsn)
        partition = new_partition_file(server)
        connection = connect(server, autocommit=True)
        try:
            check_database(connection, partition.server)
            migrate(connection, partition.schema, partition.server, create=True)
            with connection.transaction(), connection.cursor() as cursor:
                cursor.executemany(
                    f'INSERT INTO "{partition.schema}".session_search_store (key, value) '
                    "VALUES (%s, %s)",
                    [("backend", BACKEND_NAME), ("format", str(FORMAT_VERSION)),
                     ("partition", partition.partition), ("generation", "0")])
            write_partition_file(folder, partition)
        except BaseException:
            _drop_schema(connection, partition.schema)
            connection.close()
            raise
        return cls(folder, partition, connection, writer=True)

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, writer: bool = False,
             dsn: str | None = None, pooled: bool = False) -> PostgresBackend:
        """Open the partition whose file is in folder `path` (`dsn`: the connection
        string to use instead of the file's; see `connection.connection_string`);
        `pooled`, for a read-only partition, reads through its server's pool (`pool`;
        a writer keeps its own connection whatever it says)."""
        folder = Path(path)
        partition = read_partition_file(folder)
        server = connection_string(partition.server, dsn)
        if pooled and not writer:
            return cls._open_pooled(folder, partition, server)
        try:
            connection = connect(server, autocommit=True)
        except StoreError as error:  # name the partition (its folder is its agent's)
            raise StoreError(f"{folder / PARTITION_FILE}: {error}") from None
        try:
            _check_partition(connection, folder, partition, writer=writer)
        except BaseException:
            connection.close()
            raise
        return cls(folder, partition, connection, writer=writer)

    @classmethod
    def _open_pooled(cls, folder: Path, partition: PartitionFile, server: str
                     ) -> PostgresBackend:
        """A read-only partition reading through the pool of `server`."""
        try:
            pool = acquire_pool(server)
        except StoreError as error:
            raise StoreError(f"{folder / PARTITION_FILE}: {error}") from None
        backend = cls(folder, partition, None, writer=False, pool=(pool, server))
        try:
            backend._read(lambda connection: _check_partition(connection, folder, partition,
                                                              writer=False))
        except BaseException:
            backend.close()
            raise
        return backend

    @classmethod
    def discard(cls, path: str | os.PathLike[str], *, dsn: str | None = None) -> None:
        """Drop the schema of the partition whose file is in folder `path` (what deleting
        the folder cannot do: the rows live on the server). The folder is the caller's."""
        folder = Path(path)
        partition = read_partition_file(folder)
        connection = connect(connection_string(partition.server, dsn), autocommit=True)
        try:
            _drop_schema(connection, partition.schema)
        finally:
            connection.close()

    # ---- writing ------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[writes.PostgresTransaction]:
        """One `BEGIN … COMMIT` transaction; an exception rolls it back."""
        connection = self._writer_connection()
        if self._open_transaction is not None:
            raise UsageError(f"{self.location}: a transaction is already open")
        try:
            with connection.transaction():
                transaction = writes.PostgresTransaction(connection, self._sql, self.config)
                self._open_transaction = transaction
                try:
                    yield transaction
                    transaction.flush()
                    connection.execute(
                        f"UPDATE {self._sql.table('session_search_store')} SET value = "
                        "(value::bigint + 1)::text WHERE key = 'generation'")
                finally:
                    self._open_transaction = None
        except psycopg.Error as error:
            raise StoreError(f"{self.location}: write failed: {_message(error)}") from None

    def commit_generation(self) -> int:
        """How many transactions committed (the `generation` row)."""
        row = self._read(lambda connection: connection.execute(
            f"SELECT value FROM {self._sql.table('session_search_store')} "
            "WHERE key = 'generation'").fetchone())
        return int(row[0]) if row is not None else 0

    def generation_files(self) -> str:
        """Where the count is: the schema's `session_search_store` row."""
        return f"the generation row of {self.location}"

    def _writer_connection(self) -> psycopg.Connection:
        if not self.is_writer or self._connection is None:
            raise UsageError(f"{self.location}: the partition was opened read-only")
        return self._connection

    def reading_connection(self) -> psycopg.Connection:
        """The partition's own connection, for a reader of its rows (tests, plans), after
        writing what an open transaction gathered (`UsageError` for a pooled partition,
        which has none: use `read`)."""
        if self._connection is None:
            raise UsageError(f"{self.location}: a pooled partition lends connections "
                             "one read at a time (read)")
        return self._read(lambda connection: connection)

    def read(self, read: Callable[[psycopg.Connection], Value]) -> Value:
        """`read(connection)` for a reader of the partition's rows (`verify`), after
        writing what an open transaction gathered; the connection is the reader's only
        until `read` returns."""
        return self._read(read)

    def _read(self, read: Callable[[psycopg.Connection], Value]) -> Value:
        """Run `read` on the connection to read with: the partition's own, after writing
        what an open transaction gathered, or one lent by the pool."""
        if self._pool is not None:
            pool, server = self._pool
            return read_pooled(pool, server, read, self._lent, self._lent_lock)
        if self._open_transaction is not None:
            self._open_transaction.flush()
        if self._connection is None:
            raise StoreError(f"{self.location}: the partition is closed")
        return read(self._connection)

    # ---- maintenance --------------------------------------------------------------

    def windows_needing_reconcile(self) -> list[str]:
        """Session ids of the windows that need reconcile (§8.3), in byte order."""
        return self._read(lambda connection: [row[0] for row in connection.execute(
            f"SELECT session_id FROM {self._sql.table('session_transcript_index_state')} "
            f"WHERE {NEEDS_RECONCILE} ORDER BY session_id")])

    def reconcile(self, progress: StepProgress | None = None) -> int:
        """Rebuild every window that needs it, then sweep orphans; return the windows
        rebuilt (`progress(done, total)` first and after each batch)."""
        connection = self._writer_connection()
        rebuilt = reconcile_pending(
            self.windows_needing_reconcile(), self.transaction,
            lambda session_id: writes.rebuild_window(connection, self._sql, session_id),
            progress, RECONCILE_BATCH_EVENTS)
        self.sweep_orphans()
        return rebuilt

    def reconcile_batch(self, pending: Sequence[str], max_events: int,
                        stop: Callable[[], bool]) -> ReconcileBatch:
        """In one transaction, rebuild windows from the front of `pending` that still need
        it, until about `max_events` events were read or `stop()`."""
        connection = self._writer_connection()
        still = (f"SELECT 1 FROM {self._sql.table('session_transcript_index_state')} "
                 f"WHERE session_id = %s AND {NEEDS_RECONCILE}")
        count = (f"SELECT count(*) FROM {self._sql.table('session_transcript_messages')} "
                 "WHERE session_id = %s")
        return reconcile_front(
            pending, max_events, stop, self.transaction,
            lambda session_id: connection.execute(still, (session_id,)).fetchone() is not None,
            lambda session_id: writes.rebuild_window(connection, self._sql, session_id),
            lambda session_id: connection.execute(count, (session_id,)).fetchone()[0])

    def sweep_orphans(self) -> int:
        """Drop the rows and reset the states of windows without events, in one
        transaction; the number of such windows."""
        connection = self._writer_connection()
        with self.transaction():
            return writes.sweep_orphans(connection, self._sql)

    def index_status(self) -> bool:
        """True when any window needs reconcile (the `indexing` flag of §8.4)."""
        return bool(self._read(lambda connection: connection.execute(
            f"SELECT EXISTS (SELECT 1 FROM {self._sql.table('session_transcript_index_state')} "
            f"WHERE {NEEDS_RECONCILE})").fetchone()[0]))

    def rebuild_index(self) -> int:
        """Rebuild every window with events, and sweep orphans, in one transaction
        (`verify --repair`); return the number of windows rebuilt."""
        connection = self._writer_connection()
        with self.transaction():
            windows = [row[0] for row in connection.execute(
                f"SELECT DISTINCT session_id FROM {self._sql.table('transcript_events')} "
                "ORDER BY session_id")]
            for session_id in windows:
                writes.rebuild_window(connection, self._sql, session_id)
            writes.sweep_orphans(connection, self._sql)
        return len(windows)

    def compact(self) -> CompactionOutcome:
        """`VACUUM FULL` of the partition's tables (writer only, outside a transaction):
        the space of deleted rows goes back to the system; reads see the same rows."""
        connection = self._writer_connection()
        if self._open_transaction is not None:
            raise UsageError(f"{self.location}: cannot compact inside a transaction")
        before = self._bytes()
        try:
            for table in TABLES:
                connection.execute(f"VACUUM (FULL, ANALYZE) {self._sql.table(table)}")
        except psycopg.Error as error:
            raise StoreError(f"{self.location}: the compaction (VACUUM FULL) failed: "
                             f"{_message(error)}") from None
        reclaimed = max(before - self._bytes(), 0)
        from engine.transcript.compaction import CompactionOutcome

        return CompactionOutcome(1 if reclaimed else 0, reclaimed, kind="database")

    # ---- searching ----------------------------------------------------------------

    def interrupt(self) -> None:
        """Cancel the statement running on this partition's connection, or on each it
        has lent from its pool (safe from any thread); the search running it fails with
        a `StoreError`."""
        with self._lent_lock:
            connections = [self._connection] if self._connection is not None else []
            connections.extend(self._lent)
        for connection in connections:
            try:
                connection.cancel_safe(timeout=5.0)
            except psycopg.Error:
                pass

    def search(self, request: SearchRequest) -> SearchResult:
        """The store-level search of behaviour.md §5 (`engine.backends.postgres.search`)."""
        checked = check_request(request)
        with self._searching():
            return self._read(lambda connection: run_search(connection, self.partition.schema,
                                                            checked))

    def search_answer(self, request: SearchRequest,
                      rank_bound: float | None = None) -> PartitionAnswer:
        """`search` as a partition of a merged search answers (`AnswersLate`): excerpts
        cut only for the hits the merge keeps (`rank_bound` is not used: the statement's
        `LIMIT` already bounds what is read)."""
        checked = check_request(request)
        with self._searching():
            return self._read(lambda connection: search_answer(
                connection, self.partition.schema, checked))

    @contextmanager
    def _searching(self) -> Iterator[None]:
        """A search's PostgreSQL errors as `StoreError`s naming the partition."""
        try:
            yield
        except psycopg.errors.QueryCanceled:
            raise StoreError(f"{self.location}: the search was interrupted") from None
        except psycopg.Error as error:
            raise StoreError(f"{self.location}: search failed: {_message(error)}") from None

    # ---- reading the transcripts ----------------------------------------------------

    def _select_windows(self, condition: str = "", parameters: tuple = ()) -> list[SessionWindow]:
        columns = ", ".join('"group"' if name == "group" else name for name in WINDOW_COLUMNS)
        rows = self._read(lambda connection: connection.execute(
            f"SELECT {columns} FROM {self._sql.table('session_windows')} {condition} "
            "ORDER BY row_order", parameters).fetchall())
        return [_window_from_row(row) for row in rows]

    def windows(self) -> list[SessionWindow]:
        """Every window, in first-insertion order."""
        return self._select_windows()

    def window(self, session_id: str) -> SessionWindow:
        """One window (UnknownSession if absent)."""
        found = [] if not is_storable(session_id) else self._select_windows(
            "WHERE session_id = %s", (session_id,))
        if not found:
            raise UnknownSession(f"unknown session id {session_id!r}")
        return found[0]

    def windows_of(self, session_key: str) -> list[SessionWindow]:
        """The windows of one session key, in first-insertion order."""
        if not is_storable(session_key):
            return []
        return self._select_windows("WHERE session_key = %s", (session_key,))

    def session_keys(self) -> list[str]:
        """Every session key holding a window, in order of first appearance."""
        return self._read(lambda connection: [row[0] for row in connection.execute(
            f"SELECT session_key FROM {self._sql.table('session_windows')} "
            "GROUP BY session_key ORDER BY min(row_order)")])

    def events(self, session_id: str) -> list[StoredEvent]:
        """Every event of a window in seq order (UnknownSession if the window is absent)."""
        self.window(session_id)
        return self._read(lambda connection: writes.read_events(connection, self._sql,
                                                                session_id))

    def event_count(self, session_id: str) -> int:
        """How many events a window has (UnknownSession if absent)."""
        self.window(session_id)
        return self._read(lambda connection: connection.execute(
            f"SELECT count(*) FROM {self._sql.table('transcript_events')} "
            "WHERE session_id = %s", (session_id,)).fetchone()[0])

    # ---- inspection ---------------------------------------------------------------

    def _bytes(self) -> int:
        return int(self._read(lambda connection: connection.execute(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class AS c "
            "JOIN pg_namespace AS n ON n.oid = c.relnamespace "
            "WHERE n.nspname = %s AND c.relkind = 'r'", (self.partition.schema,)
        ).fetchone()[0]))

    def stats(self) -> dict[str, int]:
        """Counts: agents, sessions, windows, events, messages indexed, bytes (the schema's
        tables with their indexes and TOAST)."""
        def counted(connection: psycopg.Connection) -> tuple[list[str], tuple]:
            keys = [row[0] for row in connection.execute(
                f"SELECT DISTINCT session_key FROM {self._sql.table('session_windows')}")]
            return keys, connection.execute(
                f"SELECT (SELECT count(*) FROM {self._sql.table('session_windows')}), "
                f"(SELECT count(*) FROM {self._sql.table('transcript_events')}), "
                f"(SELECT count(*) FROM {self._sql.table('session_transcript_messages')})"
            ).fetchone()

        keys, counts = self._read(counted)
        return {
            "agents": len({agent_id_of(key) for key in keys} - {None}),
            "sessions": len(keys),
            "windows": counts[0],
            "events": counts[1],
            "messages_indexed": counts[2],
            "bytes": self._bytes(),
        }

    def close(self) -> None:
        """Close the connection, or give the pool back (idempotent)."""
        if self._connection is not None:
            self._connection.close()
        pool, self._pool = self._pool, None
        if pool is not None:
            release_pool(pool[1])


def _message(error: psycopg.Error) -> str:
    """A PostgreSQL error in one line."""
    diagnostic = getattr(error, "diag", None)
    primary = diagnostic.message_primary if diagnostic is not None else None
    if primary:
        return primary
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _check_partition(connection: psycopg.Connection, folder: Path, partition: PartitionFile,
                     *, writer: bool) -> None:
    """Refuse a partition whose schema is not on the server, is another partition's, or
    has a layout this build does not read; a writer migrates an older layout."""
    where = f"{folder / PARTITION_FILE}"
    if not schema_exists(connection, partition.schema):
        raise StoreError(f"{where}: the schema {partition.schema} is not on the server "
                         f"{server_label(partition.server)!r} (dropped, or another server)")
    version = applied_version(connection, partition.schema)
    if version > FORMAT_VERSION:
        raise UnsupportedVersion(f"{where}: schema {partition.schema} has layout version "
                                 f"{version}, newer than this build knows ({FORMAT_VERSION})")
    if version < FORMAT_VERSION:
        if not writer:
            raise UnsupportedVersion(f"{where}: schema {partition.schema} has layout version "
                                     f"{version}; open the store as its writer once (any "
                                     "write command) to migrate it")
        migrate(connection, partition.schema, partition.server)
    row = connection.execute(f'SELECT value FROM "{partition.schema}".session_search_store '
                             "WHERE key = 'partition'").fetchone()
    if row is None or row[0] != partition.partition:
        raise StoreError(f"{where}: the schema {partition.schema} holds partition "
                         f"{row[0] if row else None!r}, not {partition.partition!r}")


def _drop_schema(connection: psycopg.Connection, schema: str) -> None:
    """Drop a schema a failed creation made (ignoring a server that went away)."""
    try:
        if not connection.closed:
            connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    except psycopg.Error:
        pass


def _window_from_row(row: tuple) -> SessionWindow:
    """A `SessionWindow` from a row in `WINDOW_COLUMNS` order."""
    values = dict(zip(WINDOW_COLUMNS, row, strict=True))
    values["extra"] = json.loads(values["extra"])
    return SessionWindow(**values)
