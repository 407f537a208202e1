"""A large transaction indexed while it is written: its rows, kept apart until it commits.

Owns: `StreamedIndexing`, the transcript store's streaming follower
(`engine.transcript.changes.StreamingFollower`) for a reference backend: once an open
transaction holds `EngineConfig.index_flush_documents` changes (an import), each change
is applied as it is written, by the same rules as at commit (`indexing.IndexedStore`),
to `PendingRows`: an index of its own, whose doc ids follow the committed index's, whose
buffer is written as a segment's files every `segment_rows` rows (named by no manifest,
merged by tiers as a flush merges: `engine.index.writer.merge_tiers`), plus the window states it moved and the committed windows whose rows it
deletes. Must not touch: the committed index until the commit (searches inside the
transaction read the last commit, as before), byte layouts (`engine.codec`), what is
searchable (`engine.transcript.projection`), the forward indexer's rules
(`forward_indexing`).

Why. Indexed at commit, an import's changes (every event, its text) and then its whole
index buffer were held in memory until the end: its peak grew with the corpus. Applied
as they are written, no change is kept, and at most `segment_rows` rows wait in a
buffer (a segment that size is not merged again before its tier fills: smaller ones
were, and each merge rewrites its rows).

One budget for the process. A store of several agents streams one transaction per
partition, and an import's events interleave the agents, so each partition's buffer
would fill at once: the peak would grow with the number of agents. The rows the
buffers of every streamed transaction of the process hold are counted together
(`SharedBuffers`), and when they reach `segment_rows` the largest buffer is written,
however full it is, if it holds `index_flush_documents` rows or more (so that a store
of many agents does not write, and then merge, tiny segments).

Windows rebuilt with the commit. An import that reconciles after it hands each new
window's transcript whole (`transaction.ReferenceTransaction.append_transcript`); a
window the forward indexer would leave dirty (a rewind, a side append, a new branch)
is then held (`hold`): its events move its state as usual but add no row here (reconcile
would delete them all), and its active path's seqs are kept (`HeldWindow`, a few
integers a window: its events are not). Such a transaction asks for the windows it
leaves waiting to be rebuilt as its commit is applied (`rebuilds`): after its rows,
in session-id order, each read a run at a time from the committed log
(`maintenance.IndexMaintenance._on_commit`), the rows and order of the reconcile that
followed it, which then finds nothing left. A held window whose active path is known
has its entries made as its events pass here instead (`row_spool`: on a scratch file
until that rebuild tokenizes and adds them), so its events are not read back. A window
appended event by event (too long to be handed whole) that the transaction leaves dirty
keeps its tail from the event that left it dirty on (`spooled_tail`: outlines and
entries on the same scratch file), and its rebuild reads only the events before that
from the log (`indexing.IndexedStore._rebuild_in_runs`).

All or nothing. The pending rows become the index's only in the commit hook, after the
fsync (`IndexedStore._on_commit`: the committed windows' rows deleted, the states moved,
the segments and buffer taken over by `InvertedIndex.absorb`, then a flush whose
manifest names them). A transaction that does not commit is discarded (`discard`): its
segment files are removed and the committed index is untouched. After a crash the
files are named by no manifest, so the next writer's manifest commit removes them
(`engine.index.writer.remove_unreferenced`), and the log replays what was committed.

The clear version, and this one's oracle, is the commit-time path
(`EngineConfig(stream_large_transactions=False)`): the same rows in the same order,
tested in `tests/transcript/test_write_path.py` and `tests/ingest/test_streamed_import.py`.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from engine.backends.reference.row_spool import CHUNK_ROWS, RowSpool, SpooledWindow
from engine.config import EngineConfig
from engine.errors import StoreError
from engine.index.inverted_index import InvertedIndex
from engine.index.lifecycle import WindowIndexState
from engine.index.writer import (
    buffer_segment,
    first_tier_rows,
    merge_tiers,
    remove_segment_files,
)
from engine.model import IndexEntry, StoredEvent
from engine.transcript.changes import (
    Change,
    ChangeTaker,
    EventAppended,
    SessionDeleted,
    TransactionWindows,
    TranscriptReplaced,
    WindowPut,
)

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from engine.backends.reference.indexing import IndexedStore
    from engine.backends.reference.spooled_tail import SpooledTail
    from engine.index.documents import DocumentRecord


class StateOverlay:
    """Window states as an open transaction moved them, over the committed ones (which
    it never changes): what `IndexedStore._apply` reads and writes of a target's
    `window_states`.

    >>> overlay = StateOverlay({"w": WindowIndexState(0, "m1")})
    >>> overlay["v"] = WindowIndexState(2, "m3")
    >>> overlay.pop("w", None), overlay.get("w"), overlay.get("v").indexed_seq
    (WindowIndexState(indexed_seq=0, leaf_event_id='m1', needs_rebuild=False), None, 2)
    >>> states = {"w": WindowIndexState(0, "m1")}
    >>> overlay.apply_to(states); sorted(states)
    ['v']
    """

    def __init__(self, committed: Mapping[str, WindowIndexState]) -> None:
        self.committed = committed
        #: session id -> its new state, or None when the transaction dropped it.
        self.changed: dict[str, WindowIndexState | None] = {}

    def get(self, session_id: str, default: WindowIndexState | None = None
            ) -> WindowIndexState | None:
        """The window's state as the transaction left it so far."""
        if session_id in self.changed:
            state = self.changed[session_id]
            return default if state is None else state
        return self.committed.get(session_id, default)

    def __setitem__(self, session_id: str, state: WindowIndexState) -> None:
        self.changed[session_id] = state

    def pop(self, session_id: str, default: WindowIndexState | None = None
            ) -> WindowIndexState | None:
        """Drop the window's state; return what it was."""
        state = self.get(session_id, default)
        self.changed[session_id] = None
        return state

    def apply_to(self, states: dict[str, WindowIndexState]) -> None:
        """Make the committed `states` what the transaction left them."""
        for session_id, state in self.changed.items():
            if state is None:
                states.pop(session_id, None)
            else:
                states[session_id] = state


class PendingRows:
    """What an open transaction indexed: its own rows (`rows`, doc ids after the
    committed index's), the states it moved, the committed windows whose rows go."""

    def __init__(self, committed: InvertedIndex) -> None:
        self.rows = InvertedIndex(next_doc_id=committed.next_doc_id, config=committed.config)
        self.window_states = StateOverlay(committed.window_states)
        #: Committed windows whose committed rows the commit deletes (rebuilt or deleted
        #: by the transaction); their rows made in it are in `rows`.
        self.deleted_windows: set[str] = set()

    def add_entry(self, entry: IndexEntry, terms: Sequence[str]) -> DocumentRecord:
        """Add one row (as `InvertedIndex.add_entry`)."""
        return self.rows.add_entry(entry, terms)

    def delete_window_rows(self, session_id: str) -> int:
        """Delete the window's rows: those made in the transaction now, the committed
        ones at the commit."""
        self.deleted_windows.add(session_id)
        return self.rows.delete_window_rows(session_id)


@dataclass(frozen=True, slots=True)
class HeldWindow:
    """A window whose rows wait for the rebuild with its transaction's commit (`hold`):
    how many events it has, the id of its leaf and the seqs of its active path,
    increasing (the events its rebuild reads back a run at a time,
    `indexing.IndexedStore._rebuild_in_runs`), in an `array` of the narrowest unsigned
    integers that hold its seqs (a byte each in a window of fewer than 256 events): every
    window an import holds keeps its path until the commit, where the peak is set, and
    a tuple of int objects took several times the bytes."""

    count: int
    leaf_id: str | None
    seqs: Sequence[int]
    #: Its rows, made as its events were written (`row_spool`), or None: made from its
    #: events read back.
    rows: SpooledWindow | None = None


def segment_rows(config: EngineConfig) -> int:
    """The rows of a segment a transaction writes: a segment of tier 1
    (`engine.index.writer.first_tier_rows`), so that an import's segments are not merged
    again soon after being written (a merge rewrites every row it takes).

    >>> segment_rows(EngineConfig(index_flush_documents=2000, index_merge_segments=8))
    16000
    """
    return first_tier_rows(config)


class SharedBuffers:
    """The streamed transactions open in this process and the rows their buffers hold
    together (the module docstring's budget). One thread of control writes them all."""

    def __init__(self) -> None:
        self.rows = 0
        #: The followers whose transaction is open (weakly: a backend may be dropped).
        self.open: weakref.WeakSet[StreamedIndexing] = weakref.WeakSet()
        #: The rows at which the largest buffer is written next (0: at the budget).
        self.next_write = 0

    def over_budget(self, segment_size: int) -> bool:
        """Whether the buffers hold enough rows for the largest to be written
        (`segment_size`: `segment_rows` of the config, taken once a transaction)."""
        return self.rows >= max(self.next_write, segment_size)

    def write_largest(self, config: EngineConfig) -> None:
        """Write the largest buffer when it holds `index_flush_documents` rows or more;
        when none does (or the write failed), wait for as many more rows."""
        largest, size = None, 0
        for follower in self.open:
            pending = follower.pending
            if pending is not None and len(pending.rows.buffer) > size:
                largest, size = follower, len(pending.rows.buffer)
        written = False
        if largest is not None and size >= config.index_flush_documents:
            rows = largest.pending.rows  # type: ignore[union-attr]
            largest._write_buffer(largest._owner, rows)
            written = len(rows.buffer) < size
        self.next_write = 0 if written else self.rows + config.index_flush_documents

    def write_all(self, config: EngineConfig) -> None:
        """Write every open buffer that holds rows now, so that its rows and those of
        windows rebuilt with a commit (`maintenance.IndexMaintenance._on_commit`) are
        not in memory together: the buffer of another partition's transaction, whose
        writes ended and which waits for its commit, is the segment that commit would
        have written (only where the files' rows are cut can differ, never the rows)."""
        for follower in list(self.open):
            pending = follower.pending
            if pending is not None and len(pending.rows.buffer):
                follower._write_buffer(follower._owner, pending.rows)
        self.next_write = 0


#: The budget of every streamed transaction of this process.
SHARED_BUFFERS = SharedBuffers()


class StreamedIndexing:
    """The streaming follower of one reference backend's store (module docstring). It
    holds its backend weakly: the backend holds it, and a closed backend must be freed by
    reference counting, with no cycle left to the collector."""

    def __init__(self, owner: IndexedStore) -> None:
        self._owner_reference = weakref.ref(owner)
        self._windows: TransactionWindows | None = None
        #: The open transaction's rows, from `start` to the commit or `discard`.
        self.pending: PendingRows | None = None
        #: The buffer's rows at which it is written next (later after a failed write),
        #: and the rows of a segment it writes (`segment_rows` of its config).
        self._write_at = 0
        self._segment_rows = 0
        #: How many transactions were streamed (for tests: the path ran).
        self.started = 0
        #: The buffer's rows as `SHARED_BUFFERS` counts them (`_account`).
        self._counted = 0
        #: The open transaction's windows whose rows wait for the rebuild with its
        #: commit (`hold`), each with its active path while nothing else was written to
        #: it (None once something was).
        self.held: dict[str, HeldWindow | None] = {}
        #: Whether the open transaction's commit rebuilds the windows it leaves waiting
        #: for reconcile (`hold`, `rebuilds`).
        self.rebuild_on_commit = False
        #: Make a held window's rows as its events are written (`row_spool`); False
        #: leaves them to be made from its events read back (the oracle of that).
        self.spool_rows = True
        #: How many of a held window's rows wait in memory before they are written to
        #: the scratch file (`row_spool.SpooledWindow`).
        self.spool_chunk_rows = CHUNK_ROWS
        #: The open transaction's scratch file of held windows' rows, and the window whose
        #: whole transcript is being written (`hold`, `transcript_written`).
        self._spool: RowSpool | None = None
        self._spooling: SpooledWindow | None = None
        #: Keep the tail of each window the transaction leaves dirty, from the event that
        #: did on (`spooled_tail`); False leaves its rebuild to read every event back
        #: (the oracle of that).
        self.spool_tails = True
        #: The open transaction's tails, the windows whose tail it broke, and the tails
        #: of the transaction that just committed, for its rebuild (`committed_tail`).
        self.tails: dict[str, SpooledTail] = {}
        self._untailed: set[str] = set()
        self._committed_tails: dict[str, SpooledTail] = {}

    @property
    def _owner(self) -> IndexedStore:
        owner = self._owner_reference()
        if owner is None:
            raise RuntimeError("internal error: the backend of a streamed transaction is gone")
        return owner

    def start(self, windows: TransactionWindows, written: list[Change]) -> ChangeTaker:
        """Index the changes `written` so far and return what indexes each next one. The
        committed buffer is flushed first, so the transaction's segments follow it."""
        owner = self._owner
        committed = owner.index  # commits left waiting are applied first
        if len(committed.buffer):
            owner.flush()
        self._windows = windows
        self.pending = PendingRows(committed)
        self.started += 1
        self._write_at = self._segment_rows = segment_rows(owner.config)
        self._counted = 0
        SHARED_BUFFERS.open.add(self)
        for change in written:
            self.take(change)
        return self.take

    def take(self, change: Change) -> None:
        """Index one change of the open transaction; write its buffer when full. The
        events of a window held add no row (`hold`)."""
        pending = self.pending
        if pending is None:
            raise RuntimeError("internal error: a change was streamed outside a transaction")
        if type(change) is EventAppended:
            stored = change.event
            entry, action = self._owner._apply_appended(stored, self.held.keys(), pending,
                                                        self._windows)
            if action == "skip" or action == "dirty":  # left dirty: its tail is kept
                if self.spool_tails and stored.session_id not in self.held:
                    self._tail_take(stored, entry)
            elif self.tails and stored.session_id in self.tails:
                self._forget_tail(stored.session_id)
            spooling = self._spooling
            if spooling is not None and stored.session_id == spooling.session_id:
                spooling.take(stored)
        else:
            self._owner._apply(change, self.held.keys(), rows=pending, windows=self._windows)
            if type(change) is not WindowPut:
                for session_id in _windows_of(change):
                    self._forget_tail(session_id)
        self.write_when_due()

    def _tail_take(self, stored: StoredEvent, entry: IndexEntry | None) -> None:
        """Keep an event of a window the transaction left dirty in the window's tail
        (`spooled_tail`), from the first such event on; not a window whose tail was
        broken in this transaction (nor a held one: its rows are the hold's, `take`)."""
        session_id = stored.session_id
        tail = self.tails.get(session_id)
        if tail is None:
            if session_id in self._untailed:
                return
            from engine.backends.reference.spooled_tail import SpooledTail  # the first tail

            if self._spool is None:
                self._spool = RowSpool()
            tail = self.tails[session_id] = SpooledTail(self._spool, session_id, stored.seq,
                                                        self.spool_chunk_rows)
        if not tail.take(stored, entry):
            self._forget_tail(session_id)

    def _forget_tail(self, session_id: str) -> None:
        """The window's tail is no longer whole (or the window was replaced or deleted):
        its rebuild reads its events back, whatever comes next in this transaction."""
        self.tails.pop(session_id, None)
        self._untailed.add(session_id)

    def committed_tail(self, session_id: str, count: int) -> SpooledTail | None:
        """The tail of window `session_id` that the transaction which just committed
        kept (`rebuilds` hands them over), once: when it holds every event from its
        start to the window's `count`, else None."""
        tail = self._committed_tails.pop(session_id, None)
        return tail if tail is not None and tail.end == count else None

    # ----- windows rebuilt with the commit (the module docstring) ---------------------

    def begin(self) -> None:
        """A transaction opens: no window is held yet, and no rebuild is asked for."""
        self.held = {}
        self.rebuild_on_commit = False
        self._spool = None
        self._spooling = None
        self.tails = {}
        self._untailed = set()
        self._committed_tails = {}

    def hold(self, session_id: str, window: HeldWindow | None) -> None:
        """Leave the rows of new window `session_id`, which its events (appended next)
        leave dirty, to the rebuild with the commit, and ask for that rebuild;
        `window` is its active path (None: read it again then). With its path known
        (and the window not incognito), its rows are made as its events are written
        (`row_spool`), until `transcript_written`."""
        self.held[session_id] = window
        self.rebuild_on_commit = True
        self._spooling = None
        owner = self._owner
        if window is not None and self.spool_rows \
                and not owner._incognito(session_id, self._windows):
            if self._spool is None:
                self._spool = RowSpool()
            self._spooling = SpooledWindow(self._spool, session_id, window.seqs,
                                           owner.config.index_flush_documents, owner._terms,
                                           chunk_rows=self.spool_chunk_rows)

    def transcript_written(self, session_id: str) -> None:
        """The whole transcript of held window `session_id` was written: its rows are
        the rebuild's when every event of its active path passed here (a transaction
        that streamed before it began), else they are made from its events read back."""
        spooling, self._spooling = self._spooling, None
        window = self.held.get(session_id)
        if spooling is not None and spooling.session_id == session_id and spooling.whole \
                and window is not None:
            self.held[session_id] = replace(window, rows=spooling)

    def extended(self, session_id: str) -> None:
        """Events were appended to a window held after its whole transcript: it stays
        dirty (dirty is sticky), but its active path is read again at the rebuild."""
        if session_id in self.held:
            self.held[session_id] = None
        if self._spooling is not None and self._spooling.session_id == session_id:
            self._spooling = None

    def release(self, session_id: str) -> None:
        """The window is replaced or deleted: its change removes or rebuilds its rows
        itself, so it is no longer held."""
        self.held.pop(session_id, None)
        if self._spooling is not None and self._spooling.session_id == session_id:
            self._spooling = None

    def rebuilds(self) -> dict[str, HeldWindow | None] | None:
        """At the commit, before `committed`: the windows held (with their active
        paths) when the transaction streamed and asked for the rebuild, else None (a
        transaction that never streamed indexed every row at its commit, and reconcile
        rebuilds what it left dirty, as before). Forgets them."""
        held, asked, tails = self.held, self.rebuild_on_commit, self.tails
        self.begin()
        if not asked or self.pending is None:
            return None
        self._committed_tails = tails  # `committed_tail`, until the next `begin`
        return held

    def write_when_due(self) -> None:
        """Write the buffer when it is full, or the largest of the process's when the
        buffers are over their budget: after each change, and after each row of a
        change that adds many (a window rebuilt from its events,
        `IndexedStore._rebuild_from`)."""
        pending = self.pending
        if pending is None:
            return
        rows = pending.rows
        size = len(rows.buffer)
        self._account(size)
        if size >= self._write_at:
            self._write_buffer(self._owner, rows)
        elif SHARED_BUFFERS.over_budget(self._segment_rows):
            SHARED_BUFFERS.write_largest(self._owner.config)

    def _account(self, size: int) -> None:
        """Count the buffer's rows (`size`, as they are now) in the process's budget."""
        SHARED_BUFFERS.rows += size - self._counted
        self._counted = size

    def _write_buffer(self, owner: IndexedStore, rows: InvertedIndex) -> None:
        """Write the buffer as a segment. A failure to (a full disk) does not fail the
        transaction, as a failed flush after a commit does not: the rows stay in the
        buffer, the write is tried again once as many more rows came, and the error is
        the backend's `flush_error` until a write succeeds."""
        segments = rows.segments
        previous = segments[-1] if segments else (
            owner._index.segments[-1] if owner._index.segments else None)
        directory = owner.store.directory
        self._account(len(rows.buffer))
        try:
            buffer_segment(directory, rows, segments, previous)
            self._account(len(rows.buffer))  # empty now
            # Merged by tiers as a flush merges (no manifest names these files yet).
            remove_segment_files(directory, merge_tiers(directory, rows, owner.config))
        except (OSError, StoreError) as error:
            owner.flush_error = error
            self._write_at = len(rows.buffer) + segment_rows(owner.config)
        else:
            owner.flush_error = None
            self._write_at = segment_rows(owner.config)

    def committed(self) -> PendingRows | None:
        """The rows of the transaction that just committed (None: none was streamed);
        the commit hook makes them the index's."""
        pending, self.pending, self._windows = self.pending, None, None
        self._leave_budget()
        return pending

    def _leave_budget(self) -> None:
        """The transaction ended: its buffer no longer counts in the process's budget."""
        SHARED_BUFFERS.open.discard(self)
        SHARED_BUFFERS.rows -= self._counted
        self._counted = 0

    def discard(self) -> None:
        """The transaction did not commit: drop its rows and remove its segment files."""
        pending, self.pending, self._windows = self.pending, None, None
        self.begin()
        self._leave_budget()
        if pending is not None:
            remove_segment_files(self._owner.store.directory, pending.rows.segments)


def _windows_of(change: Change) -> tuple[str, ...]:
    """The windows whose events a change other than an append replaces or deletes."""
    if isinstance(change, TranscriptReplaced):
        return (change.session_id,)
    if isinstance(change, SessionDeleted):
        return tuple(change.session_ids)
    return ()
