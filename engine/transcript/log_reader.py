"""Reading the transcript log: replaying committed transactions, reading events by position.

Owns: `LogReader`, which yields the committed transactions from a cursor on (checking
each record's frame CRC, each footer against its records, and the order of transaction
ids) and records where it stopped and what uncommitted tail it left out, and which reads
events at the positions the catalog knows (`read_events`). Must not touch: what the
records mean for the store's state (that is `engine.transcript.catalog`), their bytes
(that is `engine.codec.log_file`), or the files themselves: a reader never writes.

Readers never truncate: they stop at the last commit and pick up later commits on the
next call, so any number of readers can follow one writer. Damage met on the way is a
torn tail or corruption as `log_tail` rules; the writer cuts a torn tail
(`LogWriter.recover`) from what a reader reported.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from engine.codec.framing import (
    FOOTER_SIZE,
    HEADER_SIZE,
    DecodeError,
    Footer,
    Frame,
    decode_frame_at,
    decode_header,
    iter_frames,
    update_crc,
)
from engine.codec.log_file import CommitRecord, EventRecord, LogRecord, decode_log_payload
from engine.directory import Directory
from engine.errors import CorruptFile
from engine.model import StoredEvent
from engine.transcript.log_files import LOG_MAGIC, list_log_file_numbers, log_file_name
from engine.transcript.log_positions import (
    CommittedTransaction,
    LogCursor,
    RecordPosition,
    SealedLogFile,
)

if TYPE_CHECKING:  # loaded at the first tail a read meets (`_tail`), not at open
    from engine.transcript.log_tail import LogTail

#: Neighbouring event records at most this many bytes apart are read in one read.
READ_GAP_BYTES = 4096


class LogReader:
    """Yields committed transactions from a cursor on, recording where it stopped; and
    reads events at the positions the catalog knows (`read_events`).

    After `iter_transactions` is exhausted, `cursor` is where the next read starts and
    `tail` describes uncommitted bytes at the end of the last log file (None when none).
    """

    def __init__(self, directory: Directory) -> None:
        self.directory = directory
        self.cursor = LogCursor()
        self.tail: LogTail | None = None
        #: The log files whose footer the last `iter_transactions` read, in order.
        self.sealed_files: list[SealedLogFile] = []

    def iter_transactions(
        self, cursor: LogCursor | None = None, *, verify_footers: bool = True
    ) -> Iterator[CommittedTransaction]:
        """Every committed transaction from `cursor` (default: the start) on, in order."""
        self.cursor = cursor or LogCursor()
        self.tail = None
        self.sealed_files = []
        list_log_file_numbers(self.directory)  # a gap would silently hide later files
        while self.directory.exists(log_file_name(self.cursor.file_number)):
            if self.cursor.sealed:
                following = log_file_name(self.cursor.file_number + 1)
                if not self.directory.exists(following):
                    return
                self.cursor = LogCursor(self.cursor.file_number + 1,
                                            transaction_id=self.cursor.transaction_id)
                continue
            is_last = not self.directory.exists(log_file_name(self.cursor.file_number + 1))
            yield from self._read_log_file(is_last, verify_footers)
            if is_last:
                return
            if not self.cursor.sealed:
                raise CorruptFile(self.directory.location(log_file_name(self.cursor.file_number)),
                                  self.cursor.offset,
                                  "segment is not sealed although a later segment exists")

    def read_events(
        self, session_id: str, first_seq: int, positions: Sequence[RecordPosition],
    ) -> list[StoredEvent]:
        """Decode events `first_seq`, `first_seq + 1`, ... of window `session_id` at
        `positions`, reading each run of neighbours in one read.

        Each record's frame CRC is checked here, and that it is the event expected
        (window and seq): a record damaged since it was committed, or a position that
        does not fit, is `CorruptFile` naming the log file and the record's offset.
        Stateless: it neither uses nor moves `cursor`.
        """
        events: list[StoredEvent] = []
        start = 0
        while start < len(positions):
            end = start + 1
            while (end < len(positions)
                   and positions[end].file_number == positions[start].file_number
                   and positions[end].offset >= positions[end - 1].offset
                   and positions[end].offset - positions[end - 1].offset
                   - positions[end - 1].length <= READ_GAP_BYTES):
                end += 1
            events.extend(self._read_run(session_id, first_seq + start, positions[start:end]))
            start = end
        return events

    def _read_run(
        self, session_id: str, first_seq: int, run: Sequence[RecordPosition],
    ) -> list[StoredEvent]:
        first, last = run[0], run[-1]
        name = log_file_name(first.file_number)
        data = self.directory.read_bytes(name, first.offset, last.offset + last.length
                                         - first.offset)
        events = []
        for seq, position in enumerate(run, start=first_seq):
            relative = position.offset - first.offset
            try:
                frame = decode_frame_at(data[relative: relative + position.length])
                record = decode_log_payload(frame.payload)
            except DecodeError as error:
                raise CorruptFile(self.directory.location(name), position.offset,
                                  str(error)) from None
            if not isinstance(record, EventRecord):
                raise CorruptFile(self.directory.location(name), position.offset,
                                  "expected an event record")
            if (record.session_id, record.seq) != (session_id, seq):
                raise CorruptFile(self.directory.location(name), position.offset,
                                  f"expected event {seq} of window {session_id!r}, found "
                                  f"event {record.seq} of window {record.session_id!r}")
            events.append(StoredEvent(record.session_id, record.seq, record.event,
                                      record.created_at))
        return events

    def _read_log_file(self, is_last: bool, verify_footers: bool) -> Iterator[CommittedTransaction]:
        cursor = self.cursor
        name = log_file_name(cursor.file_number)
        location = self.directory.location(name)
        if not self._check_header(name, location, is_last):
            return
        base = cursor.offset
        data = self.directory.read_bytes(name, base)
        pending: list[tuple[RecordPosition, LogRecord]] = []
        count, crc = cursor.record_count, cursor.records_crc
        for item in iter_frames(data, 0):
            if isinstance(item, Frame):
                position = RecordPosition(cursor.file_number, base + item.offset,
                                          item.end - item.offset)
                record = self._decode(item, position, location)
                pending.append((position, record))
                count += 1
                crc = update_crc(crc, data[item.offset: item.end])
                if isinstance(record, CommitRecord):
                    yield self._commit(pending, record, location, position)
                    cursor = self.cursor = replace(
                        cursor, offset=position.offset + position.length, record_count=count,
                        records_crc=crc, transaction_id=record.transaction_id,
                        commit_offset=position.offset)
                    pending = []
            elif isinstance(item, Footer):
                self._check_footer(item, base, pending, count, crc, location, verify_footers)
                self.cursor = replace(cursor, sealed=True)
                self.sealed_files.append(
                    SealedLogFile(base + item.offset + FOOTER_SIZE, item.record_count,
                                  item.records_crc))
                return
            else:
                from engine.transcript.log_tail import check_damage

                check_damage(item, base, data, is_last, location)
                self.tail = _tail(cursor.file_number, cursor.offset, base + len(data),
                                  f"{item.reason} at byte offset {base + item.offset}")
                return
        if pending:
            self.tail = _tail(cursor.file_number, cursor.offset, base + len(data),
                              f"{len(pending)} uncommitted records")

    def _check_header(self, name: str, location: str, is_last: bool) -> bool:
        """Check the log file header; False when a last file's header is torn."""
        header_bytes = self.directory.read_bytes(name, 0, HEADER_SIZE)
        if len(header_bytes) < HEADER_SIZE and is_last:
            self.tail = _tail(self.cursor.file_number, 0, len(header_bytes),
                              "incomplete segment header")
            return False
        header = decode_header(header_bytes, location)
        if header.magic != LOG_MAGIC:
            raise CorruptFile(location, 0, f"not a transcript segment (magic {header.magic!r})")
        return True

    @staticmethod
    def _decode(frame: Frame, position: RecordPosition, location: str) -> LogRecord:
        try:
            return decode_log_payload(frame.payload)
        except DecodeError as error:
            raise CorruptFile(location, position.offset, str(error)) from None

    def _commit(
        self,
        pending: list[tuple[RecordPosition, LogRecord]],
        commit: CommitRecord,
        location: str,
        position: RecordPosition,
    ) -> CommittedTransaction:
        expected = self.cursor.transaction_id + 1
        if commit.transaction_id != expected:
            raise CorruptFile(location, position.offset,
                              f"commit of transaction {commit.transaction_id}, expected {expected}")
        return CommittedTransaction(tuple(pending[:-1]), commit, pending[0][0])

    @staticmethod
    def _check_footer(
        footer: Footer,
        base: int,
        pending: list[tuple[RecordPosition, LogRecord]],
        count: int,
        crc: int,
        location: str,
        verify: bool,
    ) -> None:
        offset = base + footer.offset
        if pending:
            raise CorruptFile(location, offset, "footer follows uncommitted records")
        if verify and (footer.record_count, footer.records_crc) != (count, crc):
            raise CorruptFile(location, offset,
                              f"footer says {footer.record_count} records with CRC "
                              f"{footer.records_crc:08x}, found {count} with CRC {crc:08x}")


def _tail(file_number: int, committed_end: int, file_size: int, reason: str) -> LogTail:
    """The `LogTail` a read left out (`log_tail` loads at the first one)."""
    from engine.transcript.log_tail import LogTail

    return LogTail(file_number, committed_end, file_size, reason)
