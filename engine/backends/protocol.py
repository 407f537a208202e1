"""What a backend can do: one `typing.Protocol` per capability, and the `Backend` they make.

Owns: the interfaces the conformance suite, the importers, the RPC server, the CLI and
the benchmarks talk to, and `require_capability`, the one check (with the one message)
for a capability a backend lacks. Must not touch: any implementation.

Capabilities (each `runtime_checkable`, so a caller asks `isinstance(backend, X)` instead
of looking a method up by name):

| protocol           | methods                                     | who has it |
|--------------------|---------------------------------------------|------------|
| `SearchBackend`    | `name`, `search`, `stats`, `close`          | every backend |
| `TranscriptWriter` | `transaction`                               | every backend, `TranscriptStore` |
| `TranscriptReader` | `windows`, `window`, `windows_of`, `session_keys`, `events`, `event_count` | every backend, `TranscriptStore` |
| `Maintenance`      | `reconcile`, `index_status`                 | backends whose index can lag the transcripts (reference, SQLite) |
| `ReconcilesInBatches` | `windows_needing_reconcile`, `reconcile_batch`, `sweep_orphans` | the same, for the background worker (`engine.store.background`) |
| `Refreshable`      | `refresh`                                   | backends whose readers see a snapshot taken at open (reference) |
| `Explainable`      | `explain`                                   | backends that can show their ranking inputs (reference) |
| `Interruptible`    | `interrupt`                                 | backends whose running search another thread can stop (SQLite; a partitioned store forwards it) |
| `AnswersLate`      | `search_answer`                             | backends whose hits can get their snippets after a merge chose them (reference) |
| `Compactable`      | `compact`                                   | backends that can reclaim the space of deleted data (reference: the transcript log; SQLite: `VACUUM`; a partitioned store: every partition) |
| `Generational`     | `commit_generation`, `generation_files`     | backends that count their commits durably (reference: the log's transaction id; SQLite: a row committed with each transaction), so that a store can tell whether a commit landed (`engine.store.commit_journal`) |

`Backend` is the first three together: what `engine.store.registry.open_backend`
returns. A backend declares what it implements by naming the protocols as its bases
(`class ReferenceBackend(Backend, Maintenance, ...)`); `isinstance` still checks the
methods structurally, so a test double that has the methods passes without declaring.

A backend without `Maintenance` indexes every commit at once and is never behind, so
callers that reconcile "when needed" skip it; asking such a backend to reconcile
explicitly is an error (`require_capability`). A backend without `Refreshable` always
reads the latest commit.

Writes go through `TranscriptWriter.transaction()`: a context manager yielding a
`BackendTransaction`; leaving the block normally commits durably (fsync or
`synchronous=FULL`), leaving it with an exception discards everything written in it.
`engine.transcript.store.TranscriptStore`'s transaction has the same write methods, so an
importer written against this protocol also loads a bare store. Every backend checks
each write with `engine.transcript.validation` first, so all refuse the same inputs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

from engine.errors import UsageError
from engine.model import SearchRequest, SearchResult, SessionWindow, StoredEvent
from engine.search.merge import PartitionAnswer

if TYPE_CHECKING:  # only annotations: a search never loads the log compaction's modules
    from engine.backends.reconcile_batch import ReconcileBatch  # nor reconciles
    from engine.progress import StepProgress  # nor the progress display
    from engine.transcript.compaction_outcome import CompactionOutcome

Capability = TypeVar("Capability")


def __getattr__(name: str) -> Any:
    """`ReconcileBatch`, the value of `ReconcilesInBatches.reconcile_batch`, defined in
    `engine.backends.reconcile_batch` and loaded on first use of the name here (PEP 562),
    so that loading the protocols, as every search does, defines no dataclass of it."""
    if name == "ReconcileBatch":
        from engine.backends.reconcile_batch import ReconcileBatch

        return ReconcileBatch
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@runtime_checkable
class BackendTransaction(Protocol):
    """The write operations of one all-or-nothing transaction."""

    def put_window(self, window: SessionWindow) -> None:
        """Insert a session window, or replace the metadata of an existing one."""
        ...

    def append_event(
        self, session_id: str, event: dict[str, Any], created_at: float | None = None
    ) -> int:
        """Append one event to a window that exists; return its `seq` (0-based)."""
        ...

    def replace_transcript(
        self, session_id: str, events: Sequence[dict[str, Any]],
        created_at: float | Sequence[float | None] | None = None,
    ) -> int:
        """Replace every event of a window that exists by `events` (seq 0, 1, ...), each
        stamped `created_at` (None: the time of the write), or, when `created_at` is a
        list or tuple, by its own item (one per event: `UsageError` otherwise); return how
        many. Every event is checked with its stamp as `append_event` checks it before
        anything is written. The window's
        index is rebuilt in this transaction, or, for a replacement above the limits of
        behaviour.md §8.2 (`engine.backends.replacement`), the window is marked dirty:
        its old rows stay hidden until reconcile rebuilds it."""
        ...

    def delete_session(self, session_key: str) -> int:
        """Delete every window of `session_key` (and their index rows); return the count."""
        ...


@runtime_checkable
class SearchBackend(Protocol):
    """Answers the store-level search of behaviour.md §5 and counts what it holds."""

    name: str

    def search(self, request: SearchRequest) -> SearchResult:
        """Run the store-level search of behaviour.md §5."""
        ...

    def stats(self) -> dict[str, int]:
        """Counts: agents, sessions, windows, events, bytes, then the backend's own."""
        ...

    def close(self) -> None:
        """Release files, locks and connections."""
        ...


@runtime_checkable
class TranscriptWriter(Protocol):
    """Writes windows and events in all-or-nothing transactions (a writer only)."""

    def transaction(self) -> AbstractContextManager[BackendTransaction]:
        """Begin a write transaction (the store's single writer only)."""
        ...


@runtime_checkable
class TranscriptReader(Protocol):
    """Reads the transcripts as stored (never the index): history and importers use it."""

    def windows(self) -> list[SessionWindow]:
        """Every session window, in first-insertion order."""
        ...

    def window(self, session_id: str) -> SessionWindow:
        """One window (`UnknownSession` if absent)."""
        ...

    def windows_of(self, session_key: str) -> list[SessionWindow]:
        """The windows of one session key, in the order they joined it."""
        ...

    def session_keys(self) -> list[str]:
        """Every session key holding a window, in order of first appearance."""
        ...

    def events(self, session_id: str) -> list[StoredEvent]:
        """Every event of a window, in `seq` order."""
        ...

    def event_count(self, session_id: str) -> int:
        """How many events a window has."""
        ...


@runtime_checkable
class Backend(SearchBackend, TranscriptWriter, TranscriptReader, Protocol):
    """A store plus a search index, created for one backend kind and remembering it."""


@runtime_checkable
class Maintenance(Protocol):
    """An index that can lag its transcripts (§8): windows to rebuild, and the flag."""

    def reconcile(self, progress: StepProgress | None = None) -> int:
        """Rebuild every window that needs it and drop orphaned rows (writer only);
        return the number of windows rebuilt, calling `progress(done, total)` before the
        first and after each."""
        ...

    def index_status(self) -> bool:
        """The `indexing` flag of §8.4: True while some window still needs work."""
        ...


@runtime_checkable
class ReconcilesInBatches(Protocol):
    """`Maintenance.reconcile` in pieces, each its own short write transaction, so that
    the background worker (`engine.store.background`) can stop between them and let
    application writes in. Writer only; the caller serializes the calls with every
    other use of the backend."""

    def windows_needing_reconcile(self) -> list[str]:
        """Session ids of the windows that need work (§8.3), in the order a reconcile
        rebuilds them (session id, as UTF-8 bytes)."""
        ...

    def reconcile_batch(self, pending: Sequence[str], max_events: int,
                        stop: Callable[[], bool]) -> ReconcileBatch:
        """In one transaction, rebuild the windows at the front of `pending` that still
        need it, until about `max_events` events were read (at least one window) or
        `stop()` is true (checked before each window, the first included)."""
        ...

    def sweep_orphans(self) -> int:
        """Drop index rows and states of windows the transcripts no longer have, in one
        transaction; the number of such windows."""
        ...


@runtime_checkable
class Refreshable(Protocol):
    """A reader that sees the commits made when it opened, until it refreshes."""

    def refresh(self) -> None:
        """See what the writer committed since opening or the last refresh."""
        ...


@runtime_checkable
class Explainable(Protocol):
    """Shows why each hit ranks where it does (`session-search explain`)."""

    def explain(self, request: SearchRequest) -> Any:
        """The search of `request` with, per hit, its bm25 inputs and excerpt choice
        (the value is the backend's own; see `ReferenceBackend.explain`)."""
        ...


@runtime_checkable
class Interruptible(Protocol):
    """A search running in one thread can be stopped from another (the tools' time
    budgets use it: `engine.agent_tools.budgets`)."""

    def interrupt(self) -> None:
        """Make the search running now fail soon (a `StoreError`); safe to call from any
        thread, and a no-op when nothing runs."""
        ...


@runtime_checkable
class SearchesPartitions(Protocol):
    """Answers several of its partitions for one request in one call (the partitions of
    a search across agents), the same answers as `search` on each."""

    @classmethod
    def search_partitions(cls, partitions: Sequence[Any],
                          request: SearchRequest) -> list[SearchResult]:
        """`[partition.search(request) for partition in partitions]`, each partition an
        instance of `cls`."""
        ...


@runtime_checkable
class AnswersLate(Protocol):
    """Answers as a partition of a merged search: snippets only for the hits kept."""

    def search_answer(self, request: SearchRequest,
                      rank_bound: float | None = None) -> PartitionAnswer:
        """`search(request)` with every snippet left empty, and the `finish` that gives
        the hits at some positions whole (`engine.search.merge.PartitionAnswer`).

        `rank_bound` (relevance order): no hit ranked worse (a score below `-rank_bound`)
        can be in the merged answer, so when more than the limit of rows match, such
        rows may be left out of the hits; `truncated` is then True, as it would be."""
        ...


@runtime_checkable
class Diagnosable(Protocol):
    """Says what is wrong with its files (`session-search stats` and `verify` report it)."""

    def problems(self) -> list[Any]:
        """What opening found wrong or worth knowing: values with `serious` (bool),
        `location` (a file) and `with_advice()` (one line for users); see
        `engine.transcript.store_problem.StoreProblem`."""
        ...


@runtime_checkable
class Compactable(Protocol):
    """Reclaims the space deleted data still takes (`session-search compact`)."""

    def compact(self) -> CompactionOutcome:
        """Rewrite what holds deleted data without it (writer only), changing nothing
        a read sees; return what was reclaimed."""
        ...


@runtime_checkable
class Generational(Protocol):
    """Counts its commits durably: the count moves in the same atomic commit as the
    data, so a writer that read it before a commit knows afterwards, even from another
    process after a crash, whether that commit landed."""

    def commit_generation(self) -> int:
        """How many transactions have committed (0 for a new partition); a commit
        that changed nothing may leave it as it was."""
        ...

    def generation_files(self) -> str:
        """The file (or files) that hold the count, named for a message when it is
        lower than the store recorded (they went back, or lost their newest commits)."""
        ...


#: Every capability, in the order of the table above.
CAPABILITIES: tuple[type, ...] = (
    SearchBackend, TranscriptWriter, TranscriptReader, Maintenance, ReconcilesInBatches,
    Refreshable, Explainable, Interruptible,
    Diagnosable, AnswersLate, Compactable, Generational,
)


def capability_members(capability: type) -> tuple[str, ...]:
    """The attributes a capability asks for, sorted.

    >>> capability_members(Maintenance)
    ('index_status', 'reconcile')
    """
    names: set[str] = set()
    for klass in capability.__mro__:
        if klass is not Protocol and getattr(klass, "_is_protocol", False):
            names.update(name for name in vars(klass) if not name.startswith("_"))
            names.update(vars(klass).get("__annotations__", {}))
    return tuple(sorted(names))


def missing_capability(backend: object, capability: type, action: str) -> str:
    """The message for `action` on a backend that lacks `capability`.

    >>> class Plain:
    ...     name = "plain"
    >>> missing_capability(Plain(), Maintenance, "reconcile")
    "reconcile needs a backend with Maintenance (index_status, reconcile); backend 'plain' does not offer it"
    """
    name = getattr(backend, "name", type(backend).__name__)
    members = ", ".join(capability_members(capability))
    return (f"{action} needs a backend with {capability.__name__} ({members}); "
            f"backend {name!r} does not offer it")


_CAPABILITIES_OF_CLASSES: dict[tuple[type, type], bool] = {}


def has_capability(value: object, capability: type) -> bool:
    """`isinstance(value, capability)` for a runtime-checkable capability, remembered per
    class: every capability here is a set of methods a backend class defines, never an
    attribute one instance has, so the class decides. (A Protocol's own `isinstance`
    lists its members on every call; a search asks once per partition.)

    >>> has_capability(object(), Backend), has_capability(object(), Backend)
    (False, False)
    """
    key = (type(value), capability)
    known = _CAPABILITIES_OF_CLASSES.get(key)
    if known is None:
        known = _CAPABILITIES_OF_CLASSES[key] = isinstance(value, capability)
    return known


def require_capability(backend: object, capability: type[Capability], action: str) -> Capability:
    """`backend` as a `capability`, or `UsageError` naming the backend and what it lacks."""
    if not isinstance(backend, capability):
        raise UsageError(missing_capability(backend, capability, action))
    return backend
