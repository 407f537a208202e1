"""The reference index kept in step with its transcript store: the commit hook, replay, the
index files and the `indexing` status.

Owns: `IndexedStore`, the part of `ReferenceBackend` that wires a `TranscriptStore` (the
source of truth and the commit point) to an `InvertedIndex` (derived data): forward
indexing of committed changes, replay on open and on `refresh`, large commits left
waiting, flushing and merging the index files, the rebuild of one window's rows, and the
`indexing` status. Must not touch: byte layouts (`engine.codec`), what is searchable
(`engine.transcript.projection`), the index-state rules (`engine.index.lifecycle`), which
windows a reconcile rebuilds or sweeps (`maintenance`), opening a store and searching it
(`backend`).

Why "same transaction" holds. The transcript log is the index's write-ahead log. A write
transaction is the store's: when it commits (fsync), the store calls our commit hook
with the transaction's changes, and the hook feeds each appended event through
`forward_indexing.classify_append` and the §2.3 projection into the in-memory index. The
index files record, in their manifest, the store generation they reflect; opening a
store loads them and replays `store.changes_since(manifest.generation)` through the same
hook. So after a crash at any point:

* a transaction that did not commit left no index rows (the hook never ran, and a
  replay only sees committed transactions);
* a committed transaction's rows are in the index files or are rebuilt by the replay.

Hence a message is either stored and searchable or neither, and no index row points at a
message the store does not have. The manifest is written after the commits it covers
were fsynced, so its generation is also evidence that they were committed: a log that
holds fewer lost committed data, and opening refuses it (`backend.manifest_claim`, handed to
`TranscriptStore.open` before a writer cuts any torn tail) instead of rebuilding a
smaller index in silence. `tests/transcript/test_crash.py` kills a child process at random
points while it appends and checks exactly this on reopen.

Index files (`engine.index.loading` reads them, `engine.index.writer` writes them) live
under `index/` in the store's directory. The buffer is flushed into an immutable segment
after a commit once it holds `EngineConfig.index_flush_documents` rows (so the manifest
covers a large import as soon as it commits, and a reopen replays only the commits after
it), on `flush()`, after `reconcile()` (between two rebuilt windows, and between runs of a
long window's events: `_rebuild_in_runs`) and on `close()`. A large transaction (an import)
is indexed while it is written, into rows of its own that become the index's at its commit
(`streaming.StreamedIndexing`, `EngineConfig.stream_large_transactions`), so no change and
no more than a buffer of rows waits in memory. With that switch off (the clear version), a
large commit that leaves windows dirty is not applied at once but when the index is next
read, or by `reconcile`, which then leaves out the rows it would delete (`_on_commit`;
`defer_large_commits`). Until then a crash replays that commit from the log at the next
open. A flush merges segments by tiers, `merge()` all of them (`engine.index.writer`).
Merging runs synchronously in the writer (no background thread: the reference keeps one
thread of control).

Replacements (behaviour.md §8.2). `replace_transcript` decides in its transaction
whether the window is rebuilt now (`engine.backends.replacement`) and writes the decision
into the log's `replace` record, so a replay decides as the commit did whatever config
opens the store later. The record and its events reach the hook as one
`TranscriptReplaced` change: a small replacement rebuilds the window from the change's
events (its old rows deleted, the new active path indexed, the state rebuilt), a large
one only marks the window dirty, its old rows kept and hidden until reconcile. Like every
change, it is applied with the commit or, after a crash, by the replay.

Windows that need work (§8.3: no state, dirty, or lagging) are excluded from search when
dirty and make `indexing` true (`index_status`). An incognito window
(`SessionWindow.is_incognito`) is stored but never indexed: its events move its index state
like any other window's and add no row, and its rebuild yields none, so it neither matches
nor counts in bm25 statistics, as OpenClaw never writes it to an agent database.

The clear-path switch `defer_large_commits` of `EngineConfig` is read from `store.config`
here; `tombstone_runs` is read by the `InvertedIndex` this hands its config.

Terms are cut to 32,768 UTF-8 bytes as FTS5 cuts them (`index.termdict.index_term`); a
query term never needs the cut, since a query holds at most 4,096 UTF-16 units (at most
12,288 bytes).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from itertools import chain, pairwise
from typing import TYPE_CHECKING

from engine.analysis.profiles import SEARCH_PROFILE
from engine.analysis.token import Analyzer
from engine.backends.forward_indexing import AppendAction, classify_append
from engine.errors import StoreError, UnknownSession
from engine.index.inverted_index import InvertedIndex
from engine.index.lifecycle import WindowIndexState, needs_reconcile, rebuilt_state
from engine.index.loading import MANIFEST_NAME, ProfileMismatch, load_index, manifest_bytes
from engine.model import IndexEntry, StoredEvent
from engine.transcript.changes import (
    Change,
    EventAppended,
    SessionDeleted,
    TransactionWindows,
    TranscriptReplaced,
)
from engine.transcript.evidence import CommittedClaim
from engine.transcript.projection import extract_index_entry, index_entries
from engine.transcript.store import TranscriptStore
from engine.transcript.tree import outline, scan_path, scan_tree, visible_events

if TYPE_CHECKING:  # a writer's follower, imported when a writer opens (a search only reads)
    from engine.backends.reference.spooled_tail import SpooledTail, TailEntries
    from engine.backends.reference.streaming import HeldWindow, PendingRows, StreamedIndexing


def windows_left_dirty(
    states: Mapping[str, WindowIndexState], changes: Iterable[Change]
) -> set[str]:
    """The windows that `changes` (committed in this order) leave needing a rebuild
    (§8.1), from `states`, the index's window states before them.

    Dirty is sticky until a rebuild, and a rebuild deletes every row of the window, so
    any row the forward indexer adds to such a window is deleted by the next reconcile.
    Only `classify_append`'s state moves are simulated (they do not depend on whether
    an event is indexable), so this pass analyses no text.

    >>> from engine.model import StoredEvent
    >>> first = StoredEvent("w", 0, {"type": "message", "id": "m1", "parentId": None})
    >>> rewind = StoredEvent("w", 1, {"type": "leaf", "id": "l1", "targetId": "m1"})
    >>> other = StoredEvent("v", 0, {"type": "message", "id": "m1", "parentId": None})
    >>> sorted(windows_left_dirty({}, [EventAppended(first), EventAppended(rewind),
    ...                                EventAppended(other)]))
    ['w']
    >>> windows_left_dirty({}, [EventAppended(first), EventAppended(rewind),
    ...                         SessionDeleted("k", ("w",))])
    set()
    >>> sorted(windows_left_dirty({}, [TranscriptReplaced("w", (first, rewind), False),
    ...                                TranscriptReplaced("v", (other,), True)]))
    ['v']
    """
    moved: dict[str, WindowIndexState | None] = {}
    for change in changes:
        if isinstance(change, EventAppended):
            session_id = change.event.session_id
            state = moved[session_id] if session_id in moved else states.get(session_id)
            moved[session_id] = classify_append(state, change.event, indexable=True)[1]
        elif isinstance(change, TranscriptReplaced):
            moved[change.session_id] = replaced_state(change)
        elif isinstance(change, SessionDeleted):
            for session_id in change.session_ids:
                moved[session_id] = None
    return {session_id for session_id, state in moved.items()
            if state is not None and state.needs_rebuild}


def replaced_state(change: TranscriptReplaced, before: WindowIndexState | None = None
                   ) -> WindowIndexState:
    """The window's index state after a replacement (behaviour.md §8.2): rebuilt from
    its new events, or, when the rebuild is deferred, `before` marked dirty."""
    if change.rebuild_deferred:
        return WindowIndexState(-1 if before is None else before.indexed_seq,
                                None if before is None else before.leaf_event_id, True)
    return rebuilt_state(len(change.events) - 1, scan_tree(change.events).leaf_id)


class IndexedStore:
    """A transcript store and its inverted index, every committed change applied to the
    index (the base of `ReferenceBackend`; the module docstring says how)."""

    def __init__(
        self,
        store: TranscriptStore,
        *,
        analyzer: Analyzer | None = None,
    ) -> None:
        """Load the store's index files and replay what they lack; then index every commit."""
        self.store = store
        self.config = store.config
        # Tests may pass another analyzer; the manifest records which one built the terms.
        self.analyzer = analyzer or SEARCH_PROFILE.analyzer()
        self.profile = SEARCH_PROFILE.label() if analyzer is None else f"custom {analyzer.name}"
        #: The error of the last automatic flush after a commit, if it failed.
        self.flush_error: Exception | None = None
        #: Bumped by every change to the index's rows or window states; with the store's
        #: generation it keys the cached `indexing` flag (a search asks for it each time).
        self._index_changes = 0
        self._status_key: tuple[int, int] | None = None
        self._status = False
        #: Committed transactions not yet applied to the index, in commit order.
        self._deferred: list[tuple[int, list[Change]]] = []
        #: The manifest's `Directory.stamp` as a reader's refresh last read it (a fresh
        #: object, equal to no stamp, while none is known).
        self._manifest_stamp: Hashable = object()
        #: A long window's rebuild scans its tree keeping only ids, parents and seqs
        #: (`tree.scan_path`); False holds every event's outline (the oracle of that).
        self.lean_tree_scan = True
        #: The window `_incognito` was last asked about, and its answer.
        self._last_incognito: tuple[object, bool] = (None, False)
        self.index = self._load_and_replay()
        store.add_commit_hook(self._on_commit)
        #: Indexes a large open transaction as it is written (`streaming`), or None.
        self._streamed: StreamedIndexing | None = None
        if self.config.stream_large_transactions and store.is_writer:
            from engine.backends.reference.streaming import StreamedIndexing

            self._streamed = StreamedIndexing(self)
            store.stream_large_transactions(self._streamed, self.config.index_flush_documents)

    @property
    def index(self) -> InvertedIndex:
        """The index, with every committed change applied (deferred ones first)."""
        if self._deferred:
            self._apply_deferred(skip_left_dirty=False)
        return self._index

    @index.setter
    def index(self, index: InvertedIndex) -> None:
        self._index = index

    # ----- forward indexing -----------------------------------------------------------

    def _load_and_replay(self) -> InvertedIndex:
        """The committed index files plus every store change they do not cover yet."""
        self._index_changes += 1
        self._manifest_stamp = object()
        self._loaded_manifest = manifest_bytes(self.store.directory)
        try:
            index = load_index(self.store.directory, self.profile, config=self.config)
        except ProfileMismatch:
            # Built with another analyzer: the index is derived data, so rebuild it by
            # replaying the whole log; a writer's next flush replaces the old files.
            index = InvertedIndex(config=self.config)
        if index.generation > self.store.generation:
            # The index covers commits this store has not read: a reader catches up with
            # the writer that flushed it; a log that lacks them lost committed data
            # (StoreError, unless the store was opened accepting that; the index is then
            # rebuilt from what the log holds).
            self.store.check_committed(CommittedClaim(
                self.store.directory.location(MANIFEST_NAME), index.generation))
            if index.generation > self.store.generation:
                index = InvertedIndex(config=self.config)
        self.index = index
        loaded = index.generation
        self._replay()
        if index.indexing is not None and index.generation == loaded == self.store.generation:
            # Nothing replayed: the store and the index are as the writer had them when
            # it recorded the flag, so the first search skips the O(windows) pass.
            self._status, self._status_key = index.indexing, self._status_cache_key()
        return index

    def _replay(self) -> None:
        for generation, change in self.store.changes_since(self.index.generation):
            self._apply(change)
            self.index.generation = generation

    def refresh(self) -> None:
        """Readers: see what the writer committed since opening or the last refresh.

        New transactions are replayed into the index. When the writer also committed a
        new index manifest (a flush, merge or reconcile: reconcile results are not in the
        transcript log), the index is reloaded from the files first.
        """
        self.store.refresh()
        if self.store.is_writer:
            self._replay()
            return
        # The manifest is read only when its stamp moved since the last look (taken
        # before reading, so a manifest written meanwhile is read at the next refresh).
        stamp = self.store.directory.stamp(MANIFEST_NAME)
        if stamp == self._manifest_stamp:
            self._replay()
            return
        self._manifest_stamp = object()
        if manifest_bytes(self.store.directory) != self._loaded_manifest:
            self.index = self._load_and_replay()
        else:
            self._replay()
        self._manifest_stamp = stamp

    def _on_commit(self, generation: int, changes: list[Change]) -> None:
        """The store's commit hook: index the committed changes, flush when due.

        A large commit (a bulk import) that leaves windows dirty waits instead, and so
        do the commits after it, until the index is next read (`index` applies them
        all, as this hook would have) or `reconcile` runs. Reconcile would delete every
        row of those windows at once, unseen by any search, so it applies the waiting
        commits without adding those rows (`windows_left_dirty`): a bulk import with
        rewinds then analyses, writes and tombstones far fewer rows. The rows
        that reach the index and their relative order are the same either way (the
        doc ids the skipped rows would have taken are not handed out).
        """
        pending = self._streamed.committed() if self._streamed is not None else None
        if pending is not None:  # indexed as it was written: no change was kept
            self._absorb(pending)
            self._index.generation = generation
            self._flush_when_due(always=True)  # the manifest names its segments now
            return
        if self._deferred or self._defers(changes):
            self._deferred.append((generation, changes))
            return
        for change in changes:
            self._apply(change)
        self._index.generation = generation
        self._flush_when_due()

    def _absorb(self, pending: PendingRows) -> None:
        """Make the rows a committed transaction indexed as it was written the index's
        (`streaming`): its deletes of committed rows, its window states, its segments
        and buffer (the flush that follows names its segments in the manifest)."""
        self._index_changes += 1
        index = self._index
        for session_id in sorted(pending.deleted_windows):
            index.delete_window_rows(session_id)
        pending.window_states.apply_to(index.window_states)
        index.absorb(pending.rows)

    def _defers(self, changes: list[Change]) -> bool:
        return (self.config.defer_large_commits and self.store.is_writer
                and len(changes) >= self.config.index_flush_documents
                and bool(windows_left_dirty(self._index.window_states, changes)))

    def _apply_deferred(self, *, skip_left_dirty: bool) -> dict[str, list[StoredEvent]]:
        """Apply the waiting commits in order; with `skip_left_dirty` (reconcile only),
        without the rows of the windows they leave dirty, and return the events those
        commits appended to each such window (so its rebuild need not read them back)."""
        deferred, self._deferred = self._deferred, []
        left_dirty: AbstractSet[str] = frozenset()
        if skip_left_dirty:
            left_dirty = windows_left_dirty(
                self._index.window_states, (change for _, changes in deferred for change in changes))
        appended: dict[str, list[StoredEvent]] = {session_id: [] for session_id in left_dirty}
        for generation, changes in deferred:
            for change in changes:
                self._apply(change, left_dirty)
                if isinstance(change, EventAppended):
                    events = appended.get(change.event.session_id)
                    if events is not None:
                        events.append(change.event)
                elif isinstance(change, TranscriptReplaced):
                    if change.session_id in appended:
                        appended[change.session_id] = list(change.events)
                elif isinstance(change, SessionDeleted):
                    for session_id in change.session_ids:
                        appended.pop(session_id, None)
            self._index.generation = generation
        if not skip_left_dirty:
            self._flush_when_due()
        return appended

    def _flush_when_due(self, *, always: bool = False, rows: int | None = None) -> None:
        """Flush when the buffer holds `rows` rows (`index_flush_documents` unless
        given; a reconcile gives more: `maintenance.IndexMaintenance.reconcile`)."""
        due = self.config.index_flush_documents if rows is None else rows
        if self.store.is_writer and (always or len(self._index.buffer) >= due):
            # The transaction is already durable: a failed flush of derived data must not
            # report it as failed. Keep the rows in memory and retry at the next commit.
            try:
                self.flush()
            except (OSError, StoreError) as error:
                self.flush_error = error
            else:
                self.flush_error = None

    def _terms(self, text: str) -> list[str]:
        return self.analyzer.terms(text)

    def _add(self, entry: IndexEntry, rows: InvertedIndex | PendingRows | None = None) -> None:
        (self.index if rows is None else rows).add_entry(entry, self._terms(entry.text))

    def _incognito(self, session_id: str, windows: TransactionWindows | None = None) -> bool:
        """Whether the window's rows stay out of the index (`SessionWindow.is_incognito`),
        as `windows` (an open transaction streamed, else the store) has it. A window a
        later commit deleted answers False: that commit removes its rows."""
        try:
            window = (self.store if windows is None else windows).window(session_id)
        except UnknownSession:
            return False
        last = self._last_incognito  # a window's events come together: asked once a window
        if last[0] is not window:  # a frozen value: the same object, the same answer
            last = self._last_incognito = (window, window.is_incognito)
        return last[1]

    def _apply(self, change: Change, left_dirty: AbstractSet[str] = frozenset(), *,
               rows: PendingRows | None = None,
               windows: TransactionWindows | None = None) -> None:
        """Apply one committed change to the index (§8.1; deletes remove rows). Events of
        windows in `left_dirty` move the window's state as usual but add no row. With
        `rows`, the change of an open transaction (`streaming`) is applied to its own
        rows and states, its windows read from `windows`."""
        if isinstance(change, EventAppended):
            self._apply_appended(change.event, left_dirty, rows, windows)
            return
        self._index_changes += 1
        target = self.index if rows is None else rows
        states = target.window_states
        if isinstance(change, TranscriptReplaced):
            session_id = change.session_id
            if change.rebuild_deferred:  # the old rows stay, hidden, until reconcile
                states[session_id] = replaced_state(change, states.get(session_id))
            else:
                self._rebuild_from(session_id, change.events,
                                   add_rows=session_id not in left_dirty,
                                   rows=rows, windows=windows)
        elif isinstance(change, SessionDeleted):
            for session_id in change.session_ids:
                target.delete_window_rows(session_id)
                states.pop(session_id, None)
        # WindowPut changes only metadata, which search reads from the store.

    def _apply_appended(self, stored: StoredEvent, left_dirty: AbstractSet[str],
                        rows: PendingRows | None, windows: TransactionWindows | None
                        ) -> tuple[IndexEntry | None, AppendAction]:
        """`_apply` of one appended event; return its entry (`extract_index_entry`,
        whether or not it is added; None for a window of `left_dirty`, whose events are
        not read) and the forward indexer's action (`classify_append`)."""
        self._index_changes += 1
        states = (self.index if rows is None else rows).window_states
        session_id = stored.session_id
        extracted = None if session_id in left_dirty else extract_index_entry(stored)
        entry = extracted
        if entry is not None and self._incognito(session_id, windows):
            entry = None
        action, state = classify_append(states.get(session_id), stored,
                                        indexable=entry is not None)
        if action == "index" and entry is not None:
            self._add(entry, rows)
        if state is not None:
            states[session_id] = state
        return extracted, action

    def _rebuild_from(self, session_id: str, events: Sequence[StoredEvent], *,
                      add_rows: bool = True, rows: PendingRows | None = None,
                      windows: TransactionWindows | None = None) -> None:
        """Replace a window's rows by those of the active path of `events` (all of its
        events, seq 0 first) and set its rebuilt state; without `add_rows` only the
        state (a window a later change leaves dirty again, see `_on_commit`). `rows`
        and `windows` are `_apply`'s."""
        self._index_changes += 1
        target = self.index if rows is None else rows
        target.delete_window_rows(session_id)
        tree = scan_tree(events)
        if add_rows and not self._incognito(session_id, windows):
            # A streamed transaction writes its buffer when due between the rows of a
            # long window too, not only between changes.
            streamed = self._streamed if rows is not None else None
            for entry in index_entries(events, tree):
                self._add(entry, rows)
                if streamed is not None:
                    streamed.write_when_due()
        target.window_states[session_id] = rebuilt_state(len(events) - 1, tree.leaf_id)

    def _rebuild_in_runs(self, session_id: str, *, flushing: bool = True,
                         flush_rows: int | None = None, known: HeldWindow | None = None
                         ) -> bool:
        """`_rebuild_from` for a long window of the store, its events read a run of
        `index_flush_documents` at a time (`TranscriptStore.event_runs`): first their
        tree (`tree.scan_path`: each entry's id, parent and seq, every event let go once
        scanned; `lean_tree_scan` off: every event's outline, `tree.outline`, held until
        the scan), unless its active path is `known` (an import held it:
        `streaming.HeldWindow`),
        then the visible events whole (or, when `known` holds them, the rows made as the
        import wrote them: `row_spool`; the events of the tail that the transaction
        which just committed kept of it give their outlines and entries from that tail:
        `spooled_tail`), the
        buffer flushed when due between runs (with `flushing`); so a long window's
        events are never all in memory. The window is marked dirty first, so that a flush in the middle
        shows none of its rows (a crash then leaves it to the next reconcile). The same
        rows in the same order; False, with nothing done, when its active path is not in
        seq order (then `_rebuild_from` does it, holding every event). `flush_rows`
        is `_flush_when_due`'s `rows`."""
        size = self.config.index_flush_documents
        tail = None
        seqs: Sequence[int]
        if known is None:
            tail = self._committed_tail(session_id)
            before = None if tail is None else range(tail.start)  # the rest is the tail's
            events: Iterable[StoredEvent] = chain.from_iterable(
                self.store.event_runs(session_id, before, size=size))
            if tail is not None:
                events = chain(events, tail.outlines())
            if self.lean_tree_scan:
                path = scan_path(events)
                count, leaf_id, seqs = path.count, path.leaf_id, path.seqs
            else:  # the clear version: every event's outline held, then scanned
                outlines = list(map(outline, events))
                tree = scan_tree(outlines)
                count, leaf_id = len(outlines), tree.leaf_id
                seqs = [stored.seq for stored in visible_events(outlines, tree)]
                del outlines, tree
        else:
            count, leaf_id, seqs = known.count, known.leaf_id, known.seqs
        if any(later <= earlier for earlier, later in pairwise(seqs)):
            return False
        self._index_changes += 1
        states = self.index.window_states
        states[session_id] = (states.get(session_id) or WindowIndexState())._replace(
            needs_rebuild=True)
        self.index.delete_window_rows(session_id)
        if not self._incognito(session_id):
            spooled = known.rows if known is not None else None
            runs = (spooled.runs() if spooled is not None  # made as the import wrote them
                    else self._rows_read_back(session_id, seqs, size, tail))
            for rows in runs:
                for entry, terms in rows:
                    self.index.add_entry(entry, terms)
                if flushing:
                    self._flush_when_due(rows=flush_rows)
        self._index_changes += 1
        states[session_id] = rebuilt_state(count - 1, leaf_id)
        return True

    def _rows_read_back(self, session_id: str, seqs: Sequence[int], size: int,
                        tail: SpooledTail | None = None
                        ) -> Iterator[Iterator[tuple[IndexEntry, list[str]]]]:
        """The rows of window `session_id`'s events `seqs`, `size` seqs a run: one run of
        (entry, terms) at a time, read from the log; with `tail`, the entries of the
        seqs it holds taken from it instead (`spooled_tail`), the same runs."""
        entries = None if tail is None else tail.entries()
        for first in range(0, len(seqs), size):
            yield self._run_rows(session_id, seqs[first:first + size], tail, entries)

    def _run_rows(self, session_id: str, seqs: Sequence[int], tail: SpooledTail | None,
                  entries: TailEntries | None) -> Iterator[tuple[IndexEntry, list[str]]]:
        """One run's rows: those of its seqs before the tail's start (all of them without
        a tail) read from the log, the others' entries from the tail's `entries`."""
        split = len(seqs) if tail is None else bisect_left(seqs, tail.start)
        if split:
            for run in self.store.event_runs(session_id, seqs[:split], size=split):
                for entry in map(extract_index_entry, run):
                    if entry is not None:
                        yield entry, self._terms(entry.text)
        if entries is not None:
            for entry in entries.run(seqs[split:]):
                yield entry, self._terms(entry.text)

    def _committed_tail(self, session_id: str) -> SpooledTail | None:
        """The tail the transaction that just committed kept of window `session_id`
        (`streaming.StreamedIndexing.committed_tail`), when it holds every event of
        the window from its start on; else None."""
        if self._streamed is None:
            return None
        return self._streamed.committed_tail(session_id, self.store.event_count(session_id))

    # ----- index files ----------------------------------------------------------------

    def flush(self) -> None:
        """Write the buffer as a segment and commit the manifest (writer only)."""
        from engine.index.writer import flush_index  # a writer's only: a search never loads it

        self._require_writer("flush the index")
        self.index.indexing = self.index_status()
        flush_index(self.store.directory, self.index, self.profile, self.config)

    def merge(self) -> None:
        """Merge every segment into one, dropping deleted rows (writer only)."""
        from engine.index.writer import merge_index  # a writer's only: a search never loads it

        self._require_writer("merge the index")
        self.index.indexing = self.index_status()
        merge_index(self.store.directory, self.index, self.profile, self.config)

    def _require_writer(self, action: str) -> None:
        if not self.store.is_writer:
            raise StoreError(f"cannot {action}: the store was opened read-only")

    # ----- the indexing status --------------------------------------------------------

    def windows_needing_reconcile(self) -> list[str]:
        """Session ids of windows that need work (§8.3), in session-id order.

        The order decides the doc ids (insertion order, FTS5's rowid) of rebuilt rows, and so
        the `recent` order among equal timestamps; the SQLite backend rebuilds in
        `ORDER BY session_id` (BINARY collation: UTF-8 bytes), and so does this.
        """
        states = self.index.window_states
        needing = [
            session_id
            for session_id, count in self.store.event_counts().items()
            if needs_reconcile(states.get(session_id), count - 1)
        ]
        return sorted(needing, key=lambda session_id: session_id.encode("utf-8", "surrogatepass"))

    def index_status(self) -> bool:
        """The `indexing` flag (§8.4): True when some window needs work (§8.3). Orphaned
        rows do not count: no hit comes from them (their window is in no scope), and a
        reconcile sweeps them whatever the flag says.

        O(windows) to compute, so it is kept until the store or the index changes.
        """
        key = self._status_cache_key()
        if key != self._status_key:
            self._status = bool(self.windows_needing_reconcile())
            self._status_key = key
        return self._status

    def _status_cache_key(self) -> tuple[int, int]:
        return (self.store.generation, self._index_changes)
