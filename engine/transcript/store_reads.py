"""Reading a transcript store: windows, events, counts, the changes, a reader's refresh.

Owns: `StoreReads`, the reads of the public `TranscriptStore` API: the committed windows
(all, one, those of a session key) and session keys, events (decoded from the log on
demand, by the positions the catalog holds), counts and `stats`, `changes_since` (the
committed changes read back from the log), and `refresh()`. Must not touch: writes
(`store_writes`), the log's bytes (`log_reader` decodes them), or event semantics (an
event is an opaque JSON object here). Why apart: the reads are what readers and the
writer share, and they see only committed transactions.

Readers (`writer=False`) take no lock, never truncate, and see the transactions that
were committed when they opened or last called `refresh()`.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Sequence

from engine.errors import CorruptFile, StoreError, UnknownSession, UsageError
from engine.model import SessionWindow, StoredEvent, agent_id_of
from engine.transcript.catalog import ScopeRow
from engine.transcript.changes import Change, changes_of
from engine.transcript.compaction import COMPACTION_STATE_NAME, read_compaction_state
from engine.transcript.log_files import LOG_FOLDER, log_file_name
from engine.transcript.log_positions import CommittedTransaction, LogCursor
from engine.transcript.log_reader import LogReader
from engine.transcript.store_compaction import COMPACTION_RETRIES, StoreCompaction
from engine.transcript.store_handle import META_NAME


class StoreReads(StoreCompaction):
    """The committed windows and events this handle has seen, and catching up."""

    #: The stamps taken as the last refresh that read the files began (None: none did).
    _refreshed_stamps: tuple[Hashable, ...] | None = None

    def windows(self) -> list[SessionWindow]:
        """Every committed window, in first-insertion order."""
        return self._catalog.windows()

    def scope_rows(self) -> list[ScopeRow]:
        """`scope_rows_of(self.windows())`: each committed window's session id, key and
        `archived` flag, in first-insertion order (what a search's scope reads; from the
        checkpoint's columns while no read or change has built the windows or the
        entries since the store opened it, so that no window need be built)."""
        return self._catalog.scope_rows()

    def window(self, session_id: str) -> SessionWindow:
        """One committed window (UnknownSession if absent)."""
        return self._catalog.window(session_id)

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
        def read() -> list[StoredEvent]:
            positions = self._catalog.entry(session_id).events
            return self._reader.read_events(session_id, 0, positions.to_list())

        return self._compaction_safe(read)

    def event(self, session_id: str, seq: int) -> StoredEvent:
        """One committed event by seq (UnknownSession if the window or seq is absent)."""
        def read() -> StoredEvent:
            positions = self._catalog.entry(session_id).events
            if not 0 <= seq < len(positions):
                raise UnknownSession(f"window {session_id!r} has no event with seq {seq}")
            return self._reader.read_events(session_id, seq, [positions[seq]])[0]

        return self._compaction_safe(read)

    def event_runs(self, session_id: str, seqs: Sequence[int] | None = None, *,
                   size: int = 1000) -> Iterator[list[StoredEvent]]:
        """The committed events of a window (all of them, or those at `seqs`, increasing)
        in seq order, in lists of at most `size`: a long window read a run at a time, so
        that its events are never all in memory at once (UnknownSession if absent)."""
        wanted: Sequence[int] = (range(self.event_count(session_id)) if seqs is None
                                 else seqs)
        for start in range(0, len(wanted), size):
            chunk = wanted[start:start + size]

            def read(chunk: Sequence[int] = chunk) -> list[StoredEvent]:
                positions = self._catalog.entry(session_id).events
                events: list[StoredEvent] = []
                first = 0
                while first < len(chunk):  # each run of consecutive seqs in one call
                    last = first
                    while last + 1 < len(chunk) and chunk[last + 1] == chunk[last] + 1:
                        last += 1
                    events.extend(self._reader.read_events(
                        session_id, chunk[first],
                        [positions[seq] for seq in chunk[first:last + 1]]))
                    first = last + 1
                return events

            yield self._compaction_safe(read)

    def event_count(self, session_id: str) -> int:
        """How many committed events a window has (UnknownSession if absent)."""
        return len(self._catalog.entry(session_id).events)

    def event_counts(self) -> dict[str, int]:
        """Every committed window's event count, by session id, in first-insertion order
        (one pass over the catalog: what `event_count` for each window costs in calls)."""
        return {session_id: entry.events.count
                for session_id, entry in self._catalog.entries.items()}

    def stats(self) -> dict[str, int]:
        """Counts of agents, sessions (keys), windows, events, and the store's bytes."""
        keys = self._catalog.keys
        agents = {agent for key in keys if (agent := agent_id_of(key)) is not None}
        names = [META_NAME, *self.directory.list_names(LOG_FOLDER + "/")]
        return {
            "agents": len(agents),
            "sessions": len(keys),
            "windows": self._catalog.window_count(),
            "events": self._catalog.event_total,
            "bytes": sum(self.directory.size(name) for name in names),
        }

    def changes_since(self, generation: int) -> Iterator[tuple[int, Change]]:
        """Every committed change after `generation`, with its transaction's generation.

        Reads the log once, from the start of transaction `generation + 1` to the last
        transaction this handle has seen: O(bytes of those transactions).
        """
        if not isinstance(generation, int) or generation < 0:
            raise UsageError(f"generation must be a non-negative integer, not {generation!r}")
        yield from changes_of(self._iter_committed_after(generation))

    def _iter_committed_after(self, generation: int) -> Iterator[CommittedTransaction]:
        """Re-read transactions `generation + 1` .. `self.generation` from the log."""
        last = self._catalog.generation
        if generation >= last:
            return
        if self._writer is None and self._log_moved():
            self._reload_same_generation()
        cursor = LogCursor(self._catalog.transaction_files[generation],
                           self._catalog.transaction_offsets[generation],
                           transaction_id=generation)
        try:
            for transaction in LogReader(self.directory).iter_transactions(
                    cursor, verify_footers=False):
                yield transaction
                if transaction.transaction_id >= last:
                    return
        except CorruptFile:
            if self._writer is None and self._log_moved():
                raise StoreError(
                    f"{self.directory.location(LOG_FOLDER)}: the transcript log was compacted "
                    "while its changes were read; refresh the store and read them again"
                ) from None
            raise

    def refresh(self) -> None:
        """Readers: apply transactions committed since opening or the last refresh (after
        a compaction of the log, reload the catalog from the start). When none of the
        files that could tell of a change changed since the last refresh began (their
        `Directory.stamp`s: `refresh_stamps`), nothing is read."""
        self._check_open()
        if self._writer is not None:
            return
        stamps = self.refresh_stamps()
        if stamps == self._refreshed_stamps:
            return
        self._refreshed_stamps = None
        for _attempt in range(COMPACTION_RETRIES):
            state = read_compaction_state(self.directory)
            try:
                if state != self._compaction_seen or self._compaction_seen.in_progress:
                    self._reload_all(state)
                else:
                    self._replay()
                self._refreshed_stamps = stamps
                return
            except CorruptFile:
                if not self._log_moved():
                    raise
        raise self._compaction_busy()

    def refresh_stamps(self) -> tuple[Hashable, ...]:
        """The stamps of every file whose change a refresh must read: the compaction
        state (a compaction rewrites the log only after changing it), the log file the
        cursor is in (every commit appends to it, or seals it before the next file
        starts) and, once that is sealed, the next one. Taken before the refresh reads,
        so a change made while it reads shows at the next."""
        cursor = self._cursor
        directory = self.directory
        stamps = (directory.stamp(COMPACTION_STATE_NAME), cursor.file_number,
                  directory.stamp(log_file_name(cursor.file_number)))
        if cursor.sealed:
            return (*stamps, directory.stamp(log_file_name(cursor.file_number + 1)))
        return stamps
