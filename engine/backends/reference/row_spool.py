"""Index rows made while a held window's events were written, kept on a scratch file until
the rebuild with the commit adds them.

Owns: `RowSpool` (one scratch file a streamed transaction, its rows written a run at a
time) and `SpooledWindow` (one held window's rows as they are written: the runs of its
active path, as `IndexedStore._rebuild_in_runs` reads them back). Must not touch: what a
row is (`engine.transcript.projection`), which windows are held and when they are
rebuilt (`streaming`, `maintenance`), the index itself.

Why. A window an import holds (`streaming.StreamedIndexing.hold`: the forward indexer
would leave it dirty) adds its rows only at the commit, after the transaction's other
rows and in session-id order, as the reconcile after the import would. Read back from the
committed log, each of its events was decoded a second time, its entry made and its text
tokenized then. Its events pass through the follower as they are written anyway, with the
seqs of its active path known (`HeldWindow.seqs`): the entries are made then, once, and
wait on a scratch file (not in memory: an import's held windows hold most of its rows),
in runs of the same seqs as the read-back's, so that the rebuild adds the same rows in
the same order and flushes between the same runs; a run is written a few rows at a time,
and read back so. A row's text is tokenized when it is read back, not when it is
spooled: once either way, and its terms (most of a row's objects) never go through the
scratch file.

The scratch file is an unnamed temporary file (`tempfile.TemporaryFile`): gone with the
process, whatever ends it; the spool of a transaction is let go when its held windows
are (after the rebuild, or at `discard`). Each chunk of rows is one `marshal` record.
"""

from __future__ import annotations

import marshal
import tempfile
from collections.abc import Callable, Iterator, Sequence
from typing import IO

from engine.model import SEARCHABLE_ROLES, IndexEntry, StoredEvent
from engine.transcript.projection import extract_index_entry

#: One spooled row: the entry's fields after its session id.
SpooledRow = tuple[str, str, float, str, int]
#: The rows of a held window written to the spool at a time, unless a window is made
#: with another count (at most this many wait).
CHUNK_ROWS = 64


class RowSpool:
    """A scratch file of runs of rows, written at its end and read anywhere."""

    def __init__(self) -> None:
        # Open for the spool's life, closed when it is let go (no with block spans that).
        self._file: IO[bytes] = tempfile.TemporaryFile(prefix="session-search-rows-")  # noqa: SIM115
        self._end = 0

    def write(self, rows: list[SpooledRow]) -> tuple[int, int]:
        """Append one run of rows; return where it is (offset, length)."""
        data = marshal.dumps(rows)
        self._file.seek(self._end)
        self._file.write(data)
        place = (self._end, len(data))
        self._end += len(data)
        return place

    def read(self, place: tuple[int, int]) -> list[SpooledRow]:
        """The run written at `place`."""
        offset, length = place
        self._file.seek(offset)
        return marshal.loads(self._file.read(length))  # type: ignore[no-any-return]


class SpooledWindow:
    """One held window's rows, made as its events are written (`take`, each event of the
    window in seq order): the entry of each event of its active path `seqs` (increasing),
    in runs of `run_seqs` seqs, each written `chunk_rows` rows at a time (so that few
    wait in memory). `whole` once every seq of the path was taken; `runs` then yields
    each run's rows as `IndexEntry` and the terms of its text (`terms`, made then)."""

    def __init__(self, spool: RowSpool, session_id: str, seqs: Sequence[int],
                 run_seqs: int, terms: Callable[[str], list[str]],
                 chunk_rows: int = CHUNK_ROWS) -> None:
        self._spool = spool
        self._chunk_rows = chunk_rows
        self.session_id = session_id
        self._seqs = seqs
        self._run_seqs = run_seqs
        self._terms = terms
        #: How many seqs of the path were taken.
        self._taken = 0
        #: The rows not written yet, and where the current run's written chunks are.
        self._rows: list[SpooledRow] = []
        self._chunks: list[tuple[int, int]] = []
        #: Each whole run's chunks.
        self._runs: list[tuple[tuple[int, int], ...]] = []

    @property
    def whole(self) -> bool:
        """Whether every event of the active path was taken (its runs are all written)."""
        return self._taken == len(self._seqs)

    def take(self, stored: StoredEvent) -> None:
        """One event of the window, as written (seq order): its row spooled when it is on
        the active path and searchable."""
        seqs, taken = self._seqs, self._taken
        if taken >= len(seqs) or stored.seq != seqs[taken]:
            return
        entry = extract_index_entry(stored)
        if entry is not None:
            self._rows.append((entry.message_id, entry.role, entry.timestamp, entry.text,
                               entry.seq))
            if len(self._rows) >= self._chunk_rows:
                self._chunks.append(self._spool.write(self._rows))
                self._rows = []
        self._taken = taken = taken + 1
        if taken % self._run_seqs == 0 or taken == len(seqs):
            if self._rows:
                self._chunks.append(self._spool.write(self._rows))
                self._rows = []
            self._runs.append(tuple(self._chunks))
            self._chunks = []

    def runs(self) -> Iterator[Iterator[tuple[IndexEntry, list[str]]]]:
        """The rows of each run of the active path, in seq order (a run whose events are
        none searchable has none), each chunk read as the rows are taken."""
        for chunks in self._runs:
            yield self._rows_of(chunks)

    def _rows_of(self, chunks: Sequence[tuple[int, int]]
                 ) -> Iterator[tuple[IndexEntry, list[str]]]:
        session_id, terms = self.session_id, self._terms
        roles = _ROLES
        for place in chunks:
            for message_id, role, timestamp, text, seq in self._spool.read(place):
                yield IndexEntry(session_id, message_id, roles.get(role, role), timestamp,
                                 text, seq), terms(text)


#: One object per searchable role, for the rows read back (marshal makes a string each).
_ROLES = {role: role for role in SEARCHABLE_ROLES}
