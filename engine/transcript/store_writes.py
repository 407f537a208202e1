"""Writing to a transcript store: transactions, their commit, and the commit hooks.

Owns: `StoreWrites`: `transaction()` (writer only; one at a time), the commit of a
transaction (the commit record and its fsync, then the catalog, the generation, the
checkpoint when due and the commit hooks) and `add_commit_hook`. Must not touch: a
transaction's records and the overlay its reads see (`engine.transcript.transaction`),
the log's bytes (`log_writer` appends them), or what changes a hook is told
(`engine.transcript.changes`). Why apart: the write path is where durability is
promised, and its order is what makes an error out of a transaction mean it is absent.

Transactions. `transaction()` yields a `StoreTransaction` whose records are written
through to the current log file as they come and whose effects are kept in a small
overlay that reads inside the transaction see. Leaving the block normally writes the
commit record and fsyncs; only then is the overlay applied to the catalog (through the
same functions replay uses), the generation bumped, the checkpoint saved when due and
the commit hooks called. Leaving it with an exception truncates the log file back and
drops the overlay (and tells a streaming follower that had its changes to discard
them, `changes.StreamingFollower`). A transaction that wrote nothing commits nothing. So an error out of
the block means the transaction is absent: once the fsync returned, nothing raises (a
checkpoint the disk refuses is retried later; a log file that cannot be sealed leaves
the writer failed, to be reopened).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from engine.codec.log_file import CommitRecord
from engine.errors import StoreError, UsageError
from engine.transcript.changes import CommitHook, StreamingFollower
from engine.transcript.checkpoint import checkpoint_is_due
from engine.transcript.clock import now_milliseconds
from engine.transcript.log_positions import CommittedTransaction, sealed_log_file_of
from engine.transcript.store_reads import StoreReads

if TYPE_CHECKING:  # a transaction's module loads when a writer begins one, not at start-up
    from engine.transcript.log_writer import LogWriter
    from engine.transcript.transaction import StoreTransaction


class StoreWrites(StoreReads):
    """Write transactions and their commit; the hooks called after each commit."""

    @contextmanager
    def transaction(self) -> Iterator[StoreTransaction]:
        """An all-or-nothing write transaction (writer only; one at a time)."""
        self._check_open()
        writer = self._writer
        if writer is None:
            raise StoreError("this store was opened read-only; open it with writer=True")
        if self._transaction is not None:
            raise UsageError("a transaction is already open on this store")
        from engine.transcript.transaction import StoreTransaction

        writer.begin()
        transaction = self._transaction = StoreTransaction(
            self._catalog, writer, self._reader.read_events,
            keep_changes=self._change_feed.is_followed,
            streaming=self._change_feed.streaming)
        committed = False
        try:
            try:
                yield transaction
            except BaseException:
                transaction.closed = True
                self._transaction = None
                writer.abort()
                raise
            transaction.closed = True
            self._transaction = None
            if self._closed:  # close() inside the block already cut the records back
                raise StoreError(
                    "the store was closed inside the transaction; nothing was committed")
            if not transaction.records:
                writer.abort()
                return
            if transaction.failed is not None:
                writer.abort()
                raise StoreError(f"nothing was committed: {transaction.failed}")
            self._commit(writer, transaction)
            committed = True
        finally:
            if not committed and transaction.streamed_to is not None:
                transaction.streamed_to.discard()

    def _commit(self, writer: LogWriter, transaction: StoreTransaction) -> None:
        generation = self._catalog.generation + 1
        try:
            writer.commit(CommitRecord(generation, now_milliseconds()))
        except BaseException:
            writer.abort()
            raise
        records = transaction.records
        self._catalog.apply(
            CommittedTransaction(records, CommitRecord(generation, 0.0), records[0][0]),
            self._log_file_location,
            transaction.new_positions(),
        )
        record_count = len(records)
        del records
        transaction.let_records_go()
        if writer.sealed is not None:
            self._cursor = writer.sealed
            self._sealed_files.append(sealed_log_file_of(writer.sealed))
        else:
            self._cursor = writer.committed_cursor() or self._cursor
        self._records_since_checkpoint += record_count + 1
        cursor = writer.sealed or writer.committed_cursor()
        due = writer.sealed is not None or checkpoint_is_due(
            self._records_since_checkpoint, self.config)
        if cursor is not None and due and self.config.catalog_checkpoints:
            self._save_derived_checkpoint(cursor)  # the transaction is durable either way
        changes = transaction.changes
        if changes is None and self._change_feed.is_followed:  # a hook was added meanwhile
            changes = [change for _, change in self.changes_since(generation - 1)]
        self._change_feed.publish(generation, changes or [])

    def add_commit_hook(self, hook: CommitHook) -> None:
        """Call `hook(generation, changes)` after the fsync of each later transaction."""
        self._change_feed.add(hook)

    def stream_large_transactions(self, follower: StreamingFollower, after: int) -> None:
        """Hand `follower` each later transaction's changes as they are written once it
        holds `after` of them (`changes.StreamingFollower`; hooks then get none)."""
        self._change_feed.stream_to(follower, after)
