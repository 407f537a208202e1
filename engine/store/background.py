"""Background reconciliation: the store's reconcile worker.

Owns: `ReconcileWorker` (the daemon thread that brings a store's index in step with its
transcripts after a search found work pending, behaviour.md §8.4), `BackgroundRun` (what
one run did) and the foreground reconcile in batches (`reconcile_partition`). Must not
touch: how a window is rebuilt or what needs it (each backend's `ReconcilesInBatches`,
`engine.index.lifecycle`), when a run starts or what a search answers meanwhile (the
store that owns the worker decides: `engine.store.partitioned`), the lock the worker
shares with the application (`engine.store.lock`), or any file. A store makes
its worker, and so loads this module, only when a writer's search first finds work
pending or a reconcile runs: a search that finds none never needs it.

Who may reconcile. Only a store opened as the writer: reconciling writes the index, and a
store has one writer (its `LOCK`). So the worker belongs to the writer's store object, one
per open store, at most one run at a time; a store opened read-only (a `search` command,
`serve`, an OpenClaw state) never starts one: its searches answer `indexing: true` while
work is pending, and the writer's next search, `session-search reconcile`, or an import
does the work. The worker covers every partition of the store (each partition is one
agent's database; one thread for all of them keeps "at most one per database" and costs
one thread), and is the same code over both backends: it calls only
`ReconcilesInBatches`.

A run (`ReconcileWorker.start`, by the first search that finds work pending):
* for each partition whose `index_status()` is true, in agent order: take the windows
  needing work (dirty, missing, lagging and unclassified ones, and transcripts that
  predate the index: §8.3), rebuild them in batches (`reconcile_batch`: windows until
  about `EngineConfig.reconcile_batch_events` events were read, one short transaction
  each), look again for windows that needed work meanwhile, and when none is left sweep
  the orphaned rows (`sweep_orphans`); the partition is then finished;
* each batch holds the store's lock, and the lock lets application calls go first
  (`StoreLock.background` waits until no application call is waiting), so a write or a
  search waits for at most one batch, never for the whole run; between batches the store
  answers from what the batches committed, and a window still needing work keeps being
  left out of every search by its scope (§5.3), so no hit from a window needing a rebuild
  is ever returned;
* the run is bounded by a watchdog, as the reader is (§7.3): a `Cancellation` with the
  deadline `EngineConfig.reconcile_budget_milliseconds` after the start, checked before
  every window; a run past its budget ends there (`ending` "budget") and the next search
  that finds work starts another, which goes on from what the earlier one committed;
* closing the store cancels the run and joins the thread before any partition is
  closed (`stop`), so no thread is left running and nothing is written after close; a
  batch cut short commits what it rebuilt (a whole window or nothing: the transaction),
  so a kill at any point loses nothing committed (the transcripts are the source of
  truth, and a window not yet rebuilt stays marked as needing work);
* a failure (a full disk) ends the run (`ending` "failed", the message kept); nothing is
  raised into the application, whose next search starts another run.

A search that another thread interrupts (the tools' reader watchdog, `Interruptible`)
while it waits for a SQLite batch interrupts that batch's statement instead: the batch
rolls back and the run ends "failed"; nothing is lost, and the next search starts again.

The lock (`engine.store.lock.StoreLock`) lets application calls go before the
worker's batches; `wait` must not be called while holding it (inside a transaction):
the worker could not take it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.backends.protocol import Maintenance, ReconcilesInBatches
from engine.cancellation import Cancellation
from engine.config import EngineConfig
from engine.progress import StepProgress

if TYPE_CHECKING:
    from engine.store.lock import StoreLock

#: The batches of the `reconcile` command (`PartitionedStore.reconcile_in_batches`): it
#: holds the lock for its whole run, so they only bound one transaction's size (SQLite's
#: `RECONCILE_BATCH_EVENTS`).
FOREGROUND_BATCH_EVENTS = 50_000


@dataclass(frozen=True, slots=True)
class BackgroundRun:
    """What one background run did: windows rebuilt, the index rows they hold, orphaned
    windows swept, seconds, and how it ended: "finished" (nothing left to do),
    "budget" (the watchdog stopped it), "stopped" (the store was closed), "failed"
    (`error` says why)."""

    windows: int
    rows: int
    orphans: int
    seconds: float
    ending: str
    error: str | None = None


class ReconcileWorker:
    """The reconcile worker of one open store (the rules are in the module docstring).

    `partitions` gives the store's partitions by agent id; it is called holding the lock.
    """

    def __init__(self, partitions: Callable[[], Mapping[str, object]], lock: StoreLock,
                 config: EngineConfig, name: str = "session-search reconcile") -> None:
        self._partitions = partitions
        self._lock = lock
        self._config = config
        self._name = name
        self._thread: threading.Thread | None = None
        self._cancellation = Cancellation()
        #: The agents the running run has not finished yet (None: no run).
        self._unfinished: set[str] | None = None
        self._state = threading.Lock()
        #: The last run that ended.
        self.last_run: BackgroundRun | None = None

    @property
    def running(self) -> bool:
        """Whether a run is going on."""
        thread = self._thread
        return thread is not None and thread.is_alive()

    def covers(self, agent_ids: Iterator[str] | list[str]) -> bool:
        """Whether the running run may still change the index of one of `agent_ids`
        (so their searches answer `indexing: true`)."""
        with self._state:
            unfinished = self._unfinished
            return unfinished is not None and any(agent in unfinished for agent in agent_ids)

    def start(self) -> bool:
        """Start a run unless one is going on; whether this call started one."""
        if self.running:
            return False
        budget = self._config.reconcile_budget_milliseconds / 1000
        self._cancellation = Cancellation(time.monotonic() + budget)
        with self._state:
            self._unfinished = set(self._partitions())
        self._thread = threading.Thread(target=self._run, args=(self._cancellation,),
                                        name=self._name, daemon=True)
        self._thread.start()
        return True

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the running run to end (at most `timeout` seconds); whether none is
        running now. Never call it holding the store's lock."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
        return not self.running

    def stop(self) -> None:
        """Cancel the running run and wait until its thread has ended."""
        self._cancellation.cancel()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    # ----- the run ----------------------------------------------------------------------

    def _run(self, cancellation: Cancellation) -> None:
        started = time.perf_counter()
        watchdog = threading.Timer(max(0.0, cancellation.deadline - time.monotonic()),
                                   cancellation.cancel)
        watchdog.daemon = True
        watchdog.start()
        totals = [0, 0, 0]  # windows, rows, orphans
        ending, error = "finished", None
        try:
            with self._lock.background():
                partitions = dict(self._partitions())
            for agent_id, partition in partitions.items():
                if isinstance(partition, ReconcilesInBatches):
                    done = reconcile_partition(
                        partition, self._lock.background, lambda: cancellation.cancelled,
                        self._config.reconcile_batch_events)
                    for position, count in enumerate((done.windows, done.rows, done.orphans)):
                        totals[position] += count
                    if not done.finished:
                        ending = "budget" if cancellation.expired else "stopped"
                        break
                with self._state:
                    if self._unfinished is not None:
                        self._unfinished.discard(agent_id)
        except Exception as failure:  # noqa: BLE001 - a failed run must not reach the application
            ending, error = "failed", str(failure) or type(failure).__name__
        finally:
            watchdog.cancel()
            watchdog.join()  # so no timer thread outlives the run (close() promises none does)
            with self._state:
                self._unfinished = None
            self.last_run = BackgroundRun(totals[0], totals[1], totals[2],
                                          time.perf_counter() - started, ending, error)


@dataclass(frozen=True, slots=True)
class PartitionReconciled:
    """What `reconcile_partition` did, and whether it got to the end (`finished`)."""

    finished: bool
    windows: int = 0
    rows: int = 0
    orphans: int = 0


def reconcile_partition(partition: ReconcilesInBatches,
                        hold: Callable[[], AbstractContextManager[object]],
                        stop: Callable[[], bool], max_events: int,
                        progress: StepProgress | None = None, *,
                        sweep_when_clean: bool = False) -> PartitionReconciled:
    """Rebuild one partition's pending windows batch by batch, each batch inside
    `hold()`; when none is left, sweep its orphans. A partition where no window needs
    work is left alone, unless `sweep_when_clean` (the `reconcile` command: §12.2 sweeps
    orphans "even when transcript watermarks are current"; the background run, started
    by any search that finds work in some partition, does not pay a sweep of every clean
    one). `stop()` is checked before every
    window; `progress(done, total)` after each batch (the total grows when windows needed
    work meanwhile). The background run and the `reconcile` command both run this."""
    windows = rows = 0
    with hold():
        if stop():
            return PartitionReconciled(False)
        if isinstance(partition, Maintenance) and not partition.index_status():
            return PartitionReconciled(
                True, orphans=partition.sweep_orphans() if sweep_when_clean else 0)
        pending = partition.windows_needing_reconcile()
    total = len(pending)
    if progress is not None:
        progress(0, total)
    while True:
        rebuilt = 0
        while pending:
            with hold():
                if stop():
                    return PartitionReconciled(False, windows, rows)
                batch = partition.reconcile_batch(pending, max_events, stop)
            windows += batch.windows
            rows += batch.rows
            rebuilt += batch.windows
            pending = pending[batch.consumed:]
            if progress is not None:
                progress(total - len(pending), total)
            if not batch.consumed:
                return PartitionReconciled(False, windows, rows)  # stopped at once
        with hold():
            if stop():
                return PartitionReconciled(False, windows, rows)
            again = partition.windows_needing_reconcile()
            if not again or not rebuilt:
                # Done; or a pass that rebuilt nothing found work again (it would only
                # spin): sweep, and leave the rest to the next run.
                return PartitionReconciled(True, windows, rows, partition.sweep_orphans())
        total += len(again)
        pending = again
