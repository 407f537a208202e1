"""What an error SQLite raised means: damage to the file, or the system refusing a read.

Owns: the classification of SQLite's errors (and of a row that no longer decodes) into
the engine's errors: `CorruptFile` for a damaged database (`is_damage`), `FileSystemError`
for a read the system refused (`is_system_refusal`, `read_refused`: an I/O error is not
corruption), `StoreError` for anything else (a busy database is not called damaged);
`damage_reported` applies the rule around a block, `reported_error` to an error caught.
Must not touch: how a connection is opened (`connection`), the layout (`schema`), what a
caller does after the error (retry, report).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from engine.errors import CorruptFile, FileSystemError, StoreError

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
