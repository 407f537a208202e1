"""Where a partitioned store's partitions live: the folder layout, the root's metadata,
and the making and removal of partition folders.

Owns: the layout of a store folder (`FolderPartitions`) and of a state folder OpenClaw
wrote (`OpenClawStatePartitions`), a backend as a partition (`PartitionKind`,
`PartitionClass`), the root's `store.meta` (read and rewritten here, its bytes are
`engine.codec.meta_file`'s), the creation of a store's root, the creation and removal
of a partition's folder, and what a folder holds (`is_openclaw_state`,
`is_unfinished_creation`, `is_partitioned_store`). Must not touch: how a partition
stores, indexes, scores or searches (each partition is a whole backend, made and opened
by its class), which partition a write, a read or a search goes to (the store's
routing: `engine.store.partitioned`, `engine.store.transaction`,
`engine.store.fan_out`), which key belongs to which agent
(`engine.model.owner_agent_id`).

Why apart. Each agent's partition is a folder of its own (why a store has one partition
per agent: `engine.store.partitioned`). What `agents/` holds and what the root lists are
the only state the partitions share on disk, and they change only here, so the rules
below (a reader sees a whole partition or none, a listed agent always has its folder)
are kept in one place; and the registry checks a store path with these names and tests
without loading the store.

Layout of a store folder (`FolderPartitions`)::

    store.meta                    kind `partitioned`: the backend of the partitions
                                  and the agents that have one
    LOCK                          the writer's lock (one writer for the whole store)
    commit.journal                a transaction across agents, from just before its
                                  first partition commits until its last one did
                                  (`engine.store.commit_journal`)
    generations                   each partition's commit count after the store's last
                                  commit to it (`engine.store.witness`)
    servers.json                  a postgres store's servers by agent, when its agents live
                                  on several servers (`engine.store.registry.read_servers`)
    agents/<agentId>/             one partition per agent: a reference store (its own
                                  store.meta, transcripts/, index/, LOCK), or
    agents/<agentId>/agent/openclaw-agent.sqlite      a SQLite one (upstream's path)
    agents/<agentId>/postgres.json                    a PostgreSQL one: its server and
                                                      schema (`engine.backends.postgres`)
    new-partition/                a partition being made (see "Creating a partition")

An agent id names a folder, so it must be one safe path component
(`engine.model.agent_id_problem`): a window whose key's agent id is `..`, holds `/`, `\\`
or NUL is refused at `put_window` (`engine.store.transaction`) with that message, and
nothing is written.

Creating a partition. The first write for an agent without a partition makes one: it is
created empty in `new-partition/`, closed, renamed to `agents/<agentId>` (so a reader
listing `agents/` sees a whole partition or none) and opened as the writer. If the
transaction that made it does not commit, the partition is removed again: renamed to
`removed-partition/` and deleted there (so it leaves `agents/` whole too); a crash before
that leaves it empty, which is what a reader sees of it anyway. A writer opening the
store clears both folders. So every folder in `agents/` is a whole partition, and one
that holds no partition of the store's backend (its `store.meta` or database damaged
or deleted) is an error naming it, never an agent left out in silence.

A deleted partition. The root's `store.meta` lists every agent with a partition: a
creation lists the agent after the folder's rename, a removal unlists it before the
folder goes, so a listed agent always has its folder. An open that finds a listed
agent's folder gone refuses the store, naming the folder (its sessions would otherwise
vanish from every search without a word); `verify` and `stats` open it anyway
(`accept_missing`) to report it, and `verify --repair` drops the agent from the list.

A stray folder. A folder in `agents/` that the root does not list is never used: no
read, count, verification or write touches it, and every command that reports a store's
problems (`stats`, `verify`, and the warning line of the other commands) names it. The
store itself leaves one only when a creation or removal is cut short between its rename
and the root's rewrite, and then the partition is empty (a partition is listed before
the transaction that made it commits, and unlisted before it goes): a later creation of
that agent removes such an empty leftover and goes on. Anything else (a folder copied in
by hand, a partition from another store) is adopted only explicitly: `verify --repair`
lists it, saying so, and verifies it with the others.

Creating a store (`FolderPartitions.create`) either makes the whole root (`store.meta`,
`LOCK`, `agents/`) or, when the system refuses a step (a full disk), removes what it
made, so a failed creation leaves the folder as it was. A creation killed before
`store.meta` was written leaves the `LOCK` alone (`is_unfinished_creation`): the next
creation goes on there as in an empty folder.

An OpenClaw state (`OpenClawStatePartitions`, opened by
`engine.store.opening.open_openclaw_state`). A state folder the real OpenClaw wrote
has the same `agents/<agentId>/agent/openclaw-agent.sqlite` files but no root
`store.meta` and no `LOCK`, and holds files of OpenClaw's own beside them
(`openclaw.json`, ...). It opens read-only as a partitioned store of SQLite partitions,
one per agent database found, each opened by its class's `open(folder, writer=False)`
(SQLite's `open_file(<folder>/openclaw-agent.sqlite, writer=False)`): no lock taken, no
root metadata read or written, no folder cleared, nothing created, so not a byte of the
state changes. A writer, a transaction or a new partition is refused with a
`StoreError` naming the state folder.
"""

from __future__ import annotations

import os
import stat
import time
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from engine.backends.protocol import Backend, Refreshable
from engine.codec.meta_file import RootMeta, decode_root_meta_file, encode_root_meta_file
from engine.directory import TEMPORARY_PREFIX, FileDirectory, LockHandle, sync_folder
from engine.errors import CorruptFile, EngineError, StoreError, StoreLocked

if TYPE_CHECKING:  # imported when used: a search never needs it (the transcript layer's
    # modules define value classes a search never makes, and each class costs start-up
    # time: see `engine.cli.commands`)
    from engine.transcript.store_problem import StoreProblem

META_NAME = "store.meta"
LOCK_NAME = "LOCK"
AGENTS_FOLDER = "agents"
NEW_PARTITION_FOLDER = "new-partition"
REMOVED_PARTITION_FOLDER = "removed-partition"
JOURNAL_NAME = "commit.journal"
WITNESS_NAME = "generations"


class PartitionClass(Protocol):
    """What a backend class offers the partitioned store (both backends have it)."""

    def create(self, path: str | os.PathLike[str], **options: Any) -> Backend:
        """A new partition in folder `path`, opened as the writer (`options`: the kind's
        `create_options`)."""
        ...

    def open(self, path: str | os.PathLike[str], *, writer: bool = False,
             **options: Any) -> Backend:
        """The partition in folder `path` (`options`: the kind's `open_options`)."""
        ...

    def claims(self, path: str | os.PathLike[str]) -> bool:
        """Whether folder `path` holds a partition of this backend."""
        ...


class PartitionKind(NamedTuple):
    """One backend as a partition: its name, its class, and where in an agent's folder it
    lives (`subfolder` "" is the agent's folder itself). A NamedTuple, not a frozen
    dataclass: every store command imports this module, and its class is made in a
    fraction of a dataclass's time."""

    backend: str
    backend_class: PartitionClass
    subfolder: str = ""
    #: Keyword arguments every partition is opened with (`accept_lost_commits` for a
    #: reference store that `verify` and `stats` open to report what is lost; `dsn` for
    #: a postgres store opened on a given server).
    open_options: tuple[tuple[str, Any], ...] = ()
    #: Keyword arguments every new partition is made with (`dsn`: a postgres store's server).
    create_options: tuple[tuple[str, Any], ...] = ()
    #: A server backend's servers by agent: a new partition of an agent listed here is
    #: made with `dsn` set to its server (a store whose agents live on several servers).
    agent_servers: tuple[tuple[str, str], ...] = ()

    def options_to_create(self, agent_id: str) -> dict[str, Any]:
        """The keyword arguments `agent_id`'s new partition is made with.

        >>> kind = PartitionKind("postgres", object, "", (), (("dsn", "a"),), (("ops", "b"),))
        >>> kind.options_to_create("ops"), kind.options_to_create("main")
        ({'dsn': 'b'}, {'dsn': 'a'})
        """
        options = dict(self.create_options)
        server = dict(self.agent_servers).get(agent_id)
        if server is not None:
            options["dsn"] = server
        return options

    @property
    def reads_snapshots(self) -> bool:
        """Whether its readers see the commits of their open until they refresh."""
        return isinstance(self.backend_class, type) and issubclass(self.backend_class, Refreshable)


#: How old (in nanoseconds) the `agents/` folder's modification time must be before a
#: listing made at that time is reused (`FolderPartitions.agents`).
SETTLED_NANOSECONDS = 2_000_000_000


class FolderPartitions:
    """The partitions of a store folder: `agents/<agentId>/`, plus the root's metadata and
    the writer's lock (see the module docstring for the layout)."""

    def __init__(self, root: Path, kind: PartitionKind, lock: LockHandle | None,
                 meta: RootMeta | None = None, missing: tuple[str, ...] = ()) -> None:
        """Use `create` or `open`. `meta` is the root's metadata (None for a folder
        without one: an OpenClaw state); `missing`, the agents it lists whose folder is
        gone (only when opened with `accept_missing`)."""
        self.root = root
        self.kind = kind
        self.lock = lock
        self.meta = meta
        self.missing = missing
        #: Opened to report damage rather than refuse it (`verify`, `stats`).
        self.reports_damage = False
        #: The last listing of `agents/`: (the folder's inode and mtime, the agents), kept
        #: only when the time was settled when it was made (`agents`).
        self._listed: tuple[tuple[int, int], list[str]] | None = None

    @classmethod
    def create(cls, root: Path, kind: PartitionKind) -> FolderPartitions:
        """Make an empty store in folder `root` (created if missing) and hold its lock;
        when a step fails, what was made is removed again (see the module docstring)."""
        directory = FileDirectory(root)
        existed = root.exists()
        try:
            lock = directory.acquire_lock(LOCK_NAME)
        except StoreLocked:
            raise
        except BaseException:
            _undo_creation(root, existed, lock_made=False)
            raise
        try:
            if directory.exists(META_NAME):
                raise StoreError(f"{directory.location(META_NAME)}: a store already exists here")
        except BaseException:
            lock.release()
            raise
        try:
            from engine.transcript.clock import now_milliseconds

            meta = RootMeta(kind.backend, now_milliseconds())
            directory.write_atomic(META_NAME, encode_root_meta_file(meta))
            agents = root / AGENTS_FOLDER
            try:
                agents.mkdir(exist_ok=True)
            except OSError as error:
                raise StoreError(f"{agents}: cannot create the folder: "
                                 f"{error.strerror or error}") from None
            sync_folder(root)
        except BaseException:
            lock.release()
            _undo_creation(root, existed, lock_made=True)
            raise
        return cls(root, kind, lock, meta)

    @classmethod
    def open(cls, root: Path, kind: PartitionKind, *, writer: bool,
             accept_missing: bool = False) -> FolderPartitions:
        """Open the store in folder `root`; a writer takes the lock and clears what an
        interrupted partition creation left in `new-partition/` and `removed-partition/`
        (a folder the root does not list stays a stray: `strays`).

        An agent the root lists whose folder is gone is a `StoreError` naming the folder,
        unless `accept_missing` (`verify`, `stats`: they report it; `missing`)."""
        meta = read_root_meta(root)
        if meta.backend != kind.backend:
            raise StoreError(f"{root / META_NAME}: store was created for backend "
                             f"{meta.backend!r}, not {kind.backend!r}")
        lock = FileDirectory(root).acquire_lock(LOCK_NAME) if writer else None
        try:
            if writer:
                remove_tree(root / NEW_PARTITION_FOLDER, ignore_errors=True)
                remove_tree(root / REMOVED_PARTITION_FOLDER, ignore_errors=True)
            meta, missing = _listed_and_missing(root, meta)
            space = cls(root, kind, lock, meta, missing)
            space.reports_damage = accept_missing
            if missing and not accept_missing:
                raise StoreError(space.missing_problems()[0].with_advice())
        except BaseException:
            if lock is not None:
                lock.release()
            raise
        return space

    def missing_problems(self) -> list[StoreProblem]:
        """One problem for each agent the root lists whose partition folder is gone."""
        from engine.transcript.store_problem import StoreProblem

        return [StoreProblem(
            str(self.root / AGENTS_FOLDER / agent_id),
            f"{self.root / AGENTS_FOLDER / agent_id}: the partition of agent {agent_id!r} is "
            f"missing (the store's {META_NAME} lists it): its sessions are lost",
            advice="restore the folder from a backup, or run `session-search verify --repair` "
                   "to drop the agent from the store")
            for agent_id in self.missing]

    def write_meta(self, meta: RootMeta) -> None:
        """Replace the root's metadata, atomically (writer only)."""
        FileDirectory(self.root).write_atomic(META_NAME, encode_root_meta_file(meta))
        self.meta = meta

    def stray_problems(self) -> list[StoreProblem]:
        """One problem for each folder in `agents/` the root does not list (ignored)."""
        strays = self.strays()
        if not strays:
            return []
        from engine.transcript.store_problem import StoreProblem

        return [StoreProblem(
            str(self.root / AGENTS_FOLDER / agent_id),
            f"{self.root / AGENTS_FOLDER / agent_id}: a folder the store does not list "
            f"(its {META_NAME} has no agent {agent_id!r}): ignored, never searched, counted "
            "or written",
            advice="run `session-search verify --repair` to adopt it as the partition of "
                   f"agent {agent_id!r}, or remove the folder")
            for agent_id in strays]

    def adopt_strays(self) -> tuple[str, ...]:
        """List every stray folder's agent in the root (writer only: `verify --repair`,
        the explicit adoption); return them."""
        adopted = tuple(self.strays())
        if adopted and self.meta is not None:
            self.write_meta(self.meta.with_agents(set(self.meta.agents) | set(adopted)))
            self._listed = None
        return adopted

    def forget_missing(self) -> tuple[str, ...]:
        """Drop the missing agents from the root's list (writer only: `verify --repair`);
        return them."""
        forgotten = self.missing
        if forgotten and self.meta is not None:
            self.write_meta(self.meta.with_agents(set(self.meta.agents) - set(forgotten)))
        self.missing = ()
        return forgotten

    def location(self, agent_id: str) -> str:
        """The folder of `agent_id`'s partition, for messages."""
        return str(self.partition_folder(self.root / AGENTS_FOLDER / agent_id))

    def partition_folder(self, agent_folder: Path) -> Path:
        """Where the backend's files are inside an agent's folder."""
        return agent_folder / self.kind.subfolder if self.kind.subfolder else agent_folder

    def agents(self) -> list[str]:
        """The agents that have a partition, sorted: every folder in `agents/` the root
        lists (each is a whole partition, see the module docstring; opening one that is
        damaged names the file). A folder it does not list is a stray (`strays`); when a
        new listing shows one, a reader reads the root again first, since a writer
        elsewhere may have listed it since (a kept listing reads nothing again)."""
        folders, fresh = self._folders()
        if self.meta is None:
            return folders
        if fresh and self.lock is None and not set(folders) <= set(self.meta.agents):
            try:
                self.meta = read_root_meta(self.root)
            except (CorruptFile, StoreError):
                pass  # the open read it; a reader keeps what it read
        return [agent_id for agent_id in folders if agent_id in self.meta.agents]

    def strays(self) -> list[str]:
        """The folders in `agents/` the root does not list, sorted (none without a root)."""
        if self.meta is None:
            return []
        listed = set(self.agents())
        return [agent_id for agent_id in self._folders()[0] if agent_id not in listed]

    def _folders(self) -> tuple[list[str], bool]:
        """Every folder in `agents/`, sorted, and whether it was listed just now.

        A reader asks before every read, so the listing is kept while `agents/` keeps its
        inode and modification time: a partition appears and goes only by a rename or a
        removal in that folder, which sets its time. A listing is kept only when the
        folder's time was at least `SETTLED_NANOSECONDS` old when it was made: a change
        in the same clock tick as a listing would leave the time equal (file systems
        with coarse times have ticks of up to 2 s), so a listing made so soon after a
        change is made again at the next call.
        """
        folder = self.root / AGENTS_FOLDER
        try:
            status = os.stat(folder)
        except (FileNotFoundError, NotADirectoryError):
            return [], False
        if not stat.S_ISDIR(status.st_mode):
            return [], False
        stamp = (status.st_ino, status.st_mtime_ns)
        listed = self._listed
        if listed is not None and listed[0] == stamp:
            return list(listed[1]), False
        settled = time.time_ns() - status.st_mtime_ns > SETTLED_NANOSECONDS
        folders = sorted(child.name for child in folder.iterdir() if child.is_dir())
        self._listed = (stamp, folders) if settled else None
        return list(folders), True

    def open_partition(self, agent_id: str, *, writer: bool) -> Backend:
        """Open `agent_id`'s partition."""
        return self.kind.backend_class.open(self.location(agent_id), writer=writer,
                                            **dict(self.kind.open_options))

    def create_partition(self, agent_id: str) -> Backend:
        """Make `agent_id`'s partition, empty, and open it as the writer (writer only).

        Made in `new-partition/`, closed and renamed into `agents/`, so that it appears
        whole."""
        staging = self.root / NEW_PARTITION_FOLDER
        target = self.root / AGENTS_FOLDER / agent_id
        if target.exists() or target.is_symlink():
            self._clear_leftover(agent_id, target)
        renamed = False
        try:
            remove_tree(staging, ignore_errors=True)
            self.kind.backend_class.create(self.partition_folder(staging),
                                          **self.kind.options_to_create(agent_id)).close()
            staging.rename(target)
            renamed = True
            sync_folder(target.parent)
            sync_folder(self.root)
            if self.meta is not None:
                self.write_meta(self.meta.with_agents(set(self.meta.agents) | {agent_id}))
        except (OSError, StoreError) as error:
            remove_tree(target if renamed else staging, ignore_errors=True)
            reason = error.strerror or error if isinstance(error, OSError) else error
            raise StoreError(f"{target}: cannot create the partition of agent "
                             f"{agent_id!r}: {reason}") from None
        return self.open_partition(agent_id, writer=True)

    def _clear_leftover(self, agent_id: str, target: Path) -> None:
        """Remove the unlisted folder in the way of `agent_id`'s new partition when it is
        what a cut-short creation or removal leaves (an empty partition of this store's
        backend); refuse anything else, naming it (a stray is adopted only explicitly)."""
        empty = False
        if target.is_dir() and not target.is_symlink():
            try:
                leftover = self.kind.backend_class.open(self.location(agent_id), writer=False,
                                                        **dict(self.kind.open_options))
            except (EngineError, OSError, ValueError):
                leftover = None
            if leftover is not None:
                try:
                    empty = not leftover.windows()
                finally:
                    leftover.close()
        if not empty:
            raise StoreError(
                f"{target}: a folder the store does not list is where agent {agent_id!r}'s "
                "partition would be made; nothing was written. Run `session-search verify "
                "--repair` to adopt it, or remove the folder")
        remove_tree(target, ignore_errors=False)

    def remove_partition(self, agent_id: str, partition: Backend) -> None:
        """Close and delete a partition made by a transaction that did not commit: moved
        out of `agents/` in one rename, then deleted (see the module docstring). Its
        close may fail (a full disk refusing its index files): nothing it would save
        matters, the files go. If the rename fails the empty partition stays, as a
        crash would leave it."""
        try:
            partition.close()
        except StoreError:
            pass  # the partition's files are deleted next
        try:
            if self.meta is not None:  # unlisted first: a listed folder must exist
                self.write_meta(self.meta.with_agents(set(self.meta.agents) - {agent_id}))
        except (OSError, StoreError):
            return
        removed = self.root / REMOVED_PARTITION_FOLDER
        remove_tree(removed, ignore_errors=True)
        try:
            (self.root / AGENTS_FOLDER / agent_id).rename(removed)
            sync_folder(self.root / AGENTS_FOLDER)
        except (OSError, StoreError):
            return
        remove_tree(removed, ignore_errors=True)

    def close(self) -> None:
        """Release the writer's lock."""
        if self.lock is not None:
            self.lock.release()
            self.lock = None

    def read_only_reason(self) -> str:
        """Why a transaction on a reader of this folder is refused."""
        return "this store was opened read-only; open it with writer=True"


class OpenClawStatePartitions(FolderPartitions):
    """The agent databases of a state folder OpenClaw wrote, read-only: no root metadata,
    no lock, nothing created or removed (see the module docstring)."""

    def __init__(self, root: Path, kind: PartitionKind) -> None:
        """Use `open_openclaw_state`."""
        super().__init__(root, kind, lock=None)

    def read_only_reason(self) -> str:
        """Why every write is refused."""
        return (f"{self.root}: an OpenClaw state, opened read-only; session-search never "
                "writes to it")

    def agents(self) -> list[str]:
        """The agents whose folder holds a database, sorted (an agent of an OpenClaw
        state may have none yet)."""
        folder = self.root / AGENTS_FOLDER
        if not folder.is_dir():
            return []
        return sorted(child.name for child in folder.iterdir()
                      if child.is_dir() and self.kind.backend_class.claims(
                          self.partition_folder(child)))

    def open_partition(self, agent_id: str, *, writer: bool) -> Backend:
        """Open `agent_id`'s database read-only (`writer=True` is refused)."""
        if writer:
            raise StoreError(self.read_only_reason())
        return self.kind.backend_class.open(self.location(agent_id), writer=False)

    def create_partition(self, agent_id: str) -> Backend:
        """Refused: nothing is created in an OpenClaw state."""
        raise StoreError(self.read_only_reason())

    def remove_partition(self, agent_id: str, partition: Backend) -> None:
        """Refused: nothing is removed from an OpenClaw state."""
        raise StoreError(self.read_only_reason())


def remove_tree(path: Path, *, ignore_errors: bool) -> None:
    """`shutil.rmtree` (imported here: it pulls in the compression modules, and only a
    writer removes folders, never a search)."""
    import shutil

    shutil.rmtree(path, ignore_errors=ignore_errors)


def _undo_creation(root: Path, existed: bool, *, lock_made: bool) -> None:
    """Remove what a failed `FolderPartitions.create` made in `root`: its metadata, its
    `agents/` folder and its lock file (when this call made it: `lock_made`, or an
    empty one), and the folder itself when it did not exist before and is now empty."""
    for name in (META_NAME, LOCK_NAME):
        path = root / name
        with suppress(OSError):
            if name == META_NAME or lock_made or path.stat().st_size == 0:
                path.unlink()
    for folder in ((root / AGENTS_FOLDER, root) if not existed else (root / AGENTS_FOLDER,)):
        with suppress(OSError):
            folder.rmdir()


def read_root_meta(root: Path) -> RootMeta:
    """The root `store.meta` of a partitioned store (StoreError when there is none)."""
    path = root / META_NAME
    try:
        data = path.read_bytes()
    except OSError:
        raise StoreError(f"{path}: no store here (missing metadata)") from None
    return decode_root_meta_file(data, str(path))


def _listed_and_missing(root: Path, meta: RootMeta) -> tuple[RootMeta, tuple[str, ...]]:
    """The root's metadata (`meta`, as read) and the agents it lists without a folder in
    `agents/`. A mismatch reads the metadata again: a writer removing a partition unlists
    it before the folder goes, so a reader that read the list just before sees the new
    list on the second read."""
    for attempt in range(2):
        missing = tuple(agent_id for agent_id in meta.agents
                        if not (root / AGENTS_FOLDER / agent_id).is_dir())
        if not missing or attempt:
            break
        meta = read_root_meta(root)
    return meta, missing


def is_openclaw_state(root: Path, kind: PartitionKind) -> bool:
    """Whether folder `root` is a state OpenClaw wrote: no root `store.meta`, and at least
    one agent database of `kind` (the SQLite partition) under `agents/`."""
    return not (root / META_NAME).exists() and bool(OpenClawStatePartitions(root, kind).agents())


def is_unfinished_creation(root: Path) -> bool:
    """Whether folder `root` holds only what a store's creation killed before it wrote
    `store.meta` leaves: its `LOCK` and perhaps the metadata's temporary file. A new
    store may be made there as in an empty folder (the lock is taken again first)."""
    names = [entry.name for entry in root.iterdir()]
    return LOCK_NAME in names and all(
        name == LOCK_NAME or name.startswith(TEMPORARY_PREFIX + META_NAME) for name in names)


def is_partitioned_store(root: Path) -> bool:
    """Whether folder `root` holds a partitioned store (its root `store.meta` decodes)."""
    try:
        read_root_meta(root)
    except (CorruptFile, StoreError):
        return False
    return True
