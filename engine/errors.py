"""The exception hierarchy of the engine.

Owns: every exception type the engine raises on purpose, the exit status the
command line maps each one to, and how a JSON syntax error is told (`json_syntax_error`:
its reason and its line and column, as Python's own error says them). Must not touch: message wording of the product's
user-facing strings (those are spelled out where the rule lives, e.g. the query
policy), files, or any other engine module (this module imports nothing from `engine`).

Rule for callers: bad input raises a subclass of `InputError` (exit status 2), misuse
of the command line raises `UsageError` (exit status 2) — among them `StorePathError`,
a store folder the command cannot use (missing, not a store, permission denied) —,
everything else the engine detects raises `EngineError` (exit status 1). The CLI prints `str(error)` and never a
traceback for these.
"""

from __future__ import annotations


class EngineError(Exception):
    """Base class of every error the engine raises deliberately (exit status 1)."""

    exit_status = 1


class UsageError(EngineError):
    """The command line or an API call was used wrongly (exit status 2)."""

    exit_status = 2


class InputError(EngineError):
    """Input data or a query was rejected (exit status 2)."""

    exit_status = 2


class MalformedInput(InputError):
    """A source file could not be imported; names the file, the line and the reason.

    >>> str(MalformedInput("corpus/sessions.jsonl", 3, "expected a JSON object"))
    'corpus/sessions.jsonl:3: expected a JSON object'
    """

    def __init__(self, path: str, line: int | None, reason: str) -> None:
        self.path = path
        self.line = line
        self.reason = reason
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {reason}")


class QueryError(InputError):
    """A search query was rejected; the message is the product's exact wording."""


class UnknownSession(InputError):
    """A session key or session id that the store does not hold."""


class DuplicateImport(InputError):
    """An import would add a session window or event the store already holds."""


class StorePathError(UsageError):
    """The store folder a command was given cannot serve it (exit status 2): missing,
    not a folder, holding no store or another backend's, or not readable or writable
    enough. Names the path and the reason.

    >>> str(StorePathError("/srv/store", "permission denied (import needs write access)"))
    '/srv/store: permission denied (import needs write access)'
    """

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}")


class MissingParentFolder(StorePathError):
    """A new store's folder cannot be made because its parent folder does not exist (the
    caller decides whether to create the parents)."""

    def __init__(self, path: str, parent: str) -> None:
        self.parent = parent
        super().__init__(path, f"parent folder {parent} does not exist")


class StoreError(EngineError):
    """A store could not be created, opened or written."""


class FileSystemError(StoreError):
    """The operating system refused an operation on a store file (a full disk, an I/O
    error, a file size limit): names the file, what was being done and the system's
    reason; `errno` is the system's error number (`errno.ENOSPC`, ...).

    >>> str(FileSystemError("store/LOCK", "write", 28, "No space left on device"))
    'store/LOCK: cannot write: No space left on device'
    """

    def __init__(self, path: str, action: str, errno: int | None, reason: str) -> None:
        self.path = path
        self.action = action
        self.errno = errno
        self.reason = reason
        super().__init__(f"{path}: cannot {action}: {reason}")


class StoreLocked(StoreError):
    """Another writer holds the store's lock file."""


class UnsupportedVersion(StoreError):
    """A store file has a format version this build does not read; names the file."""


class CorruptFile(StoreError):
    """A store file failed its checksum or grammar; names the file and the byte offset.

    >>> str(CorruptFile("store/segment-000001.log", 4096, "CRC mismatch"))
    'store/segment-000001.log: corrupt at byte offset 4096: CRC mismatch'
    """

    def __init__(self, path: str, offset: int, reason: str) -> None:
        self.path = path
        self.offset = offset
        self.reason = reason
        super().__init__(f"{path}: corrupt at byte offset {offset}: {reason}")


def unknown_session(session_id: object) -> UnknownSession:
    """The error of a write to a window the store does not hold (the store's wording).

    >>> str(unknown_session("nope"))
    "unknown session id 'nope'"
    """
    return UnknownSession(f"unknown session id {session_id!r}")


def json_syntax_error(error: ValueError, *, document: bool = False) -> str:
    """What a JSON syntax error (`json.JSONDecodeError`) says and where, as one phrase:
    `... at column C` in a text of one line (a JSON Lines line, a command-line argument),
    `... at line L, column C` in a `document` of many lines. A line is parsed without its
    line end: a line cut short inside a string would otherwise fail on its newline (an
    "invalid control character") or on the line after it (`column 1`), not where Python
    reads the line alone. Python's messages that end in "at" are not given a second one.

    >>> import json
    >>> def reason(text, **options):
    ...     try:
    ...         json.loads(text)
    ...     except json.JSONDecodeError as error:
    ...         return json_syntax_error(error, **options)
    >>> reason('{"query": "caf'), reason('{"a": 1 "b": 2}'), reason('{\\n"a" 1}', document=True)
    ('Unterminated string starting at column 11', "Expecting ',' delimiter at column 9", "Expecting ':' delimiter at line 2, column 5")
    """
    message = getattr(error, "msg", str(error))
    line, column = getattr(error, "lineno", None), getattr(error, "colno", None)
    if column is None:
        return message
    where = f"line {line}, column {column}" if document else f"column {column}"
    return f"{message} {where}" if message.endswith(" at") else f"{message} at {where}"
