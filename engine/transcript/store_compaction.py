"""Compacting a store's log, and how a handle's reads follow a compaction.

Owns: `StoreCompaction`: `compact()` (writer only) with its steps on the store's side
(mark the compaction begun, roll the open log file when it holds dead records, rewrite
the files, reload the catalog, save a checkpoint and mark it finished), finishing an
interrupted compaction when a writer opens, and how a reader follows one: a read whose
positions a compaction moved reloads the catalog at the reader's generation and reads
again, and `refresh()` reloads it from the start. Must not touch: which records are
dead, the compaction state file and the rewriting of a log file
(`engine.transcript.compaction`), or the log's bytes. Why apart: a compaction is the
one change of the log that is not an append, and every read of a reader must stay
right across it.

Compaction (`compact()`, writer only) rewrites the sealed log files that hold records a
later delete made dead; opening, `refresh()` and the reads of a reader follow it as
`engine.transcript.compaction` says (a stale position is reloaded, never reported as
damage).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from engine.codec.compaction_file import CompactionState
from engine.errors import CorruptFile, StoreError, UsageError
from engine.transcript.catalog import Catalog
from engine.transcript.compaction import (
    begun_state,
    catalog_state,
    finished_state,
    read_compaction_state,
    write_compaction_state,
)
from engine.transcript.log_files import LOG_FOLDER
from engine.transcript.log_positions import LogCursor
from engine.transcript.log_reader import LogReader
from engine.transcript.store_checkpoint import StoreCheckpoint

if TYPE_CHECKING:  # loaded by compact(): a store opened to be read never compacts
    from engine.transcript.compaction_outcome import CompactionOutcome

Value = TypeVar("Value")

#: How many times a reader reloads its catalog for one read while a compaction runs.
COMPACTION_RETRIES = 5


class StoreCompaction(StoreCheckpoint):
    """`compact()`, and reloading the catalog after a compaction moved records."""

    def compact(self) -> CompactionOutcome:
        """Writers, between transactions: rewrite the log files that hold dead records
        (the records of windows a later delete removed) without them, crash-safely, and
        reload the catalog (`engine.transcript.compaction` says how and why). Nothing
        committed changes: every transaction, window and event a read sees stays. A
        file the disk refuses stops it with a StoreError that leaves the store whole."""
        self._check_open()
        writer = self._writer
        if writer is None:
            raise StoreError("this store was opened read-only; open it with writer=True")
        if self._transaction is not None:
            raise UsageError("cannot compact the log inside a transaction")
        # here, not at the top: a store opened to be read never compacts (start-up cost)
        from engine.transcript.compaction_outcome import CompactionOutcome
        from engine.transcript.compaction_plan import plan_compaction, rewrite_log_file

        plan = plan_compaction(self.directory, self._catalog)
        if not plan.dead:
            return CompactionOutcome()
        begun = begun_state(read_compaction_state(self.directory))
        write_compaction_state(self.directory, begun)
        self._compaction_seen = begun
        reclaimed = 0
        try:
            if plan.last_file in plan.dead and not self._cursor.sealed:
                writer.roll()
            for number in sorted(plan.dead, reverse=True):  # the last first: see the module
                reclaimed += rewrite_log_file(self.directory, number, plan.dead[number])
        except StoreError as error:
            self._reload_writer_catalog()
            raise StoreError(
                f"the compaction stopped: {error}; the store is whole (every committed "
                "transaction is kept, the next open replays the log): free space and run "
                "the compaction again") from None
        self._reload_writer_catalog()
        finished = finished_state(begun, reclaimed)
        try:
            self.rewrite_checkpoint()
            write_compaction_state(self.directory, finished)
        except StoreError as error:
            raise StoreError(
                f"the compaction rewrote {len(plan.dead)} log files but could not finish: "
                f"{error}; the store is whole (the next open replays the log, and the next "
                "writer saves the checkpoint)") from None
        self._compaction_seen = finished
        return CompactionOutcome(len(plan.dead), reclaimed, plan.record_count)

    def _finish_interrupted_compaction(self) -> None:
        """A writer that opened after an interrupted compaction: save a checkpoint of the
        log as it is and clear the flag (derived data: a refusal waits for the next)."""
        state = self._compaction_seen
        done = CompactionState(max(state.compactions, 1), False, state.reclaimed_bytes)
        try:
            self.rewrite_checkpoint()
            write_compaction_state(self.directory, done)
        except StoreError:
            return
        self._compaction_seen = done

    def _log_moved(self) -> bool:
        """Whether a compaction may have moved records since the catalog was loaded."""
        return (self._compaction_seen.in_progress
                or read_compaction_state(self.directory) != self._compaction_seen)

    def _compaction_busy(self) -> StoreError:
        return StoreError(f"{self.directory.location(LOG_FOLDER)}: the transcript log is being "
                          "compacted; try again when the compaction has finished")

    def _compaction_safe(self, read: Callable[[], Value]) -> Value:
        """Run a read of events; a reader whose positions a compaction moved reloads its
        catalog at its generation and reads again (never `CorruptFile` for that)."""
        for _attempt in range(COMPACTION_RETRIES):
            try:
                return read()
            except CorruptFile:
                if self._writer is not None or not self._log_moved():
                    raise
                self._reload_same_generation()
        raise self._compaction_busy()

    def _install(self, catalog: Catalog, reader: LogReader) -> None:
        """Use `catalog`, replayed by `reader`, from now on."""
        if self._positions_reader is not None:
            self._positions_reader.close()
            self._positions_reader = None
        self._catalog = catalog
        self._reader = reader
        self._cursor = reader.cursor
        self._sealed_files = list(reader.sealed_files)

    def _reload_writer_catalog(self) -> None:
        """Replay the whole (rewritten) log into a new catalog."""
        reader = LogReader(self.directory)
        catalog = Catalog()
        for transaction in reader.iter_transactions():
            catalog.apply(transaction, self._log_file_location)
        self._install(catalog, reader)

    def _reload_same_generation(self) -> None:
        """Readers: replay the log up to this handle's generation and use it, when it
        gives the same state (StoreError when windows of this view were compacted away)."""
        state = read_compaction_state(self.directory)
        target = self.generation
        reader = LogReader(self.directory)
        catalog = Catalog()
        for transaction in reader.iter_transactions():
            if transaction.transaction_id > target:
                break  # the reader's cursor is at the end of transaction `target`
            catalog.apply(transaction, self._log_file_location)
        if catalog.generation != target or catalog_state(catalog) != catalog_state(
                self._catalog):
            raise StoreError(
                f"{self.directory.location(LOG_FOLDER)}: the transcript log was compacted "
                f"after this reader read it (generation {target}), and windows it shows "
                "were deleted since: refresh or reopen the store")
        self._install(catalog, reader)
        self._compaction_seen = state

    def _reload_all(self, state: CompactionState) -> None:
        """Readers: load the catalog again as an open does (checkpoint, then replay)."""
        saved = (self._catalog, self._reader, self._cursor, self._sealed_files,
                 self._positions_reader, self._compaction_seen, self.checkpoint_generation,
                 self.checkpoint_ignored, self._checkpoint_problem, self._claims)
        self._catalog, self._reader, self._cursor, self._sealed_files = (
            Catalog(), LogReader(self.directory), LogCursor(), [])
        self._positions_reader, self._compaction_seen, self._claims = None, state, []
        self.checkpoint_generation = self.checkpoint_ignored = self._checkpoint_problem = None
        try:
            self._load_checkpoint()
            self._replay()
        except BaseException:
            if self._positions_reader is not None:
                self._positions_reader.close()
            (self._catalog, self._reader, self._cursor, self._sealed_files,
             self._positions_reader, self._compaction_seen, self.checkpoint_generation,
             self.checkpoint_ignored, self._checkpoint_problem, self._claims) = saved
            raise
        if saved[4] is not None:
            saved[4].close()
