"""The transcript store: session windows and their events, durable in a `Directory`.

Owns: the public `TranscriptStore` API (create / open, transactions, reads, the change
feed), the store metadata file `store.meta`, and the in-memory catalog rebuilt from the
segments on open. Must not touch: byte layouts (`engine.codec`), segment files directly
(`engine.transcript.segments`), search indexes, or event semantics (the store keeps each
event as an opaque JSON object; `engine.transcript.events` and friends interpret them).

Files of a store (a `Directory`):

    store.meta                       backend name and creation time (framed, versioned)
    LOCK                             the single writer's lock; holds its pid
    transcripts/segment-NNNNNN.log   append-only transaction log (see `segments`)
    transcripts/catalog.ckpt         catalog checkpoint (derived; optional)

State model. The store is the replay of its committed transactions, in order:
`window` upserts a window's metadata (first insertion fixes its place in `windows()`;
a replacement keeps the place), `event` appends to a window (its `seq` must be the
window's next), `delete_session` removes every window of a key and its events. The
catalog in memory holds, per window, its metadata and the *positions* of its events
(segment, offset, length in compact arrays); event objects are decoded from the
segment files on demand, so memory grows by about 16 bytes per event, not by the
events themselves. Deleted events stay in the segment files (there is no compaction
yet); they are simply never referenced again.

Opening. Without a checkpoint, opening replays every segment, decoding every record
once: O(total bytes), about 13 µs per record here (300k events: 4.0 s). The *catalog
checkpoint* makes reopening fast: after each commit that seals a segment or brings the
records committed since the last one to `CHECKPOINT_AFTER_RECORDS`, and when a writer is
closed cleanly, the writer saves the whole catalog (windows, position arrays, transaction
start positions, the segment position it covers with the offset of the last commit
record, and the size, record count and footer CRC of every sealed segment) to
`transcripts/catalog.ckpt` with `write_atomic` (layout: `engine.codec.catalog_file`).
Opening reads the checkpoint's head and index (windows, keys, transactions), not the
event positions (16 of its 18 MB at 1M messages), which a search never needs: the
catalog's windows share them by range (`SharedPositions`), and they are read once, the
first time any event position is needed (reading events, appending to a window that
had events, saving the next checkpoint), through the file handle the open used, so a
checkpoint a writer saved over it since does not matter.

What is checked, and when:

* At open, O(segments + windows), never O(bytes): the checkpoint's own CRCs, and
  `segments.check_checkpoint_segments`: each covered sealed segment must have the size,
  footer record count and footer CRC the checkpoint recorded (header and footer are read,
  the records between are not); the unsealed segment must have an intact header, reach
  the covered offset, and end it with an intact commit record of the checkpoint's
  transaction. A checkpoint that fails is ignored (`checkpoint_ignored` says why) and the
  full replay runs, which names any damaged record; so does one of another version (it is
  derived data; the next writer close saves a current one). What follows the covered
  offset is replayed and decoded as without a checkpoint. At 1M messages (8,322 windows,
  1.02M events, 931 MB of segments, 18 MB checkpoint) this open reads 2 MB of the
  checkpoint and takes about 0.025 s and 10 MB; the positions cost about 0.015 s and
  16 MB when first needed.
* When the positions are first needed: their CRC32 and the footer's record count
  (`read_catalog_positions`). If they are damaged, or the file can no longer be read,
  nothing is misread and no data is lost: they are rebuilt by replaying the segments up
  to the checkpoint's transaction (O(bytes), as an open without checkpoint), and
  `checkpoint_positions_rebuilt` says why; a writer's close then saves a sound
  checkpoint. Only if the segments contradict the checkpoint's windows is that
  `CorruptFile` naming the checkpoint (`_CheckpointPositionsReader`).
* On read: every event read (`events`, `event`, reads inside a transaction) checks the
  record's own frame CRC and that it is the event the catalog expects (window and seq);
  `changes_since` decodes, and so checks, every record it re-reads. Damage inside covered
  bytes is therefore `CorruptFile` naming the segment and the record's offset when that
  record is read, not at open. Window, delete and commit records under a checkpoint are
  read again only by `changes_since` (the catalog has their effect) and by verify. Not
  checked at open either: the running record count and CRC the checkpoint saved for the
  unsealed segment (they would need every byte); a writer continues from them, so if
  covered bytes were damaged, the footer it later writes disagrees with them and a
  replay refuses that segment, as it should.
* `verify_segments()` (run by `session-search verify`) is the thorough check:
  `segments.check_covered_segments` CRCs every committed byte against the footers and
  the running CRC of the open segment, O(bytes); on a mismatch it names the first damaged
  record (`segments.find_damaged_record`). Opening without checkpoints
  (`EngineConfig(catalog_checkpoints=False)`) is the other oracle: it refuses damage at
  open, as before checkpoints existed.

Transactions. `transaction()` yields a `StoreTransaction` whose records are written
through to the current segment as they come (so a large import does not sit in memory)
and whose effects are kept in a small overlay that reads inside the transaction see.
Leaving the block normally writes the commit record and fsyncs; only then is the overlay
applied to the catalog (through the same functions replay uses), the generation bumped
and the commit hooks called. Leaving it with an exception truncates the segment back
and drops the overlay. A transaction that wrote nothing commits nothing.

Readers (`writer=False`) take no lock, never truncate, and see the transactions that
were committed when they opened or last called `refresh()`.
"""

from __future__ import annotations

import os
import time
from array import array
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Self

from engine.codec.catalog_file import (
    CatalogCheckpoint,
    PositionsRegion,
    encode_catalog_file,
    read_catalog_file,
    read_catalog_positions,
)
from engine.codec.framing import (
    DecodeError,
    decode_frame_at,
)
from engine.codec.meta_file import StoreMeta, decode_meta_file, encode_meta_file
from engine.codec.segment_file import (
    CommitRecord,
    DeleteSessionRecord,
    EventRecord,
    SegmentRecord,
    WindowRecord,
    decode_segment_payload,
)
from engine.config import EngineConfig
from engine.directory import Directory, FileDirectory, LockHandle, ReadHandle
from engine.errors import CorruptFile, InputError, StoreError, UnknownSession, UsageError
from engine.gc_pause import paused_garbage_collection
from engine.model import SessionWindow, StoredEvent, agent_id_of
from engine.transcript.segments import (
    SEGMENT_FOLDER,
    CommittedTransaction,
    RecordPosition,
    SealedSegment,
    SegmentCursor,
    SegmentReader,
    SegmentTail,
    SegmentWriter,
    check_checkpoint_segments,
    check_covered_segments,
    find_damaged_record,
    sealed_segment_of,
    segment_name,
)

META_NAME = "store.meta"
LOCK_NAME = "LOCK"
CHECKPOINT_NAME = f"{SEGMENT_FOLDER}/catalog.ckpt"
#: A writer also saves the catalog checkpoint after a commit once this many records were
#: committed since the last one, so a reader opening next to a long-lived writer (or after
#: a crash) replays at most about this many records (~0.15 s) instead of the whole log.
CHECKPOINT_AFTER_RECORDS = 10_000


def now_milliseconds() -> float:
    """The current time in epoch milliseconds."""
    return time.time() * 1000.0


# --------------------------------------------------------------------------------------
# Change feed values
# --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WindowPut:
    """A window was inserted or its metadata replaced."""

    window: SessionWindow


@dataclass(frozen=True, slots=True)
class EventAppended:
    """An event was appended to a window."""

    event: StoredEvent


@dataclass(frozen=True, slots=True)
class SessionDeleted:
    """Every window of `session_key` (listed) was deleted, with its events."""

    session_key: str
    session_ids: tuple[str, ...]


Change = WindowPut | EventAppended | SessionDeleted
CommitHook = Callable[[int, list[Change]], None]


def change_of(record: SegmentRecord) -> Change:
    """The change a (non-commit) segment record stands for."""
    match record:
        case WindowRecord(window=window):
            return WindowPut(window)
        case EventRecord():
            return EventAppended(
                StoredEvent(record.session_id, record.seq, record.event, record.created_at)
            )
        case DeleteSessionRecord():
            return SessionDeleted(record.session_key, record.session_ids)
    raise TypeError(f"no change for {record!r}")


# --------------------------------------------------------------------------------------
# The catalog: what replay builds
# --------------------------------------------------------------------------------------


class SharedPositions:
    """The event positions of every window a checkpoint loaded, concatenated in catalog
    order (segments int32, offsets int64, lengths int32), which `EventPositions` share by
    range: given at once, or read by `load()` the first time any of them is needed."""

    __slots__ = ("_arrays", "_load")

    def __init__(self, arrays: tuple[array, array, array] | None = None,
                 load: Callable[[], tuple[array, array, array]] | None = None) -> None:
        """The three arrays, or the function that reads them on first use."""
        if (arrays is None) == (load is None):
            raise ValueError("shared positions need their arrays or a way to load them")
        self._arrays = arrays
        self._load = load

    @property
    def loaded(self) -> bool:
        """Whether the arrays are in memory."""
        return self._arrays is not None

    def arrays(self) -> tuple[array, array, array]:
        """The three arrays, read now if they were not yet (raises what `load` raises,
        and tries again on the next call)."""
        arrays = self._arrays
        if arrays is None:
            assert self._load is not None
            arrays = self._arrays = self._load()
            self._load = None
        return arrays


class EventPositions:
    """The positions of one window's events, in seq order, in three compact arrays.

    Positions loaded from a checkpoint are a range `[start, start + count)` of arrays
    shared by every window (`SharedPositions`: no per-window copy at open, and the arrays
    may not be read yet: they are fetched on the first use of any position); the first
    append to such a window copies its range into arrays of its own.
    """

    __slots__ = ("count", "lengths", "offsets", "segments", "shared", "start")

    def __init__(self) -> None:
        """No events yet, in arrays of its own."""
        self.segments: array | None = array("i")  # 4 bytes each; None: not fetched yet
        self.offsets: array | None = array("q")  # 8 bytes each
        self.lengths: array | None = array("i")  # framed lengths; payloads are <= 1 GiB
        self.start = -1  # -1: the arrays are this window's own; else the shared range's
        self.count = 0
        self.shared: SharedPositions | None = None

    @classmethod
    def ranges(cls, shared: SharedPositions, counts: array) -> list[EventPositions]:
        """Consecutive ranges of `shared`, `counts[i]` positions long for window i."""
        result = []
        start = 0
        for count in counts:
            positions = cls.__new__(cls)
            positions.segments = positions.offsets = positions.lengths = None
            positions.start = start
            positions.count = count
            positions.shared = shared
            result.append(positions)
            start += count
        return result

    def __len__(self) -> int:
        return self.count

    def load(self) -> None:
        """Fetch the shared arrays now if they are not yet (what fetching raises)."""
        if self.segments is None:
            assert self.shared is not None
            self.segments, self.offsets, self.lengths = self.shared.arrays()

    def append(self, position: RecordPosition) -> None:
        """Add the position of the next event."""
        if self.start >= 0:
            self._copy_range()
        self.segments.append(position.segment)
        self.offsets.append(position.offset)
        self.lengths.append(position.length)
        self.count += 1

    def __getitem__(self, seq: int) -> RecordPosition:
        if self.segments is None:
            self.load()
        index = seq + max(self.start, 0)
        return RecordPosition(self.segments[index], self.offsets[index], self.lengths[index])

    def extend_into(self, segments: array, offsets: array, lengths: array) -> None:
        """Append these positions to three arrays of the same types."""
        if not self.count:
            return
        self.load()
        low = max(self.start, 0)
        high = low + self.count
        for target, source in ((segments, self.segments), (offsets, self.offsets),
                               (lengths, self.lengths)):
            size = source.itemsize
            target.frombytes(memoryview(source).cast("B")[low * size: high * size])

    def _copy_range(self) -> None:
        self.load()
        low, high = self.start, self.start + self.count
        self.segments = self.segments[low:high]
        self.offsets = self.offsets[low:high]
        self.lengths = self.lengths[low:high]
        self.start = -1
        self.shared = None


@dataclass(slots=True)
class _WindowEntry:
    """A window's metadata and its event positions (mutable: owned by one catalog)."""

    window: SessionWindow
    events: EventPositions


class _Catalog:
    """Committed state: windows in first-insertion order and the session-key index."""

    def __init__(self) -> None:
        self.entries: dict[str, _WindowEntry] = {}
        self.keys: dict[str, dict[str, None]] = {}  # session_key -> ordered session ids
        self.event_total = 0
        self.generation = 0
        self.transaction_segments = array("i")  # start of transaction g+1 at index g
        self.transaction_offsets = array("q")

    def put_window(self, window: SessionWindow) -> None:
        entry = self.entries.get(window.session_id)
        if entry is None:
            self.entries[window.session_id] = _WindowEntry(window, EventPositions())
        else:
            previous, entry.window = entry.window, window
            if previous.session_key == window.session_key:
                return  # same key: the window keeps its place among the key's windows
            self._unlink_key(previous)
        self.keys.setdefault(window.session_key, {})[window.session_id] = None

    def append_event(self, session_id: str, seq: int, position: RecordPosition) -> str | None:
        """Add an event position; return a reason if it does not fit the state."""
        entry = self.entries.get(session_id)
        if entry is None:
            return f"event for unknown window {session_id!r}"
        if seq != len(entry.events):
            return f"event seq {seq} in window {session_id!r}, expected {len(entry.events)}"
        entry.events.append(position)
        self.event_total += 1
        return None

    def delete_session(self, session_key: str) -> tuple[str, ...]:
        session_ids = tuple(self.keys.pop(session_key, {}))
        for session_id in session_ids:
            entry = self.entries.pop(session_id)
            self.event_total -= len(entry.events)
        return session_ids

    def to_checkpoint(
        self, cursor: SegmentCursor, sealed_segments: list[SealedSegment],
    ) -> CatalogCheckpoint:
        """The whole catalog, whose last commit ends at `cursor`, with the sealed segments
        before it (and `cursor.segment` when `cursor.sealed`)."""
        counts, segments, offsets, lengths = array("i"), array("i"), array("q"), array("i")
        for entry in self.entries.values():
            counts.append(len(entry.events))
            entry.events.extend_into(segments, offsets, lengths)
        windows = tuple(entry.window for entry in self.entries.values())
        keys = tuple((key, tuple(session_ids)) for key, session_ids in self.keys.items())
        sealed = tuple((item.size, item.record_count, item.records_crc)
                       for item in sealed_segments)
        return CatalogCheckpoint(cursor.segment, cursor.offset, cursor.record_count,
                                 cursor.records_crc, cursor.sealed, self.generation,
                                 cursor.commit_offset, sealed, windows, counts, segments,
                                 offsets, lengths, keys, self.transaction_segments,
                                 self.transaction_offsets)

    @classmethod
    def from_checkpoint(cls, checkpoint: CatalogCheckpoint, shared: SharedPositions) -> _Catalog:
        """The catalog a checkpoint saved, whose positions are `shared` (every window's
        positions are a range of them: no per-event work, and nothing read from them)."""
        catalog = cls()
        windows = checkpoint.windows
        catalog.entries = entries = dict(zip(
            [window.session_id for window in windows],
            map(_WindowEntry, windows, EventPositions.ranges(shared, checkpoint.event_counts)),
        ))
        if len(entries) != len(windows):
            raise StoreError("the checkpoint lists a window twice")
        catalog.event_total = sum(checkpoint.event_counts)
        catalog.keys = {key: dict.fromkeys(session_ids) for key, session_ids in checkpoint.keys}
        catalog.generation = checkpoint.transaction_id
        catalog.transaction_segments = checkpoint.transaction_segments
        catalog.transaction_offsets = checkpoint.transaction_offsets
        return catalog

    def note_transaction(self, start: RecordPosition) -> None:
        self.transaction_segments.append(start.segment)
        self.transaction_offsets.append(start.offset)
        self.generation += 1

    def _unlink_key(self, window: SessionWindow) -> None:
        siblings = self.keys.get(window.session_key)
        if siblings is not None:
            siblings.pop(window.session_id, None)
            if not siblings:
                del self.keys[window.session_key]

    def apply(self, transaction: CommittedTransaction, location_of: Callable[[int], str]) -> None:
        """Replay one committed transaction (CorruptFile when it does not fit the state)."""
        for position, record in transaction.records:
            match record:
                case WindowRecord(window=window):
                    self.put_window(window)
                case EventRecord():
                    problem = self.append_event(record.session_id, record.seq, position)
                    if problem is not None:
                        raise CorruptFile(location_of(position.segment), position.offset, problem)
                case DeleteSessionRecord():
                    self.delete_session(record.session_key)
                case CommitRecord():
                    raise CorruptFile(location_of(position.segment), position.offset,
                                      "commit record inside a transaction")
        self.note_transaction(transaction.start)


class _CheckpointPositionsReader:
    """Reads the event positions of a checkpoint the first time one is needed
    (the `load` of the catalog's `SharedPositions`).

    It reads through the handle the store opened the checkpoint with, so a checkpoint
    that a writer saved over it since is no concern: the bytes read are those of the
    file whose head and index were read. If they are damaged all the same (changed in
    place, or unreadable: the CRC32 the head states does not match, or the handle is
    gone and the file by that name is another one), nothing is misread: the positions
    are rebuilt by replaying the segments up to the checkpoint's transaction, exactly
    as an open without the checkpoint would find them (the checkpoint is derived data;
    this costs a replay, O(bytes of the segments)), and `problem` says why. Only when
    the segments disagree with the checkpoint's windows does it raise CorruptFile.
    It holds no reference to the store (so no cycle keeps a dropped store alive).
    """

    def __init__(self, directory: Directory, handle: ReadHandle, region: PositionsRegion,
                 checkpoint: CatalogCheckpoint) -> None:
        self.directory = directory
        self.handle: ReadHandle | None = handle
        self.region = region
        self.location = directory.location(CHECKPOINT_NAME)
        self.windows = checkpoint.windows
        self.event_counts = checkpoint.event_counts
        self.transaction_id = checkpoint.transaction_id
        #: Why the positions were rebuilt by replay (None: read intact, not read yet, or
        #: the replay failed too).
        self.problem: str | None = None
        #: What the replay raised, raised again on later calls instead of another replay.
        self.failure: StoreError | None = None

    def __call__(self) -> tuple[array, array, array]:
        """The positions, read and CRC-checked, or rebuilt by replay."""
        if self.failure is not None:
            raise self.failure
        try:
            handle = self.handle or self.directory.open_read(CHECKPOINT_NAME)
            self.handle = handle
            return read_catalog_positions(handle.read, self.region, self.location)
        except StoreError as error:  # CorruptFile included
            problem = f"{error} (the event positions were rebuilt from the segments)"
        finally:
            self.close()
        try:
            arrays = self.replay()
        except StoreError as error:  # the segments are damaged or contradict the index
            self.failure = error
            raise
        self.problem = problem
        return arrays

    def close(self) -> None:
        """Release the checkpoint file (a later read opens it again by name)."""
        if self.handle is not None:
            self.handle.close()
            self.handle = None

    def replay(self) -> tuple[array, array, array]:
        """The checkpoint's positions, rebuilt from the segments: replay transactions 1 ..
        `transaction_id` and take each window's positions in the checkpoint's order."""
        catalog = _Catalog()
        directory = self.directory
        if self.transaction_id:
            with paused_garbage_collection():
                for transaction in SegmentReader(directory).iter_transactions():
                    catalog.apply(transaction,
                                  lambda number: directory.location(segment_name(number)))
                    if catalog.generation >= self.transaction_id:
                        break
        if catalog.generation != self.transaction_id or \
                len(catalog.entries) != len(self.windows):
            raise CorruptFile(self.location, self.region.offset, (
                f"the segments hold {catalog.generation} transactions and "
                f"{len(catalog.entries)} windows, the checkpoint {self.transaction_id} and "
                f"{len(self.windows)}"))
        arrays = (array("i"), array("q"), array("i"))
        for window, count in zip(self.windows, self.event_counts, strict=True):
            entry = catalog.entries.get(window.session_id)
            if entry is None or len(entry.events) != count:
                found = "no window" if entry is None else f"{len(entry.events)} events"
                raise CorruptFile(self.location, self.region.offset, (
                    f"window {window.session_id!r} has {count} events in the checkpoint, "
                    f"{found} in the segments"))
            entry.events.extend_into(*arrays)
        return arrays


# --------------------------------------------------------------------------------------
# Transactions
# --------------------------------------------------------------------------------------


@dataclass(slots=True)
class _PendingWindow:
    """A window touched by the open transaction: its metadata (None once deleted), how
    many committed events it keeps, and the events appended in this transaction."""

    window: SessionWindow | None
    kept_events: int
    new_events: EventPositions


class StoreTransaction:
    """The write operations of one transaction (the `BackendTransaction` protocol)."""

    def __init__(self, store: TranscriptStore, writer: SegmentWriter) -> None:
        self._store = store
        self._writer = writer
        self._pending: dict[str, _PendingWindow] = {}
        #: Windows inserted by this transaction (new, or deleted then put again), in order.
        self._inserted: dict[str, None] = {}
        #: Windows that left their committed place under their key (moved, deleted, new).
        self._relinked: set[str] = set()
        #: session key -> windows that joined it in this transaction, in order.
        self._joined: dict[str, dict[str, None]] = {}
        self._operations: list[tuple[RecordPosition, SegmentRecord]] = []
        self._changes: list[Change] | None = [] if store._commit_hooks else None
        self.closed = False

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
            pending = _PendingWindow(window, 0, EventPositions())
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
            self._store._catalog.entries[session_id].events.load()
        seq = pending.kept_events + len(pending.new_events)
        stamp = now_milliseconds() if created_at is None else float(created_at)
        record = EventRecord(session_id, seq, stamp, event)
        position = self._write(record)
        self._pending[session_id] = pending
        pending.new_events.append(position)
        self._note_change(record)
        return seq

    def delete_session(self, session_key: str) -> int:
        """Delete every window of `session_key` and their events; return how many."""
        self._check_open()
        session_ids = tuple(window.session_id for window in self.windows_of(session_key))
        if not session_ids:
            return 0
        record = DeleteSessionRecord(session_key, session_ids)
        self._write(record)
        for session_id in session_ids:
            self._pending[session_id] = _PendingWindow(None, 0, EventPositions())
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
        for session_id, entry in self._store._catalog.entries.items():
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
        catalog = self._store._catalog
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
            return self._store.events(session_id)
        if pending.window is None:
            raise UnknownSession(f"unknown session id {session_id!r}")
        self._writer.flush()
        kept = self._store.events(session_id)[: pending.kept_events] if pending.kept_events else []
        fresh = [pending.new_events[index] for index in range(len(pending.new_events))]
        return kept + self._store._read_events(session_id, pending.kept_events, fresh)

    def event_count(self, session_id: str) -> int:
        """How many events the window has as this transaction sees it."""
        pending = self._pending.get(session_id)
        if pending is None:
            return self._store.event_count(session_id)
        if pending.window is None:
            raise UnknownSession(f"unknown session id {session_id!r}")
        return pending.kept_events + len(pending.new_events)

    # ----- internals ---------------------------------------------------------------------

    def _check_open(self) -> None:
        if self.closed:
            raise UsageError("this transaction has already ended")

    def _join(self, session_id: str, session_key: str) -> None:
        self._relinked.add(session_id)
        self._joined.setdefault(session_key, {})[session_id] = None

    def _leave(self, session_id: str, session_key: str) -> None:
        self._relinked.add(session_id)
        self._joined.get(session_key, {}).pop(session_id, None)

    def _pending_of(self, session_id: str) -> _PendingWindow | None:
        """The window's pending entry, made from the committed one when first touched."""
        pending = self._pending.get(session_id)
        if pending is not None:
            return pending
        entry = self._store._catalog.entries.get(session_id)
        if entry is None:
            return None
        return _PendingWindow(entry.window, len(entry.events), EventPositions())

    def _write(self, record: SegmentRecord) -> RecordPosition:
        try:
            position = self._writer.write(record)
        except DecodeError as error:
            raise InputError(str(error)) from None
        if isinstance(record, EventRecord):  # the catalog keeps positions, not events
            record = EventRecord(record.session_id, record.seq, record.created_at, {})
        self._operations.append((position, record))
        return position

    def _note_change(self, record: SegmentRecord) -> None:
        if self._changes is not None:
            self._changes.append(change_of(record))


# --------------------------------------------------------------------------------------
# The store
# --------------------------------------------------------------------------------------


class TranscriptStore:
    """Session windows and events in a directory; one writer, any number of readers."""

    def __init__(
        self,
        directory: Directory,
        meta: StoreMeta,
        config: EngineConfig,
        lock: LockHandle | None,
    ) -> None:
        """Use `create`, `open` or `open_path`; this only sets fields."""
        self.directory = directory
        self.backend = meta.backend
        self.created_at = meta.created_at
        self.config = config
        self._lock = lock
        self._catalog = _Catalog()
        self._reader = SegmentReader(directory)
        #: Where the committed data this handle has seen ends, and the sealed segments
        #: before it (what a checkpoint saves and `verify_segments` checks).
        self._cursor = SegmentCursor()
        self._sealed_segments: list[SealedSegment] = []
        self._writer: SegmentWriter | None = None
        self._transaction: StoreTransaction | None = None
        self._commit_hooks: list[CommitHook] = []
        self._closed = False
        #: What the writer cut from the end of the last segment on open (None: nothing).
        self.recovered_tail: SegmentTail | None = None
        #: The generation a catalog checkpoint supplied on open (None: none was used),
        #: and why a checkpoint found on open was not used (None: used, or absent).
        self.checkpoint_generation: int | None = None
        self.checkpoint_ignored: str | None = None
        self._saved_generation = 0  # the generation the checkpoint file holds
        self._records_since_checkpoint = 0  # records committed after it, commits included
        #: Reads the event positions of the checkpoint loaded on open, once.
        self._positions_reader: _CheckpointPositionsReader | None = None

    # ----- opening -----------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        directory: Directory,
        *,
        backend: str = "reference",
        config: EngineConfig | None = None,
    ) -> TranscriptStore:
        """Create an empty store in `directory` and open it as the writer."""
        if not isinstance(backend, str) or not backend:
            raise UsageError("a store needs a backend name")
        lock = directory.acquire_lock(LOCK_NAME)
        try:
            if directory.exists(META_NAME) or directory.list_names(SEGMENT_FOLDER + "/"):
                raise StoreError(f"{directory.location(META_NAME)}: a store already exists here")
            meta = StoreMeta(backend, now_milliseconds())
            directory.write_atomic(META_NAME, encode_meta_file(meta))
            store = cls(directory, meta, config or EngineConfig(), lock)
            store._writer = SegmentWriter(directory, store.config)
            return store
        except BaseException:
            lock.release()
            raise

    @classmethod
    def open(
        cls,
        directory: Directory,
        *,
        writer: bool = False,
        config: EngineConfig | None = None,
    ) -> TranscriptStore:
        """Open an existing store; as the writer, recover a torn or uncommitted tail."""
        if not directory.exists(META_NAME):
            raise StoreError(f"{directory.location(META_NAME)}: no store here (missing metadata)")
        lock = directory.acquire_lock(LOCK_NAME) if writer else None
        try:
            meta = decode_meta_file(directory.read_bytes(META_NAME), directory.location(META_NAME))
            store = cls(directory, meta, config or EngineConfig(), lock)
            with paused_garbage_collection():  # the catalog is acyclic: nothing to collect
                store._load_checkpoint()
                store._replay()
            if writer:
                store._writer = SegmentWriter(directory, store.config)
                store.recovered_tail = store._writer.recover(store._reader)
            return store
        except BaseException:
            if lock is not None:
                lock.release()
            raise

    @classmethod
    def open_path(
        cls,
        path: str | os.PathLike[str],
        *,
        writer: bool = False,
        create: bool = False,
        backend: str = "reference",
    ) -> TranscriptStore:
        """Open the store in folder `path`; with `create`, make it first when absent.

        A store made here is opened as the writer whatever `writer` says; `backend`
        is used only when creating (an existing store keeps its own; see `.backend`).
        """
        directory = FileDirectory(path)
        if create and not directory.exists(META_NAME):
            return cls.create(directory, backend=backend)
        return cls.open(directory, writer=writer)

    def _replay(self) -> None:
        """Apply every committed transaction after the cursor to the catalog."""
        location_of = self._segment_location
        for transaction in self._reader.iter_transactions(self._cursor):
            self._catalog.apply(transaction, location_of)
        self._cursor = self._reader.cursor
        self._sealed_segments.extend(self._reader.sealed_segments)

    def _load_checkpoint(self) -> None:
        """Start from the catalog checkpoint when the segments still match it.

        Trusting it skips reading the records it covers. What is checked is cheap,
        O(segments) (`check_checkpoint_segments`): each sealed segment's size and footer,
        and the header, length and last commit record of the unsealed one. Damage inside
        covered records is found when they are read, and by `verify_segments`. A damaged,
        stale or mismatched checkpoint is ignored (`checkpoint_ignored` says why) and
        the full replay that follows names any damaged record: it is derived data.
        The event positions of the checkpoint are not read here: the handle
        stays open for `_CheckpointPositionsReader`, which reads them on first need.
        """
        if not self.config.catalog_checkpoints or not self.directory.exists(CHECKPOINT_NAME):
            return
        location = self.directory.location(CHECKPOINT_NAME)
        handle: ReadHandle | None = None
        try:
            handle = self.directory.open_read(CHECKPOINT_NAME)
            checkpoint = read_catalog_file(handle.read, handle.size(), location)
            cursor = SegmentCursor(checkpoint.segment, checkpoint.offset, checkpoint.record_count,
                                   checkpoint.records_crc, checkpoint.sealed,
                                   checkpoint.transaction_id, checkpoint.commit_offset)
            sealed_segments = [SealedSegment(*item) for item in checkpoint.sealed_segments]
            problem = check_checkpoint_segments(self.directory, cursor, sealed_segments)
            if problem is None:
                region = checkpoint.positions_region
                assert region is not None  # read_catalog_file says where the positions are
                self._positions_reader = _CheckpointPositionsReader(
                    self.directory, handle, region, checkpoint)
                handle = None  # the reader keeps it open until it has read them
                shared = SharedPositions(load=self._positions_reader)
                catalog = _Catalog.from_checkpoint(checkpoint, shared)
        except StoreError as error:
            problem = str(error)
            if self._positions_reader is not None:
                self._positions_reader.close()
                self._positions_reader = None
        finally:
            if handle is not None:
                handle.close()
        if problem is not None:
            self.checkpoint_ignored = problem
            return
        self._catalog = catalog
        self._cursor = cursor
        self._sealed_segments = sealed_segments
        self.checkpoint_generation = self._saved_generation = checkpoint.transaction_id

    @property
    def checkpoint_positions_rebuilt(self) -> str | None:
        """Why the event positions of the checkpoint used on open were rebuilt by replay
        when they were first needed (damaged, or unreadable); None when they were read
        intact, are not needed yet, or no checkpoint was used."""
        reader = self._positions_reader
        return None if reader is None else reader.problem

    def verify_segments(self) -> str | None:
        """Check every byte of committed data this handle has seen; return what is wrong
        (naming the file, and the offset of the first damaged record when one is found),
        or None.

        The thorough check that opening skips (`session-search verify` runs it): the
        CRC32 of all record bytes of every segment against its footer, and of the open
        segment against the running CRC kept by the writer (saved in the checkpoint) or
        by the replay. Cost: O(bytes of the segments), CRC in C, no record decoding.
        """
        self._check_open()
        problem = check_covered_segments(self.directory, self._cursor)
        if problem is None:
            return None
        damaged = find_damaged_record(self.directory, self._cursor)
        return problem if damaged is None else str(damaged)

    def _save_checkpoint(self, cursor: SegmentCursor) -> None:
        """Write the catalog checkpoint for the state that ends at `cursor`."""
        checkpoint = self._catalog.to_checkpoint(cursor, self._sealed_segments)
        try:
            self.directory.write_atomic(CHECKPOINT_NAME, encode_catalog_file(checkpoint))
        except OSError as error:
            raise StoreError(f"{self.directory.location(CHECKPOINT_NAME)}: saving the catalog "
                             f"checkpoint failed: {error}") from None
        self._saved_generation = checkpoint.transaction_id
        self._records_since_checkpoint = 0

    def _segment_location(self, segment: int) -> str:
        return self.directory.location(segment_name(segment))

    # ----- writing -----------------------------------------------------------------------

    @property
    def is_writer(self) -> bool:
        """Whether this handle holds the writer lock."""
        return self._writer is not None

    @contextmanager
    def transaction(self) -> Iterator[StoreTransaction]:
        """An all-or-nothing write transaction (writer only; one at a time).

        The cyclic garbage collector is paused until the commit and its hooks are done
        (`paused_garbage_collection`).
        """
        self._check_open()
        writer = self._writer
        if writer is None:
            raise StoreError("this store was opened read-only; open it with writer=True")
        if self._transaction is not None:
            raise UsageError("a transaction is already open on this store")
        writer.begin()
        transaction = self._transaction = StoreTransaction(self, writer)
        with paused_garbage_collection():
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
            if not transaction._operations:
                writer.abort()
                return
            self._commit(writer, transaction)

    def _commit(self, writer: SegmentWriter, transaction: StoreTransaction) -> None:
        generation = self._catalog.generation + 1
        try:
            writer.commit(CommitRecord(generation, now_milliseconds()))
        except BaseException:
            writer.abort()
            raise
        records = tuple(transaction._operations)
        self._catalog.apply(
            CommittedTransaction(records, CommitRecord(generation, 0.0), records[0][0]),
            self._segment_location,
        )
        if writer.sealed is not None:
            self._cursor = writer.sealed
            self._sealed_segments.append(sealed_segment_of(writer.sealed))
        else:
            self._cursor = writer.committed_cursor() or self._cursor
        self._records_since_checkpoint += len(records) + 1
        if writer.sealed is not None and self.config.catalog_checkpoints:
            self._save_checkpoint(writer.sealed)
        elif (self.config.catalog_checkpoints
              and self._records_since_checkpoint >= CHECKPOINT_AFTER_RECORDS):
            cursor = writer.committed_cursor()
            if cursor is not None:
                try:
                    self._save_checkpoint(cursor)
                except StoreError:
                    pass  # derived data: the transaction is durable; the next commit retries
        changes = transaction._changes
        if changes is None and self._commit_hooks:  # a hook was added during the transaction
            changes = [change for _, change in self.changes_since(generation - 1)]
        for hook in list(self._commit_hooks):
            hook(generation, list(changes or []))

    def add_commit_hook(self, hook: CommitHook) -> None:
        """Call `hook(generation, changes)` after the fsync of each later transaction."""
        self._commit_hooks.append(hook)

    # ----- reading -----------------------------------------------------------------------

    @property
    def generation(self) -> int:
        """How many transactions are committed (and seen by this handle)."""
        return self._catalog.generation

    def windows(self) -> list[SessionWindow]:
        """Every committed window, in first-insertion order."""
        return [entry.window for entry in self._catalog.entries.values()]

    def window(self, session_id: str) -> SessionWindow:
        """One committed window (UnknownSession if absent)."""
        return self._entry(session_id).window

    def windows_of(self, session_key: str) -> list[SessionWindow]:
        """The committed windows of one session key, in the order they joined the key
        (first-insertion order unless a window was moved from another key)."""
        session_ids = self._catalog.keys.get(session_key, {})
        return [self._catalog.entries[session_id].window for session_id in session_ids]

    def session_keys(self) -> list[str]:
        """Every session key holding at least one window, in order of first appearance."""
        return list(self._catalog.keys)

    def events(self, session_id: str) -> list[StoredEvent]:
        """Every committed event of a window, in seq order (UnknownSession if absent)."""
        positions = self._entry(session_id).events
        return self._read_events(session_id, 0,
                                 [positions[seq] for seq in range(len(positions))])

    def event(self, session_id: str, seq: int) -> StoredEvent:
        """One committed event by seq (UnknownSession if the window or seq is absent)."""
        positions = self._entry(session_id).events
        if not 0 <= seq < len(positions):
            raise UnknownSession(f"window {session_id!r} has no event with seq {seq}")
        return self._read_events(session_id, seq, [positions[seq]])[0]

    def event_count(self, session_id: str) -> int:
        """How many committed events a window has (UnknownSession if absent)."""
        return len(self._entry(session_id).events)

    def event_counts(self) -> dict[str, int]:
        """Every committed window's event count, by session id, in first-insertion order
        (one pass over the catalog: what `event_count` for each window costs in calls)."""
        return {session_id: entry.events.count
                for session_id, entry in self._catalog.entries.items()}

    def stats(self) -> dict[str, int]:
        """Counts of agents, sessions (keys), windows, events, and the store's bytes."""
        keys = self._catalog.keys
        agents = {agent for key in keys if (agent := agent_id_of(key)) is not None}
        names = [META_NAME, *self.directory.list_names(SEGMENT_FOLDER + "/")]
        return {
            "agents": len(agents),
            "sessions": len(keys),
            "windows": len(self._catalog.entries),
            "events": self._catalog.event_total,
            "bytes": sum(self.directory.size(name) for name in names),
        }

    def changes_since(self, generation: int) -> Iterator[tuple[int, Change]]:
        """Every committed change after `generation`, with its transaction's generation.

        Reads the segments once, from the start of transaction `generation + 1` to the
        last transaction this handle has seen: O(bytes of those transactions).
        """
        if not isinstance(generation, int) or generation < 0:
            raise UsageError(f"generation must be a non-negative integer, not {generation!r}")
        for transaction in self._iter_committed_after(generation):
            for _position, record in transaction.records:
                yield transaction.transaction_id, change_of(record)

    def _iter_committed_after(self, generation: int) -> Iterator[CommittedTransaction]:
        """Re-read transactions `generation + 1` .. `self.generation` from the segments."""
        last = self._catalog.generation
        if generation >= last:
            return
        cursor = SegmentCursor(self._catalog.transaction_segments[generation],
                               self._catalog.transaction_offsets[generation],
                               transaction_id=generation)
        for transaction in SegmentReader(self.directory).iter_transactions(
                cursor, verify_footers=False):
            yield transaction
            if transaction.transaction_id >= last:
                return

    def refresh(self) -> None:
        """Readers: apply transactions committed since opening or the last refresh."""
        self._check_open()
        if self._writer is None:
            self._replay()

    def close(self) -> None:
        """Close files and release the writer lock (idempotent).

        A writer closed outside a transaction first saves a catalog checkpoint of
        everything committed (when anything changed since the last one, or the positions
        of the one it opened were found damaged), so the next open decodes no records.
        The commit hooks are dropped: a hook is usually a bound method of an owner that
        holds this store, and that reference cycle would otherwise outlive a `gc.freeze`
        (see `paused_garbage_collection`).
        """
        if self._closed:
            return
        self._closed = True
        self._commit_hooks.clear()
        try:
            writer = self._writer
            if writer is not None:
                cursor = writer.committed_cursor() if self._transaction is None else None
                if cursor is None and self._transaction is None and self._cursor.sealed:
                    cursor = self._cursor  # the last commit sealed its segment
                writer.close()
                if (cursor is not None and self.config.catalog_checkpoints
                        and (self._catalog.generation > self._saved_generation
                             or self.checkpoint_positions_rebuilt is not None)):
                    self._save_checkpoint(cursor)
        finally:
            if self._positions_reader is not None:
                self._positions_reader.close()
            if self._lock is not None:
                self._lock.release()
                self._lock = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exception: object) -> None:
        self.close()

    # ----- internals ---------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError("the store is closed")

    def _entry(self, session_id: str) -> _WindowEntry:
        entry = self._catalog.entries.get(session_id)
        if entry is None:
            raise UnknownSession(f"unknown session id {session_id!r}")
        return entry

    def _read_events(
        self, session_id: str, first_seq: int, positions: list[RecordPosition],
    ) -> list[StoredEvent]:
        """Decode events `first_seq`, `first_seq + 1`, ... of window `session_id` at
        `positions`, reading each run of neighbours in one read.

        Each record's frame CRC is checked here, and that it is the event expected
        (window and seq): a record damaged since it was committed, or a position that
        does not fit, is `CorruptFile` naming the segment and the record's offset.
        """
        events: list[StoredEvent] = []
        start = 0
        while start < len(positions):
            end = start + 1
            while (end < len(positions)
                   and positions[end].segment == positions[start].segment
                   and positions[end].offset >= positions[end - 1].offset
                   and positions[end].offset - positions[end - 1].offset
                   - positions[end - 1].length <= 4096):
                end += 1
            events.extend(self._read_run(session_id, first_seq + start, positions[start:end]))
            start = end
        return events

    def _read_run(
        self, session_id: str, first_seq: int, run: list[RecordPosition],
    ) -> list[StoredEvent]:
        first, last = run[0], run[-1]
        name = segment_name(first.segment)
        data = self.directory.read_bytes(name, first.offset, last.offset + last.length
                                         - first.offset)
        events = []
        for seq, position in enumerate(run, start=first_seq):
            relative = position.offset - first.offset
            try:
                frame = decode_frame_at(data[relative: relative + position.length])
                record = decode_segment_payload(frame.payload)
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
