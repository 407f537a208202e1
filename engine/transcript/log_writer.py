"""Appending to the transcript log: the single writer's transactions, rolls, seals, recovery.

Owns: `LogWriter`, the store's single writer of the log: appending a transaction's
records and its commit record, the fsync after the commit (nothing before a commit
counts), cutting an aborted transaction back, rolling to a new log file once one holds
`EngineConfig.log_roll_bytes`, sealing the old one with a footer, and crash recovery
(truncating the torn or uncommitted tail a replay reported, `recover`). Must not touch:
what records mean for the store's state (that is `engine.transcript.catalog`), their
bytes (that is `engine.codec.log_file`), or when a tail is torn rather than damaged
(that is `log_tail`'s rule, applied by the reader before the writer cuts). Why apart: it
is the only code that changes a log file outside compaction, and the layout it keeps
(`log_files`) is what every reader relies on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from zlib import crc32

from engine.codec.framing import HEADER_SIZE, encode_footer, encode_header
from engine.codec.log_file import (
    CommitRecord,
    LogRecord,
    encode_event_record,
    encode_log_record,
)
from engine.config import EngineConfig
from engine.directory import AppendHandle, Directory
from engine.errors import FileSystemError, StoreError
from engine.transcript.log_files import LOG_MAGIC, log_file_name
from engine.transcript.log_positions import LogCursor, RecordPosition
from engine.transcript.log_reader import LogReader
from engine.transcript.log_tail import LogTail


class LogWriter:
    """Appends transactions to the last log file; the store's single writer owns one.

    Call order: `recover(reader)` once after replaying, then for each transaction
    `begin()`, `write(record)` any number of times, and `commit(record)` or `abort()`.
    If an I/O error leaves the files in an unknown state the writer refuses further
    work (`StoreError`): reopen the store, and recovery puts things right.
    """

    def __init__(self, directory: Directory, config: EngineConfig) -> None:
        self.directory = directory
        self.config = config
        self.file_number = 1
        self._handle: AppendHandle | None = None
        self._record_count = 0
        self._records_crc = 0
        self._saved: tuple[int, int, int, int] | None = None
        self._failed: str | None = None
        self._transaction_id = 0  # of the last commit
        self._commit_offset = 0  # where the last commit starts in this file (0: none)
        #: Set by a commit that sealed a log file: its cursor just before the footer.
        self.sealed: LogCursor | None = None

    # ----- opening -----------------------------------------------------------------------

    def recover(self, reader: LogReader) -> LogTail | None:
        """Truncate the reader's uncommitted tail and position after the last commit."""
        cursor, tail = reader.cursor, reader.tail
        self._transaction_id = cursor.transaction_id
        if cursor.sealed:
            self.file_number = cursor.file_number + 1
            return tail
        self.file_number = cursor.file_number
        self._commit_offset = cursor.commit_offset
        if not self.directory.exists(log_file_name(self.file_number)):
            return tail
        handle = self.directory.open_append(log_file_name(self.file_number))
        if tail is not None:
            handle.truncate(tail.committed_end)
            handle.sync()
        self._handle = handle
        self._record_count, self._records_crc = cursor.record_count, cursor.records_crc
        return tail

    # ----- transactions ------------------------------------------------------------------

    def begin(self) -> None:
        """Remember where the transaction starts, so `abort` can cut back to it."""
        self._check_usable()
        size = self._handle.size() if self._handle is not None else 0
        self._saved = (self.file_number, size, self._record_count, self._records_crc)

    def write(self, record: LogRecord) -> RecordPosition:
        """Append one record of the open transaction; return where it went. (Once an
        event of an import: the handle's checks are made only when no file is open or
        it is empty, and the write is guarded inline, as `_guarded` does.)"""
        if self._failed is not None:  # before encoding: a failed log refuses first
            self._check_usable()
        offset, length = self._append(encode_log_record(record))
        return RecordPosition(self.file_number, offset, length)

    def write_event(self, session_id: str, seq: int, created_at: float,
                    event: dict[str, Any]) -> tuple[int, int]:
        """`write` of `EventRecord(session_id, seq, created_at, event)`, given as its
        fields (a transaction's event: no record made); where it went as its offset and
        length in log file `file_number` (no `RecordPosition` made)."""
        if self._failed is not None:
            self._check_usable()
        return self._append(encode_event_record(session_id, seq, created_at, event))

    def _append(self, data: bytes) -> tuple[int, int]:
        """Append one framed record (the log is usable: the caller checked); its offset
        and length."""
        handle = self._handle
        offset = handle.size() if handle is not None else 0
        if offset == 0:
            handle = self._open_log_file()
            offset = handle.size()
        assert handle is not None
        try:
            handle.write(data)
        except FileSystemError as error:
            self._failed = str(error)
            raise
        self._record_count += 1
        self._records_crc = crc32(data, self._records_crc)  # `update_crc`, without its call
        return offset, len(data)

    def commit(self, record: CommitRecord) -> RecordPosition:
        """Append the commit record, fsync, and roll to a new log file if this one is full.

        Raises only when the transaction is not durable (an error before the fsync
        returned): a failure to seal the full file afterwards leaves the commit standing
        and the writer failed."""
        position = self.write(record)
        handle = self._open_log_file()
        self._guarded(handle.sync)
        self._saved = None
        self.sealed = None
        self._transaction_id, self._commit_offset = record.transaction_id, position.offset
        if handle.size() >= self.config.log_roll_bytes:
            try:
                self._seal()
            except FileSystemError:
                pass  # the commit is durable; the writer is failed, and the next writer
                #       cuts the torn footer off like any unfinished write
        return position

    def abort(self) -> None:
        """Cut the files back to where `begin` found them."""
        if self._saved is None:
            return
        file_number, size, self._record_count, self._records_crc = self._saved
        self._saved = None
        if self._handle is not None:
            if file_number != self.file_number:  # pragma: no cover - files roll only at commit
                raise StoreError("internal error: transaction spans two log files")
            self._guarded(self._handle.truncate, max(size, HEADER_SIZE))

    def roll(self) -> LogCursor | None:
        """Between transactions: seal the open log file now, as a full one is sealed
        (`engine.transcript.compaction` seals it to rewrite it); the next transaction
        starts the next file. Returns the sealed cursor (`sealed`), or None when the
        open file holds no commit (nothing to seal)."""
        self._check_usable()
        if self._saved is not None:
            raise StoreError("internal error: a log file is rolled inside a transaction")
        if self._handle is None or self._record_count == 0:
            return None
        self._seal()
        return self.sealed

    def committed_cursor(self) -> LogCursor | None:
        """Where the committed records end in the open log file, between transactions
        (None inside a transaction, after a failure, or when no log file is open)."""
        if self._handle is None or self._saved is not None or self._failed is not None:
            return None
        return LogCursor(self.file_number, self._handle.size(), self._record_count,
                             self._records_crc, transaction_id=self._transaction_id,
                             commit_offset=self._commit_offset)

    def flush(self) -> None:
        """Make written records readable (not durable) for reads inside a transaction."""
        if self._handle is not None:
            self._guarded(self._handle.flush)

    def close(self) -> None:
        """Close the open log file (an open transaction is aborted first)."""
        if self._saved is not None and self._failed is None:
            self.abort()
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    # ----- internals ---------------------------------------------------------------------

    def _check_usable(self) -> None:
        if self._failed is not None:
            raise StoreError(f"the store writer failed earlier ({self._failed}); reopen the store")

    def _guarded(self, action: Callable[..., object], *arguments: object) -> None:
        """Run one file operation; a `FileSystemError` (which names the file) marks the
        writer failed (see the class)."""
        try:
            action(*arguments)
        except FileSystemError as error:
            self._failed = str(error)
            raise

    def _open_log_file(self) -> AppendHandle:
        """The handle of the current log file, creating it with its header if needed."""
        if self._handle is None:
            self._handle = self.directory.open_append(log_file_name(self.file_number))
            self._record_count, self._records_crc, self._commit_offset = 0, 0, 0
        if self._handle.size() == 0:
            self._guarded(self._handle.write, encode_header(LOG_MAGIC))
        return self._handle

    def _seal(self) -> None:
        """Write and fsync the footer of the full log file; only then is it `sealed`."""
        handle = self._open_log_file()
        sealed = LogCursor(self.file_number, handle.size(), self._record_count,
                           self._records_crc, sealed=True,
                           transaction_id=self._transaction_id,
                           commit_offset=self._commit_offset)
        self._guarded(handle.write, encode_footer(self._record_count, self._records_crc))
        self._guarded(handle.sync)
        self.sealed = sealed
        handle.close()
        self._handle = None
        self.file_number += 1
        self._record_count, self._records_crc, self._commit_offset = 0, 0, 0
