"""The reconcile workloads: rebuilding every window of a store whose every window is dirty,
in the foreground and in the background.

Owns: `ReconcileWorkload` (one timed `reconcile()`), `BackgroundReconcileWorkload` (the
first search on a writer that reconciles in the background, and that run to its end),
their untimed setup (`dirty_every_window`) and their shared checks (`rebuilt_samples`).
Must not touch: reconciliation itself (reached only through `adapters` and the backend),
the other workload families, the order of runs (`schedule`), statistics, printing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from engine.backends.protocol import Backend
from engine.bench.adapters import CapabilityMissing, backend_method, finish_indexing, remove_store
from engine.bench.corpus_generator import iter_window_leaves
from engine.bench.workload_protocol import (
    QUERY_LIMIT,
    BenchTarget,
    HitExpectation,
    Sample,
    WorkloadFailed,
)
from engine.model import SearchRequest, SearchResult


@dataclass(frozen=True, slots=True)
class ReconcileWorkload:
    """Reconciliation throughput: every window dirty, then one `reconcile()` (timed).

    Untimed setup per round: a fresh store with the corpus imported and reconciled, then
    one transaction appending to every window a `leaf` event that points at the window's
    own leaf. The active paths do not change, but a leaf-control event marks its window
    dirty (behaviour.md §8.1), so the timed `reconcile()` rebuilds every window from its
    transcript. Checked: every window was rebuilt, the index holds exactly the corpus's
    searchable messages again, and the common-word probe answers right.
    """

    name: str = "reconcile/all_windows"
    group: str = "reconcile"
    query_class: str = "reconciliation throughput"

    def run_round(self, target: BenchTarget) -> list[Sample]:
        directory = target.scratch_directory / f"reconcile-{target.backend_name}"
        if directory.exists():
            remove_store(directory)
        backend = target.services.open_store(target.backend_name, directory, True, True)
        try:
            reconcile = backend_method(backend, "reconcile", "reconciliation")
            windows = dirty_every_window(target, backend)
            started = time.perf_counter()
            rebuilt = int(reconcile())
            elapsed = time.perf_counter() - started
            indexed = backend.stats().get("messages_indexed")
            common = target.manifest["probes"]["common_word"]
            result = backend.search(SearchRequest(query=common["query"], limit=QUERY_LIMIT,
                                                  session_keys=()))
        finally:
            backend.close()
            remove_store(directory, ignore_errors=True)
        return rebuilt_samples(self.name, target, result, rebuilt=rebuilt, windows=windows,
                               indexed=indexed, elapsed=elapsed, after="reconcile")


def dirty_every_window(target: BenchTarget, backend: Backend) -> int:
    """Untimed setup of the reconcile workloads, on a fresh store: the corpus imported
    and reconciled, then one transaction appending to every window a `leaf` event that
    points at its own leaf (every window dirty, the active paths unchanged; see
    `ReconcileWorkload`). The number of windows."""
    target.services.import_corpus(backend, target.corpus_directory)
    finish_indexing(backend)
    leaves = list(iter_window_leaves(target.corpus_directory))
    with backend.transaction() as transaction:
        for number, (session_id, leaf) in enumerate(leaves, 1):
            transaction.append_event(session_id, {
                "type": "leaf", "id": f"bench-leaf-{number}", "parentId": leaf,
                "targetId": leaf, "timestamp": 1_800_000_000_000 + number,
            })
    return len(leaves)


@dataclass(frozen=True, slots=True)
class BackgroundReconcileWorkload:
    """Background reconciliation: the first search on a store whose every window is
    dirty (it answers `indexing: true` and starts the store's reconcile worker), then the
    worker's run to its end; the whole is timed, and that first search alone is the
    metric `first_search_seconds`.

    Untimed setup per round: `dirty_every_window` on a fresh store, closed, then opened
    again as the writer with background reconcile on (`BenchServices.open_reconciling_store`). Checked: the
    first search answered `indexing: true`; the run finished (not stopped by its budget)
    having rebuilt every window; afterwards the index holds exactly the corpus's
    searchable messages and the common-word probe answers right with `indexing: false`.
    """

    name: str = "reconcile/background"
    group: str = "reconcile"
    query_class: str = "background reconciliation"

    def run_round(self, target: BenchTarget) -> list[Sample]:
        opener = target.services.open_reconciling_store
        if opener is None:
            raise CapabilityMissing(f"{self.name}: these services open no store that "
                                    "reconciles in the background")
        directory = target.scratch_directory / f"background-{target.backend_name}"
        if directory.exists():
            remove_store(directory)
        try:
            written = target.services.open_store(target.backend_name, directory, True, True)
            try:
                windows = dirty_every_window(target, written)
            finally:
                written.close()
            backend = opener(target.backend_name, directory)
            try:
                wait = backend_method(backend, "wait_for_reconcile", "background reconcile")
                common = target.manifest["probes"]["common_word"]
                request = SearchRequest(query=common["query"], limit=QUERY_LIMIT,
                                        session_keys=())
                started = time.perf_counter()
                first = backend.search(request)
                searched = time.perf_counter()
                ended = wait(None)
                elapsed = time.perf_counter() - started
                run = getattr(backend, "background_run", None)
                indexed = backend.stats().get("messages_indexed")
                result = backend.search(request)
            finally:
                backend.close()
        finally:
            remove_store(directory, ignore_errors=True)
        problems = [] if first.indexing else ["the first search did not report indexing"]
        if not ended or run is None or run.ending != "finished":
            raise WorkloadFailed(f"{self.name}: the background run did not finish: {run}")
        return rebuilt_samples(self.name, target, result, rebuilt=run.windows, windows=windows,
                               indexed=indexed, elapsed=elapsed, after="the background run",
                               problems=problems,
                               metrics={"first_search_seconds": searched - started})


def rebuilt_samples(name: str, target: BenchTarget, result: SearchResult, *, rebuilt: int,
                    windows: int, indexed: int | None, elapsed: float, after: str,
                    problems: list[str] | None = None,
                    metrics: dict[str, float] | None = None) -> list[Sample]:
    """The checks of the reconcile workloads after their rebuild (every one of the
    `windows` rebuilt, the corpus's searchable messages indexed, the common-word probe's
    `result` right and not `indexing`; `WorkloadFailed` naming `name` otherwise), and the
    round's sample: `elapsed` with the throughput, windows rebuilt and `metrics`."""
    searchable = target.manifest["counts"]["searchableMessages"]
    common = target.manifest["probes"]["common_word"]
    problems = [*(problems or []),
                *HitExpectation(common["matchingMessages"]).problems(result, "relevance")]
    if rebuilt < windows:
        problems.append(f"expected {windows} windows rebuilt, got {rebuilt}")
    if indexed is not None and indexed != searchable:
        problems.append(f"expected {searchable} messages indexed, got {indexed}")
    if result.indexing:
        problems.append(f"the index still reports indexing after {after}")
    if problems:
        raise WorkloadFailed(f"{name}: " + "; ".join(problems))
    return [Sample(elapsed, {
        "messages_per_second": searchable / elapsed if elapsed > 0 else 0.0,
        "windows_rebuilt": float(rebuilt), **(metrics or {}),
    })]
