"""The transcript log: its files, reading committed transactions, appending new ones.

Owns: the append-only log files `transcripts/segment-NNNNNN.log` (numbered from 1,
contiguous), how a transaction is laid out in them, rolling to a new log file, sealing
the old one with a footer, and crash recovery. Must not touch: what records mean for the
store's state (that is `engine.transcript.catalog`) or their bytes (that is
`engine.codec.log_file`).

The files keep the name `segment-NNNNNN.log`, the magic `SS.SEGMT` and the file kind
`segment` (what `session-search dump` shows) that they had when the log's files were
called segments; the error messages about them keep their wording too. In the code,
"segment" means an index segment only (see `engine.transcript`).

Layout and invariants:

* A transaction is its records followed by one `commit` record, all in one log file.
  The writer flushes and fsyncs after the commit record; nothing before a commit counts.
* Commit records carry transaction ids 1, 2, 3, ... in file order, across log files.
* After a commit, once the log file holds `EngineConfig.log_roll_bytes` or more, the
  writer seals it (footer with the record count and the CRC32 of all record bytes, then
  fsync) and the next transaction starts log file N+1. So every log file but the last is
  sealed, and a sealed log file ends with a commit record followed by its footer.

Torn tail or corruption? The rule, applied to the bytes of the *last* log file:

    Damage (see `engine.codec.framing`) is a torn tail when no intact commit record
    follows it; then the writer truncates the file back to the end of the last commit
    before the damage. If an intact commit record follows the damage, committed data
    was damaged: `CorruptFile(path, offset of the damage, reason)`.

Why: the writer only promises durability at fsync after a commit record, and the bytes of
an unfinished transaction may reach the disk in any order (a later page before an
earlier one), so any mess after the last commit is the unfinished transaction. A commit
record that survives beyond a damaged spot proves the spot was once committed and
synced. Damage in a sealed (non-last) log file, a missing footer on a non-last log file,
a footer that does not match its records, a record that passes its CRC but breaks the
payload grammar, or a gap in transaction ids is always `CorruptFile`.

The bytes alone cannot tell the last commit damaged in place (bit rot after its fsync),
or a log cut back into committed transactions, from a commit that never finished. The
store can: a catalog checkpoint or an index manifest saved after those commits records
them, and a log that holds less is refused (`engine.transcript.evidence`), before a
writer cuts anything. Only damage after everything any such record covers is taken for a
torn tail; `LogReader.tail` reports what was cut.

Readers never truncate: they stop at the last commit and pick up later commits on the
next call, so any number of readers can follow one writer.

The rule above applies to bytes that are *read*: a replay reads them all. Bytes covered
by a trusted catalog checkpoint are not read at open; three checks of different cost
decide about them:

* `check_checkpoint_log` (every open with a checkpoint): O(log files) bytes read,
  sizes, headers, footers and the last covered commit record; it cannot see damage
  inside the records.
* each record's frame CRC, checked whenever the record is read (`LogReader`, and
  `LogReader.read_events` for the store's event reads);
* `check_covered_log` (verify): every covered byte CRC-checked against footers and
  the running CRC, O(bytes); `find_damaged_record` then names the first damaged record.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace

from engine.codec import FILE_KINDS
from engine.codec.framing import (
    FOOTER_SIZE,
    HEADER_SIZE,
    Damage,
    DecodeError,
    Footer,
    Frame,
    count_frames,
    decode_footer_at_end,
    decode_frame_at,
    decode_header,
    encode_footer,
    encode_header,
    find_frame_after,
    iter_frames,
    update_crc,
)
from engine.codec.log_file import (
    MAX_COMMIT_PAYLOAD_LENGTH,
    CommitRecord,
    EventRecord,
    LogRecord,
    decode_log_payload,
    encode_log_record,
    is_commit_payload,
)
from engine.config import EngineConfig
from engine.directory import AppendHandle, Directory
from engine.errors import CorruptFile, FileSystemError, StoreError
from engine.model import StoredEvent

LOG_FOLDER = "transcripts"
LOG_MAGIC = FILE_KINDS["segment"].magic
_LOG_FILE_NAME = re.compile(r"^transcripts/segment-(\d{6,})\.log$")
#: Neighbouring event records at most this many bytes apart are read in one read.
READ_GAP_BYTES = 4096


def now_milliseconds() -> float:
    """The current time in whole epoch milliseconds, as JavaScript's `Date.now()` gives
    it (what log records and events without a given `created_at` are stamped with: an
    event whose own timestamp is unusable is shown with this stamp, as upstream does).

    >>> stamp = now_milliseconds()
    >>> stamp == int(stamp) > 1.7e12
    True
    """
    return float(int(time.time() * 1000))


def log_file_name(number: int) -> str:
    """The file name of log file `number`.

    >>> log_file_name(12)
    'transcripts/segment-000012.log'
    """
    return f"{LOG_FOLDER}/segment-{number:06d}.log"


def log_file_number(name: str) -> int | None:
    """The number of a log file name, or None for other names.

    >>> log_file_number("transcripts/segment-000012.log"), log_file_number("store.meta")
    (12, None)
    """
    match = _LOG_FILE_NAME.match(name)
    return int(match.group(1)) if match else None


def list_log_file_numbers(directory: Directory) -> list[int]:
    """The log file numbers present, checked to be exactly 1..N (CorruptFile otherwise)."""
    numbers = sorted(
        number for name in directory.list_names(LOG_FOLDER + "/")
        if (number := log_file_number(name)) is not None
    )
    for expected, number in enumerate(numbers, start=1):
        if number != expected:
            raise CorruptFile(directory.location(log_file_name(expected)), 0,
                              "segment file missing (segment numbers must be contiguous)")
    return numbers


@dataclass(frozen=True, slots=True)
class RecordPosition:
    """Where one framed record lives: log file number, byte offset, framed length."""

    file_number: int
    offset: int
    length: int


@dataclass(frozen=True, slots=True)
class CommittedTransaction:
    """The records of one committed transaction (commit record excluded)."""

    records: tuple[tuple[RecordPosition, LogRecord], ...]
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


@dataclass(frozen=True, slots=True)
class SealedLogFile:
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


@dataclass(frozen=True, slots=True)
class LogTail:
    """Bytes after the last commit of the last log file (uncommitted or torn)."""

    file_number: int
    committed_end: int
    file_size: int
    reason: str

    @property
    def cut_bytes(self) -> int:
        """How many bytes a writer truncates."""
        return self.file_size - self.committed_end


def check_covered_log(directory: Directory, cursor: LogCursor) -> str | None:
    """Check every byte of committed data up to `cursor` against what was written;
    return what is wrong, or None. The thorough check (`session-search verify`).

    Log files before `cursor.file_number` must be sealed with a footer whose CRC matches
    their record bytes. In log file `cursor.file_number`, the record bytes up to
    `cursor.offset` must have the CRC `cursor.records_crc` (the running CRC the writer
    or a replay kept), and when `cursor.sealed` the footer must follow at `cursor.offset`
    and agree. Cost: reads every covered byte once and CRCs it in C (no record decoding);
    O(bytes), which is why opening does `check_checkpoint_log` instead.
    """
    for number in range(1, cursor.file_number + 1):
        name = log_file_name(number)
        location = directory.location(name)
        if number == cursor.file_number and cursor == LogCursor(
                number, transaction_id=cursor.transaction_id):
            # Nothing was committed in it, and not even its header was read: absent (a
            # store with no commit yet), or cut short by a crash or a full disk while
            # its header was written (`problems` notes an unfinished write).
            return None
        if not directory.exists(name):
            return f"{location}: missing"
        data = directory.read_bytes(name)
        try:
            if decode_header(data, location).magic != LOG_MAGIC:
                return f"{location}: not a transcript segment"
        except StoreError as error:
            return str(error)
        if number < cursor.file_number or cursor.sealed:
            footer = decode_footer_at_end(data)
            if len(data) < HEADER_SIZE + FOOTER_SIZE or footer is None:
                return f"{location}: not sealed"
            end, expected = len(data) - FOOTER_SIZE, footer.records_crc
            if number == cursor.file_number and (end, footer.record_count, footer.records_crc) != (
                    cursor.offset, cursor.record_count, cursor.records_crc):
                return f"{location}: footer does not match the checkpoint"
        else:
            end, expected = cursor.offset, cursor.records_crc
            if len(data) < end:
                return f"{location}: shorter than the checkpoint says"
            if count_frames(data, HEADER_SIZE, end) != cursor.record_count:
                return f"{location}: record count does not match the checkpoint"
        if update_crc(0, memoryview(data)[HEADER_SIZE:end]) != expected:
            return f"{location}: records do not match the expected CRC"
    return None


def find_damaged_record(directory: Directory, cursor: LogCursor) -> CorruptFile | None:
    """The first record up to `cursor` that fails its own frame check (bad CRC, impossible
    length, a footer that does not match its records), as a `CorruptFile` naming the file
    and offset; None when every frame is intact. Used to say *where* the damage is once
    `check_covered_log` has said that there is some. Cost: O(covered bytes).
    """
    for number in range(1, cursor.file_number + 1):
        name = log_file_name(number)
        if not directory.exists(name):
            continue  # check_covered_log names a missing log file
        data = directory.read_bytes(name)
        location = directory.location(name)
        end = len(data) if number < cursor.file_number or cursor.sealed else cursor.offset
        try:
            decode_header(data, location)
        except CorruptFile as error:
            return error
        except StoreError:
            continue  # another format version: check_covered_log said so
        count, crc = 0, 0
        for item in iter_frames(data[:end], HEADER_SIZE):
            if isinstance(item, Frame):
                count += 1
                crc = update_crc(crc, data[item.offset: item.end])
            elif isinstance(item, Footer):
                if (item.record_count, item.records_crc) != (count, crc):
                    return CorruptFile(location, item.offset, "footer does not match the records")
            else:
                return CorruptFile(location, item.offset, item.reason)
    return None


def check_checkpoint_log(
    directory: Directory, cursor: LogCursor, sealed_files: Sequence[SealedLogFile],
) -> str | None:
    """Check cheaply that the log files a catalog checkpoint covers are still the files it
    saw; return what is wrong, or None.

    Reads a few dozen bytes per log file and never the records between: every sealed
    log file (each one before `cursor.file_number`, and that one too when `cursor.sealed`)
    must have the size, record count and footer CRC the checkpoint recorded for it, an
    intact header and an intact footer; an unsealed `cursor.file_number` must have an intact
    header, reach `cursor.offset`, and hold there, from `cursor.commit_offset`, an intact
    commit record of transaction `cursor.transaction_id`. A file that was replaced,
    truncated or extended behind a seal fails this. Damage *inside* covered records is
    not looked for: each record's own CRC is checked when it is read, and
    `check_covered_log` (verify) checks every byte. Cost: O(log files).
    """
    expected = cursor.file_number if cursor.sealed else cursor.file_number - 1
    if len(sealed_files) != expected:
        return f"the checkpoint lists {len(sealed_files)} sealed segments, expected {expected}"
    for number, sealed in enumerate(sealed_files, start=1):
        problem = _check_sealed_log_file(directory, number, sealed)
        if problem is not None:
            return problem
    if cursor.sealed:
        if sealed_files[-1] != sealed_log_file_of(cursor):
            return f"{directory.location(log_file_name(cursor.file_number))}: footer does not " \
                   "match the checkpoint"
        return None
    return _check_open_log_file(directory, cursor)


def _check_log_file_header(directory: Directory, name: str, location: str) -> str | None:
    try:
        if decode_header(directory.read_bytes(name, 0, HEADER_SIZE), location).magic \
                != LOG_MAGIC:
            return f"{location}: not a transcript segment"
    except StoreError as error:
        return str(error)
    return None


def _check_sealed_log_file(directory: Directory, number: int, sealed: SealedLogFile) -> str | None:
    name = log_file_name(number)
    location = directory.location(name)
    size = directory.size(name)
    if size != sealed.size:
        return f"{location}: {size} bytes, the checkpoint says {sealed.size}"
    problem = _check_log_file_header(directory, name, location)
    if problem is not None:
        return problem
    footer = decode_footer_at_end(directory.read_bytes(name, size - FOOTER_SIZE, FOOTER_SIZE)) \
        if size >= HEADER_SIZE + FOOTER_SIZE else None
    if footer is None:
        return f"{location}: not sealed"
    if (footer.record_count, footer.records_crc) != (sealed.record_count, sealed.records_crc):
        return f"{location}: footer does not match the checkpoint"
    return None


def _check_open_log_file(directory: Directory, cursor: LogCursor) -> str | None:
    name = log_file_name(cursor.file_number)
    location = directory.location(name)
    if directory.size(name) < cursor.offset:
        return f"{location}: shorter than the checkpoint says"
    problem = _check_log_file_header(directory, name, location)
    if problem is not None:
        return problem
    if cursor.record_count == 0:
        if cursor.offset != HEADER_SIZE:
            return f"{location}: the checkpoint has no records before byte {cursor.offset}"
        return None
    start = cursor.commit_offset
    if not HEADER_SIZE <= start < cursor.offset:
        return f"{location}: the checkpoint's last commit offset {start} is out of range"
    try:
        frame = decode_frame_at(directory.read_bytes(name, start, cursor.offset - start))
        record = decode_log_payload(frame.payload)
    except DecodeError as error:
        return f"{location}: the last commit the checkpoint covers, at byte {start}: {error}"
    if frame.end != cursor.offset - start or not isinstance(record, CommitRecord) \
            or record.transaction_id != cursor.transaction_id:
        return (f"{location}: the record at byte {start} is not the commit of transaction "
                f"{cursor.transaction_id} ending at byte {cursor.offset}")
    return None


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
                self._check_damage(item, base, data, is_last, location)
                self.tail = LogTail(cursor.file_number, cursor.offset, base + len(data),
                                        f"{item.reason} at byte offset {base + item.offset}")
                return
        if pending:
            self.tail = LogTail(cursor.file_number, cursor.offset, base + len(data),
                                    f"{len(pending)} uncommitted records")

    def _check_header(self, name: str, location: str, is_last: bool) -> bool:
        """Check the log file header; False when a last file's header is torn."""
        header_bytes = self.directory.read_bytes(name, 0, HEADER_SIZE)
        if len(header_bytes) < HEADER_SIZE and is_last:
            self.tail = LogTail(self.cursor.file_number, 0, len(header_bytes),
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

    @staticmethod
    def _check_damage(damage: Damage, base: int, data: bytes, is_last: bool,
                      location: str) -> None:
        """Raise CorruptFile unless `damage` is a torn tail (see the module docstring)."""
        offset = base + damage.offset
        if not is_last:
            raise CorruptFile(location, offset, damage.reason)
        later_commit = find_frame_after(data, damage.offset + 1, is_commit_payload,
                                        MAX_COMMIT_PAYLOAD_LENGTH)
        if later_commit is not None:
            raise CorruptFile(location, offset,
                              f"{damage.reason} (committed data follows at byte offset "
                              f"{base + later_commit})")


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
        """Append one record of the open transaction; return where it went."""
        self._check_usable()
        data = encode_log_record(record)
        handle = self._open_log_file()
        position = RecordPosition(self.file_number, handle.size(), len(data))
        self._guarded(handle.write, data)
        self._record_count += 1
        self._records_crc = update_crc(self._records_crc, data)
        return position

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
