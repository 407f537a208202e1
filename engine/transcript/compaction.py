"""Compaction of the transcript log: reclaiming the records that later records made dead.

Owns: the rule that says which committed records are dead (`superseded_records`, the
one place to extend), the plan of a compaction (`plan_compaction`: which log files hold
dead records, checked against the catalog before anything is rewritten), the rewrite of
one sealed log file (`rewrite_log_file`), the compaction state file
`transcripts/compaction.state` (its bytes are `engine.codec.compaction_file`) and what
a compaction reports (`CompactionOutcome`). Must not touch: the store's catalog, lock or
writer (`TranscriptStore.compact` runs the steps below with them and reloads its
catalog), record bytes (frames are copied as they are) or any index.

Dead records. A record is dead when a later committed record supersedes it:

* every window, event and `replace` record of a window that a later `delete_session`
  record removed (the windows of the key at that point of the replay,
  `Catalog.delete_session`); a window re-created under a deleted window's session id
  starts a new life: its records come after the delete and stay;
* every event record of a window before a later `replace` record of it (its events
  from then on are the ones that follow the replace), and the window's earlier
  `replace` records with them (a replace is followed by its new events in the same
  transaction, so it goes with them: a replace kept without its events would not
  replay).

Kept always: every commit record (so transaction ids 1, 2, 3, ... and the store
generation are unchanged, and an index manifest's claim of the generation it covers
still holds, `engine.transcript.evidence`), every `delete_session` record (an index that
lags replays it from `changes_since`, and the change feed names the windows deleted),
and the last `replace` record of a live window (the same, for an index that lags: it
drops the window's rows before the new events come). One exception keeps a dead window's *window*
records (its events still go): when it moved to another session key during its life,
its first record may be what placed that key among the session keys, and the keys'
order is part of the state. After a compaction the replay of the log gives the same
state (windows, their order, keys, events) as before; only the byte positions move.
`plan_compaction` checks this on the planned log before writing anything. Extension
point: a record kind that supersedes earlier records adds one `case` to
`superseded_records` (the replace-transcript record is the second one there).

Which files. Only sealed log files are rewritten. When the open (last) log file holds
dead records, the writer seals it first (`LogWriter.roll`, as a full file is sealed),
so every dead record can be reclaimed, not only those of files past
`EngineConfig.log_roll_bytes`; the next transaction starts a new log file. A rewritten
file keeps its number, its header, the surviving frames byte for byte and in order, and
gets a footer of its new record count and CRC; it is written with
`Directory.write_atomic` (temporary file, fsync, rename over the old one, folder fsync),
so at any instant each log file is wholly the old or wholly the new one. Files are
rewritten from the last to the first, so the rewritten ones are always a suffix of the
log. That order matters: of a dead window's records, those left are then the start of
its life (its window record, events 0..k) followed by the delete that ends it, which is
a valid log that replays to the same state; first to last would leave later events of a
window whose window record is gone, which no replay accepts. Files are never merged or
renumbered (numbers must stay 1..N), so their count does not shrink.

Crash safety. The catalog checkpoint records each sealed file's size and footer and the
byte position of every event, so it disagrees with the log once a file was rewritten;
an open would then report it as a damaged checkpoint. So the steps are:

1. write the compaction state `{compactions + 1, in_progress: true}` (durable);
2. seal the open file if it holds dead records; rewrite each file that holds some;
3. reload the writer's catalog from the rewritten log and save a fresh checkpoint (or
   remove the old one when checkpoints are off);
4. write `{compactions + 1, in_progress: false}`.

An open that finds `in_progress` does not trust the checkpoint (its claim of what was
committed still counts: every commit is kept), replays the whole log and reports a
note that is not serious; a writer so opened then saves a fresh checkpoint and clears
the flag. A kill at any point therefore leaves a log of the same committed
transactions, opened without error and verified clean. A file the disk refuses
(ENOSPC, EIO) stops the compaction with a `StoreError`: the files already rewritten
and those not yet are both valid, the writer reloads its catalog from them, and the
flag stays set until a later step succeeds.

Readers. A reader (another process, or a handle opened with `writer=False`) holds
positions from before a compaction. It keeps the state it read at open; a read that
finds a record other than the one expected (`CorruptFile` from `LogReader`) reads the
state again, and when it moved (or was `in_progress`) reloads its catalog at the same
generation and reads again, instead of reporting damage; `refresh()` reloads in full
when the state moved. A reader whose view holds windows a compaction removed (they
were deleted after its generation) cannot be reloaded at that generation: it gets a
`StoreError` saying to refresh or reopen.

The index is unaffected: it names events by (session id, seq), never by log position,
and the generation its manifest records is unchanged. The change feed
(`changes_since`) of the transactions before a delete no longer lists the dead windows'
changes; a follower that lags (an index replaying from its manifest's generation) still
sees the delete, which removes whatever it had of them, so it ends in the same state.

Cost: one replay of the whole log to plan (O(bytes), every record decoded), then each
file with dead records read and written once, in memory (a file is at most
`log_roll_bytes` plus one transaction).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from engine.codec.compaction_file import (
    CompactionState,
    decode_compaction_file,
    encode_compaction_file,
)
from engine.codec.framing import (
    FOOTER_SIZE,
    HEADER_SIZE,
    Footer,
    Frame,
    encode_footer,
    iter_frames,
    update_crc,
)
from engine.codec.log_file import (
    DeleteSessionRecord,
    EventRecord,
    LogRecord,
    ReplaceRecord,
    WindowRecord,
)
from engine.directory import Directory
from engine.errors import CorruptFile, StoreError
from engine.model import SessionWindow
from engine.transcript.catalog import Catalog
from engine.transcript.evidence import counted
from engine.transcript.log_files import LOG_FOLDER, log_file_name
from engine.transcript.log_positions import RecordPosition
from engine.transcript.log_reader import LogReader

COMPACTION_STATE_NAME = f"{LOG_FOLDER}/compaction.state"

#: The record kinds that change windows or keys (events only append): what the plan's
#: check replays (`_check_same_state`).
STATE_RECORDS = (WindowRecord, DeleteSessionRecord)

#: The state read from a damaged compaction state file: a compaction may be running.
UNKNOWN_STATE = CompactionState(compactions=-1, in_progress=True)


@dataclass(frozen=True, slots=True)
class CompactionOutcome:
    """What a compaction did: files rewritten (`kind` names them: `log` files of the
    reference store, a SQLite `database`), bytes reclaimed, dead records dropped.

    >>> CompactionOutcome(2, 300, 7).summary()
    'compacted 2 log files, reclaimed 300 bytes'
    >>> (CompactionOutcome(1, 5) + CompactionOutcome(0, 0)).summary()
    'compacted 1 log file, reclaimed 5 bytes'
    """

    files_compacted: int = 0
    bytes_reclaimed: int = 0
    records_dropped: int = 0
    kind: str = "log"

    def __add__(self, other: CompactionOutcome) -> CompactionOutcome:
        return CompactionOutcome(self.files_compacted + other.files_compacted,
                                 self.bytes_reclaimed + other.bytes_reclaimed,
                                 self.records_dropped + other.records_dropped, self.kind)

    def summary(self) -> str:
        """The one-line summary `session-search compact` prints."""
        return (f"compacted {counted(self.files_compacted, f'{self.kind} file')}, "
                f"reclaimed {counted(self.bytes_reclaimed, 'byte')}")

    def to_json(self) -> dict[str, int | str]:
        """`{"filesCompacted", "bytesReclaimed", "recordsDropped", "kind"}`."""
        return {"filesCompacted": self.files_compacted, "bytesReclaimed": self.bytes_reclaimed,
                "recordsDropped": self.records_dropped, "kind": self.kind}


# --------------------------------------------------------------------------------------
# The compaction state file
# --------------------------------------------------------------------------------------


def read_compaction_state(directory: Directory) -> CompactionState:
    """The compaction state (no file: never compacted); a damaged file reads as
    `UNKNOWN_STATE` (a compaction may be running: trust no checkpoint)."""
    if not directory.exists(COMPACTION_STATE_NAME):
        return CompactionState()
    try:
        return decode_compaction_file(directory.read_bytes(COMPACTION_STATE_NAME),
                                      directory.location(COMPACTION_STATE_NAME))
    except StoreError:
        return UNKNOWN_STATE


def write_compaction_state(directory: Directory, state: CompactionState) -> None:
    """Replace the compaction state, durably (`write_atomic`)."""
    directory.write_atomic(COMPACTION_STATE_NAME, encode_compaction_file(state))


def begun_state(state: CompactionState) -> CompactionState:
    """The state written before a compaction rewrites anything.

    >>> begun_state(CompactionState(2, False, 10))
    CompactionState(compactions=3, in_progress=True, reclaimed_bytes=10)
    >>> begun_state(UNKNOWN_STATE).compactions
    1
    """
    return CompactionState(max(state.compactions, 0) + 1, True, state.reclaimed_bytes)


def finished_state(state: CompactionState, reclaimed: int) -> CompactionState:
    """The state written once a compaction (begun as `state`) finished.

    >>> finished_state(CompactionState(3, True, 10), 5)
    CompactionState(compactions=3, in_progress=False, reclaimed_bytes=15)
    """
    return CompactionState(state.compactions, False, state.reclaimed_bytes + reclaimed)


# --------------------------------------------------------------------------------------
# Which records are dead
# --------------------------------------------------------------------------------------


@dataclass(slots=True)
class WindowLife:
    """The records of one window since the window record that (re)made it."""

    session_key: str
    window_records: list[RecordPosition] = field(default_factory=list)
    event_records: list[RecordPosition] = field(default_factory=list)
    #: Its `replace` records not yet superseded (at most the last one, once planned).
    replace_records: list[RecordPosition] = field(default_factory=list)
    #: Whether a window record moved it to another session key during this life.
    moved: bool = False


class WindowLives:
    """The current life of every window, and the session-key membership, followed in
    log order as the catalog's replay rule follows them."""

    def __init__(self) -> None:
        """No window yet."""
        self.lives: dict[str, WindowLife] = {}
        self.members: dict[str, dict[str, None]] = {}

    def observe(self, position: RecordPosition, record: LogRecord) -> None:
        """Note a window or event record (other kinds change no life here)."""
        match record:
            case WindowRecord(window=window):
                life = self.lives.get(window.session_id)
                if life is None:
                    life = self.lives[window.session_id] = WindowLife(window.session_key)
                    self.members.setdefault(window.session_key, {})[window.session_id] = None
                elif life.session_key != window.session_key:
                    self._leave(window.session_id, life.session_key)
                    self.members.setdefault(window.session_key, {})[window.session_id] = None
                    life.session_key, life.moved = window.session_key, True
                life.window_records.append(position)
            case EventRecord(session_id=session_id):
                life = self.lives.get(session_id)
                if life is not None:
                    life.event_records.append(position)
            case ReplaceRecord(session_id=session_id):
                life = self.lives.get(session_id)
                if life is not None:
                    life.replace_records.append(position)

    def end_key(self, session_key: str) -> list[WindowLife]:
        """End the lives of every window of `session_key` (a delete); return them."""
        return [self.lives.pop(session_id) for session_id in self.members.pop(session_key, {})]

    def _leave(self, session_id: str, session_key: str) -> None:
        siblings = self.members.get(session_key)
        if siblings is not None:
            siblings.pop(session_id, None)
            if not siblings:
                del self.members[session_key]


def superseded_records(record: LogRecord, lives: WindowLives) -> list[RecordPosition]:
    """The earlier committed records that `record` makes dead (the compaction rule; see
    the module docstring), ending their lives in `lives`.

    This is the one place that says what supersedes what; a new kind of superseding
    record is one more case. What a case must keep: it only kills records that come
    before it, so that the records a compaction cut short (files rewritten last first)
    leaves of them are a start followed by the record that supersedes them, which the
    replay accepts; and if the kind changes windows or keys, `STATE_RECORDS` and
    `_check_same_state` replay it too.

    >>> from engine.model import SessionWindow
    >>> lives = WindowLives()
    >>> lives.observe(RecordPosition(1, 16, 9), WindowRecord(SessionWindow("w", "k")))
    >>> lives.observe(RecordPosition(1, 25, 9), EventRecord("w", 0, 0.0, {}))
    >>> [p.offset for p in superseded_records(DeleteSessionRecord("k", ("w",)), lives)]
    [25, 16]
    >>> lives.lives
    {}
    """
    match record:
        case DeleteSessionRecord(session_key=session_key):
            dead: list[RecordPosition] = []
            for life in lives.end_key(session_key):
                dead.extend(life.event_records)
                dead.extend(life.replace_records)
                if not life.moved:  # a moved window's records placed keys: keep them
                    dead.extend(life.window_records)
            return dead
        case ReplaceRecord(session_id=session_id):
            life = lives.lives.get(session_id)
            if life is None:
                return []
            dead = [*life.event_records, *life.replace_records[:-1]]
            life.event_records, life.replace_records = [], life.replace_records[-1:]
            return dead
    return []


# --------------------------------------------------------------------------------------
# The plan
# --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CompactionPlan:
    """The dead records of each log file that holds any (offsets, by file number), their
    framed bytes, and the last log file's number."""

    dead: dict[int, frozenset[int]]
    dead_bytes: int
    last_file: int

    @property
    def record_count(self) -> int:
        """How many dead records there are."""
        return sum(len(offsets) for offsets in self.dead.values())


def plan_compaction(directory: Directory, catalog: Catalog) -> CompactionPlan:
    """Replay the committed log and find its dead records; StoreError (nothing
    rewritten) when the log without them would not replay to `catalog`'s state, or
    the log does not reach `catalog.generation`. Cost: O(bytes of the log)."""
    reader = LogReader(directory)
    lives = WindowLives()
    dead: dict[int, set[int]] = {}
    dead_bytes = 0
    structure: list[tuple[RecordPosition, LogRecord]] = []  # the STATE_RECORDS
    generation = 0
    for transaction in reader.iter_transactions():
        for position, record in transaction.records:
            lives.observe(position, record)
            if isinstance(record, STATE_RECORDS):
                structure.append((position, record))
            for gone in superseded_records(record, lives):
                dead.setdefault(gone.file_number, set()).add(gone.offset)
                dead_bytes += gone.length
        generation = transaction.transaction_id
    if generation != catalog.generation:
        raise StoreError(f"{directory.location(log_file_name(reader.cursor.file_number))}: "
                         f"the log holds {generation} transactions, the store "
                         f"{catalog.generation}; nothing was compacted")
    _check_same_state(directory, catalog, structure, dead, lives)
    return CompactionPlan({number: frozenset(offsets) for number, offsets in dead.items()},
                          dead_bytes, reader.cursor.file_number)


def _check_same_state(
    directory: Directory, catalog: Catalog,
    structure: Iterable[tuple[RecordPosition, LogRecord]],
    dead: dict[int, set[int]], lives: WindowLives,
) -> None:
    """Replay the window and delete records that stay and compare the windows, their
    order, the session keys and the event counts with `catalog` (events never change
    an order, and every event of a live window stays)."""
    planned = Catalog()
    for position, record in structure:
        if position.offset in dead.get(position.file_number, ()):
            continue
        if isinstance(record, WindowRecord):
            planned.put_window(record.window)
        elif isinstance(record, DeleteSessionRecord):
            planned.delete_session(record.session_key)
    found = _state_of(planned.entries, planned.keys,
                      {session_id: len(life.event_records)
                       for session_id, life in lives.lives.items()})
    if found != catalog_state(catalog):
        raise StoreError(f"{directory.location(LOG_FOLDER)}: internal error: the log "
                         "without its dead records would not replay to the store's state; "
                         "nothing was compacted")


def catalog_state(catalog: Catalog) -> tuple:
    """What a replay must give again, positions left out: the windows in order with
    their metadata and event counts, and the session keys in order with their windows
    (a comparable value)."""
    return _state_of(catalog.entries, catalog.keys,
                     {session_id: len(entry.events)
                      for session_id, entry in catalog.entries.items()})


def _state_of(entries: dict, keys: dict[str, dict[str, None]],
              event_counts: dict[str, int]) -> tuple:
    windows: list[tuple[str, SessionWindow, int]] = [
        (session_id, entry.window, event_counts.get(session_id, -1))
        for session_id, entry in entries.items()]
    return windows, [(key, list(session_ids)) for key, session_ids in keys.items()]


# --------------------------------------------------------------------------------------
# Rewriting one file
# --------------------------------------------------------------------------------------


def rewrite_log_file(directory: Directory, number: int, dead: frozenset[int]) -> int:
    """Rewrite sealed log file `number` without the records that start at the offsets
    `dead`, atomically; return the bytes reclaimed. CorruptFile when the file is not a
    sealed log file whose footer matches (it was checked by the plan's replay)."""
    name = log_file_name(number)
    location = directory.location(name)
    data = directory.read_bytes(name)
    kept = bytearray(data[:HEADER_SIZE])
    count, crc, dropped = 0, 0, 0
    for item in iter_frames(data, HEADER_SIZE):
        if isinstance(item, Frame):
            if item.offset in dead:
                dropped += 1
                continue
            frame_bytes = data[item.offset: item.end]
            kept += frame_bytes
            count += 1
            crc = update_crc(crc, frame_bytes)
        elif isinstance(item, Footer):
            if item.offset + FOOTER_SIZE != len(data):
                raise CorruptFile(location, item.offset, "footer before the end of the file")
            break
        else:
            raise CorruptFile(location, item.offset, item.reason)
    else:
        raise CorruptFile(location, len(data), "segment is not sealed")
    if dropped != len(dead):
        raise CorruptFile(location, HEADER_SIZE,
                          f"{len(dead)} dead records planned, {dropped} found")
    kept += encode_footer(count, crc)
    directory.write_atomic(name, bytes(kept))
    return len(data) - len(kept)
