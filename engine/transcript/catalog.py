"""The catalog: a store's committed state in memory, what replaying the log builds.

Owns: per window, its metadata and the positions of its events in the log; the windows in
first-insertion order and the session-key index; where every committed transaction starts
in the log; and the replay rule (`Catalog.apply`). Must not touch: files (events are read
from the log by their positions, `engine.transcript.log_reader`; the catalog's copy on disk is
`engine.transcript.checkpoint`), or event semantics (an event is an opaque JSON object
here; `engine.transcript.events` and friends interpret them).

State model. The catalog is the replay of the committed transactions, in order: `window`
upserts a window's metadata (first insertion fixes its place in the windows; a
replacement keeps the place), `event` appends to a window (its `seq` must be the
window's next), `replace` drops a window's events (the `event_count` event records
that follow it in the transaction, of that window, are its events again from seq 0),
`delete_session` removes every window of a key and its events. Per window
the catalog holds the *positions* of its events (log file, offset, length), not the
events, compactly (`engine.transcript.event_positions`: an import's events, written one
after the other, take about 4 bytes each). Deleted events stay in the log files, never
referenced again, until a compaction rewrites the files without them
(`engine.transcript.compaction`); the store then reloads its catalog.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from engine.codec.log_file import (
    CommitRecord,
    DeleteSessionRecord,
    EventRecord,
    LogRecord,
    ReplaceRecord,
    WindowRecord,
)
from engine.errors import CorruptFile, UnknownSession
from engine.model import SessionWindow
from engine.transcript.event_positions import EventPositions, SharedPositions
from engine.transcript.log_positions import CommittedTransaction, RecordPosition

__all__ = ["Catalog", "EventPositions", "ScopeRow", "SharedPositions", "WindowEntry",
           "scope_rows_of"]


class WindowEntry:
    """A window's metadata and its event positions (mutable: owned by one catalog). A
    plain class, not a dataclass: a search's start-up imports this module, and making a
    dataclass's class costs more than this one's (entries are never compared)."""

    __slots__ = ("events", "window")

    def __init__(self, window: SessionWindow, events: EventPositions) -> None:
        self.window = window
        self.events = events

    def __repr__(self) -> str:
        return f"WindowEntry(window={self.window!r}, events={self.events!r})"


#: What a search's scope reads of a window: its session id, key and `archived` flag.
ScopeRow = tuple[str, str, bool]


def scope_rows_of(windows: Iterable[SessionWindow]) -> list[ScopeRow]:
    """The scope rows of these windows, in order (the clear version, and the oracle of
    every quicker way a store reads them: `Catalog.scope_rows`).

    >>> scope_rows_of([SessionWindow("w1", "k"), SessionWindow("w2", "k", archived=True)])
    [('w1', 'k', False), ('w2', 'k', True)]
    """
    return [(window.session_id, window.session_key, window.archived) for window in windows]


class _Unbuilt(NamedTuple):
    """What a catalog loaded from a checkpoint builds its `entries` and `keys` from on
    first use (`Catalog.loaded`)."""

    windows: Sequence[SessionWindow]  # in catalog order (they may be built on first read)
    indexes: dict[str, int]  # each window's place in `windows`, by session id
    counts: array  # event counts, in catalog order
    shared: SharedPositions
    keys: tuple[tuple[str, tuple[str, ...]], ...]
    scope_rows: Callable[[], list[ScopeRow]]  # `scope_rows_of(windows)`, maybe quicker


class Catalog:
    """Committed state: windows in first-insertion order and the session-key index.

    A catalog loaded from a checkpoint (`loaded`) builds its `entries` (a `WindowEntry`
    and an `EventPositions` range per window) and `keys` the first time either is read:
    until then the reads below (`windows`, `window`, `window_count`) answer from the
    checkpoint's windows, and `scope_rows` (what a search reads) from what the
    checkpoint gives, without building the windows when it can. Every other use, and
    every change, goes through `entries` or `keys` and so builds them first; the same
    window objects are in the entries then.
    """

    _unbuilt: _Unbuilt | None = None

    def __init__(self) -> None:
        self.entries: dict[str, WindowEntry] = {}
        self.keys: dict[str, dict[str, None]] = {}  # session_key -> ordered session ids
        self.event_total = 0
        self.generation = 0
        self.transaction_files = array("i")  # start of transaction g+1 at index g
        self.transaction_offsets = array("q")

    @classmethod
    def loaded(cls, windows: Sequence[SessionWindow], indexes: dict[str, int],
               counts: array, shared: SharedPositions,
               keys: tuple[tuple[str, tuple[str, ...]], ...],
               scope_rows: Callable[[], list[ScopeRow]] | None = None) -> Catalog:
        """The catalog of these windows (in catalog order; `indexes` gives each one's
        place by session id), with `counts[i]` events at consecutive ranges of `shared`
        for window i, and these keys (each with its session ids in joining order);
        `entries` and `keys` are built on first use. `scope_rows()` must give
        `scope_rows_of(windows)` (the default). Its generation, total and transaction
        starts are the caller's to set.

        >>> window = SessionWindow("w1", "k")
        >>> catalog = Catalog.loaded((window,), {"w1": 0}, array("i", [2]),
        ...                          SharedPositions((array("i"), array("q"), array("i"))),
        ...                          (("k", ("w1",)),))
        >>> catalog.windows() == [window], catalog.window_count(), "entries" in vars(catalog)
        (True, 1, False)
        >>> catalog.scope_rows(), "entries" in vars(catalog)
        ([('w1', 'k', False)], False)
        >>> len(catalog.entry("w1").events), catalog.keys, catalog.windows() == [window]
        (2, {'k': {'w1': None}}, True)
        """
        catalog = cls.__new__(cls)
        catalog.event_total = 0
        catalog.generation = 0
        catalog.transaction_files = array("i")
        catalog.transaction_offsets = array("q")
        if scope_rows is None:
            scope_rows = lambda: scope_rows_of(windows)
        catalog._unbuilt = _Unbuilt(windows, indexes, counts, shared, keys, scope_rows)
        return catalog

    def __getattr__(self, name: str) -> Any:
        """`entries` or `keys` of a `loaded` catalog, built now (only called when the
        attribute is not set yet)."""
        unbuilt = self._unbuilt
        if unbuilt is None or name not in ("entries", "keys"):
            raise AttributeError(name)
        # Both built before either is set: a build that fails leaves the catalog as it was.
        entries = dict(zip(unbuilt.indexes, map(
            WindowEntry, unbuilt.windows, EventPositions.ranges(unbuilt.shared,
                                                                unbuilt.counts))))
        keys = {key: dict.fromkeys(session_ids) for key, session_ids in unbuilt.keys}
        self.entries, self.keys, self._unbuilt = entries, keys, None
        return getattr(self, name)

    def windows(self) -> list[SessionWindow]:
        """Every window, in first-insertion order."""
        unbuilt = self._unbuilt
        if unbuilt is not None:
            return list(unbuilt.windows)
        return [entry.window for entry in self.entries.values()]

    def scope_rows(self) -> list[ScopeRow]:
        """`scope_rows_of(self.windows())`: every window's session id, key and
        `archived` flag, in first-insertion order (from the checkpoint's columns while
        the entries are not built)."""
        unbuilt = self._unbuilt
        if unbuilt is not None:
            return unbuilt.scope_rows()
        return scope_rows_of([entry.window for entry in self.entries.values()])

    def window(self, session_id: str) -> SessionWindow:
        """The window `session_id` (UnknownSession if absent)."""
        unbuilt = self._unbuilt
        if unbuilt is None:
            return self.entry(session_id).window
        index = unbuilt.indexes.get(session_id)
        if index is None:
            raise UnknownSession(f"unknown session id {session_id!r}")
        return unbuilt.windows[index]

    def window_count(self) -> int:
        """How many windows there are."""
        unbuilt = self._unbuilt
        return len(self.entries if unbuilt is None else unbuilt.indexes)

    def entry(self, session_id: str) -> WindowEntry:
        """The committed window `session_id` (UnknownSession if absent)."""
        entry = self.entries.get(session_id)
        if entry is None:
            raise UnknownSession(f"unknown session id {session_id!r}")
        return entry

    def put_window(self, window: SessionWindow) -> None:
        """Insert a window, or replace the metadata of the one with its session id."""
        entry = self.entries.get(window.session_id)
        if entry is None:
            self.entries[window.session_id] = WindowEntry(window, EventPositions())
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

    def clear_events(self, session_id: str) -> str | None:
        """Drop every event of a window (a `replace`); return a reason if it is unknown."""
        entry = self.entries.get(session_id)
        if entry is None:
            return f"replace of unknown window {session_id!r}"
        self.event_total -= len(entry.events)
        entry.events = EventPositions()
        return None

    def delete_session(self, session_key: str) -> tuple[str, ...]:
        """Remove every window of `session_key`; return their session ids."""
        session_ids = tuple(self.keys.pop(session_key, {}))
        for session_id in session_ids:
            entry = self.entries.pop(session_id)
            self.event_total -= len(entry.events)
        return session_ids

    def note_transaction(self, start: RecordPosition) -> None:
        """Count one more committed transaction, which starts at `start`."""
        self.transaction_files.append(start.file_number)
        self.transaction_offsets.append(start.offset)
        self.generation += 1

    def _unlink_key(self, window: SessionWindow) -> None:
        siblings = self.keys.get(window.session_key)
        if siblings is not None:
            siblings.pop(window.session_id, None)
            if not siblings:
                del self.keys[window.session_key]

    def apply(self, transaction: CommittedTransaction, location_of: Callable[[int], str],
              positions: Mapping[str, EventPositions] | None = None) -> None:
        """Replay one committed transaction (CorruptFile when it does not fit the state);
        `location_of(file_number)` names a log file in the error.

        Records that come in runs (`transaction.WrittenRecords.runs`: a transaction's
        own, at its commit) are read a run at a time: a run of event records that fits
        the state (outside a replacement, its first seq the window's next) has its
        positions appended at once, no record or position made; any other run is
        replayed a record at a time, as here for every record of a sequence of pairs
        (the clear path). `positions` (a transaction's own commit) are the positions its
        overlay holds of windows whose events it wrote from seq 0: a run that is every
        one of such a window's events, and holds exactly those positions, makes that
        object the window's (`EventPositions.holds_run` checks that) instead of copying it, so an
        import's positions are not in memory twice at its commit."""
        replacing: ReplaceRecord | None = None  # whose new events are still to come
        expected = 0
        records = transaction.records
        runs = getattr(records, "runs", None)
        if runs is None:
            for position, record in records:
                replacing, expected = self._apply_record(position, record, replacing,
                                                         expected, location_of)
        else:
            entries = self.entries
            for run in runs():
                if run.session_id is not None and replacing is None:
                    entry = entries.get(run.session_id)
                    if entry is not None and run.seq == entry.events.count:
                        lengths = records.run_lengths(run)
                        taken = None if not positions or run.seq else positions.get(
                            run.session_id)
                        if taken is not None and taken.holds_run(run.file_number, run.offset,
                                                                 lengths):
                            entry.events = taken
                        else:
                            entry.events.extend_run(run.file_number, run.offset, lengths)
                        self.event_total += run.count
                        continue
                for position, record in records.run_items(run):
                    replacing, expected = self._apply_record(position, record, replacing,
                                                             expected, location_of)
        if replacing is not None:
            position = transaction.records[-1][0]
            raise CorruptFile(location_of(position.file_number), position.offset,
                              f"the transaction ends {expected} events short of the "
                              f"replaced window {replacing.session_id!r}")
        self.note_transaction(transaction.start)

    def _apply_record(self, position: RecordPosition, record: LogRecord,
                      replacing: ReplaceRecord | None, expected: int,
                      location_of: Callable[[int], str]) -> tuple[ReplaceRecord | None, int]:
        """Replay one record of a transaction (`apply`); return the replacement whose
        events are still to come and how many."""
        if replacing is not None:
            if not (isinstance(record, EventRecord)
                    and record.session_id == replacing.session_id):
                raise CorruptFile(location_of(position.file_number), position.offset,
                                  f"expected event {replacing.event_count - expected} "
                                  f"of the replaced window {replacing.session_id!r}")
            expected -= 1
            if not expected:
                replacing = None
        match record:
            case WindowRecord(window=window):
                self.put_window(window)
            case EventRecord():
                problem = self.append_event(record.session_id, record.seq, position)
                if problem is not None:
                    raise CorruptFile(location_of(position.file_number), position.offset,
                                      problem)
            case ReplaceRecord():
                problem = self.clear_events(record.session_id)
                if problem is not None:
                    raise CorruptFile(location_of(position.file_number), position.offset,
                                      problem)
                if record.event_count:
                    replacing, expected = record, record.event_count
            case DeleteSessionRecord():
                self.delete_session(record.session_key)
            case CommitRecord():
                raise CorruptFile(location_of(position.file_number), position.offset,
                                  "commit record inside a transaction")
        return replacing, expected
