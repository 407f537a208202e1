"""The catalog a store handle starts from, and the catalog checkpoint it saves.

Owns: `StoreCheckpoint`, the store's side of the catalog checkpoint: loading the catalog
on open (and on a reader's reload) from the checkpoint when it can be trusted, replaying
the log after it, and recording why a checkpoint found was not used; and, for a writer,
saving the checkpoint when a commit makes it due, when it goes quiet
(`save_checkpoint_when_quiet`), at a clean close and on demand (`rewrite_checkpoint`).
Must not touch: the checkpoint file and the rules of when it is due or trusted
(`engine.transcript.checkpoint`), the replay rule (`Catalog.apply`), or the log files
(`log_reader`). Why apart: the checkpoint is derived data with rules of its own (a save
the disk refuses leaves the store as it was), distinct from what was committed.

Opening replays the log after the catalog checkpoint when one can be trusted, and the
whole log otherwise (`engine.transcript.checkpoint` says what is checked, and when). A
checkpoint that can be read is evidence of what was committed even when it is not used:
its claim is kept and checked against the log (`store_recovery`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.errors import CorruptFile, StoreError
from engine.transcript.checkpoint import (
    CHECKPOINT_NAME,
    open_checkpoint,
    quiet_checkpoint_is_due,
    save_checkpoint,
    trust_checkpoint,
)
from engine.transcript.compaction import read_compaction_state
from engine.transcript.log_positions import LogCursor
from engine.transcript.store_handle import StoreHandle

if TYPE_CHECKING:
    from engine.transcript.store_problem import StoreProblem


def _unused_checkpoint(location: str, message: str, *, serious: bool = True) -> StoreProblem:
    """The problem recorded for a checkpoint that was found but not used (its module is
    loaded here: a store whose checkpoint is used makes none)."""
    from engine.transcript.store_problem import StoreProblem

    return StoreProblem(location, message, serious=serious)


class StoreCheckpoint(StoreHandle):
    """Loading the catalog (checkpoint, then replay) and saving the checkpoint."""

    def _replay(self) -> None:
        """Apply every committed transaction after the cursor to the catalog, counting
        its records (commits included) as committed since the checkpoint: the records a
        reader opening next would replay too."""
        location_of = self._log_file_location
        for transaction in self._reader.iter_transactions(self._cursor):
            self._catalog.apply(transaction, location_of)
            self._records_since_checkpoint += len(transaction.records) + 1
        self._cursor = self._reader.cursor
        self._sealed_files.extend(self._reader.sealed_files)

    def _load_checkpoint(self) -> None:
        """Start from the catalog checkpoint when it can be trusted (`load_checkpoint`);
        otherwise record in `checkpoint_ignored` why not, and let the replay do it all.
        A checkpoint that can be read is evidence of what was committed even when the
        log no longer matches it (or `catalog_checkpoints` is off): its claim is kept."""
        location = self.directory.location(CHECKPOINT_NAME)
        try:
            opened = open_checkpoint(self.directory, self.config, every_column=(
                self._lock is not None or self._accepts_lost_commits))  # a writer, verify
        except StoreError as error:  # damaged, or another layout: no claim can be read
            self.checkpoint_ignored = str(error)
            self._checkpoint_problem = _unused_checkpoint(
                location, f"{error} (the checkpoint was not used: the log was replayed; "
                          "the next writer's close saves a new one)",
                serious=isinstance(error, CorruptFile))
            return
        if opened is None:
            return
        self._claims.append(opened.claim())
        if not self.config.catalog_checkpoints:
            opened.close()
            return
        if self._compaction_seen.in_progress:
            opened.close()
            self.checkpoint_ignored = "a compaction of the log was running or interrupted"
            self._checkpoint_problem = _unused_checkpoint(
                location, f"{location}: not used: a compaction of the transcript log was "
                          "running or was interrupted, so the log was replayed (nothing "
                          "committed is lost; the next writer saves a new checkpoint)",
                serious=False)
            return
        problem = opened.disagreement(self.directory)
        if problem is not None and read_compaction_state(self.directory) != \
                self._compaction_seen:  # a compaction began since the state was read
            self._compaction_seen = read_compaction_state(self.directory)
            problem = "a compaction of the log was running"
            opened.close()
            self.checkpoint_ignored = problem
            self._checkpoint_problem = _unused_checkpoint(
                location, f"{location}: not used: the transcript log was compacted while "
                          "it was opened, so the log was replayed", serious=False)
            return
        if problem is not None:
            opened.close()
            self.checkpoint_ignored = problem
            self._checkpoint_problem = _unused_checkpoint(
                location, f"{location}: the catalog checkpoint disagrees with the log "
                          f"({problem}); it was not used: the log was replayed")
            return
        try:
            loaded = trust_checkpoint(self.directory, opened)
        except StoreError as error:
            self.checkpoint_ignored = str(error)
            self._checkpoint_problem = _unused_checkpoint(location, f"{location}: {error}")
            return
        self._catalog = loaded.catalog
        self._cursor = loaded.cursor
        self._sealed_files = list(loaded.sealed_files)
        self._positions_reader = loaded.positions_reader
        self.checkpoint_generation = self._saved_generation = loaded.transaction_id

    @property
    def checkpoint_positions_rebuilt(self) -> str | None:
        """Why the event positions of the checkpoint used on open were rebuilt by replay
        when they were first needed (damaged, or unreadable); None when they were read
        intact, are not needed yet, or no checkpoint was used."""
        reader = self._positions_reader
        return None if reader is None else reader.problem

    def rewrite_checkpoint(self) -> None:
        """Writers, between transactions: save the catalog checkpoint of what is committed
        now, or remove the checkpoint file when nothing is (or checkpoints are off), so
        that one that was damaged, disagreed with the log or claimed commits the log lost
        is gone. Opening with `accept_lost_commits` does this at once as a writer;
        `verify --repair` calls it too."""
        self._check_open()
        if self._writer is None:
            raise StoreError("this store was opened read-only; open it with writer=True")
        cursor = self._committed_cursor()
        if cursor is not None and self._catalog.generation and self.config.catalog_checkpoints:
            self._save_checkpoint(cursor)
        elif self.directory.exists(CHECKPOINT_NAME):
            self.directory.remove(CHECKPOINT_NAME)
            self._saved_generation = 0

    def save_checkpoint_when_quiet(self) -> bool:
        """Writers, between transactions, when they go quiet: save the catalog checkpoint
        once `EngineConfig.checkpoint_idle_records` records (commits included) were
        committed, or replayed at open, since the last one (`quiet_checkpoint_is_due`);
        whether it was saved. The reference backend calls it when a reconcile of a
        partition ends, so that a reader opening next to the writer replays fewer
        records than that. A checkpoint is derived data: one the disk refuses leaves the
        store as it was (False), and the next quiet moment or the close tries again.
        Read-only stores and open transactions save nothing."""
        self._check_open()
        cursor = self._committed_cursor()
        # Records behind the checkpoint are commits (or replays) after it, so the count
        # alone says whether the catalog moved since it was saved.
        if (cursor is None or not self.config.catalog_checkpoints
                or not quiet_checkpoint_is_due(self._records_since_checkpoint, self.config)):
            return False
        return self._save_derived_checkpoint(cursor)

    def _committed_cursor(self) -> LogCursor | None:
        """Where a writer's committed records end, between transactions (None inside one,
        when no log file is open and the last commit sealed none, or when that cursor
        does not end at the catalog's last commit).

        The last case: a commit that was fsynced and applied to the catalog but whose
        log file then failed to seal (its footer refused) leaves the writer failed and
        the last sealed cursor one commit behind. A checkpoint over that cursor would
        claim the newer commit at a position that does not hold it, and every later
        open would refuse the log as corrupt; with no cursor, no checkpoint is saved and
        the next open replays the log, which holds the commit."""
        writer = self._writer
        if writer is None or self._transaction is not None:
            return None
        cursor = writer.committed_cursor()
        if cursor is None and self._cursor.sealed:
            cursor = self._cursor  # the last commit sealed its log file
        if cursor is not None and cursor.transaction_id != self._catalog.generation:
            return None
        return cursor

    def _save_derived_checkpoint(self, cursor: LogCursor) -> bool:
        """`_save_checkpoint` where a refusal is not an error: the checkpoint is derived
        data, a refused one leaves the store as it was, and a later save tries again;
        whether it was saved."""
        try:
            self._save_checkpoint(cursor)
        except StoreError:
            return False
        return True

    def _save_checkpoint(self, cursor: LogCursor) -> None:
        """Write the catalog checkpoint for the state that ends at `cursor`."""
        self._saved_generation = save_checkpoint(self.directory, self._catalog, cursor,
                                                 self._sealed_files, self.config)
        self._records_since_checkpoint = 0
