"""How a connection to a SQLite database is opened: the pragmas, the writer, the reader.

Owns: making a new database file whole or not at all (`create_database`), the pragmas of
its connections, how a connection is opened (writer, reader, reader that must not create
a file: `ReadConnection`), and the `-wal` file beside a database. Must not touch: the
layout it writes or reads (`schema`), how SQLite's errors are classified (`refusals`),
what a write or a search does with the tables (`writes`, `search`).

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
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from engine.backends.sqlite.schema import (
    OWN,
    OWN_TABLES,
    UPSTREAM_TABLES,
    Layout,
    ensure_own_indexes,
    read_layout,
    store_rows,
)
from engine.codec.sqlite_header import HEADER_LENGTH, claimed_size
from engine.errors import CorruptFile, StoreError, UsageError
from engine.file_system import sync_folder

STATEMENT_CACHE_SIZE = 512
BUSY_TIMEOUT_MILLISECONDS = 5000

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
        connection.executescript("BEGIN;" + UPSTREAM_TABLES + OWN_TABLES + store_rows() + "COMMIT;")
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
    store serializes every use of it with its lock (`engine.store.background`)."""
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
        """Open `path` read-only (CorruptFile when it is no database of a known layout,
        or is shorter than its header says: `check_whole`)."""
        check_whole(path)
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


def check_whole(path: Path) -> None:
    """CorruptFile naming `path` when the database file is shorter than its header says
    (cut short: SQLite would answer without the rows of the missing pages). Not while a
    write-ahead log holds frames: then the newest pages (and the size) are the log's, and
    a checkpoint that a full disk cut short is finished from it."""
    try:
        if write_ahead_log(path).stat().st_size > 0:
            return
    except OSError:
        pass  # no log: the file alone is the database
    try:
        with open(path, "rb") as file:
            header = file.read(HEADER_LENGTH)
            size = os.fstat(file.fileno()).st_size
    except OSError:
        return  # the open that follows names what the system refused
    claimed = claimed_size(header)
    if claimed is not None and size < claimed:
        raise CorruptFile(str(path), size, f"the database is cut short: its header says "
                          f"{claimed} bytes, the file holds {size}")


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
