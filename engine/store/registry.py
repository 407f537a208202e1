"""Which backends exist, and how a store folder is created for one and reopened.

Owns: the mapping from a backend name to its class and to where its partition sits in
an agent's folder, the default backend of a new store, the rule that a store folder
remembers the backend it was created for, the refusal of the old single-index layout,
and the one place where a command's store path is checked before it is opened
(`open_store`, `open_or_create_store`), so that every command and `serve` refuse a bad
path with the same message. Must not touch: any backend's internals or the partitioned
store's routing (`engine.store.partitioned`); the classes (and the partitioned store)
are imported lazily so that a missing optional dependency only matters when that backend
is chosen, and a command pays only for the backend its store has.

Every store is partitioned: one partition per agent, as OpenClaw keeps one database per
agent (`engine.store.partitioned`), whichever backend the partitions are (a postgres
partition lives on a server, named in its folder: `engine.store.servers`);
`open_backend` and `open_store` return the partitioned store, so every caller gets
partitions. Each backend class provides, for one partition in one folder:
* `create(path) -> Backend`: make a new partition at `path` and open it as writer;
* `open(path, *, writer=False) -> Backend`: open an existing partition;
* `claims(path) -> bool`: whether the folder holds a partition of this backend.

Old stores kept every agent in one index (a `store.meta` of kind `store` with
`transcripts/` at the folder's root, or `session-search.sqlite` there). They are refused
(`UnsupportedVersion`) with a message saying to re-import, instead of being opened as
one partition: one partition holding every agent would score with global statistics,
which is what the partitions exist to avoid, and its agents could not be told apart
from the partitions the store would add next to it.

Store paths, as commands see them (`StorePathError`, exit status 2, `PATH: reason`):

* missing: `no session-search store here`; a file: `not a folder`; an empty folder:
  `no session-search store here (the folder is empty)`; other files only: `folder is not
  empty and holds no store`; another backend's store: `store was created for backend
  'sqlite', not 'reference'`;
* a reader needs read access to the folder and everything in it, a writer (and a new
  store) read and write access: `permission denied (reconcile needs write access)`, naming
  the first entry that lacks it (or `read-only file system (...)`);
* a new store (`open_or_create_store`) is made in an absent or empty folder (or one that
  a creation killed early left holding its `LOCK` only). Its parent
  folder must exist unless `create_parents=True` (`MissingParentFolder`), and the nearest
  existing folder above it must be writable;
* a state folder the real OpenClaw wrote (no root `store.meta`, at least one
  `agents/<agentId>/agent/openclaw-agent.sqlite`): `open_store(..., read_only=True)`
  opens it read-only as a store of SQLite partitions
  (`engine.store.opening.open_openclaw_state`), writing nothing to it; any other
  open refuses it, with `add --read-only --backend sqlite to read it without writing to
  it` for the commands that take `--read-only` (`READ_ONLY_COMMANDS`);
* a store whose root `store.meta` is gone (its `LOCK` and `agents/` are there) is a
  `StoreError` naming the missing file, not a folder holding no store;
* any other `OSError` while opening is a `StoreError` (exit status 1) naming the file.
"""

from __future__ import annotations

import errno
import importlib
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.codec import FILE_KINDS
from engine.errors import (
    FileSystemError,
    MissingParentFolder,
    StoreError,
    StorePathError,
    UnsupportedVersion,
    UsageError,
)

if TYPE_CHECKING:  # loaded when a store is opened, not when the command line starts
    from engine.config import EngineConfig
    from engine.store.layout import PartitionKind
    from engine.store.opened_store import OpenedStore
    from engine.store.partitioned import PartitionedStore

#: name -> "module:Class", in the order they are shown and probed.
BACKEND_CLASSES: dict[str, str] = {
    "reference": "engine.backends.reference.backend:ReferenceBackend",
    "sqlite": "engine.backends.sqlite.backend:SqliteBackend",
    "postgres": "engine.backends.postgres.backend:PostgresBackend",
}

#: name -> the folder of a partition inside `agents/<agentId>/` ("" is that folder).
PARTITION_SUBFOLDERS: dict[str, str] = {
    "reference": "",
    "sqlite": "agent",
    "postgres": "",
}

#: The backends whose partitions keep a transcript log that can be found shorter than
#: what was committed, and can be opened all the same to say so (`open_store`'s
#: `accept_lost_commits`). SQLite's own journal leaves nothing of this kind.
LOST_COMMITS_REPORTED = frozenset({"reference"})

#: The database an old single-index SQLite store kept at its root.
SINGLE_INDEX_DATABASE = "session-search.sqlite"

BACKEND_NAMES: tuple[str, ...] = tuple(BACKEND_CLASSES)

#: The backend of a new store when none is named.
DEFAULT_BACKEND = "reference"

#: The backend of the databases of a state OpenClaw wrote.
OPENCLAW_STATE_BACKEND = "sqlite"

#: The commands that take `--read-only`, and so can open an OpenClaw state.
READ_ONLY_COMMANDS = frozenset({"search", "explain", "stats", "verify"})


def backend_class(name: str) -> type:
    """The class implementing backend `name` (UsageError for an unknown name)."""
    try:
        target = BACKEND_CLASSES[name]
    except KeyError:
        valid = ", ".join(BACKEND_NAMES)
        raise UsageError(f"unknown backend {name!r}; choose one of: {valid}") from None
    module_name, class_name = target.split(":")
    return getattr(importlib.import_module(module_name), class_name)


def partition_kind(name: str, *, dsn: str | None = None,
                   servers: Mapping[str, str] | None = None, **open_options: Any) -> PartitionKind:
    """Backend `name` as the partitions of a store, each opened with `open_options`; for a
    server backend (`engine.store.servers`), `dsn` (default: `use_dsn`'s) is given to
    every partition opened and made, and `servers` names the server of each listed agent's
    new partition (`UsageError` for another backend)."""
    from engine.store.layout import PartitionKind
    from engine.store.servers import server_options

    open_more, create_options, agent_servers = server_options(name, dsn, servers)
    return PartitionKind(name, backend_class(name), PARTITION_SUBFOLDERS[name],
                         tuple(sorted({**open_options, **open_more}.items())), create_options,
                         agent_servers)


def _store_kind(name: str, directory: Path, dsn: str | None, **open_options: Any
                ) -> PartitionKind:
    """`partition_kind` of the store in `directory`, with its agents' servers (a server
    backend's `servers.json`, `engine.store.servers`)."""
    from engine.store.servers import SERVER_BACKENDS, read_servers

    servers = read_servers(directory) if name in SERVER_BACKENDS else None
    return partition_kind(name, dsn=dsn, servers=servers, **open_options)


def discard_server_data(path: str | os.PathLike[str]) -> None:
    """Drop what the store at `path` keeps outside its folder (a postgres store's schemas,
    one per partition), before the folder itself is removed; nothing for a store whose
    backend keeps everything in its folder, or for a folder that holds no store."""
    from engine.store.layout import AGENTS_FOLDER, is_partitioned_store, read_root_meta
    from engine.store.servers import SERVER_BACKENDS, given_dsn

    directory = Path(path)
    if not is_partitioned_store(directory):
        return
    name = read_root_meta(directory).backend
    if name not in SERVER_BACKENDS:
        return
    klass = backend_class(name)
    subfolder = PARTITION_SUBFOLDERS[name]
    for folder in sorted((directory / AGENTS_FOLDER).iterdir()):
        partition = folder / subfolder if subfolder else folder
        if klass.claims(partition):
            klass.discard(partition, dsn=given_dsn())


def single_index_problem(directory: Path) -> str | None:
    """Why `directory` holds no store this build opens although it holds one, or None:
    it is one partition of a store, or a store of the old single-index layout."""
    from engine.store.layout import AGENTS_FOLDER, is_partitioned_store

    for agent_folder in (directory, directory.parent):
        root = agent_folder.parent.parent
        if agent_folder.parent.name == AGENTS_FOLDER and is_partitioned_store(root):
            return (f"{directory}: this is the partition of agent {agent_folder.name!r} of "
                    f"the store {root}; open that store instead")
    meta = directory / "store.meta"
    old_reference = meta.is_file() and meta.read_bytes()[:8] == FILE_KINDS["store"].magic
    if old_reference or (directory / SINGLE_INDEX_DATABASE).is_file():
        return (f"{directory}: this store keeps every agent in one index, a layout this "
                "build no longer opens (each agent is a partition of its own, as in "
                "OpenClaw); re-import its sources into a new store: session-search import "
                "--store NEW SOURCE...")
    return None


def detect_backend(path: str | os.PathLike[str]) -> str:
    """The name of the backend whose store lives at `path` (StoreError if none does;
    `UnsupportedVersion` for a store of the old single-index layout)."""
    directory = Path(path)
    if not directory.is_dir():
        raise StoreError(f"{directory}: no store here (not a directory)")
    name = _claiming_backend(directory)
    if name is None:
        raise StoreError(f"{directory}: no session-search store here")
    return name


def open_backend(
    path: str | os.PathLike[str],
    *,
    backend: str | None = None,
    create: bool = False,
    writer: bool = False,
    config: EngineConfig | None = None,
    dsn: str | None = None,
    expectation: str | None = None,
    servers: Mapping[str, str] | None = None,
) -> PartitionedStore:
    """Open the store at `path`; with `create=True` make it first (for `backend`).

    Opening an existing store with a different `backend` than it was created for is an
    error that names both. (Commands use `open_store`, which checks the path first.)
    `config` is the store's (`EngineConfig`; `background_reconcile` and its budget);
    `dsn` the PostgreSQL server of a postgres store (else `SESSION_SEARCH_PG_DSN`, and
    for an existing store the server its partitions name); `servers`, when a postgres store
    is made, the servers of some of its agents (`engine.store.servers`); `expectation`
    makes a reference store answer as another backend would (`postgres`:
    `ReferenceBackend`'s docstring).
    """
    from engine.store.layout import is_unfinished_creation
    from engine.store.opening import create_partitioned, open_partitioned

    directory = Path(path)
    options = {} if expectation is None else {"expectation": expectation}
    if create:
        name = backend or DEFAULT_BACKEND
        if (directory.exists() and any(directory.iterdir())
                and not is_unfinished_creation(directory)):
            existing = detect_backend(directory)
            if existing != name:
                raise UsageError(
                    f"{directory}: store was created for backend {existing!r}, not {name!r}"
                )
            return open_partitioned(directory, _store_kind(name, directory, dsn, **options),
                                    writer=True, config=config)
        store = create_partitioned(directory, partition_kind(name, dsn=dsn, servers=servers,
                                                             **options), config)
        if servers:
            from engine.store.servers import write_servers

            write_servers(directory, servers)
        return store
    name = detect_backend(directory)
    if backend is not None and backend != name:
        raise UsageError(f"{directory}: store was created for backend {name!r}, not {backend!r}")
    return open_partitioned(directory, _store_kind(name, directory, dsn, **options),
                            writer=writer, config=config)


# ----- opening a command's store ------------------------------------------------------


def open_store(
    path: str | os.PathLike[str],
    command: str,
    *,
    writer: bool = False,
    backend: str | None = None,
    accept_lost_commits: bool = False,
    read_only: bool = False,
    config: EngineConfig | None = None,
    warn: Callable[[str], None] | None = None,
    dsn: str | None = None,
    pooled: bool = False,
) -> PartitionedStore:
    """Open the existing store at `path` for `command` (named in every message).

    `writer=True` opens it as the single writer; `backend` names the backend the store
    must have; `accept_lost_commits` opens partitions whose log lost committed
    transactions (to report or repair them; `verify` and `stats` only) on the backends
    that have such a log (`LOST_COMMITS_REPORTED`; the others have nothing of this kind
    to accept, and open as usual); `read_only=True`
    (never with `writer`) also opens a state OpenClaw wrote, read-only; `config` is the
    store's `EngineConfig`; `warn` is told, one line each, of the folders in `agents/`
    the store does not list, which it ignores (`FolderPartitions.stray_problems`); `dsn`
    is a postgres store's server (`open_backend`); `pooled`, for a long-running reader
    (`serve`), makes a server backend's read-only partitions read through a pool per
    server (`engine.backends.postgres.pool`; the other backends have no connections).
    Refusals are `StorePathError` (see the module docstring).
    """
    if read_only and writer:
        raise UsageError("a store cannot be opened both read-only and as the writer")
    access = "write" if writer else "read"
    with _opening(path, command, access):
        if read_only:
            name, openclaw_state = _readable_store(path, command)
        else:
            name, openclaw_state = _located_backend(path, command, access), False
        if name is None:
            raise StorePathError(str(path), "no session-search store here")
        from engine.store.opening import open_openclaw_state, open_partitioned

        if openclaw_state:
            _require_state_backend(path, backend)
            return open_openclaw_state(Path(path), partition_kind(name))
        _require_backend(path, name, backend)
        options: dict[str, Any] = ({"accept_lost_commits": True}
                                   if accept_lost_commits and name in LOST_COMMITS_REPORTED
                                   else {})
        if pooled and not writer:
            from engine.store.servers import SERVER_BACKENDS

            if name in SERVER_BACKENDS:
                options["pooled"] = True
        return _warned(open_partitioned(Path(path), _store_kind(name, Path(path), dsn, **options),
                                        writer=writer, accept_missing=accept_lost_commits,
                                        config=config), warn)


def _warned(store: PartitionedStore, warn: Callable[[str], None] | None) -> PartitionedStore:
    """`store`, after telling `warn` (when given) of each folder it ignores."""
    if warn is not None:
        for problem in store.space.stray_problems():
            warn(problem.with_advice())
    return store


def open_or_create_store(
    path: str | os.PathLike[str],
    command: str,
    *,
    backend: str | None = None,
    create_parents: bool = False,
    config: EngineConfig | None = None,
    warn: Callable[[str], None] | None = None,
    dsn: str | None = None,
) -> OpenedStore:
    """Open the store at `path` as writer, or make one there for `backend` (default
    `DEFAULT_BACKEND`) when the folder is absent or empty.

    An existing store keeps its backend: naming another one is a `StorePathError` that
    names both. The parent folder of a new store must exist unless `create_parents`.
    `warn` is told of the folders the store ignores, as by `open_store`; `dsn` is a
    postgres store's server (`open_backend`).
    """
    from engine.store.opened_store import OpenedStore  # a writer's value, not a reader's
    from engine.store.opening import create_partitioned, open_partitioned

    with _opening(path, command, "write"):
        existing = _located_backend(path, command, "write", creating=True,
                                    create_parents=create_parents)
        if existing is not None:
            _require_backend(path, existing, backend)
            store = open_partitioned(Path(path), _store_kind(existing, Path(path), dsn),
                                     writer=True, config=config)
            return OpenedStore(_warned(store, warn), existing, created=False)
        name = backend or DEFAULT_BACKEND
        return OpenedStore(create_partitioned(Path(path), partition_kind(name, dsn=dsn), config),
                           name, created=True)


def check_store_folder(path: str | os.PathLike[str], command: str, *,
                       writer: bool = False) -> None:
    """Refuse (`StorePathError`) a `path` that is not an existing, non-empty folder that
    `command` can read (and, with `writer`, write), without asking what store it holds:
    for commands that read a store's files without opening it (`dump`)."""
    access = "write" if writer else "read"
    with _opening(path, command, access):
        _checked_folder(Path(path), str(path), command, access)


def _located_backend(
    path: str | os.PathLike[str],
    command: str,
    access: str,
    *,
    creating: bool = False,
    create_parents: bool = False,
) -> str | None:
    """The backend of the store at `path`, after checking that `command` can use it with
    `access`; None when `creating` and a new store may be made there."""
    directory = Path(path)
    if not _checked_folder(directory, str(path), command, access, creating, create_parents):
        return None
    return _stored_backend(directory, str(path), command)


def _readable_store(path: str | os.PathLike[str], command: str) -> tuple[str, bool]:
    """For a read-only open: the backend of the store at `path`, and whether it is a state
    OpenClaw wrote (then `OPENCLAW_STATE_BACKEND`), after the reader's path checks."""
    directory = Path(path)
    _checked_folder(directory, str(path), command, "read")
    if _claiming_backend(directory) is None and _holds_openclaw_state(directory):
        return OPENCLAW_STATE_BACKEND, True
    return _stored_backend(directory, str(path), command), False


def _stored_backend(directory: Path, shown: str, command: str) -> str:
    """The backend of the store in the non-empty folder `directory` (`StorePathError`
    when it holds none, saying how to read an OpenClaw state when it is one)."""
    name = _claiming_backend(directory)
    if name is not None:
        return name
    if _lost_its_metadata(directory):
        raise StoreError(f"{directory / 'store.meta'}: missing: the folder holds the partitions "
                         "of a session-search store (agents/) and its LOCK, but not its "
                         "metadata; restore the file, or import the sources into a new store")
    if _holds_openclaw_state(directory):
        advice = (f"add --read-only --backend {OPENCLAW_STATE_BACKEND} to read it without "
                  "writing to it" if command in READ_ONLY_COMMANDS else
                  f"{command} does not open it (search, explain, stats and verify read it with "
                  f"--read-only --backend {OPENCLAW_STATE_BACKEND})")
        raise StorePathError(shown, f"an OpenClaw state, not a session-search store; {advice}")
    raise StorePathError(shown, "folder is not empty and holds no store")


def _lost_its_metadata(directory: Path) -> bool:
    """Whether `directory` is a store whose root `store.meta` is gone: it has the root
    `LOCK` every store keeps (a state OpenClaw wrote has none) and an `agents/` folder."""
    from engine.store.layout import AGENTS_FOLDER, LOCK_NAME, META_NAME

    return (not (directory / META_NAME).exists() and (directory / LOCK_NAME).is_file()
            and (directory / AGENTS_FOLDER).is_dir())


def _holds_openclaw_state(directory: Path) -> bool:
    """Whether `directory` is a state OpenClaw wrote (loads the SQLite backend: asked only
    of folders that hold no session-search store)."""
    from engine.store.layout import is_openclaw_state

    return is_openclaw_state(directory, partition_kind(OPENCLAW_STATE_BACKEND))


def _checked_folder(
    directory: Path,
    shown: str,
    command: str,
    access: str,
    creating: bool = False,
    create_parents: bool = False,
) -> bool:
    """Whether `directory` has entries (a store to detect) after the path checks; False
    when `creating` and a new store may be made there (absent or empty)."""
    if not directory.exists():
        if not creating:
            raise StorePathError(shown, "no session-search store here")
        _require_creatable(directory, shown, command, create_parents)
        return False
    if not directory.is_dir():
        raise StorePathError(shown, "not a folder")
    _require_access(directory, shown, command, access)
    from engine.store.layout import is_unfinished_creation

    if any(directory.iterdir()) and not (creating and is_unfinished_creation(directory)):
        return True
    if creating:
        return False
    raise StorePathError(shown, "no session-search store here (the folder is empty)")


def _claiming_backend(directory: Path) -> str | None:
    """The backend of the partitioned store at `directory` (read from its root
    `store.meta`, without importing any backend), or None when it holds no store;
    `UnsupportedVersion` for one partition of a store or the old single-index layout."""
    from engine.store.layout import is_partitioned_store, read_root_meta

    if is_partitioned_store(directory):
        name = read_root_meta(directory).backend
        if name not in BACKEND_CLASSES:
            raise StoreError(f"{directory}: store of an unknown backend {name!r}")
        return name
    problem = single_index_problem(directory)
    if problem is not None:
        raise UnsupportedVersion(problem)
    if (directory / "store.meta").is_file():
        read_root_meta(directory)  # names the damage (CorruptFile)
    return None


def _require_backend(path: str | os.PathLike[str], existing: str, wanted: str | None) -> None:
    if wanted is not None and wanted != existing:
        raise StorePathError(str(path),
                             f"store was created for backend {existing!r}, not {wanted!r}")


def _require_state_backend(path: str | os.PathLike[str], wanted: str | None) -> None:
    if wanted is not None and wanted != OPENCLAW_STATE_BACKEND:
        raise StorePathError(str(path), "an OpenClaw state holds SQLite databases; read it "
                                        f"with --backend {OPENCLAW_STATE_BACKEND}, not {wanted!r}")


def _require_creatable(directory: Path, shown: str, command: str, create_parents: bool) -> None:
    """A new store folder can be made at `directory` (its parent exists or may be made,
    and the nearest existing folder above it is writable)."""
    parent = directory.parent
    if not parent.exists() and not create_parents:
        raise MissingParentFolder(shown, str(parent))
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise StorePathError(shown, f"{parent} is not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise StorePathError(shown, _denied(parent, command, "write", f" to {parent} to create it"))


#: Why a writer refuses a store holding a symbolic link: it would write through it, to a
#: file outside the store (a `LOCK`, a log, a database replaced by a link).
SYMLINK_REFUSAL = ("a symbolic link inside the store ({command} writes only the store's own "
                   "files and will not write through a link); replace it with the file it "
                   "stands for, or remove it")


def _require_access(directory: Path, shown: str, command: str, access: str) -> None:
    """The store folder and everything in it allow `access` ("read" or "write"); a writer
    also refuses a store that holds a symbolic link (`SYMLINK_REFUSAL`)."""
    folder_mode = os.R_OK | os.X_OK | (os.W_OK if access == "write" else 0)
    file_mode = os.R_OK | (os.W_OK if access == "write" else 0)
    if not os.access(directory, folder_mode):
        raise StorePathError(shown, _denied(directory, command, access))
    for entry in _entries_below(directory):
        if access == "write" and entry.is_symlink():
            raise StorePathError(entry.path, SYMLINK_REFUSAL.format(command=command))
        # One system call for an entry that allows the mode (its kind comes from the
        # listing); only a refusal is asked again, the careful way (`access_refused`).
        if os.access(entry.path, folder_mode if entry.is_dir() else file_mode):
            continue
        if access_refused(Path(entry.path), folder_mode, file_mode):
            raise StorePathError(entry.path, _denied(Path(entry.path), command, access))


def access_refused(entry: Path, folder_mode: int, file_mode: int) -> bool:
    """Whether `entry` exists and refuses the mode its kind needs. A live writer removes
    and replaces files while a reader looks (SQLite's `-shm` and `-wal` files, a merged
    index's files): a path that is gone is no permission problem, and one replaced in
    between is asked again, so only a refusal that holds on the file now there counts.

    >>> access_refused(Path("/nonexistent/session-search"), os.R_OK, os.R_OK)
    False
    """
    for _attempt in range(2):
        try:
            mode = folder_mode if entry.is_dir() else file_mode
        except OSError:
            return False
        if os.access(entry, mode):
            return False
        if not os.path.lexists(entry):
            return False
    return True


def _entries_below(directory: str | os.PathLike[str]) -> Iterator[os.DirEntry[str]]:
    """Every file and folder under `directory`, as listed (`os.DirEntry`: its kind known
    without a system call), by name; a folder is given before its contents, which are
    listed only when the caller did not stop at it. A folder a live writer removes while
    it is listed has nothing below it."""
    try:
        with os.scandir(directory) as listing:
            entries = sorted(listing, key=lambda entry: entry.name)
    except (FileNotFoundError, NotADirectoryError):
        return
    for entry in entries:
        yield entry
        if entry.is_dir(follow_symlinks=False):
            yield from _entries_below(entry.path)


def _denied(path: Path, command: str, access: str, where: str = "") -> str:
    """`permission denied (import needs write access)`, or `read-only file system (...)`."""
    reason = "permission denied"
    if access == "write":
        try:
            if os.statvfs(path).f_flag & os.ST_RDONLY:
                reason = "read-only file system"
        except OSError:
            pass
    return f"{reason} ({command} needs {access} access{where})"


@contextmanager
def _opening(path: str | os.PathLike[str], command: str, access: str) -> Iterator[None]:
    """Turn an `OSError` met while opening into one line naming the file: permission
    problems are the user's path (`StorePathError`), anything else a `StoreError`."""
    try:
        yield
    except FileSystemError as error:
        if error.errno not in (errno.EACCES, errno.EPERM):
            raise
        raise StorePathError(error.path, _denied(Path(error.path), command, access)) from None
    except PermissionError as error:
        where = error.filename if error.filename is not None else path
        raise StorePathError(str(where), _denied(Path(where), command, access)) from None
    except OSError as error:
        where = error.filename if error.filename is not None else path
        raise StoreError(f"{where}: {error.strerror or error}") from None
