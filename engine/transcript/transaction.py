"""Write transactions: the records of one transaction, and what reads inside it see.

Owns: `StoreTransaction` (the `BackendTransaction` protocol of the transcript store):
checking each write, writing its record through the log writer as it comes (so a large
import does not sit in memory), and the small overlay of the windows it touched
(`PendingWindow`), which its reads see on top of the committed catalog. Must not touch:
the commit (the store writes the commit record, applies `records` to the catalog through
the replay rule, and publishes `changes`; see `TranscriptStore.transaction`; a
transaction whose replacement failed half-way says so in `failed`, and the store then
aborts it instead), the
catalog (read here, never changed), or the log other than through the writer and the
read function it is given.

A transaction is made from its collaborators only: the committed `Catalog`, the
`LogWriter` (between its `begin()` and the commit or abort), a function that reads
events at log positions (`LogReader.read_events`), whether to keep its changes for
the change feed, and the feed's streaming follower (`changes.StreamingFollower`): once
the changes kept reach the follower's count, they are handed to it, and so is each
later one as it is written, instead of being kept (`streamed_to` names it). It never
sees the store.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from math import copysign
from typing import Any, NamedTuple, overload

from engine.codec.framing import DecodeError
from engine.codec.log_file import (
    DeleteSessionRecord,
    EventRecord,
    LogRecord,
    ReplaceRecord,
    WindowRecord,
)
from engine.errors import InputError, UnknownSession, UsageError
from engine.model import SessionWindow, StoredEvent
from engine.transcript.catalog import Catalog, EventPositions
from engine.transcript.changes import (
    Change,
    ChangeTaker,
    EventAppended,
    StreamingFollower,
    TranscriptReplaced,
    change_of,
)
from engine.transcript.clock import now_milliseconds
from engine.transcript.log_positions import RecordPosition
from engine.transcript.log_writer import LogWriter
from engine.transcript.validation import replacement_stamps

#: Reads events `first_seq`, `first_seq + 1`, ... of a window at the given log positions
#: (the signature of `LogReader.read_events`).
EventReader = Callable[[str, int, Sequence[RecordPosition]], list[StoredEvent]]


class RecordRun(NamedTuple):
    """One run of `WrittenRecords.runs`: its window (None for a record that is not an
    event record, alone in its run), first seq, how many records, log file, first offset,
    and the index of its first record."""

    session_id: str | None
    seq: int
    count: int
    file_number: int
    offset: int
    start: int


class WrittenRecords(Sequence[tuple[RecordPosition, LogRecord]]):
    """The records a transaction wrote, with their positions, in order, kept compactly:
    event records in runs (consecutive records of one window, seqs in a row, each
    written right after the one before in the same log file: a run keeps its window,
    first seq, log file and first offset once, and each record its length), any other
    record as it is; stamps are kept in runs of their own (records in a row with the
    same stamp keep it once: an import stamps every event with one receipt time). Why:
    a tuple of a `RecordPosition` and an `EventRecord` per event, kept until the commit,
    made an import's memory grow with its events, and so did six numbers per event
    (figures in the commit messages). Items are made when read, event records without
    their event object (the catalog keeps positions, not events). Its oracle is the list
    of pairs it replaces: the doctest, and `tests/transcript/test_commit_columns.py`,
    `test_written_runs.py`.

    >>> pairs = [(RecordPosition(1, 8, 30), EventRecord("w", 0, 2.0, {})),
    ...          (RecordPosition(1, 38, 9), DeleteSessionRecord("k", ("w",))),
    ...          (RecordPosition(2, 8, 40), EventRecord("v", 5, 3.5, {})),
    ...          (RecordPosition(2, 48, 12), EventRecord("v", 6, 3.5, {}))]
    >>> written = WrittenRecords()
    >>> for position, record in pairs:
    ...     written.append(position, record)
    >>> list(written) == pairs, written[-1] == pairs[-1], written[0:2] == tuple(pairs[0:2])
    (True, True, True)
    >>> len(written), bool(WrittenRecords()), [run[:5] for run in written.runs()]
    (4, False, [('w', 0, 1, 1, 8), (None, 0, 1, 1, 38), ('v', 5, 2, 2, 8)])
    """

    __slots__ = ("_lengths", "_next_offset", "_others", "_run_files", "_run_offsets",
                 "_run_seqs", "_run_sessions", "_run_starts", "_stamp_starts",
                 "_stamp_values")

    def __init__(self) -> None:
        #: Per run: its window (None: a record that is not an event record, alone in its
        #: run and kept in `_others`), first seq, log file, first offset, first record.
        self._run_sessions: list[str | None] = []
        self._run_seqs = array("q")
        self._run_files = array("q")
        self._run_offsets = array("q")
        self._run_starts = array("q")
        #: Per record: its framed length (a payload is at most 1 GiB).
        self._lengths = array("i")
        #: Per run of records with one stamp (0.0 for a record that is not an event):
        #: the index of its first record, and the stamp.
        self._stamp_starts = array("q")
        self._stamp_values = array("d")
        #: Where the last run's next record would start (-1: no run continues).
        self._next_offset = -1
        #: index -> (position, record) of each record that is not an event record.
        self._others: dict[int, tuple[RecordPosition, LogRecord]] = {}

    def append(self, position: RecordPosition, record: LogRecord) -> None:
        """Keep `record`, written at `position` (an event record's event is not kept)."""
        if isinstance(record, EventRecord):
            self.append_event(record.session_id, record.seq, record.created_at,
                              position.file_number, position.offset, position.length)
            return
        self._others[len(self._lengths)] = (position, record)
        self._new_run(None, 0, position.file_number, position.offset)
        self._add_stamp(0.0)
        self._lengths.append(position.length)
        self._next_offset = -1

    def append_event(self, session_id: str, seq: int, created_at: float, file_number: int,
                     offset: int, length: int) -> None:
        """`append` of an event record written at `offset` of log file `file_number`,
        `length` bytes, given as its fields (no record or position needed)."""
        sessions = self._run_sessions
        if not (offset == self._next_offset and sessions[-1] == session_id
                and file_number == self._run_files[-1]
                and seq == self._run_seqs[-1] + len(self._lengths) - self._run_starts[-1]):
            self._new_run(session_id, seq, file_number, offset)
        self._add_stamp(created_at)
        self._lengths.append(length)
        self._next_offset = offset + length

    def _add_stamp(self, stamp: float) -> None:
        """Stamp the record about to be appended (before its length is): a new stamp
        run unless the last run's stamp is this one, a zero's sign included (-0.0 ==
        0.0; only a zero's sign is compared, the run's stamp is met once an event)."""
        values = self._stamp_values
        if not values or stamp != values[-1] or (
                not stamp and copysign(1.0, stamp) != copysign(1.0, values[-1])):
            self._stamp_starts.append(len(self._lengths))
            values.append(stamp)

    def _new_run(self, session_id: str | None, seq: int, file_number: int,
                 offset: int) -> None:
        self._run_sessions.append(session_id)
        self._run_seqs.append(seq)
        self._run_files.append(file_number)
        self._run_offsets.append(offset)
        self._run_starts.append(len(self._lengths))

    def __len__(self) -> int:
        return len(self._lengths)

    def stamp_runs(self) -> int:
        """How many runs of records in a row with one stamp are kept (each keeps its
        stamp once)."""
        return len(self._stamp_values)

    @overload
    def __getitem__(self, index: int) -> tuple[RecordPosition, LogRecord]: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[tuple[RecordPosition, LogRecord], ...]: ...

    def __getitem__(self, index: int | slice
                    ) -> tuple[RecordPosition, LogRecord] | tuple[tuple[RecordPosition, LogRecord], ...]:
        if isinstance(index, slice):
            return tuple(self._item(number) for number in range(*index.indices(len(self))))
        count = len(self._lengths)
        number = index + count if index < 0 else index
        if not 0 <= number < count:
            raise IndexError("record index out of range")
        return self._item(number)

    def __iter__(self) -> Iterator[tuple[RecordPosition, LogRecord]]:
        for run in self.runs():
            yield from self.run_items(run)

    def runs(self) -> Iterator[RecordRun]:
        """Each run (`RecordRun`), in order (`Catalog.apply` reads a commit's records
        so)."""
        ends = [*self._run_starts[1:], len(self._lengths)]
        for session_id, seq, file_number, offset, start, end in zip(
                self._run_sessions, self._run_seqs, self._run_files, self._run_offsets,
                self._run_starts, ends):
            yield RecordRun(session_id, seq, end - start, file_number, offset, start)

    def run_lengths(self, run: RecordRun) -> array:
        """The lengths of the records of `run` (one of `runs()`), in order."""
        return self._lengths[run.start:run.start + run.count]

    def run_items(self, run: RecordRun) -> Iterator[tuple[RecordPosition, LogRecord]]:
        """The records of `run` (one of `runs()`) with their positions, as items."""
        session_id, seq, count, file_number, offset, start = run
        if session_id is None:
            yield self._others[start]
            return
        lengths, stamp_starts, stamp_values = \
            self._lengths, self._stamp_starts, self._stamp_values
        stamp_run = bisect_right(stamp_starts, start) - 1
        next_stamp = self._stamp_start(stamp_run + 1)
        for number in range(start, start + count):
            if number == next_stamp:
                stamp_run += 1
                next_stamp = self._stamp_start(stamp_run + 1)
            length = lengths[number]
            yield (RecordPosition(file_number, offset, length),
                   EventRecord(session_id, seq, stamp_values[stamp_run], {}))
            offset += length
            seq += 1

    def _stamp_start(self, stamp_run: int) -> int:
        """The first record of stamp run `stamp_run` (past the last: no record)."""
        starts = self._stamp_starts
        return starts[stamp_run] if stamp_run < len(starts) else len(self._lengths)

    def _item(self, number: int) -> tuple[RecordPosition, LogRecord]:
        run = bisect_right(self._run_starts, number) - 1
        start = self._run_starts[run]
        session_id = self._run_sessions[run]
        if session_id is None:
            return self._others[number]
        offset = self._run_offsets[run] + sum(self._lengths[start:number])
        position = RecordPosition(self._run_files[run], offset, self._lengths[number])
        stamp = self._stamp_values[bisect_right(self._stamp_starts, number) - 1]
        record = EventRecord(session_id, self._run_seqs[run] + number - start, stamp, {})
        return position, record


@dataclass(slots=True)
class PendingWindow:
    """A window touched by the open transaction: its metadata (None once deleted), how
    many committed events it keeps, and the events appended in this transaction."""

    window: SessionWindow | None
    kept_events: int
    new_events: EventPositions


class StoreTransaction:
    """The write operations of one transaction (the `BackendTransaction` protocol)."""

    def __init__(self, catalog: Catalog, writer: LogWriter, read_events: EventReader, *,
                 keep_changes: bool = False,
                 streaming: tuple[StreamingFollower, int] | None = None) -> None:
        """A transaction over the committed `catalog` whose records go to `writer`
        (already begun); `keep_changes` when the change feed has followers, and
        `streaming`, the feed's streaming follower and its count (module docstring)."""
        self._catalog = catalog
        self._writer = writer
        self._read_events = read_events
        self._pending: dict[str, PendingWindow] = {}
        #: Windows inserted by this transaction (new, or deleted then put again), in order.
        self._inserted: dict[str, None] = {}
        #: Windows that left their committed place under their key (moved, deleted, new).
        self._relinked: set[str] = set()
        #: session key -> windows that joined it in this transaction, in order.
        self._joined: dict[str, dict[str, None]] = {}
        self._records = WrittenRecords()
        self._changes: list[Change] | None = [] if keep_changes else None
        self._streaming = streaming if keep_changes else None
        #: The follower this transaction's changes are handed to (once it is large).
        self.streamed_to: StreamingFollower | None = None
        self._taker: ChangeTaker | None = None
        self.closed = False
        #: Why this transaction must not commit (a write failed half-way), or None.
        self.failed: str | None = None

    @property
    def records(self) -> Sequence[tuple[RecordPosition, LogRecord]]:
        """The records written so far with their positions, in order (event records
        without their event object: the catalog keeps positions, not events), as
        `WrittenRecords` keeps them."""
        return self._records

    def new_positions(self) -> dict[str, EventPositions]:
        """The overlay's event positions of each window whose events this transaction
        wrote from seq 0 (it holds none committed): what `Catalog.apply` may take over
        at the commit instead of copying (the transaction is closed: they no longer
        change, and `let_records_go` then drops the overlay's hold of them)."""
        return {session_id: pending.new_events for session_id, pending in self._pending.items()
                if pending.window is not None and not pending.kept_events
                and pending.new_events.count}

    def let_records_go(self) -> None:
        """Forget the records and the overlay once the commit has applied them to the
        catalog (nothing reads a committed transaction's records after that): a large
        import's records, and its windows' new event positions, which the catalog now
        holds, are then not held through the checkpoint save and the commit hooks that
        follow, where the import's peak memory was. `records` is empty afterwards; the
        reads of this closed transaction (`events`, `event_count`, `windows`,
        `windows_of`) find no overlay and read the catalog, which holds what it held."""
        self._records = WrittenRecords()
        self._pending = {}
        self._inserted = {}
        self._relinked = set()
        self._joined = {}

    @property
    def changes(self) -> list[Change] | None:
        """The changes written so far, or None when they are not kept."""
        return self._changes

    # ----- writes ------------------------------------------------------------------------

    def put_window(self, window: SessionWindow) -> None:
        """Insert a window, or replace the metadata of the window with its session id."""
        self._check_open()
        if not isinstance(window, SessionWindow):
            raise UsageError(f"put_window expects a SessionWindow, not {type(window).__name__}")
        if not isinstance(window.session_id, str) or not window.session_id:
            raise InputError("a session window needs a non-empty session id")
        if not isinstance(window.session_key, str) or not window.session_key:
            raise InputError(f"window {window.session_id!r} needs a non-empty session key")
        record = WindowRecord(window)
        self._write(record)
        session_id = window.session_id
        pending = self._pending_of(session_id)
        if pending is None or pending.window is None:
            pending = PendingWindow(window, 0, EventPositions())
            self._inserted[session_id] = None
            self._join(session_id, window.session_key)
        else:
            if pending.window.session_key != window.session_key:
                self._leave(session_id, pending.window.session_key)
                self._join(session_id, window.session_key)
            pending.window = window
        self._pending[session_id] = pending
        self._note_change(record)

    def append_event(
        self, session_id: str, event: dict[str, Any], created_at: float | None = None
    ) -> int:
        """Append `event` to an existing window; return its seq (0-based)."""
        self._check_open()
        if not isinstance(event, dict):
            raise InputError(f"an event must be a JSON object, not {type(event).__name__}")
        pending = self._pending_of(session_id)
        if pending is None or pending.window is None:
            raise UnknownSession(f"unknown session id {session_id!r}")
        if pending.kept_events and not pending.new_events:
            # The commit will append to the window's committed positions: fetch them now
            # (a checkpoint's are read on first use), so that a failure to read them
            # aborts this transaction instead of following its durable commit.
            self._catalog.entries[session_id].events.load()
        seq = pending.kept_events + len(pending.new_events)
        stamp = now_milliseconds() if created_at is None else float(created_at)
        writer = self._writer  # the record, written and kept from its fields
        try:
            offset, length = writer.write_event(session_id, seq, stamp, event)
        except DecodeError as error:
            raise InputError(str(error)) from None
        file_number = writer.file_number
        self._records.append_event(session_id, seq, stamp, file_number, offset, length)
        self._pending[session_id] = pending
        pending.new_events.append_at(file_number, offset, length)
        if self._taker is not None or self._changes is not None:  # `change_of` its record
            self._keep(EventAppended(StoredEvent(session_id, seq, event, stamp)))
        return seq

    def replace_transcript(
        self,
        session_id: str,
        events: Sequence[dict[str, Any]],
        created_at: float | Sequence[float | None] | None = None,
        *,
        rebuild_deferred: bool = False,
    ) -> int:
        """Replace every event of an existing window by `events` (seq 0, 1, ...), each
        stamped `created_at` (None: the time of its write), or its own item of it when
        `created_at` is a list or tuple (`validation.replacement_stamps`: one per event);
        return how many.

        One `replace` record, then an event record each (`engine.codec.log_file`): the
        replacement is durable with the commit and gone with an abort, as any write.
        `rebuild_deferred` is the index's decision (behaviour.md §8.2), recorded for the
        backends that follow the log; the store itself does nothing with it. Appends
        after it in the same transaction continue the new transcript.
        """
        self._check_open()
        pending = self._pending_of(session_id)
        if pending is None or pending.window is None:
            raise UnknownSession(f"unknown session id {session_id!r}")
        for event in events:
            if not isinstance(event, dict):
                raise InputError(f"an event must be a JSON object, not {type(event).__name__}")
        stamps = replacement_stamps(created_at, len(events))
        record = ReplaceRecord(session_id, len(events), bool(rebuild_deferred))
        self._write(record)
        pending.kept_events, pending.new_events = 0, EventPositions()
        self._pending[session_id] = pending
        stored = []
        try:
            for seq, (event, given) in enumerate(zip(events, stamps, strict=True)):
                stamp = now_milliseconds() if given is None else float(given)
                event_record = EventRecord(session_id, seq, stamp, event)
                pending.new_events.append(self._write(event_record))
                stored.append(StoredEvent(session_id, seq, event, stamp))
        except BaseException as error:
            # Half a replacement must never commit: the store aborts a failed transaction.
            self.failed = f"replacing the transcript of {session_id!r} failed: {error}"
            raise
        self._keep(TranscriptReplaced(session_id, tuple(stored), bool(rebuild_deferred)))
        return len(events)

    def delete_session(self, session_key: str) -> int:
        """Delete every window of `session_key` and their events; return how many."""
        self._check_open()
        session_ids = tuple(window.session_id for window in self.windows_of(session_key))
        if not session_ids:
            return 0
        record = DeleteSessionRecord(session_key, session_ids)
        self._write(record)
        for session_id in session_ids:
            self._pending[session_id] = PendingWindow(None, 0, EventPositions())
            self._inserted.pop(session_id, None)
            self._leave(session_id, session_key)
        self._note_change(record)
        return len(session_ids)

    # ----- reads that see this transaction's writes --------------------------------------

    def window(self, session_id: str) -> SessionWindow:
        """The window as this transaction sees it (UnknownSession if absent)."""
        pending = self._pending_of(session_id)
        if pending is None or pending.window is None:
            raise UnknownSession(f"unknown session id {session_id!r}")
        return pending.window

    def windows(self) -> list[SessionWindow]:
        """Every window as this transaction sees it, in the order a commit would leave."""
        result = []
        for session_id, entry in self._catalog.entries.items():
            pending = self._pending.get(session_id)
            if pending is None:
                result.append(entry.window)
            elif pending.window is not None and session_id not in self._inserted:
                result.append(pending.window)
        result.extend(self._pending[session_id].window for session_id in self._inserted)
        return result

    def windows_of(self, session_key: str) -> list[SessionWindow]:
        """The windows of one key as this transaction sees them, in the order they joined
        it (as `TranscriptStore.windows_of` will after the commit).

        Cost: O(windows of the key), not O(all windows).
        """
        catalog = self._catalog
        result = []
        for session_id in catalog.keys.get(session_key, {}):
            if session_id not in self._relinked:
                pending = self._pending.get(session_id)
                entry_window = catalog.entries[session_id].window
                result.append(entry_window if pending is None else pending.window)
        for session_id in self._joined.get(session_key, {}):
            result.append(self._pending[session_id].window)
        return result

    def session_keys(self) -> list[str]:
        """Every session key holding a window as this transaction sees it."""
        return list(dict.fromkeys(window.session_key for window in self.windows()))

    def events(self, session_id: str) -> list[StoredEvent]:
        """The window's events as this transaction sees them."""
        pending = self._pending.get(session_id)
        if pending is None:
            return self._read_events(session_id, 0,
                                     self._catalog.entry(session_id).events.to_list())
        if pending.window is None:
            raise UnknownSession(f"unknown session id {session_id!r}")
        self._writer.flush()
        kept = (self._catalog.entry(session_id).events.to_list(pending.kept_events)
                if pending.kept_events else [])
        return self._read_events(session_id, 0, kept + pending.new_events.to_list())

    def event_count(self, session_id: str) -> int:
        """How many events the window has as this transaction sees it."""
        pending = self._pending.get(session_id)
        if pending is None:
            return len(self._catalog.entry(session_id).events)
        if pending.window is None:
            raise UnknownSession(f"unknown session id {session_id!r}")
        return pending.kept_events + len(pending.new_events)

    # ----- internals ---------------------------------------------------------------------

    def _check_open(self) -> None:
        if self.closed:
            raise UsageError("this transaction has already ended")
        if self.failed is not None:
            raise UsageError(f"this transaction cannot go on: {self.failed}")

    def _join(self, session_id: str, session_key: str) -> None:
        self._relinked.add(session_id)
        self._joined.setdefault(session_key, {})[session_id] = None

    def _leave(self, session_id: str, session_key: str) -> None:
        self._relinked.add(session_id)
        self._joined.get(session_key, {}).pop(session_id, None)

    def _pending_of(self, session_id: str) -> PendingWindow | None:
        """The window's pending entry, made from the committed one when first touched."""
        pending = self._pending.get(session_id)
        if pending is not None:
            return pending
        entry = self._catalog.entries.get(session_id)
        if entry is None:
            return None
        return PendingWindow(entry.window, len(entry.events), EventPositions())

    def _write(self, record: LogRecord) -> RecordPosition:
        try:
            position = self._writer.write(record)
        except DecodeError as error:
            raise InputError(str(error)) from None
        self._records.append(position, record)
        return position

    def _note_change(self, record: LogRecord) -> None:
        if self._taker is not None or self._changes is not None:
            self._keep(change_of(record))

    def _keep(self, change: Change) -> None:
        """Keep `change` for the commit hooks, or hand it to the streaming follower."""
        if self._taker is not None:
            self._taker(change)
            return
        changes = self._changes
        if changes is None:
            return
        changes.append(change)
        if self._streaming is not None and len(changes) >= self._streaming[1]:
            follower, self._streaming = self._streaming[0], None
            self._changes = []
            self.streamed_to = follower
            self._taker = follower.start(self, changes)
