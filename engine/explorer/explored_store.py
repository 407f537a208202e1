"""The store the explorer looks at, opened read-only, and its twin on the other backend.

Owns: `ExploredStore`: the store opened once as a reader (as `search` opens it), the one
thread every read of it runs on (`read`, `compare`: the partitions were written for one
thread at a time, and a SQLite connection may be used only by the thread that opened it,
while the server answers on a pool of threads; the panels' reads queue for it), a
refresh before each read (a reference store reads the snapshot of its open; a refresh
sees what a writer committed since, so the page follows a `watch` or an `import`), and
the twin Compare searches: a copy of the store's transcripts on the other backend
(`twin_backend`), made in a temporary folder the first time Compare asks, read-only
from then on, removed on `close`. Must not touch: the
store's folder (nothing is ever written there: the explorer has no write endpoint), and
any rule of search, history or indexing (the twin is made through the backends' public
protocol: windows, events, reconcile).

Why a copy: a store is made for one backend, so the same question on "the other engine"
needs the same transcripts indexed by it. The copy writes every window (its metadata as
stored) and every event (with its stored receipt time) in one transaction, then
reconciles when the store was fully indexed, as an import ends; a store still waiting
for reconcile is copied as it is, so both say `indexing`.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from engine import Refreshable, open_backend
from engine.store.partitioned import PartitionedStore
from engine.store.registry import BACKEND_NAMES, open_store

#: The most events the twin copies: a larger store is compared against `--compare-with`.
MAX_TWIN_EVENTS = 2_000_000

Answer = TypeVar("Answer")


class ExploredStore:
    """The explorer's store (module docstring); every read goes through `read` or `compare`."""

    def __init__(self, path: str, *, backend: str | None = None,
                 compare_with: str | None = None,
                 warn: Callable[[str], None] | None = None) -> None:
        self.path = path
        self._compare_with = compare_with
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="explored-store")
        self._twin: PartitionedStore | None = None
        self._twin_folder: Path | None = None
        self._closed = False
        try:
            self.store: PartitionedStore = self._on_thread(
                lambda: open_store(path, "explore", backend=backend, warn=warn))
        except BaseException:
            self._thread.shutdown()
            raise

    def _on_thread(self, work: Callable[[], Answer]) -> Answer:
        """Run `work` on the store's thread and return its answer (or raise its error)."""
        return self._thread.submit(work).result()

    @property
    def backend(self) -> str:
        """The name of the store's backend."""
        return self.store.name

    @property
    def twin_backend(self) -> str:
        """The backend Compare runs beside the store's: the other one (or `--compare-with`'s,
        once opened)."""
        if self._twin is not None:
            return self._twin.name
        return next(name for name in BACKEND_NAMES if name != self.store.name)

    def read(self, work: Callable[[PartitionedStore], Answer]) -> Answer:
        """`work(store)` on the store's thread, the store refreshed first."""
        def run() -> Answer:
            self._check_open()
            _refreshed(self.store)
            return work(self.store)

        return self._on_thread(run)

    def compare(self, work: Callable[[PartitionedStore, PartitionedStore], Answer]) -> Answer:
        """`work(store, twin)` on the store's thread (the twin made on first use)."""
        def run() -> Answer:
            self._check_open()
            return work(_refreshed(self.store), _refreshed(self._twin_store()))

        return self._on_thread(run)

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("the explorer's store is closed")

    def _twin_store(self) -> PartitionedStore:
        if self._twin is None:
            if self._compare_with is not None:
                self._twin = open_store(self._compare_with, "explore")
            else:
                self._twin_folder = Path(tempfile.mkdtemp(prefix="session-search-explore-"))
                self._twin = copy_store(self.store, self._twin_folder / "twin",
                                        self.twin_backend)
        return self._twin

    def close(self) -> None:
        """Close the store and the twin, remove the twin's folder, end the thread
        (idempotent)."""
        if self._closed:
            return

        def run() -> None:
            self._closed = True
            try:
                self.store.close()
            finally:
                if self._twin is not None:
                    self._twin.close()
                if self._twin_folder is not None:
                    shutil.rmtree(self._twin_folder, ignore_errors=True)

        try:
            self._on_thread(run)
        finally:
            self._thread.shutdown()


def _refreshed(store: PartitionedStore) -> PartitionedStore:
    """`store`, after it saw the commits made since its last look (when it reads a snapshot)."""
    if isinstance(store, Refreshable):
        store.refresh()
    return store


def copy_store(source: PartitionedStore, folder: Path, backend: str) -> PartitionedStore:
    """A new store of `backend` at `folder` holding `source`'s windows and events, opened
    as a reader (module docstring)."""
    windows = source.windows()
    events = sum(source.event_count(window.session_id) for window in windows)
    if events > MAX_TWIN_EVENTS:
        from engine import UsageError

        raise UsageError(f"the store holds {events} events, more than the {MAX_TWIN_EVENTS} "
                         "Compare copies; compare against a store of the other backend "
                         "(explore --compare-with DIR)")
    writer = open_backend(folder, backend=backend, create=True, writer=True)
    try:
        with writer.transaction() as transaction:
            for window in windows:
                transaction.put_window(window)
            for window in windows:
                for event in source.events(window.session_id):
                    transaction.append_event(window.session_id, event.event, event.created_at)
        if not source.index_status():
            writer.reconcile()
    finally:
        writer.close()
    return open_backend(folder, backend=backend)
