"""The plan and the rewrite of a compaction of the transcript log (the rules and the
steps are `engine.transcript.compaction`'s docstring).

Owns: which committed records are dead (`superseded_records`, the one place to extend),
the plan of a compaction (`plan_compaction`: which log files hold dead records, checked
against the catalog before anything is rewritten) and the rewrite of one sealed log file
(`rewrite_log_file`). Must not touch: the compaction state file and what a compaction
reports (`engine.transcript.compaction`), the store's catalog, lock or writer
(`TranscriptStore.compact` runs these steps with them), record bytes (frames are copied
as they are) or any index. Why apart: only `compact` runs them; a store that is opened
to be read never does (`StoreCompaction.compact` imports this module).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

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
from engine.transcript.catalog import Catalog
from engine.transcript.compaction import catalog_state, state_of
from engine.transcript.log_files import LOG_FOLDER, log_file_name
from engine.transcript.log_positions import RecordPosition
from engine.transcript.log_reader import LogReader

#: The record kinds that change windows or keys (events only append): what the plan's
#: check replays (`_check_same_state`).
STATE_RECORDS = (WindowRecord, DeleteSessionRecord)


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
    `engine.transcript.compaction`'s docstring), ending their lives in `lives`.

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
    found = state_of(planned.entries, planned.keys,
                      {session_id: len(life.event_records)
                       for session_id, life in lives.lives.items()})
    if found != catalog_state(catalog):
        raise StoreError(f"{directory.location(LOG_FOLDER)}: internal error: the log "
                         "without its dead records would not replay to the store's state; "
                         "nothing was compacted")


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
