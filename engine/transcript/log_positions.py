"""Where committed data lies in the transcript log: record positions, cursors, sealed files.

Owns: the values that name places in the log files without reading them:
`RecordPosition` (one framed record), `LogCursor` (how far committed data has been read),
`SealedLogFile` (what identifies a sealed log file) and `CommittedTransaction` (the records
of one committed transaction with their positions, as a replay yields them). Must not
touch: the files (`log_reader` reads them, `log_writer` appends to them) or the bytes of
records (`engine.codec.log_file`). Why apart: the catalog, its checkpoint, the evidence of
what was committed and compaction hold these values, and most of them never read a log
file. `RecordPosition`, `CommittedTransaction` and `SealedLogFile` are NamedTuples, not
frozen dataclasses: opening a store (a search's start-up) imports this module, and a
NamedTuple's class costs a fraction of a frozen dataclass's to make. `LogCursor` stays a
dataclass: its readers move it on with `dataclasses.replace`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from engine.codec.framing import FOOTER_SIZE, HEADER_SIZE
from engine.codec.log_file import CommitRecord, LogRecord


class RecordPosition(NamedTuple):
    """Where one framed record lives: log file number, byte offset, framed length."""

    file_number: int
    offset: int
    length: int


class CommittedTransaction(NamedTuple):
    """The records of one committed transaction (commit record excluded)."""

    records: Sequence[tuple[RecordPosition, LogRecord]]
    commit: CommitRecord
    start: RecordPosition

    @property
    def transaction_id(self) -> int:
        """The id in the commit record (the store generation after it)."""
        return self.commit.transaction_id


@dataclass(frozen=True, slots=True)
class LogCursor:
    """How far committed data has been read.

    `offset` is the end of the last commit read in log file `file_number` (or the end of
    the header); `record_count` and `records_crc` cover the records before `offset` in
    that file (for the footer check); `sealed` says the file's footer was verified (or
    written); `transaction_id` is the last commit's; `commit_offset` is where that commit
    record starts when it lies in file `file_number` (0 when the file has no commit).
    """

    file_number: int = 1
    offset: int = HEADER_SIZE
    record_count: int = 0
    records_crc: int = 0
    sealed: bool = False
    transaction_id: int = 0
    commit_offset: int = 0


class SealedLogFile(NamedTuple):
    """What identifies a sealed log file without reading its records: its size and what
    its footer says (record count, CRC32 of the record bytes)."""

    size: int
    record_count: int
    records_crc: int


def sealed_log_file_of(cursor: LogCursor) -> SealedLogFile:
    """The sealed log file whose footer directly follows the committed data at `cursor`.

    >>> sealed_log_file_of(LogCursor(1, 100, 3, 7, sealed=True))
    SealedLogFile(size=124, record_count=3, records_crc=7)
    """
    return SealedLogFile(cursor.offset + FOOTER_SIZE, cursor.record_count, cursor.records_crc)
