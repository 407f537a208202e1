"""Reconcile and the other upkeep of a reference store's index: rebuilding the windows that
need work, sweeping orphans, compacting the transcript log, rebuilding the whole index.

Owns: `IndexMaintenance`, the part of `ReferenceBackend` that `reconcile`, the store's
background worker, `compact` and `verify --repair` run, and the reconcile's rebuilds
made with the commit of an import that asked for them (below). Must not touch: how a committed
change reaches the index and which windows need work (`indexing`), the index-state rules
(`engine.index.lifecycle`), what is searchable (`engine.transcript.projection`), when the
background worker runs (`engine.store.background`).

Reconcile. Windows that need work (§8.3: no state, dirty, or lagging) are excluded from
search when dirty and make `indexing` true. `reconcile()` rebuilds each such window from
its active path (delete its rows, index `projection.index_entries(events)`, set
`lifecycle.rebuilt_state`) and sweeps rows and states of windows the store no longer has.
An incognito window (`SessionWindow.is_incognito`) is stored but never indexed: its
events move its index state like any other window's and add no row, and its rebuild
yields none, so it neither matches nor counts in bm25 statistics, as OpenClaw never
writes it to an agent database. The backend itself never starts a reconcile:
`reconcile_batch` and `sweep_orphans` are the pieces the store's background worker runs
when a search on the store's writer finds work pending (`engine.store.background`);
readers cannot write. Or run `session-search reconcile --store DIR`.

With the commit of an import that reconciles after it (a streamed transaction that
asked for it, `streaming.StreamedIndexing.rebuilds`), the windows waiting for reconcile
are rebuilt as that reconcile would rebuild them, in the same order after the
transaction's rows (`_on_commit`), so that reconcile finds nothing left. A window the
import held (`streaming.HeldWindow`) is read back a run of its active path's events at
a time, its tree not scanned again; any other, as `rebuild_window` reads it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from engine.backends.reference.indexing import IndexedStore
from engine.errors import StoreError, UnknownSession
from engine.index.inverted_index import InvertedIndex
from engine.index.lifecycle import needs_reconcile
from engine.model import StoredEvent

if TYPE_CHECKING:
    from engine.backends.reconcile_batch import ReconcileBatch
    from engine.backends.reference.streaming import HeldWindow
    from engine.progress import StepProgress
    from engine.transcript.changes import Change
    from engine.transcript.compaction_outcome import CompactionOutcome


class IndexMaintenance(IndexedStore):
    """The upkeep of an `IndexedStore`'s index (the writer's: a reader cannot write)."""

    def orphan_session_ids(self) -> list[str]:
        """Windows that have index rows or state but no transcript events (§8.3: gone
        from the store, or emptied), as the SQLite backend's sweep counts them."""
        known = {session_id for session_id, count in self.store.event_counts().items() if count}
        # Usually every window a segment names is known: then no row needs to be read.
        unknown = self.index.session_ids_maybe_indexed() - known
        orphans = {session_id for session_id in unknown if self.index.window_doc_ids(session_id)}
        return sorted(orphans | (set(self.index.window_states) - known))

    def rebuild_window(self, session_id: str, known: Sequence[StoredEvent] | None = None,
                       *, flushing: bool = True, flush_rows: int | None = None) -> None:
        """Replace a window's rows by its active path's entries and reset its state.

        `known` may hold the window's events as they were committed; they are used when
        they are all of them (seq 0, 1, ... up to the window's count), else the events
        are read from the store, a long window's a run at a time (flushing the buffer
        between runs unless not `flushing`: a whole rebuild commits its index at the end;
        when it holds `flush_rows` rows, see `IndexedStore._flush_when_due`).
        """
        from engine.held_signals import signals_held  # here: a search never rebuilds

        count = self.store.event_count(session_id)
        if known is not None and len(known) == count and all(
                event.seq == seq for seq, event in enumerate(known)):
            events = list(known)
        elif count > self.config.index_flush_documents and self.store.is_writer:
            with signals_held():  # a long window, read a run at a time
                if self._rebuild_in_runs(session_id, flushing=flushing,
                                         flush_rows=flush_rows):
                    return
            events = self.store.events(session_id)
        else:
            events = self.store.events(session_id)
        with signals_held():  # a Ctrl-C between two windows, never inside one's rows
            self._rebuild_from(session_id, events)

    def reconcile(self, progress: StepProgress | None = None) -> int:
        """Rebuild every window needing work, sweep orphans, flush; return the windows
        rebuilt (the orphans swept are not counted: `sweep_orphans` says how many).

        `progress(done, total)` is called first and after each rebuilt window.

        The buffer is flushed when it holds a segment of tier 1 (`first_tier_rows`),
        not `index_flush_documents` rows: flushed at that size, a large reconcile's
        segments were merged again by tiers (every row rewritten once more), and the
        buffer is small enough for it (`engine.index.write_buffer`)."""
        self._require_writer("reconcile")
        known = self._apply_deferred(skip_left_dirty=True) if self._deferred else {}
        work = self._rebuild_waiting(known, {}, progress)
        self.sweep_orphans()
        return work

    def _rebuild_waiting(self, known: dict[str, list[StoredEvent]],
                         held: dict[str, HeldWindow | None],
                         progress: StepProgress | None = None) -> int:
        """Rebuild every window needing work, in session-id order, the buffer flushed
        when it holds a segment of tier 1 (`reconcile`); a window of `held` from its
        active path, read back a run at a time (`IndexedStore._rebuild_in_runs`), one of
        `known` from those events (`rebuild_window`). Each window's entry of `known` or
        `held` is let go as it is taken (a held path is an integer an event, kept until
        its window is rebuilt, not to the end). The windows rebuilt."""
        from engine.index.writer import first_tier_rows  # a writer's only, as is this upkeep

        work = self.windows_needing_reconcile()
        flush_rows = first_tier_rows(self.config)
        if progress is not None:
            progress(0, len(work))
        for done, session_id in enumerate(work, 1):
            window = held.pop(session_id, None)
            if window is not None:
                self._rebuild_in_runs(session_id, flush_rows=flush_rows, known=window)
            else:
                self.rebuild_window(session_id, known.pop(session_id, None),
                                    flush_rows=flush_rows)
            self._flush_when_due(rows=flush_rows)  # the buffer stays bounded, whatever the work
            if progress is not None:
                progress(done, len(work))
        return len(work)

    def _on_commit(self, generation: int, changes: list[Change]) -> None:
        """`IndexedStore._on_commit`; then, when the transaction streamed and asked
        for it (an import that reconciles after it), the rebuild of every window waiting
        for reconcile, as that reconcile would (module docstring). The transaction is
        durable already: a rebuild that cannot read or write a file leaves the windows
        not rebuilt yet waiting, to that reconcile, which reports it (a commit across
        agents must not fail after its commit point for derived data)."""
        held = self._streamed.rebuilds() if self._streamed is not None else None
        super()._on_commit(generation, changes)
        if held is not None:
            from engine.backends.reference.streaming import SHARED_BUFFERS
            from engine.held_signals import signals_held  # here: a search never rebuilds

            if self.index_status():  # the other partitions' buffers are not kept meanwhile
                SHARED_BUFFERS.write_all(self.config)
            try:
                with signals_held():
                    self._rebuild_waiting({}, held)
            except (OSError, StoreError):
                pass  # the windows left still need reconcile (`index_status`)
            self._flush_when_due(always=True)

    def reconcile_batch(self, pending: Sequence[str], max_events: int,
                        stop: Callable[[], bool]) -> ReconcileBatch:
        """Rebuild windows from the front of `pending` that still need it, until about
        `max_events` events were read or `stop()` (`ReconcilesInBatches`); the index
        files are written when the buffer is due (`_flush_when_due`), and at the end of
        the worker's run (`sweep_orphans`) or at `close`."""
        self._require_writer("reconcile")
        if self._deferred:
            self._apply_deferred(skip_left_dirty=True)
        states = self.index.window_states
        consumed = windows = rows = events = 0
        for session_id in pending:
            if stop() or (windows and events >= max_events):
                break
            consumed += 1
            try:  # the batch's own windows only: a batch costs O(its windows), not O(store)
                count = self.store.event_count(session_id)
            except UnknownSession:  # deleted since the run listed it
                count = 0
            if not needs_reconcile(states.get(session_id), count - 1):
                continue
            self.rebuild_window(session_id)
            windows += 1
            rows += len(self.index.window_doc_ids(session_id))
            events += count
        self._flush_when_due()
        from engine.backends.reconcile_batch import ReconcileBatch  # a search never reconciles

        return ReconcileBatch(consumed, windows, rows)

    def sweep_orphans(self) -> int:
        """Drop the rows and states of windows the store no longer has, then write the
        index files (`ReconcilesInBatches`); the number of such windows.

        It ends a reconcile of this partition (`reconcile()`, and a run of the
        background worker that finished the partition): the writer goes quiet, so it
        also saves the transcript catalog's checkpoint when enough records are behind it
        (`TranscriptStore.save_checkpoint_when_quiet`). With the index files just
        written, a reader opening next to this writer then replays neither index
        changes nor more than `EngineConfig.checkpoint_idle_records` log records."""
        self._require_writer("reconcile")
        orphans = self.orphan_session_ids()
        for session_id in orphans:
            self._index_changes += 1
            self.index.delete_window_rows(session_id)
            self.index.window_states.pop(session_id, None)
        self.flush()
        self.store.save_checkpoint_when_quiet()
        return len(orphans)

    def compact(self) -> CompactionOutcome:
        """Reclaim the transcript log's deleted records (`TranscriptStore.compact`,
        writer only). The index is left as it is: it names events by session id and
        seq, never by log position, and the generation its manifest covers stays (every
        commit record is kept); its deleted rows are dropped by `merge`."""
        self._require_writer("compact the transcript log")
        return self.store.compact()

    def rebuild_index(self) -> int:
        """Discard the index and rebuild every window from its transcript (`verify --repair`).

        Returns the number of windows rebuilt; the result is merged into one segment.
        """
        self._require_writer("rebuild the index")
        generation = self.index.generation
        self._index_changes += 1
        self.index = InvertedIndex(generation=generation, config=self.config)
        windows = [window.session_id for window in self.store.windows()]
        for session_id in windows:
            if self.store.event_count(session_id):
                self.rebuild_window(session_id, flushing=False)
        self.merge()
        return len(windows)
