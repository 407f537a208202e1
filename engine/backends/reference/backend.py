"""The reference backend: the transcript store plus the pure-Python inverted index.

Owns: `ReferenceBackend`, which puts the parts below together behind the backend protocol:
creating and opening a store (refusing a log that holds fewer commits than the index
manifest says were made: `manifest_claim`), the reads of its transcripts, the search entry
points, and closing. Its parts: the write transaction (`transaction`), the index kept in
step with the store's commits (`indexing`), reconcile and the other upkeep of the index
(`maintenance`). Must not touch: byte layouts (`engine.codec`), what is searchable
(`engine.transcript.projection`), the index-state rules (`engine.index.lifecycle`), the
query policy or the ranking formulas (the search stage, `engine.search`, calls them).

Expectation modes (`expectation`): `sqlite` (the default) answers as the engine's own kernel
over the `unicode61` index (what the SQLite backend answers); `postgres` answers what the
postgres backend answers for the same transcripts (`engine.search.postgres_mode`: the `pg`
profile's tokens of each indexed row, the compiled tsquery, `ts_rank`), so that the
reference predicts that backend too (`tests/parity/test_postgres_differential.py`). The
index, its rows, the scope and the `indexing` flag are the same in both modes.

The clear-path switches of `EngineConfig` are read from `store.config`:
`defer_large_commits` by the commit hook (`indexing`), `tombstone_runs` by the
`InvertedIndex` it is handed, and `fast_kernel`, `cjk_gram_index` and `fast_snippets` by
the search stage, which gets the config with each search and explanation.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Self

from engine.analysis.token import Analyzer
from engine.backends.protocol import (
    AnswersLate,
    Backend,
    Compactable,
    Diagnosable,
    Explainable,
    Generational,
    Maintenance,
    ReconcilesInBatches,
    Refreshable,
)
from engine.backends.reference.maintenance import IndexMaintenance
from engine.codec.manifest_file import decode_manifest_generation
from engine.codec.meta_file import decode_meta_file
from engine.config import EngineConfig
from engine.directory import Directory, FileDirectory
from engine.errors import CorruptFile, StoreError, UsageError
from engine.index.loading import MANIFEST_NAME
from engine.model import IndexEntry, SearchRequest, SearchResult, SessionWindow, StoredEvent
from engine.query.checked_request import check_request
from engine.search.kernel import search_answer, search_index
from engine.search.merge import PartitionAnswer
from engine.search.scope import Scope, ScopeCache, ScopedWindows, rebuild_pending
from engine.transcript.evidence import CommittedClaim
from engine.transcript.store import TranscriptStore
from engine.transcript.store_handle import META_NAME

if TYPE_CHECKING:  # imported where they are used: a search in the default mode reads only
    from engine.backends.reference.transaction import ReferenceTransaction
    from engine.search.explain import SearchExplanation
    from engine.search.postgres_mode import RowVectors
    from engine.transcript.store_problem import StoreProblem

BACKEND_NAME = "reference"
#: What a reference backend's searches answer like (see the module docstring).
EXPECTATIONS = ("sqlite", "postgres")


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


class ReferenceBackend(IndexMaintenance, Backend, Maintenance, ReconcilesInBatches,
                       Refreshable, Explainable, Diagnosable, AnswersLate, Compactable,
                       Generational):
    """A store directory searched by the reference index (capabilities: `Backend`,
    `Maintenance`, `ReconcilesInBatches`, `Refreshable`, `Explainable`, `Diagnosable`,
    `AnswersLate`, `Compactable`); the index and its upkeep come from its bases
    (`maintenance.IndexMaintenance`, `indexing.IndexedStore`)."""

    name = BACKEND_NAME

    def __init__(
        self,
        store: TranscriptStore,
        *,
        analyzer: Analyzer | None = None,
        expectation: str = "sqlite",
    ) -> None:
        """Use `create`, `open`, `create_in` or `open_in`; sizes come from `store.config`."""
        self.expectation = "sqlite"
        self.set_expectation(expectation)
        #: The postgres mode's rows' texts and tsvectors, made once per row.
        self._postgres_rows: RowVectors | None = None
        self._closed = False
        #: The scopes searches selected, kept while the store's generation and the
        #: index's window states stay the same (`engine.search.scope.ScopeCache`).
        self._scopes = ScopeCache(generation_reader(store))
        super().__init__(store, analyzer=analyzer)

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
             accept_lost_commits: bool = False, expectation: str = "sqlite") -> ReferenceBackend:
        """Registry entry point: open the store in folder `path` (see `open_in`), its
        searches answering as `expectation` says (module docstring)."""
        backend = cls.open_in(FileDirectory(path), writer=writer,
                              accept_lost_commits=accept_lost_commits)
        backend.set_expectation(expectation)
        return backend

    def set_expectation(self, expectation: str) -> None:
        """Answer searches as `expectation` says from now on (module docstring)."""
        if expectation not in EXPECTATIONS:
            raise UsageError(f"expectation must be one of {', '.join(EXPECTATIONS)}, "
                             f"not {expectation!r}")
        self.expectation = expectation

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

    # ----- writing --------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[ReferenceTransaction]:
        """The store's write transaction; its index rows are added when it commits
        (with the windows it leaves waiting for reconcile when it streamed and handed
        windows whole: `maintenance`)."""
        from engine.backends.reference.transaction import ReferenceTransaction  # writes only

        try:
            with self.store.transaction() as transaction:
                yield ReferenceTransaction(transaction, self.config, self._streamed)
        finally:  # nothing it held outlives it, committed or not
            if self._streamed is not None:
                self._streamed.begin()

    def commit_generation(self) -> int:
        """The transaction id of the log's last commit (a transaction that wrote nothing
        commits nothing; a compaction keeps the count)."""
        return self.store.generation

    def generation_files(self) -> str:
        """The newest transcript log file (the count is its last commit's id)."""
        return f"the transcript log ({self.store.newest_log_location()} is its newest file)"

    # ----- reading --------------------------------------------------------------------

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
        """Run the store-level search of behaviour.md §5 (as `expectation` says)."""
        if self.expectation == "postgres":
            return self._postgres_search(request)
        return search_index(
            self.index.view(), self._lazy_windows(), check_request(request), self.analyzer,
            indexing=self.index_status(), config=self.config, scopes=self._scopes,
        )

    def search_answer(self, request: SearchRequest,
                      rank_bound: float | None = None) -> PartitionAnswer:
        """`search` as a partition of a merged search answers: snippets cut only for the
        hits the merge keeps (`engine.search.merge.PartitionAnswer`); with `rank_bound`,
        without the rows the merge cannot keep (`engine.search.kernel.run_kernel`)."""
        if self.expectation == "postgres":
            return PartitionAnswer(self._postgres_search(request))
        return search_answer(
            self.index.view(), self._lazy_windows(), check_request(request), self.analyzer,
            indexing=self.index_status(), config=self.config, scopes=self._scopes,
            rank_bound=rank_bound,
        )

    def _postgres_search(self, request: SearchRequest) -> SearchResult:
        """What the postgres backend answers (`engine.search.postgres_mode`, imported
        here: the default mode never loads the `pg` profile's parser)."""
        from engine.search.postgres_mode import RowVectors, expected_search

        if self._postgres_rows is None:
            self._postgres_rows = RowVectors()
        view = self.index.view()
        return expected_search(view.documents, self.store.windows(), check_request(request),
                               rebuild_pending(view), indexing=self.index_status(),
                               vectors=self._postgres_rows)

    def search_scope(self, request: SearchRequest) -> Scope:
        """The scope a search of `request` would use now (from the scope cache)."""
        return self._scopes.select(self.index.view(), self._lazy_windows(),
                                   check_request(request))

    def _lazy_windows(self) -> ScopedWindows:
        """The windows, read only if the scope cache has to select a scope, and then as
        scope rows (`TranscriptStore.scope_rows`: no window need be built)."""
        store = self.store
        return ScopedWindows(store.windows, store.scope_rows)

    def explain(self, request: SearchRequest) -> SearchExplanation:
        """The search explained: per hit, its bm25 terms and excerpt choice."""
        from engine.search.explain import explain_search  # only `explain` needs it

        return explain_search(self.index.view(), self._windows(), check_request(request),
                              self.analyzer, config=self.config)

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
