"""The reference backend: the transcript store plus the pure-Python inverted index.

Owns: wiring a `TranscriptStore` (the source of truth and the commit point) to an
`InvertedIndex` (derived data): forward indexing of committed changes, replay on open,
flushing and merging the index files, reconcile, the `indexing` status, and the search
entry points. Must not touch: byte layouts (`engine.codec`), what is searchable
(`engine.transcript.projection`), the index-state rules (`engine.index.lifecycle`), the
query policy or the ranking formulas (the search stage, `engine.search`, calls them).

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
holds fewer lost committed data, and opening refuses it (`manifest_claim`, handed to
`TranscriptStore.open` before a writer cuts any torn tail) instead of rebuilding a
smaller index in silence. `tests/transcript/test_crash.py` kills a child process at random
points while it appends and checks exactly this on reopen.

Index files (see `engine.index.writer`) live under `index/` in the store's directory. The
buffer is flushed into an immutable segment after a commit once it holds
`EngineConfig.index_flush_documents` rows (so the manifest covers a large import as soon as
it commits, and a reopen replays only the commits after it), on `flush()`, after
`reconcile()` and on `close()`. A large commit that leaves windows dirty (a bulk import
with rewinds) is not applied at once but when the index is next read, or by `reconcile`,
which then leaves out the rows it would delete (`_on_commit`). (An earlier attempt that
indexed those rows and then filtered them out of the buffer before the flush measured
slower than writing them; not analysing them at all is what saves the time.) Until then
a crash replays that commit from the log at the next open. Segments are merged when there are
`index_merge_segments` of them or on `merge()`. Merging runs synchronously in the writer (no
background thread: the reference keeps one thread of control).

Replacements (behaviour.md §8.2). `replace_transcript` decides in its transaction
whether the window is rebuilt now (`engine.backends.replacement`) and writes the decision
into the log's `replace` record, so a replay decides as the commit did whatever config
opens the store later. The record and its events reach the hook as one
`TranscriptReplaced` change: a small replacement rebuilds the window from the change's
events (its old rows deleted, the new active path indexed, the state rebuilt), a large
one only marks the window dirty, its old rows kept and hidden until reconcile. Like every
change, it is applied with the commit or, after a crash, by the replay.

Reconcile. Windows that need work (§8.3: no state, dirty, or lagging) are excluded from
search when dirty and make `indexing` true. `reconcile()` rebuilds each such window from
its active path (delete its rows, index `projection.index_entries(events)`, set
`lifecycle.rebuilt_state`) and sweeps rows and states of windows the store no longer has.
An incognito window (`SessionWindow.is_incognito`) is stored but never indexed: its
events move its index state like any other window's and add no row, and its rebuild
yields none, so it neither matches nor counts in bm25 statistics, as OpenClaw never
writes it to an agent database. The backend itself never starts a reconcile:
`reconcile_batch` and `sweep_orphans` are the pieces the store's background worker runs
when a search on the store's writer finds work pending (`engine.backends.background`);
readers cannot write. Or run `session-search reconcile --store DIR`.

The clear-path switches of `EngineConfig` are read from `store.config`:
`defer_large_commits` here, `tombstone_runs` by the `InvertedIndex` it is handed, and
`fast_kernel`, `cjk_gram_index` and `fast_snippets` by the search stage, which gets the
config with each search and explanation.

Terms are cut to 32,768 UTF-8 bytes as FTS5 cuts them (`index.termdict.index_term`); a
query term never needs the cut, since a query holds at most 4,096 UTF-16 units (at most
12,288 bytes).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from engine.analysis.profiles import SEARCH_PROFILE
from engine.analysis.token import Analyzer
from engine.backends.forward_indexing import classify_append
from engine.backends.protocol import (
    AnswersLate,
    Backend,
    BackendTransaction,
    Compactable,
    Diagnosable,
    Explainable,
    Maintenance,
    ReconcileBatch,
    ReconcilesInBatches,
    Refreshable,
)
from engine.backends.replacement import rebuild_is_deferred
from engine.codec.manifest_file import decode_manifest_generation
from engine.codec.meta_file import decode_meta_file
from engine.config import EngineConfig
from engine.directory import Directory, FileDirectory
from engine.errors import CorruptFile, StoreError, UnknownSession
from engine.index.inverted_index import InvertedIndex
from engine.index.lifecycle import WindowIndexState, needs_reconcile, rebuilt_state
from engine.index.writer import (
    MANIFEST_NAME,
    ProfileMismatch,
    flush_index,
    load_index,
    manifest_bytes,
    merge_index,
)
from engine.model import IndexEntry, SearchRequest, SearchResult, SessionWindow, StoredEvent
from engine.progress import StepProgress
from engine.query.user_query import validate_request
from engine.search.kernel import search_answer, search_index
from engine.search.merge import PartitionAnswer
from engine.search.scope import Scope, ScopeCache
from engine.transcript.changes import Change, EventAppended, SessionDeleted, TranscriptReplaced
from engine.transcript.compaction import CompactionOutcome
from engine.transcript.evidence import CommittedClaim, StoreProblem
from engine.transcript.projection import extract_index_entry, index_entries
from engine.transcript.store import META_NAME, TranscriptStore
from engine.transcript.transaction import StoreTransaction
from engine.transcript.tree import scan_tree
from engine.transcript.validation import (
    check_event,
    check_privacy_change,
    check_replacement,
    check_window,
)

if TYPE_CHECKING:
    from engine.search.explain import SearchExplanation

BACKEND_NAME = "reference"


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


def generation_reader(store: TranscriptStore) -> Callable[[], int]:
    """A function that reads `store.generation` now: it holds the store, not the backend,
    so a backend keeping it makes no reference cycle (a closed backend is freed at once)."""
    return lambda: store.generation


def manifest_claim(directory: Directory) -> tuple[CommittedClaim, ...]:
    """What the index manifest says was committed (the store generation it covers: it is
    written after those commits were fsynced); empty when there is no manifest, or it
    cannot be read (the index is derived data: opening it then says what is wrong).
    Cost: the manifest's CRCs and one field, not its windows or tombstones."""
    if not directory.exists(MANIFEST_NAME):
        return ()
    location = directory.location(MANIFEST_NAME)
    try:
        generation = decode_manifest_generation(directory.read_bytes(MANIFEST_NAME), location)
    except StoreError:
        return ()
    return (CommittedClaim(location, generation),)


class ReferenceTransaction(BackendTransaction):
    """The store's transaction with every write checked first, as on every backend
    (`engine.transcript.validation`); the store itself keeps events opaque."""

    def __init__(self, transaction: StoreTransaction, config: EngineConfig | None = None) -> None:
        self._transaction = transaction
        self._config = config or EngineConfig()

    def put_window(self, window: SessionWindow) -> None:
        """Insert a window, or replace the metadata of an existing one."""
        check_window(window)
        try:
            stored: SessionWindow | None = self._transaction.window(window.session_id)
        except UnknownSession:
            stored = None
        check_privacy_change(stored, window)
        self._transaction.put_window(window)

    def append_event(
        self, session_id: str, event: dict[str, Any], created_at: float | None = None
    ) -> int:
        """Append one event to an existing window; return its seq."""
        check_event(session_id, event, created_at)
        return self._transaction.append_event(session_id, event, created_at)

    def replace_transcript(
        self, session_id: str, events: Sequence[dict[str, Any]],
        created_at: float | Sequence[float | None] | None = None,
    ) -> int:
        """Replace every event of an existing window by `events`, stamped `created_at`
        (one for all, or one per event); return how many. Every event is checked with
        its stamp before anything is written, so a refused replacement leaves
        the window as it was; whether the index rebuild waits for reconcile
        (`replacement.rebuild_is_deferred`) is written in the log with it, and the
        index applies it at commit (`ReferenceBackend._apply`)."""
        self._transaction.window(session_id)  # UnknownSession before anything else
        events = list(events)
        stamps = check_replacement(session_id, events, created_at)
        return self._transaction.replace_transcript(
            session_id, events, stamps,
            rebuild_deferred=rebuild_is_deferred(events, self._config))

    def delete_session(self, session_key: str) -> int:
        """Delete every window of `session_key`; return how many."""
        return self._transaction.delete_session(session_key)


class ReferenceBackend(Backend, Maintenance, ReconcilesInBatches, Refreshable, Explainable,
                       Diagnosable, AnswersLate, Compactable):
    """A store directory searched by the reference index (capabilities: `Backend`,
    `Maintenance`, `ReconcilesInBatches`, `Refreshable`, `Explainable`, `Diagnosable`,
    `AnswersLate`, `Compactable`)."""

    name = BACKEND_NAME

    def __init__(
        self,
        store: TranscriptStore,
        *,
        analyzer: Analyzer | None = None,
    ) -> None:
        """Use `create`, `open`, `create_in` or `open_in`; sizes come from `store.config`."""
        self.store = store
        self.config = store.config
        # Tests may pass another analyzer; the manifest records which one built the terms.
        self.analyzer = analyzer or SEARCH_PROFILE.analyzer()
        self.profile = SEARCH_PROFILE.label() if analyzer is None else f"custom {analyzer.name}"
        #: The error of the last automatic flush after a commit, if it failed.
        self.flush_error: Exception | None = None
        self._closed = False
        #: Bumped by every change to the index's rows or window states; with the store's
        #: generation it keys the cached `indexing` flag (a search asks for it each time).
        self._index_changes = 0
        self._status_key: tuple[int, int] | None = None
        self._status = False
        #: The scopes searches selected, kept while the store's generation and the
        #: index's window states stay the same (`engine.search.scope.ScopeCache`).
        self._scopes = ScopeCache(generation_reader(store))
        #: Committed transactions not yet applied to the index, in commit order.
        self._deferred: list[tuple[int, list[Change]]] = []
        self.index = self._load_and_replay()
        store.add_commit_hook(self._on_commit)

    @property
    def index(self) -> InvertedIndex:
        """The index, with every committed change applied (deferred ones first)."""
        if self._deferred:
            self._apply_deferred(skip_left_dirty=False)
        return self._index

    @index.setter
    def index(self, index: InvertedIndex) -> None:
        self._index = index

    # ----- creating and opening -------------------------------------------------------

    @classmethod
    def create_in(
        cls,
        directory: Directory,
        *,
        config: EngineConfig | None = None,
        analyzer: Analyzer | None = None,
    ) -> ReferenceBackend:
        """Make a new reference store in `directory`, opened as the writer."""
        store = TranscriptStore.create(directory, backend=BACKEND_NAME, config=config)
        return cls(store, analyzer=analyzer)

    @classmethod
    def open_in(
        cls,
        directory: Directory,
        *,
        writer: bool = False,
        config: EngineConfig | None = None,
        analyzer: Analyzer | None = None,
        accept_lost_commits: bool = False,
    ) -> ReferenceBackend:
        """Open the reference store in `directory` (replaying what the index lacks).

        The index manifest's generation is evidence of what was committed
        (`manifest_claim`): a log that holds less is refused, as
        `TranscriptStore.open` says, unless `accept_lost_commits` (verify, stats,
        repair: the index is then rebuilt from what the log holds).
        """
        store = TranscriptStore.open(directory, writer=writer, config=config,
                                     committed=manifest_claim(directory),
                                     accept_lost_commits=accept_lost_commits)
        if store.backend != BACKEND_NAME:
            store.close()
            raise StoreError(
                f"{directory.location(META_NAME)}: store was created for backend "
                f"{store.backend!r}, not {BACKEND_NAME!r}"
            )
        try:
            return cls(store, analyzer=analyzer)
        except BaseException:
            store.close()
            raise

    @classmethod
    def create(cls, path: str | os.PathLike[str]) -> ReferenceBackend:
        """Registry entry point: a new store in folder `path`, opened as the writer."""
        return cls.create_in(FileDirectory(path))

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, writer: bool = False,
             accept_lost_commits: bool = False) -> ReferenceBackend:
        """Registry entry point: open the store in folder `path` (see `open_in`)."""
        return cls.open_in(FileDirectory(path), writer=writer,
                           accept_lost_commits=accept_lost_commits)

    def problems(self) -> list[StoreProblem]:
        """What opening found wrong with the store's files, or worth knowing
        (`TranscriptStore.problems`): the `Diagnosable` capability."""
        return self.store.problems()

    @classmethod
    def claims(cls, path: str | os.PathLike[str]) -> bool:
        """Whether folder `path` holds a store created for this backend."""
        meta = Path(path) / META_NAME
        if not meta.is_file():
            return False
        try:
            return decode_meta_file(meta.read_bytes(), str(meta)).backend == BACKEND_NAME
        except (CorruptFile, StoreError):
            return False

    # ----- forward indexing -----------------------------------------------------------

    def _load_and_replay(self) -> InvertedIndex:
        """The committed index files plus every store change they do not cover yet."""
        self._index_changes += 1
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
        if self._deferred or self._defers(changes):
            self._deferred.append((generation, changes))
            return
        for change in changes:
            self._apply(change)
        self._index.generation = generation
        self._flush_when_due()

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

    def _flush_when_due(self) -> None:
        if self.store.is_writer and len(self._index.buffer) >= self.config.index_flush_documents:
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

    def _add(self, entry: IndexEntry) -> None:
        self.index.add_entry(entry, self._terms(entry.text))

    def _incognito(self, session_id: str) -> bool:
        """Whether the window's rows stay out of the index (`SessionWindow.is_incognito`).
        A window a later commit deleted answers False: that commit removes its rows."""
        try:
            return self.store.window(session_id).is_incognito
        except UnknownSession:
            return False

    def _apply(self, change: Change, left_dirty: AbstractSet[str] = frozenset()) -> None:
        """Apply one committed change to the index (§8.1; deletes remove rows). Events of
        windows in `left_dirty` move the window's state as usual but add no row."""
        self._index_changes += 1
        states = self.index.window_states
        if isinstance(change, EventAppended):
            stored = change.event
            entry = None if stored.session_id in left_dirty else extract_index_entry(stored)
            if entry is not None and self._incognito(stored.session_id):
                entry = None
            action, state = classify_append(
                states.get(stored.session_id), stored, indexable=entry is not None
            )
            if action == "index" and entry is not None:
                self._add(entry)
            if state is not None:
                states[stored.session_id] = state
        elif isinstance(change, TranscriptReplaced):
            session_id = change.session_id
            if change.rebuild_deferred:  # the old rows stay, hidden, until reconcile
                states[session_id] = replaced_state(change, states.get(session_id))
            else:
                self._rebuild_from(session_id, change.events,
                                   add_rows=session_id not in left_dirty)
        elif isinstance(change, SessionDeleted):
            for session_id in change.session_ids:
                self.index.delete_window_rows(session_id)
                states.pop(session_id, None)
        # WindowPut changes only metadata, which search reads from the store.

    # ----- writing --------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[ReferenceTransaction]:
        """The store's write transaction; its index rows are added when it commits."""
        with self.store.transaction() as transaction:
            yield ReferenceTransaction(transaction, self.config)

    def flush(self) -> None:
        """Write the buffer as a segment and commit the manifest (writer only)."""
        self._require_writer("flush the index")
        self.index.indexing = self.index_status()
        flush_index(self.store.directory, self.index, self.profile, self.config)

    def merge(self) -> None:
        """Merge every segment into one, dropping deleted rows (writer only)."""
        self._require_writer("merge the index")
        self.index.indexing = self.index_status()
        merge_index(self.store.directory, self.index, self.profile, self.config)

    def _require_writer(self, action: str) -> None:
        if not self.store.is_writer:
            raise StoreError(f"cannot {action}: the store was opened read-only")

    # ----- lifecycle ------------------------------------------------------------------

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

    def orphan_session_ids(self) -> list[str]:
        """Windows that have index rows or state but no transcript events (§8.3: gone
        from the store, or emptied), as the SQLite backend's sweep counts them."""
        known = {session_id for session_id, count in self.store.event_counts().items() if count}
        # Usually every window a segment names is known: then no row needs to be read.
        unknown = self.index.session_ids_maybe_indexed() - known
        orphans = {session_id for session_id in unknown if self.index.window_doc_ids(session_id)}
        return sorted(orphans | (set(self.index.window_states) - known))

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

    def rebuild_window(self, session_id: str, known: Sequence[StoredEvent] | None = None) -> None:
        """Replace a window's rows by its active path's entries and reset its state.

        `known` may hold the window's events as they were committed; they are used when
        they are all of them (seq 0, 1, ... up to the window's count), else the events
        are read from the store.
        """
        if known is not None and len(known) == self.store.event_count(session_id) and all(
                event.seq == seq for seq, event in enumerate(known)):
            events = list(known)
        else:
            events = self.store.events(session_id)
        self._rebuild_from(session_id, events)

    def _rebuild_from(self, session_id: str, events: Sequence[StoredEvent], *,
                      add_rows: bool = True) -> None:
        """Replace a window's rows by those of the active path of `events` (all of its
        events, seq 0 first) and set its rebuilt state; without `add_rows` only the
        state (a window a later change leaves dirty again, see `_on_commit`)."""
        self._index_changes += 1
        self.index.delete_window_rows(session_id)
        tree = scan_tree(events)
        if add_rows and not self._incognito(session_id):
            for entry in index_entries(events, tree):
                self._add(entry)
        self.index.window_states[session_id] = rebuilt_state(len(events) - 1, tree.leaf_id)

    def reconcile(self, progress: StepProgress | None = None) -> int:
        """Rebuild every window needing work, sweep orphans, flush; return the windows
        rebuilt (the orphans swept are not counted: `sweep_orphans` says how many).

        `progress(done, total)` is called first and after each rebuilt window."""
        self._require_writer("reconcile")
        known = self._apply_deferred(skip_left_dirty=True) if self._deferred else {}
        work = self.windows_needing_reconcile()
        if progress is not None:
            progress(0, len(work))
        for done, session_id in enumerate(work, 1):
            self.rebuild_window(session_id, known.pop(session_id, None))
            if progress is not None:
                progress(done, len(work))
        self.sweep_orphans()
        return len(work)

    def reconcile_batch(self, pending: Sequence[str], max_events: int,
                        stop: Callable[[], bool]) -> ReconcileBatch:
        """Rebuild windows from the front of `pending` that still need it, until about
        `max_events` events were read or `stop()` (`ReconcilesInBatches`); the index
        files are written when the buffer is due (`_flush_when_due`), and at the end of
        the worker's run (`sweep_orphans`) or at `close`."""
        self._require_writer("reconcile")
        if self._deferred:
            self._apply_deferred(skip_left_dirty=True)
        states = self.index.window_states
        consumed = windows = rows = events = 0
        for session_id in pending:
            if stop() or (windows and events >= max_events):
                break
            consumed += 1
            try:  # the batch's own windows only: a batch costs O(its windows), not O(store)
                count = self.store.event_count(session_id)
            except UnknownSession:  # deleted since the run listed it
                count = 0
            if not needs_reconcile(states.get(session_id), count - 1):
                continue
            self.rebuild_window(session_id)
            windows += 1
            rows += len(self.index.window_doc_ids(session_id))
            events += count
        self._flush_when_due()
        return ReconcileBatch(consumed, windows, rows)

    def sweep_orphans(self) -> int:
        """Drop the rows and states of windows the store no longer has, then write the
        index files (`ReconcilesInBatches`); the number of such windows.

        It ends a reconcile of this partition (`reconcile()`, and a run of the
        background worker that finished the partition): the writer goes quiet, so it
        also saves the transcript catalog's checkpoint when enough records are behind it
        (`TranscriptStore.save_checkpoint_when_quiet`). With the index files just
        written, a reader opening next to this writer then replays neither index
        changes nor more than `EngineConfig.checkpoint_idle_records` log records."""
        self._require_writer("reconcile")
        orphans = self.orphan_session_ids()
        for session_id in orphans:
            self._index_changes += 1
            self.index.delete_window_rows(session_id)
            self.index.window_states.pop(session_id, None)
        self.flush()
        self.store.save_checkpoint_when_quiet()
        return len(orphans)

    def compact(self) -> CompactionOutcome:
        """Reclaim the transcript log's deleted records (`TranscriptStore.compact`,
        writer only). The index is left as it is: it names events by session id and
        seq, never by log position, and the generation its manifest covers stays (every
        commit record is kept); its deleted rows are dropped by `merge`."""
        self._require_writer("compact the transcript log")
        return self.store.compact()

    def rebuild_index(self) -> int:
        """Discard the index and rebuild every window from its transcript (`verify --repair`).

        Returns the number of windows rebuilt; the result is merged into one segment.
        """
        self._require_writer("rebuild the index")
        generation = self.index.generation
        self._index_changes += 1
        self.index = InvertedIndex(generation=generation, config=self.config)
        windows = [window.session_id for window in self.store.windows()]
        for session_id in windows:
            if self.store.event_count(session_id):
                self.rebuild_window(session_id)
        self.merge()
        return len(windows)

    # ----- reading --------------------------------------------------------------------

    def refresh(self) -> None:
        """Readers: see what the writer committed since opening or the last refresh.

        New transactions are replayed into the index. When the writer also committed a
        new index manifest (a flush, merge or reconcile: reconcile results are not in the
        transcript log), the index is reloaded from the files first.
        """
        self.store.refresh()
        committed = manifest_bytes(self.store.directory)
        if not self.store.is_writer and committed != self._loaded_manifest:
            self.index = self._load_and_replay()
        else:
            self._replay()

    def _status_cache_key(self) -> tuple[int, int]:
        return (self.store.generation, self._index_changes)

    def _windows(self) -> Sequence[SessionWindow]:
        return self.store.windows()

    # Reads of the transcripts, named as on the SQLite backend (the store answers them).

    def windows(self) -> list[SessionWindow]:
        """Every window, in first-insertion order."""
        return self.store.windows()

    def window(self, session_id: str) -> SessionWindow:
        """One window (UnknownSession if absent)."""
        return self.store.window(session_id)

    def windows_of(self, session_key: str) -> list[SessionWindow]:
        """The windows of one session key."""
        return self.store.windows_of(session_key)

    def session_keys(self) -> list[str]:
        """Every session key holding a window."""
        return self.store.session_keys()

    def events(self, session_id: str) -> list[StoredEvent]:
        """Every event of a window, in seq order."""
        return self.store.events(session_id)

    def event_count(self, session_id: str) -> int:
        """How many events a window has."""
        return self.store.event_count(session_id)

    def search(self, request: SearchRequest) -> SearchResult:
        """Run the store-level search of behaviour.md §5."""
        return search_index(
            self.index.view(), self._lazy_windows(), request, self.analyzer,
            indexing=self.index_status(), config=self.config, scopes=self._scopes,
        )

    def search_answer(self, request: SearchRequest,
                      rank_bound: float | None = None) -> PartitionAnswer:
        """`search` as a partition of a merged search answers: snippets cut only for the
        hits the merge keeps (`engine.search.merge.PartitionAnswer`); with `rank_bound`,
        without the rows the merge cannot keep (`engine.search.kernel.run_kernel`)."""
        return search_answer(
            self.index.view(), self._lazy_windows(), request, self.analyzer,
            indexing=self.index_status(), config=self.config, scopes=self._scopes,
            rank_bound=rank_bound,
        )

    def search_scope(self, request: SearchRequest) -> Scope:
        """The scope a search of `request` would use now (from the scope cache)."""
        validate_request(request)
        return self._scopes.select(self.index.view(), self._lazy_windows(), request)

    def _lazy_windows(self) -> Iterator[SessionWindow]:
        """The windows, read only if the scope cache has to select a scope."""
        yield from self.store.windows()

    def explain(self, request: SearchRequest) -> SearchExplanation:
        """The search explained: per hit, its bm25 terms and excerpt choice."""
        from engine.search.explain import explain_search  # only `explain` needs it

        return explain_search(self.index.view(), self._windows(), request, self.analyzer,
                              config=self.config)

    def stats(self) -> dict[str, int]:
        """Store counts plus the index's rows, segments and terms."""
        counts = dict(self.store.stats())
        counts["messages_indexed"] = self.index.document_count
        counts["index_segments"] = len(self.index.segments)
        counts["index_tokens"] = self.index.total_tokens
        counts["index_bytes"] = sum(
            self.store.directory.size(name) for name in self.store.directory.list_names("index/")
        )
        return counts

    def iter_index_entries(self) -> Iterator[IndexEntry]:
        """The rows the index holds, as entries (for `verify`)."""
        for record in self.index.documents():
            yield IndexEntry(
                record.session_id, record.message_id, record.role,
                record.timestamp, record.text, record.seq,  # type: ignore[arg-type]
            )

    def close(self) -> None:
        """Flush the index (writer), then close the store and release its lock (idempotent)."""
        if self._closed:
            return
        self._closed = True
        try:
            if self.store.is_writer:
                self.flush()
        finally:
            self.store.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exception: object) -> None:
        self.close()
