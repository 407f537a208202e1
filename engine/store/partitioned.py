"""A store that is an OpenClaw state: one partition per agent, each a backend of its own.

Owns: the partitioned store (`PartitionedStore`, and `PartitionedSnapshotStore` over
partitions that read a snapshot and can explain) and its routing: which partition a
write or a read goes to (the map from session id to agent), the partitions it knows and
opens, the reads across partitions, the summed counts, the maintenance run on every
partition, its lock and its background reconcile worker. Must not touch: how a
partition stores, indexes, scores or searches (each partition is a whole backend:
`ReferenceBackend` or `SqliteBackend`, unchanged), the folders the partitions live in
(`engine.store.layout`), the transaction across partitions (`engine.store.transaction`),
the fan-out of a search and the merge of partition answers (`engine.store.fan_out`; the
merge rule itself is `engine.search.merge`), the opening of a store and the choice of
its class (`engine.store.opening`), which key belongs to which agent
(`engine.model.owner_agent_id`). The layout of a store folder, creating and deleting a
partition, stray folders and creating a store are told in `engine.store.layout`.

Why. OpenClaw keeps one database per agent, so bm25's N, document frequencies and
average length are per agent; a search across agents queries each agent's database and
merges the answers by score (behaviour.md §5.4, §6 step 5). One index holding every
agent would score with global statistics and order hits differently. So every agent's
windows, transcript events and index form one partition with its own statistics, and
`global` and `unknown` windows belong to the partition of the default agent `main`
(`engine.model`'s docstring says where that was read in OpenClaw).

Reads. `windows()` and `session_keys()` are the partitions' answers in agent order (each
partition in its own first-insertion order); `window`, `events` and `event_count` find
the window's partition (a map from session id to agent, built on first use);
`windows_of(key)` asks the key's partition. Partitions over SQLite read the latest commit
(no `Refreshable`), so the store looks for new partitions before each read; a reference
partition reads the snapshot taken when it was opened, and `refresh()` (of
`PartitionedSnapshotStore`) sees new commits and new partitions. A writer opens every
partition at once; a reader lists them and opens each when a read first needs it, so a
search scoped to one agent (a fresh `search --agent`) opens that agent's partition only.

Counts (`stats`) are the partitions' counts summed (`agents`, `sessions`, `windows`,
`events`, `bytes`, then the backend's own); `partition_stats()` gives them per agent.
`reconcile`, `reconcile_in_batches` (the `reconcile` command's), `index_status` and
`compact` run on every partition.

Background reconcile and threads (`engine.store.background`). The store owns at most
one `ReconcileWorker`, which only a writer's store makes and starts
(`EngineConfig.background_reconcile`, on by default): a search whose answer says
`indexing` starts a run unless one is going on, and while a run may still change one of
the searched partitions the answer says `indexing: true`. The worker is made when the
first run starts, so a store that never finds work pending (every reader's) never loads
its module. `wait_for_reconcile(timeout)` waits for the run, `reconciling` and
`background_run` say what it does and did, `close()` stops it before closing anything.
Every public call holds the store's `StoreLock` (`engine.store.lock`; a transaction for
its whole block), and so does each batch of the worker, so the partitions, which were
written for one thread, are used by one thread at a time; `interrupt` alone does not
take it (another thread calls it to stop the search holding it).

An OpenClaw state (`engine.store.opening.open_openclaw_state`) is a store of SQLite
partitions over `OpenClawStatePartitions`, read-only: a writer, a transaction or a new
partition is refused with a `StoreError` naming the state folder.

Old stores that kept every agent in one index are refused by
`engine.store.registry`, with a message saying how to re-import.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import replace
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self, cast

from engine.backends.protocol import (
    Backend,
    Compactable,
    Diagnosable,
    Explainable,
    Generational,
    Interruptible,
    Maintenance,
    ReconcilesInBatches,
    Refreshable,
    has_capability,
    missing_capability,
    require_capability,
)
from engine.config import EngineConfig
from engine.errors import StoreError, UsageError, unknown_session
from engine.model import SearchRequest, SearchResult, SessionWindow, StoredEvent, owner_agent_id
from engine.query.checked_request import check_request
from engine.store.fan_out import SearchTargets, answer_search, explain_search, route_search
from engine.store.journalled import JournalledWrites
from engine.store.layout import FolderPartitions
from engine.store.lock import StoreLock, serialized
from engine.store.witness import WitnessedPartitions

if TYPE_CHECKING:  # imported when used: a search over SQLite partitions never needs them
    # (the transcript layer's modules define value classes a search never makes, and
    # each class costs start-up time: see `engine.cli.commands`)
    from engine.progress import StepProgress  # only reconcile's, an annotation
    from engine.store.background import BackgroundRun, PartitionReconciled, ReconcileWorker
    from engine.store.change_watch import ChangeGate
    from engine.store.explanation import PartitionedExplanation
    from engine.store.transaction import PartitionedTransaction  # a writer's only
    from engine.transcript.compaction import CompactionOutcome

#: The counts every store reports, even one without partitions.
STORE_COUNTS = ("agents", "sessions", "windows", "events", "bytes")

# --------------------------------------------------------------------------------------
# The store
# --------------------------------------------------------------------------------------


class PartitionedStore(JournalledWrites, WitnessedPartitions, Backend, Maintenance, Interruptible, Compactable):
    """A store of one partition per agent (capabilities `Backend`, `Maintenance`,
    `Interruptible` (forwarded to the partitions that have it), `Compactable`; over
    partitions that read snapshots, `PartitionedSnapshotStore` adds `Refreshable` and
    `Explainable`). The rules are in the module docstring."""

    def __init__(self, space: FolderPartitions, *, writer: bool,
                 config: EngineConfig | None = None) -> None:
        """Use `engine.store.registry.open_backend` (or
        `engine.store.opening.open_partitioned`)."""
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
            self._load_witness()
            self._discover()
            if writer:
                self._finish_interrupted_commit()
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
            self._check_generation(agent_id, partition)
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
        `verify --repair`, the explicit adoption `engine.store.layout` describes) and open
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
        self._forget_generation(agent_id)

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
        """One transaction over every partition it writes to (`engine.store.transaction`)."""
        with self.lock.application():
            self._check_open()
            if not self.is_writer:
                raise StoreError(self.space.read_only_reason())
            if self._in_transaction:
                raise UsageError("a transaction is already open on this store")
            self._in_transaction = True
            try:  # a commit that failed late in this process; a damaged journal
                self._finish_interrupted_commit()
            except BaseException:
                self._in_transaction = False
                raise
            from engine.store.transaction import PartitionedTransaction

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
        """Bring the session map and the witness up to date after the partitions of
        `agents` committed."""
        self._record_generations(agents)
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
        """The store-level search: one partition for an agent, else the merge
        (`engine.store.fan_out`)."""
        checked = check_request(request)  # once, here: no partition checks it again
        scoped, targets = self.search_targets(checked)
        result = answer_search(checked, scoped, targets, self._open)
        return self._noting_reconcile(result, [agent_id for agent_id, _ in targets])

    def _noting_reconcile(self, result: SearchResult, agents: list[str]) -> SearchResult:
        """`result`, `indexing: true` while the background run may still change one of
        the searched partitions; a result that found work pending starts the run on a
        writer's store (`engine.store.background`)."""
        if self._worker is not None and self._worker.covers(agents):
            return result if result.indexing else replace(result, indexing=True)
        if result.indexing and self.is_writer and self.config.background_reconcile:
            self._start_reconcile()
        return result

    def _start_reconcile(self) -> None:
        """Start a background run, making the worker first if this store has none."""
        if self._worker is None:
            from engine.store.background import ReconcileWorker

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
    def search_targets(self, request: SearchRequest) -> tuple[bool, SearchTargets]:
        """Whether `request` is scoped to one agent, and the partitions to ask with the
        request each gets (the rules are in `engine.store.fan_out`)."""
        return route_search(check_request(request), self._known_agents)

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
        from engine.store.reconcile_turns import reconcile_in_turn

        return sum(reconcile_in_turn(
            self._partitions.values(), progress,
            lambda partition, counted: require_capability(
                partition, Maintenance, "reconcile").reconcile(counted)))

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
        kind = "log" if self.name == "reference" else "database"
        from engine.transcript.compaction import CompactionOutcome

        total = CompactionOutcome(kind=kind)
        for partition in self._partitions.values():
            total += require_capability(partition, Compactable, "compact").compact()
        return total

    @serialized
    def reconcile_in_batches(self, progress: StepProgress | None = None) -> PartitionReconciled:
        """`reconcile` (writer only) as the background run does it, batch by batch
        (`engine.store.background.reconcile_partition`, batches of about
        `FOREGROUND_BATCH_EVENTS` events, the lock held throughout), with its counts:
        windows rebuilt, the rows they hold, orphaned windows swept. What the
        `reconcile` command runs."""
        from engine.store.background import (
            FOREGROUND_BATCH_EVENTS,
            PartitionReconciled,
            reconcile_partition,
        )

        self._check_open()
        if not self.is_writer:
            raise StoreError("cannot reconcile: the store was opened read-only")
        from engine.store.reconcile_turns import reconcile_in_turn

        done = reconcile_in_turn(
            self._partitions.values(), progress,
            lambda partition, counted: reconcile_partition(
                require_capability(partition, ReconcilesInBatches, "reconcile"), nullcontext,
                lambda: False, FOREGROUND_BATCH_EVENTS, counted, sweep_when_clean=True))
        return PartitionReconciled(True, sum(item.windows for item in done),
                                   sum(item.rows for item in done),
                                   sum(item.orphans for item in done))

    @serialized
    def problems(self) -> list[Any]:
        """The partitions the root lists whose folder is gone, then what every partition
        that can tell (`Diagnosable`) found wrong with its files, in agent order."""
        return [*self.space.missing_problems(), *self.space.stray_problems(),
                *self.journal_problems(), *self.witness_problems(),
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

    #: Whether a reader skips the look of a refresh when no file of the store changed
    #: since its last look (`engine.store.change_watch`); False: every refresh looks.
    watch_changes = True
    _changes: ChangeGate | None = None

    @serialized
    def refresh(self) -> None:
        """See what the writer committed, new partitions included, since the last look
        (the session map is kept unless a commit count moved); a reader's refresh looks
        only when a file of the store changed (`engine.store.change_watch`)."""
        self._check_open()
        if self._changes is None:
            from engine.store.change_watch import ChangeGate

            watched = self.watch_changes and not self.is_writer
            self._changes = ChangeGate(self.space.root if watched else None)
        if self._changes.unchanged():
            return
        moved = False
        for partition in self._partitions.values():
            if not has_capability(partition, Refreshable):  # known per class: fast
                raise UsageError(missing_capability(partition, Refreshable, "refresh"))
            count = cast(Generational, partition).commit_generation
            before = count()
            cast(Refreshable, partition).refresh()
            moved = moved or count() != before
        self._discover()
        if moved:
            self._owners = None
        self._changes.looked()

    def _close_partitions(self) -> None:
        if self._changes is not None:
            self._changes.close()
        super()._close_partitions()

    @serialized
    def explain(self, request: SearchRequest) -> PartitionedExplanation:
        """The search explained hit by hit, each hit labelled with its partition
        (`engine.store.fan_out`)."""
        checked = check_request(request)
        scoped, targets = self.search_targets(checked)
        return explain_search(checked, scoped, targets, self._open)

