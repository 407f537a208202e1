"""A store that is an OpenClaw state: one partition per agent, each a backend of its own.

Owns: the partitioned store (`PartitionedStore`, and `PartitionedSnapshotStore` over
partitions that read a snapshot and can explain), its folder layout (`FolderPartitions`),
and routing: which partition a write, a read or a search goes to, transactions across
partitions, the merge of partition answers, the summed counts. Must not touch: how a
partition stores, indexes, scores or searches (each partition is a whole backend:
`ReferenceBackend` or `SqliteBackend`, unchanged), the merge rule itself
(`engine.search.merge`), which key belongs to which agent (`engine.model.owner_agent_id`).

Why. OpenClaw keeps one database per agent, so bm25's N, document frequencies and
average length are per agent; a search across agents queries each agent's database and
merges the answers by score (behaviour.md §5.4, §6 step 5). One index holding every
agent would score with global statistics and order hits differently. So every agent's
windows, transcript events and index form one partition with its own statistics, and
`global` and `unknown` windows belong to the partition of the default agent `main`
(`engine.model`'s docstring says where that was read in OpenClaw).

Layout of a store folder (`FolderPartitions`)::

    store.meta                    kind `partitioned`: the backend of the partitions
                                  and the agents that have one
    LOCK                          the writer's lock (one writer for the whole store)
    agents/<agentId>/             one partition per agent: a reference store (its own
                                  store.meta, transcripts/, index/, LOCK), or
    agents/<agentId>/agent/openclaw-agent.sqlite      a SQLite one (upstream's path)
    new-partition/                a partition being made (see "Creating a partition")

An agent id names a folder, so it must be one safe path component
(`engine.model.agent_id_problem`): a window whose key's agent id is `..`, holds `/`, `\\`
or NUL is refused at `put_window` with that message, and nothing is written.

Writes are routed by the agent of the window's key (`owner_agent_id`); an append or a
transcript replacement goes to the partition holding its window. A session id names one window in the whole store, so
putting a window of one agent under a key of another agent is refused (in OpenClaw the
two would be rows of different databases). A transaction across agents opens one
partition transaction per agent lazily, at the first write for that agent, and only
after the `with` block succeeded commits them one by one in agent order; an exception
anywhere in the block (a validation error included) rolls every one of them back, so
nothing is written. A crash, or a failed commit, between two partitions' commits leaves
the earlier ones committed and the later ones not, as OpenClaw's separate databases can;
each partition on its own stays all-or-nothing.

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

Reads. `windows()` and `session_keys()` are the partitions' answers in agent order (each
partition in its own first-insertion order); `window`, `events` and `event_count` find
the window's partition (a map from session id to agent, built on first use);
`windows_of(key)` asks the key's partition. Partitions over SQLite read the latest commit
(no `Refreshable`), so the store looks for new partitions before each read; a reference
partition reads the snapshot taken when it was opened, and `refresh()` (of
`PartitionedSnapshotStore`) sees new commits and new partitions. A writer opens every
partition at once; a reader lists them and opens each when a read first needs it, so a
search scoped to one agent (a fresh `search --agent`) opens that agent's partition only.

Search (`search`), after the query is validated as every backend validates it:
* with an agent (`session_keys=None`): that agent's partition answers alone, exactly as
  one FTS5 database would (the default agent `main` when `agent_id` is None); an agent
  without a partition answers `{hits: [], truncated: false, indexing: false}` and nothing
  is created, as upstream's missing database does; an agent id that cannot be a folder
  name is refused (`InputError`);
* with explicit session keys: each partition owning one of the keys is asked for its keys
  with limit 25 (what the Gateway asks of each unconfigured agent's store); with
  `session_keys=()` every partition is asked, with limit 25; the answers are merged by
  `engine.search.merge.merge_partition_answers` (score descending, timestamp descending,
  messageId in `localeCompare` order, de-duplicated, cut to the request's limit,
  `truncated` when any partition truncated or the merge exceeded the limit, `indexing`
  when any partition is indexing, archived counts summed). Keys no partition owns match
  nothing. A partition that can (`AnswersLate`, the reference backend) answers without
  snippets and cuts only those of the hits the merge keeps: the same answer, without
  the excerpts of the hits the merge drops. In relevance order, each such partition
  asked after the answers hold `limit` hits gets the rank no merged hit can be worse
  than (`engine.search.merge.rank_bound_of`) and leaves out the rows ranked worse: the
  same answer again, without reading rows the merge would drop.

`explain` (of `PartitionedSnapshotStore`) follows the same routing and labels every hit
with the partition that scored it: its N, n and avgdl are that partition's.

Counts (`stats`) are the partitions' counts summed (`agents`, `sessions`, `windows`,
`events`, `bytes`, then the backend's own); `partition_stats()` gives them per agent.
`reconcile`, `reconcile_in_batches` (the `reconcile` command's), `index_status` and
`compact` run on every partition.

Background reconcile and threads (`engine.backends.background`). The store owns at most
one `ReconcileWorker`, which only a writer's store makes and starts
(`EngineConfig.background_reconcile`, on by default): a search whose answer says
`indexing` starts a run unless one is going on, and while a run may still change one of
the searched partitions the answer says `indexing: true`. The worker is made when the
first run starts, so a store that never finds work pending (every reader's) never loads
its module. `wait_for_reconcile(timeout)` waits for the run, `reconciling` and
`background_run` say what it does and did, `close()` stops it before closing anything.
Every public call holds the store's `StoreLock` (`engine.backends.store_lock`; a
transaction for its whole block), and
so does each batch of the worker, so the partitions, which were written for one thread,
are used by one thread at a time; `interrupt` alone does not take it (another thread
calls it to stop the search holding it).

An OpenClaw state (`open_openclaw_state`). A state folder the real OpenClaw wrote has the
same `agents/<agentId>/agent/openclaw-agent.sqlite` files but no root `store.meta` and
no `LOCK`, and holds files of OpenClaw's own beside them (`openclaw.json`, ...). It opens
read-only as a partitioned store of SQLite partitions (`OpenClawStatePartitions`), one
per agent database found, each opened by its class's `open(folder, writer=False)`
(SQLite's `open_file(<folder>/openclaw-agent.sqlite, writer=False)`): no lock taken, no
root metadata read or written, no folder cleared, nothing created, so not a byte of the
state changes. A writer, a transaction or a new partition is refused with a
`StoreError` naming the state folder.

Old stores that kept every agent in one index are refused by
`engine.backends.registry`, with a message saying how to re-import.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext, suppress
from dataclasses import dataclass, replace
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol, Self

from engine.analysis.profiles import SEARCH_PROFILE
from engine.backends.protocol import (
    AnswersLate,
    Backend,
    BackendTransaction,
    Compactable,
    Diagnosable,
    Explainable,
    Interruptible,
    Maintenance,
    ReconcilesInBatches,
    Refreshable,
    SearchesPartitions,
    has_capability,
    require_capability,
)
from engine.backends.store_lock import StoreLock, serialized
from engine.codec.meta_file import RootMeta, decode_root_meta_file, encode_root_meta_file
from engine.config import EngineConfig
from engine.directory import TEMPORARY_PREFIX, FileDirectory, LockHandle, sync_folder
from engine.errors import (
    CorruptFile,
    EngineError,
    InputError,
    StoreError,
    StoreLocked,
    UsageError,
    unknown_session,
)
from engine.model import (
    DEFAULT_AGENT_ID,
    NO_HITS,
    SearchHit,
    SearchRequest,
    SearchResult,
    SessionWindow,
    StoredEvent,
    agent_id_problem,
    owner_agent_id,
)
from engine.progress import StepProgress
from engine.query.user_query import MAX_LIMIT, clamp_limit, plan_query, validate_request
from engine.search.merge import (
    PartitionAnswer,
    merge_partition_answers,
    merge_partition_results,
    rank_bound_of,
)

if TYPE_CHECKING:  # imported when used: a search over SQLite partitions never needs them
    # (the transcript layer's modules define value classes a search never makes, and
    # each class costs start-up time: see `engine.cli.commands`)
    from engine.backends.background import BackgroundRun, PartitionReconciled, ReconcileWorker
    from engine.backends.partitioned_explanation import PartitionedExplanation
    from engine.transcript.compaction import CompactionOutcome
    from engine.transcript.evidence import StoreProblem

META_NAME = "store.meta"
LOCK_NAME = "LOCK"
AGENTS_FOLDER = "agents"
NEW_PARTITION_FOLDER = "new-partition"
REMOVED_PARTITION_FOLDER = "removed-partition"

#: What each partition is asked for when several are merged (the Gateway's limit for
#: the stores of unconfigured agents).
PARTITION_LIMIT = MAX_LIMIT

#: The counts every store reports, even one without partitions.
STORE_COUNTS = ("agents", "sessions", "windows", "events", "bytes")



# --------------------------------------------------------------------------------------
# Where partitions live
# --------------------------------------------------------------------------------------


class PartitionClass(Protocol):
    """What a backend class offers the partitioned store (both backends have it)."""

    def create(self, path: str | os.PathLike[str]) -> Backend:
        """A new partition in folder `path`, opened as the writer."""
        ...

    def open(self, path: str | os.PathLike[str], *, writer: bool = False,
             **options: Any) -> Backend:
        """The partition in folder `path` (`options`: the kind's `open_options`)."""
        ...

    def claims(self, path: str | os.PathLike[str]) -> bool:
        """Whether folder `path` holds a partition of this backend."""
        ...


@dataclass(frozen=True, slots=True)
class PartitionKind:
    """One backend as a partition: its name, its class, and where in an agent's folder it
    lives (`subfolder` "" is the agent's folder itself)."""

    backend: str
    backend_class: PartitionClass
    subfolder: str = ""
    #: Keyword arguments every partition is opened with (`accept_lost_commits` for a
    #: reference store that `verify` and `stats` open to report what is lost).
    open_options: tuple[tuple[str, Any], ...] = ()

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
            from engine.transcript.log import now_milliseconds

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
            if missing and not accept_missing:
                raise StoreError(space.missing_problems()[0].with_advice())
        except BaseException:
            if lock is not None:
                lock.release()
            raise
        return space

    def missing_problems(self) -> list[StoreProblem]:
        """One problem for each agent the root lists whose partition folder is gone."""
        from engine.transcript.evidence import StoreProblem

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
        from engine.transcript.evidence import StoreProblem

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
            self.kind.backend_class.create(self.partition_folder(staging)).close()
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


# --------------------------------------------------------------------------------------
# Writing across partitions
# --------------------------------------------------------------------------------------


class PartitionedTransaction(BackendTransaction):
    """One write transaction over the store: a partition transaction per agent written
    to, opened at its first write, committed in agent order by `commit` (the routing
    rules are in the module docstring)."""

    def __init__(self, store: PartitionedStore) -> None:
        self._store = store
        self._contexts: dict[str, AbstractContextManager[BackendTransaction]] = {}
        self._transactions: dict[str, BackendTransaction] = {}
        #: Partitions this transaction made (removed again unless it commits).
        self._created: set[str] = set()
        #: session id -> agent of the windows put in this transaction.
        self._placed: dict[str, str] = {}
        #: Agents whose partition had a session deleted in this transaction.
        self._deleted_in: set[str] = set()

    def put_window(self, window: SessionWindow) -> None:
        """Insert or update a window in the partition of its key's agent."""
        from engine.transcript.validation import check_window

        check_window(window)
        agent_id = owner_agent_id(window.session_key)
        assert agent_id is not None  # check_window accepted the key
        problem = agent_id_problem(agent_id)
        if problem is not None:
            raise InputError(problem)
        holder = self._agent_of(window.session_id)
        if holder is not None and holder != agent_id:
            raise InputError(
                f'window "{window.session_id}" belongs to agent "{holder}" and cannot move '
                f'to key "{window.session_key}" of agent "{agent_id}" (each agent is a '
                "partition of its own)")
        self._partition_transaction(agent_id).put_window(window)
        self._placed[window.session_id] = agent_id

    def append_event(
        self, session_id: str, event: dict[str, Any], created_at: float | None = None
    ) -> int:
        """Append an event to the window's partition; return its seq."""
        agent_id = self._agent_of(session_id)
        if agent_id is None:
            from engine.transcript.validation import check_event

            check_event(session_id, event, created_at)
            raise unknown_session(session_id)
        return self._partition_transaction(agent_id).append_event(session_id, event, created_at)

    def replace_transcript(
        self, session_id: str, events: Sequence[dict[str, Any]],
        created_at: float | Sequence[float | None] | None = None,
    ) -> int:
        """Replace the events of a window in its partition (`created_at`: one stamp for
        all, or one per event); return how many."""
        agent_id = self._agent_of(session_id)
        if agent_id is None:
            raise unknown_session(session_id)
        return self._partition_transaction(agent_id).replace_transcript(
            session_id, events, created_at)

    def delete_session(self, session_key: str) -> int:
        """Delete every window of `session_key` (in its agent's partition); the count."""
        agent_id = owner_agent_id(session_key) if isinstance(session_key, str) else None
        if agent_id is None or agent_id_problem(agent_id) is not None:
            return 0
        if agent_id not in self._transactions and not self._store.has_partition(agent_id):
            return 0
        self._deleted_in.add(agent_id)
        return self._partition_transaction(agent_id).delete_session(session_key)

    def _agent_of(self, session_id: str) -> str | None:
        placed = self._placed.get(session_id)
        return placed if placed is not None else self._store.agent_of_session(session_id)

    def _partition_transaction(self, agent_id: str) -> BackendTransaction:
        transaction = self._transactions.get(agent_id)
        if transaction is not None:
            return transaction
        partition = self._store.partition_for_writing(agent_id, self._created)
        context = partition.transaction()
        transaction = context.__enter__()
        self._contexts[agent_id] = context
        self._transactions[agent_id] = transaction
        return transaction

    def commit(self) -> None:
        """Commit every partition transaction in agent order; if one fails, roll the
        rest back (the earlier ones stay committed) and raise its error."""
        agents = sorted(self._contexts)
        for position, agent_id in enumerate(agents):
            try:
                self._contexts[agent_id].__exit__(None, None, None)
            except BaseException as error:
                self._abandon(agents[position + 1:], error)
                self._remove_created([agent_id])
                self._store.committed(self._placed, agents[:position], self._deleted_in)
                raise
        self._store.committed(self._placed, agents, self._deleted_in)

    def roll_back(self, error: BaseException) -> None:
        """Roll every partition transaction back and remove the partitions made here."""
        self._abandon(sorted(self._contexts), error)

    def _abandon(self, agents: list[str], error: BaseException) -> None:
        for agent_id in agents:
            try:
                self._contexts[agent_id].__exit__(type(error), error, error.__traceback__)
            except Exception as secondary:  # noqa: BLE001 - the rest must still roll back; the first error is reported
                error.add_note(f"rolling back agent {agent_id!r} also failed: {secondary}")
        self._remove_created(agents)

    def _remove_created(self, agents: list[str]) -> None:
        for agent_id in agents:
            if agent_id in self._created:
                self._store.remove_partition(agent_id)


# --------------------------------------------------------------------------------------
# The store
# --------------------------------------------------------------------------------------


class PartitionedStore(Backend, Maintenance, Interruptible, Compactable):
    """A store of one partition per agent (capabilities `Backend`, `Maintenance`,
    `Interruptible` (forwarded to the partitions that have it), `Compactable`; over
    partitions that read snapshots, `PartitionedSnapshotStore` adds `Refreshable` and
    `Explainable`). The rules are in the module docstring."""

    def __init__(self, space: FolderPartitions, *, writer: bool,
                 config: EngineConfig | None = None) -> None:
        """Use `engine.backends.registry.open_backend` (or `open_partitioned`)."""
        self.space = space
        self.is_writer = writer
        self.config = config if config is not None else EngineConfig()
        #: Every public call holds it; so do the reconcile worker's batches.
        self.lock = StoreLock()
        #: The background reconcile worker, made by the first run (`_start_reconcile`).
        self._worker: ReconcileWorker | None = None
        #: The opened partitions; `_agents`: every partition's agent id, in agent order
        #: (a reader opens a partition when a read first needs it).
        self._partitions: dict[str, Backend] = {}
        self._agents: list[str] = []
        #: session id -> agent, built on first use (`agent_of_session`).
        self._owners: dict[str, str] | None = None
        self._in_transaction = False
        self._closed = False
        #: Readers of backends that always read the latest commit look for new
        #: partitions before every read; writers and snapshot readers know theirs.
        self._reads_latest = not writer and not space.kind.reads_snapshots
        try:
            self._discover()
        except BaseException:
            self.close()
            raise

    @property
    def name(self) -> str:
        """The backend of the partitions (`reference`, `sqlite`)."""
        return self.space.kind.backend

    # ----- partitions -----------------------------------------------------------------

    def _discover(self) -> None:
        """Learn the partitions that appeared, drop those that vanished; agent order.
        A writer opens every partition now, a reader when a read first needs it."""
        present = sorted(self.space.agents())
        for agent_id in set(self._partitions) - set(present):
            self._partitions.pop(agent_id).close()
            self._owners = None
        if present != self._agents:
            self._owners = None
        self._agents = present
        if self.is_writer:
            self._open_all()

    def _open(self, agent_id: str) -> Backend:
        """The partition of `agent_id` (one of `_agents`), opened now if it is not yet."""
        partition = self._partitions.get(agent_id)
        if partition is None:
            partition = self.space.open_partition(agent_id, writer=self.is_writer)
            self._partitions = dict(sorted({**self._partitions, agent_id: partition}.items()))
            self._owners = None
        return partition

    def _open_all(self) -> None:
        for agent_id in self._agents:
            if agent_id not in self._partitions:
                self._open(agent_id)

    def _known_agents(self) -> list[str]:
        """Every partition's agent id, after looking for new ones when reads see the
        latest (nothing is opened)."""
        self._check_open()
        if self._reads_latest:
            self._discover()
        return self._agents

    def _current(self) -> dict[str, Backend]:
        """Every partition, opened, after looking for new ones when reads see the latest."""
        self._known_agents()
        self._open_all()
        return self._partitions

    @serialized
    def adopt_strays(self) -> tuple[str, ...]:
        """List every stray folder in `agents/` as its agent's partition (writer only:
        `verify --repair`, the explicit adoption the module docstring describes) and open
        it with the others; return the adopted agents."""
        adopted = self.space.adopt_strays()
        if adopted:
            self._discover()
        return adopted

    @serialized
    def partitions(self) -> dict[str, Backend]:
        """Every partition by agent id, in agent order."""
        return dict(self._current())

    @serialized
    def partition(self, agent_id: str) -> Backend:
        """The partition of `agent_id` (`UsageError` when the agent has none)."""
        partition = self._current().get(agent_id)
        if partition is None:
            raise UsageError(f"{self.space.location(agent_id)}: agent {agent_id!r} has no "
                             "partition in this store")
        return partition

    @serialized
    def has_partition(self, agent_id: str) -> bool:
        """Whether `agent_id` has a partition."""
        return agent_id in self._current()

    def partition_for_writing(self, agent_id: str, created: set[str]) -> Backend:
        """`agent_id`'s partition, made now if it has none (its id added to `created`)."""
        partition = self._partitions.get(agent_id)
        if partition is None:
            partition = self.space.create_partition(agent_id)
            self._partitions = dict(sorted({**self._partitions, agent_id: partition}.items()))
            self._agents = sorted({*self._agents, agent_id})
            created.add(agent_id)
        return partition

    def remove_partition(self, agent_id: str) -> None:
        """Delete a partition whose making transaction did not commit."""
        partition = self._partitions.pop(agent_id)
        self._agents = [known for known in self._agents if known != agent_id]
        self.space.remove_partition(agent_id, partition)

    @serialized
    def agent_of_session(self, session_id: str) -> str | None:
        """The agent whose partition holds window `session_id`, or None."""
        agent_id = self._session_owners().get(session_id)
        if agent_id is None and self._reads_latest:
            self._owners = None
            agent_id = self._session_owners().get(session_id)
        return agent_id

    def _session_owners(self) -> dict[str, str]:
        if self._owners is None:
            self._owners = {window.session_id: agent_id
                            for agent_id, partition in self._current().items()
                            for window in partition.windows()}
        return self._owners

    # ----- writing --------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[PartitionedTransaction]:
        """One transaction over every partition it writes to (see the module docstring)."""
        with self.lock.application():
            self._check_open()
            if not self.is_writer:
                raise StoreError(self.space.read_only_reason())
            if self._in_transaction:
                raise UsageError("a transaction is already open on this store")
            self._in_transaction = True
            transaction = PartitionedTransaction(self)
            try:
                try:
                    yield transaction
                except BaseException as error:
                    transaction.roll_back(error)
                    raise
                transaction.commit()
            finally:
                self._in_transaction = False

    def committed(self, placed: dict[str, str], agents: list[str], deleted_in: set[str]) -> None:
        """Bring the session map up to date after the partitions of `agents` committed."""
        if self._owners is None:
            return
        done = set(agents)
        for agent_id in deleted_in & done:
            for session_id in [sid for sid, owner in self._owners.items() if owner == agent_id]:
                del self._owners[session_id]
            for window in self._partitions[agent_id].windows():
                self._owners[window.session_id] = agent_id
        for session_id, agent_id in placed.items():
            if agent_id in done and agent_id not in deleted_in:
                self._owners[session_id] = agent_id

    # ----- reading --------------------------------------------------------------------

    @serialized
    def windows(self) -> list[SessionWindow]:
        """Every window: the partitions in agent order, each in first-insertion order."""
        return [window for partition in self._current().values() for window in partition.windows()]

    @serialized
    def window(self, session_id: str) -> SessionWindow:
        """One window (`UnknownSession` if absent)."""
        return self._holder(session_id).window(session_id)

    @serialized
    def windows_of(self, session_key: str) -> list[SessionWindow]:
        """The windows of one session key, in the order they joined it."""
        partition = self._current().get(owner_agent_id(session_key) or "")
        return [] if partition is None else partition.windows_of(session_key)

    @serialized
    def session_keys(self) -> list[str]:
        """Every session key holding a window: the partitions in agent order."""
        return [key for partition in self._current().values() for key in partition.session_keys()]

    @serialized
    def events(self, session_id: str) -> list[StoredEvent]:
        """Every event of a window, in seq order."""
        return self._holder(session_id).events(session_id)

    @serialized
    def event_count(self, session_id: str) -> int:
        """How many events a window has."""
        return self._holder(session_id).event_count(session_id)

    def _holder(self, session_id: str) -> Backend:
        agent_id = self.agent_of_session(session_id)
        if agent_id is None:
            raise unknown_session(session_id)
        return self._partitions[agent_id]

    # ----- searching ------------------------------------------------------------------

    @serialized
    def search(self, request: SearchRequest) -> SearchResult:
        """The store-level search: one partition for an agent, else the merge."""
        scoped, targets = self.search_targets(request)
        if scoped:
            result = self._open(targets[0][0]).search(targets[0][1]) if targets else NO_HITS
        else:
            asked = [(self._open(agent_id), part) for agent_id, part in targets]
            limit = clamp_limit(request.limit)
            together = searched_together(asked)
            if together is not None:
                result = merge_partition_results(together, limit, order=request.order)
            else:
                answers: list[PartitionAnswer] = []
                hits = 0  # so far: a bound needs `limit` distinct hits, so at least as many
                for partition, part in asked:
                    bound = (rank_bound_of((answer.result.hits for answer in answers), limit)
                             if request.order == "relevance" and hits >= limit else None)
                    answers.append(partition_answer(partition, part, bound))
                    hits += len(answers[-1].result.hits)
                result = merge_partition_answers(answers, limit, order=request.order)
        return self._noting_reconcile(result, [agent_id for agent_id, _ in targets])

    def _noting_reconcile(self, result: SearchResult, agents: list[str]) -> SearchResult:
        """`result`, `indexing: true` while the background run may still change one of
        the searched partitions; a result that found work pending starts the run on a
        writer's store (`engine.backends.background`)."""
        if self._worker is not None and self._worker.covers(agents):
            return result if result.indexing else replace(result, indexing=True)
        if result.indexing and self.is_writer and self.config.background_reconcile:
            self._start_reconcile()
        return result

    def _start_reconcile(self) -> None:
        """Start a background run, making the worker first if this store has none."""
        if self._worker is None:
            from engine.backends.background import ReconcileWorker

            self._worker = ReconcileWorker(lambda: self._partitions, self.lock, self.config,
                                           f"session-search reconcile {self.space.root}")
        self._worker.start()

    def wait_for_reconcile(self, timeout: float | None = None) -> bool:
        """Wait until the background reconcile run ends (at most `timeout` seconds);
        whether none is running now. Not while holding the store's lock (in a
        transaction)."""
        return self._worker is None or self._worker.wait(timeout)

    @property
    def reconciling(self) -> bool:
        """Whether a background reconcile run is going on."""
        return self._worker is not None and self._worker.running

    @property
    def background_run(self) -> BackgroundRun | None:
        """What the last background reconcile run that ended did (None before any)."""
        return None if self._worker is None else self._worker.last_run

    @serialized
    def search_targets(self, request: SearchRequest) -> tuple[bool, list[tuple[str, SearchRequest]]]:
        """Whether `request` is scoped to one agent, and the partitions to ask with the
        request each gets (the rules are in the module docstring)."""
        validate_request(request)
        partitions = self._known_agents()
        if request.session_keys is None:
            agent_id = DEFAULT_AGENT_ID if request.agent_id is None else request.agent_id
            problem = agent_id_problem(agent_id)
            if problem is not None:
                raise InputError(problem)
            return True, [(agent_id, request)] if agent_id in partitions else []
        if not request.session_keys:
            part = (request if request.limit == PARTITION_LIMIT  # checked: an int here
                    else replace(request, limit=PARTITION_LIMIT))  # the same for every partition
            return False, [(agent_id, part) for agent_id in partitions]
        keys_by_agent: dict[str, list[str]] = {}
        for key in dict.fromkeys(request.session_keys):
            agent_id = owner_agent_id(key) if isinstance(key, str) else None
            if agent_id in partitions:
                keys_by_agent.setdefault(agent_id, []).append(key)
        return False, [(agent_id, replace(request, session_keys=tuple(keys_by_agent[agent_id]),
                                          limit=PARTITION_LIMIT))
                       for agent_id in partitions if agent_id in keys_by_agent]

    def interrupt(self) -> None:
        """Interrupt the partitions that can be (SQLite's); the others stop at their
        caller's next check."""
        for partition in list(self._partitions.values()):
            if isinstance(partition, Interruptible):
                partition.interrupt()

    # ----- counts and maintenance -----------------------------------------------------

    @serialized
    def partition_stats(self) -> dict[str, dict[str, int]]:
        """Each partition's counts, by agent id in agent order."""
        return {agent_id: partition.stats() for agent_id, partition in self._current().items()}

    @serialized
    def stats(self) -> dict[str, int]:
        """The partitions' counts summed (the five store counts first, then the rest)."""
        totals = dict.fromkeys(STORE_COUNTS, 0)
        for counts in self.partition_stats().values():
            for name, value in counts.items():
                totals[name] = totals.get(name, 0) + int(value)
        return totals

    @serialized
    def reconcile(self, progress: StepProgress | None = None) -> int:
        """Reconcile every partition in agent order (writer only); the windows rebuilt in
        all. `progress(done, total)` counts over the partitions seen so far: each
        partition's total is added when its reconcile starts."""
        self._check_open()
        if not self.is_writer:
            raise StoreError("cannot reconcile: the store was opened read-only")
        rebuilt = 0
        finished_work = 0  # the windows of the partitions already reconciled
        partition_total = [0]  # the current partition's total, as it reported it

        def counted(done: int, total: int) -> None:
            partition_total[0] = total
            if progress is not None:
                progress(finished_work + done, finished_work + total)

        for partition in self._partitions.values():
            partition_total[0] = 0
            rebuilt += require_capability(partition, Maintenance, "reconcile").reconcile(counted)
            finished_work += partition_total[0]
        return rebuilt

    @serialized
    def compact(self) -> CompactionOutcome:
        """Compact every partition in agent order (writer only); what they reclaimed,
        summed (one partition after another: a partition's compaction is crash-safe
        on its own, and a failure stops before the next)."""
        self._check_open()
        if not self.is_writer:
            raise StoreError("cannot compact: the store was opened read-only")
        if self._in_transaction:
            raise UsageError("cannot compact inside a transaction")
        kind = "database" if self.name == "sqlite" else "log"
        from engine.transcript.compaction import CompactionOutcome

        total = CompactionOutcome(kind=kind)
        for partition in self._partitions.values():
            total += require_capability(partition, Compactable, "compact").compact()
        return total

    @serialized
    def reconcile_in_batches(self, progress: StepProgress | None = None) -> PartitionReconciled:
        """`reconcile` (writer only) as the background run does it, batch by batch
        (`engine.backends.background.reconcile_partition`, batches of about
        `FOREGROUND_BATCH_EVENTS` events, the lock held throughout), with its counts:
        windows rebuilt, the rows they hold, orphaned windows swept. What the
        `reconcile` command runs."""
        from engine.backends.background import (
            FOREGROUND_BATCH_EVENTS,
            PartitionReconciled,
            reconcile_partition,
        )

        self._check_open()
        if not self.is_writer:
            raise StoreError("cannot reconcile: the store was opened read-only")
        windows = rows = orphans = 0
        finished_work = 0  # the windows of the partitions already reconciled
        partition_total = [0]

        def counted(done: int, total: int) -> None:
            partition_total[0] = total
            if progress is not None:
                progress(finished_work + done, finished_work + total)

        for partition in self._partitions.values():
            partition_total[0] = 0
            done = reconcile_partition(
                require_capability(partition, ReconcilesInBatches, "reconcile"), nullcontext,
                lambda: False, FOREGROUND_BATCH_EVENTS, counted, sweep_when_clean=True)
            windows, rows, orphans = (windows + done.windows, rows + done.rows,
                                      orphans + done.orphans)
            finished_work += partition_total[0]
        return PartitionReconciled(True, windows, rows, orphans)

    @serialized
    def problems(self) -> list[Any]:
        """The partitions the root lists whose folder is gone, then what every partition
        that can tell (`Diagnosable`) found wrong with its files, in agent order."""
        return [*self.space.missing_problems(), *self.space.stray_problems(),
                *(problem for partition in self._current().values()
                  if isinstance(partition, Diagnosable) for problem in partition.problems())]

    @serialized
    def index_status(self) -> bool:
        """True while some window of some partition needs work (§8.4)."""
        return any(require_capability(partition, Maintenance, "index status").index_status()
                   for partition in self._current().values())

    # ----- lifecycle ------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError(f"{self.space.root}: the store is closed")

    def close(self) -> None:
        """Close every partition (a writer's flush their indexes), then release the lock.
        Every partition is closed even when one fails (a full disk refusing its index
        files); the first failure is raised, with the others as notes."""
        if self._closed:
            return
        if self._worker is not None:  # before the lock: its batch ends at the next window
            self._worker.stop()
        with self.lock.application():
            self._close_partitions()

    def _close_partitions(self) -> None:
        if self._closed:
            return
        self._closed = True
        partitions, self._partitions = list(self._partitions.items()), {}
        failure: StoreError | None = None
        try:
            for agent_id, partition in partitions:
                try:
                    partition.close()
                except StoreError as error:
                    if failure is None:
                        failure = error
                    else:
                        failure.add_note(f"closing agent {agent_id!r} also failed: {error}")
        finally:
            self.space.close()
        if failure is not None:
            raise failure

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()


# --------------------------------------------------------------------------------------
# Over partitions that read snapshots and explain (the reference)
# --------------------------------------------------------------------------------------


class PartitionedSnapshotStore(PartitionedStore, Refreshable, Explainable):
    """A partitioned store whose partitions read the snapshot of their open (`refresh`
    sees later commits and new partitions) and explain their ranking (the reference)."""

    @serialized
    def refresh(self) -> None:
        """See what the writer committed, new partitions included, since the last look."""
        self._check_open()
        for partition in self._partitions.values():
            require_capability(partition, Refreshable, "refresh").refresh()
        self._discover()
        self._owners = None

    @serialized
    def explain(self, request: SearchRequest) -> PartitionedExplanation:
        """The search explained hit by hit, each hit labelled with its partition."""
        # Imported here: only `explain` needs the explanation values, and a search's
        # start-up should not define them (each value class costs its creation).
        from engine.backends.partitioned_explanation import (
            PartitionedExplanation,
            PartitionHitExplanation,
        )

        scoped, targets = self.search_targets(request)
        explained = [(agent_id, require_capability(self._open(agent_id), Explainable,
                                                   "explain").explain(part))
                     for agent_id, part in targets]
        labelled = [[PartitionHitExplanation(agent_id, item) for item in explanation.hits]
                    for agent_id, explanation in explained]
        if explained:
            plan = explained[0][1].plan
        else:
            plan = plan_query(validate_request(request), SEARCH_PROFILE.analyzer(),
                              match=request.match)
        retried = any(explanation.retried for _, explanation in explained)
        if scoped:
            truncated = bool(explained) and explained[0][1].truncated
            return PartitionedExplanation(plan, retried, truncated,
                                          tuple(labelled[0]) if labelled else ())
        merged = merge_partition_results(
            [SearchResult(tuple(item.hit for item in items), truncated=explanation.truncated)
             for items, (_, explanation) in zip(labelled, explained, strict=True)],
            clamp_limit(request.limit), order=request.order)
        by_identity = {}
        for items in labelled:
            for item in items:
                by_identity.setdefault(hit_identity(item.hit), item)
        return PartitionedExplanation(
            plan, retried, merged.truncated,
            tuple(by_identity[hit_identity(hit)] for hit in merged.hits))


def searched_together(asked: Sequence[tuple[Backend, SearchRequest]]
                      ) -> list[SearchResult] | None:
    """The partitions' whole results in one call, when they are all of one class that
    `SearchesPartitions` and are asked the same request (a search across every agent);
    None otherwise (then each gives its `partition_answer`)."""
    if not asked:
        return None
    first_partition, first_request = asked[0]
    kind = type(first_partition)
    if not has_capability(first_partition, SearchesPartitions):
        return None
    if not all(type(partition) is kind and request is first_request
               for partition, request in asked):
        return None
    return kind.search_partitions([partition for partition, _ in asked], first_request)


def partition_answer(partition: Backend, request: SearchRequest,
                     rank_bound: float | None = None) -> PartitionAnswer:
    """A partition's answer to its part of a merged search: its hits' snippets cut late
    when it can (`AnswersLate`), and without the rows ranked worse than `rank_bound`, the
    rank the partitions asked before have shown no merged hit can be worse than
    (`engine.search.merge.rank_bound_of`); else its whole result."""
    if has_capability(partition, AnswersLate):
        return partition.search_answer(request, rank_bound)
    return PartitionAnswer(partition.search(request))


def hit_identity(hit: SearchHit) -> tuple[str, str, str]:
    """What the merge de-duplicates on: (sessionKey, sessionId, messageId)."""
    return (hit.session_key, hit.session_id, hit.message_id)


# --------------------------------------------------------------------------------------
# Opening
# --------------------------------------------------------------------------------------


def store_class(kind: PartitionKind) -> type[PartitionedStore]:
    """The partitioned store class for partitions of `kind` (its capabilities follow
    theirs)."""
    if kind.reads_snapshots and isinstance(kind.backend_class, type) and issubclass(
            kind.backend_class, Explainable):
        return PartitionedSnapshotStore
    return PartitionedStore


def create_partitioned(root: Path, kind: PartitionKind,
                       config: EngineConfig | None = None) -> PartitionedStore:
    """Make an empty partitioned store in folder `root`, opened as the writer."""
    return store_class(kind)(FolderPartitions.create(root, kind), writer=True, config=config)


def open_partitioned(root: Path, kind: PartitionKind, *, writer: bool,
                     accept_missing: bool = False,
                     config: EngineConfig | None = None) -> PartitionedStore:
    """Open the partitioned store in folder `root` (`accept_missing`: see
    `FolderPartitions.open`)."""
    space = FolderPartitions.open(root, kind, writer=writer, accept_missing=accept_missing)
    try:
        return store_class(kind)(space, writer=writer, config=config)
    except BaseException:
        space.close()
        raise


def open_openclaw_state(root: Path, kind: PartitionKind, *, writer: bool = False) -> PartitionedStore:
    """Open the state OpenClaw wrote in folder `root`, read-only, as a partitioned store
    of `kind` (the SQLite partition); `writer=True` is refused, naming `root`."""
    space = OpenClawStatePartitions(root, kind)
    if writer:
        raise StoreError(space.read_only_reason())
    return store_class(kind)(space, writer=False)
