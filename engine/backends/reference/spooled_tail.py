"""The events a streamed transaction appended to a window after it left the window dirty,
kept as the rebuild with the commit needs them: their outlines and index entries, on the
transaction's scratch file.

Owns: `SpooledTail` (one window's tail, taken as its events pass the streaming follower:
`streaming.StreamedIndexing.take`) and `TailEntries` (its entries read back a run at a
time, in seq order). Must not touch: which windows are rebuilt and when (`streaming`,
`maintenance`), what a row is (`engine.transcript.projection`), the tree rules
(`engine.transcript.tree`), the index itself.

Why. A window too long to be handed whole (`engine.ingest.batch.WHOLE_WINDOW_EVENTS`) is
appended event by event; a rewind leaves it dirty, and the rebuild with the commit read
each of its events back from the committed log twice, decoding them each time: once for
its tree (`tree.outline`), once for the rows of its active path. Its events pass the
follower anyway, where each one's entry is made for the forward indexer's decision: from
the event that left the window dirty on (`start`), their outlines and entries are written
here, `chunk_events` at a time (one `marshal` record each), and the rebuild reads those
instead; only the events before `start` (committed earlier, or indexed forward before the
rewind) are still read from the log. Entries are kept, not terms: only the rows of the
active path are tokenized, at the rebuild, as before.

A tail is whole only while every event of its window from `start` on passed in seq order
(`take` says False otherwise, and the follower forgets it); the rebuild uses it only when
its `end` is the window's committed event count. The clear path, and the oracle, is
the read-back (`StreamedIndexing.spool_tails = False`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from engine.backends.reference.row_spool import CHUNK_ROWS, RowSpool
from engine.model import SEARCHABLE_ROLES, IndexEntry, StoredEvent
from engine.transcript.tree import TREE_FIELDS

#: One tail entry: the entry's seq, message id, role, timestamp and text.
TailRow = tuple[int, str, str, Any, str]


class SpooledTail:
    """The events of window `session_id` from seq `start` on, as they are appended
    (`take`): each one's outline (`tree.outline`'s fields) and, when it is searchable,
    its index entry, written to `spool` `chunk_events` at a time."""

    def __init__(self, spool: RowSpool, session_id: str, start: int,
                 chunk_events: int = CHUNK_ROWS) -> None:
        self._spool = spool
        self._chunk_events = chunk_events
        self.session_id = session_id
        #: The seq of the first event taken, and of the next one.
        self.start = start
        self.end = start
        #: The outlines and entries not written yet, and where the written ones are.
        self._outlines: list[dict[str, Any]] = []
        self._rows: list[TailRow] = []
        self._outline_chunks: list[tuple[int, int]] = []
        self._row_chunks: list[tuple[int, int]] = []

    def take(self, stored: StoredEvent, entry: IndexEntry | None) -> bool:
        """The window's next event as appended, and its entry (`extract_index_entry`,
        None when it is not searchable); False, with nothing kept, when it is not the
        next seq or cannot be kept (the tail is no longer whole)."""
        event = stored.event
        if stored.seq != self.end or not isinstance(event, dict):
            return False
        self._outlines.append({name: event[name] for name in TREE_FIELDS if name in event})
        if entry is not None:
            self._rows.append((entry.seq, entry.message_id, entry.role, entry.timestamp,
                               entry.text))
        self.end += 1
        try:
            if len(self._outlines) >= self._chunk_events:
                self._outline_chunks.append(self._spool.write(self._outlines))
                self._outlines = []
            if len(self._rows) >= self._chunk_events:
                self._row_chunks.append(self._spool.write(self._rows))
                self._rows = []
        except ValueError:  # a value marshal cannot write: the log is read back instead
            return False
        return True

    def outlines(self) -> Iterator[StoredEvent]:
        """The outline of each event taken, in seq order (`tree.outline`, without the
        receipt stamp, which no tree rule reads)."""
        session_id, seq = self.session_id, self.start
        for chunk in self._chunks(self._outline_chunks, self._outlines):
            for fields in chunk:
                yield StoredEvent(session_id, seq, fields)
                seq += 1

    def entries(self) -> TailEntries:
        """Its index entries, read in seq order a run at a time (`TailEntries.run`)."""
        return TailEntries(self.session_id, self._chunks(self._row_chunks, self._rows))

    def _chunks(self, places: Sequence[tuple[int, int]], last: list[Any]
                ) -> Iterator[list[Any]]:
        for place in places:
            yield self._spool.read(place)
        yield last


class TailEntries:
    """A tail's entries in seq order, handed out a run of seqs at a time (`run`)."""

    def __init__(self, session_id: str, chunks: Iterator[list[TailRow]]) -> None:
        self._session_id = session_id
        self._chunks = chunks
        self._rows: list[TailRow] = []
        self._next = 0

    def run(self, seqs: Sequence[int]) -> Iterator[IndexEntry]:
        """The entries of the events at `seqs` (increasing, each after those of the run
        before), in seq order; the entries of the seqs between runs are passed over."""
        if not seqs:
            return
        wanted = set(seqs)
        last = seqs[-1]
        session_id, roles = self._session_id, _ROLES
        while True:
            rows, position = self._rows, self._next
            while position < len(rows):
                seq, message_id, role, timestamp, text = rows[position]
                if seq > last:
                    self._next = position
                    return
                position += 1
                if seq in wanted:
                    yield IndexEntry(session_id, message_id, roles.get(role, role), timestamp,
                                     text, seq)
            self._next = position
            chunk = next(self._chunks, None)
            if chunk is None:
                return
            self._rows, self._next = chunk, 0


#: One object per searchable role, for the entries read back (marshal makes a string each).
_ROLES = {role: role for role in SEARCHABLE_ROLES}
