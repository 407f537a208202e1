"""The change feed: what committed transactions changed, told to whoever follows a store.

Owns: the change values (`WindowPut`, `EventAppended`, `TranscriptReplaced`,
`SessionDeleted`), the change a log record stands for (`change_of`; a `replace` record
and the event records of its new transcript make one `TranscriptReplaced`,
`changes_of`), and the commit hooks a store calls after each commit
(`ChangeFeed`). Must not touch: files, the catalog or the store (a feed is handed what
was committed and reads nothing), nor what a follower does with a change (an index
backend decides that).

A store is followed in two ways that yield the same values: a commit hook is called
with `(generation, changes)` after the fsync of each later transaction (live, in the
writer), and `TranscriptStore.changes_since(generation)` re-reads the changes of the
transactions after `generation` from the log (catching up, in any handle).

A large transaction (an import) need not be held whole until its commit: a
`StreamingFollower` registered with `stream_to(follower, after)` is handed an open
transaction's changes as they are written, once it holds `after` of them (`start` gets
those first, and returns the function that takes each later one); the commit hooks are
then called with no change (the follower had them all), and `discard` is called instead
when the transaction ends without committing. So what the follower builds from them
(an index) must stay its own until the commit hook tells it the generation.

The change values are NamedTuples, not frozen dataclasses: opening a store (a search's
start-up) imports this module, and a NamedTuple's class costs a fraction of a frozen
dataclass's to make (an import makes one value an event, also quicker). A change equals
only a change of its own kind (`engine.light_values.same_kind_equal`), never the log
record it stands for, which may have the same fields.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import NamedTuple, Protocol

from engine.codec.log_file import (
    DeleteSessionRecord,
    EventRecord,
    LogRecord,
    ReplaceRecord,
    WindowRecord,
)
from engine.light_values import same_kind_equal, same_kind_unequal
from engine.model import SessionWindow, StoredEvent
from engine.transcript.log_positions import CommittedTransaction


class WindowPut(NamedTuple):
    """A window was inserted or its metadata replaced."""

    window: SessionWindow

    __eq__ = same_kind_equal
    __ne__ = same_kind_unequal
    __hash__ = tuple.__hash__


class EventAppended(NamedTuple):
    """An event was appended to a window."""

    event: StoredEvent

    __eq__ = same_kind_equal
    __ne__ = same_kind_unequal
    __hash__ = tuple.__hash__


class TranscriptReplaced(NamedTuple):
    """A window's events were replaced by `events` (seq 0, 1, ...); `rebuild_deferred`
    says whether its index rebuild waits for reconcile (behaviour.md §8.2)."""

    session_id: str
    events: tuple[StoredEvent, ...]
    rebuild_deferred: bool

    __eq__ = same_kind_equal
    __ne__ = same_kind_unequal
    __hash__ = tuple.__hash__


class SessionDeleted(NamedTuple):
    """Every window of `session_key` (listed) was deleted, with its events."""

    session_key: str
    session_ids: tuple[str, ...]

    __eq__ = same_kind_equal
    __ne__ = same_kind_unequal
    __hash__ = tuple.__hash__


Change = WindowPut | EventAppended | TranscriptReplaced | SessionDeleted
CommitHook = Callable[[int, list[Change]], None]
#: Takes one change of the open transaction, just after its record was written.
ChangeTaker = Callable[[Change], None]


class TransactionWindows(Protocol):
    """The windows as an open transaction sees them (a `StoreTransaction` does)."""

    def window(self, session_id: str) -> SessionWindow:
        """The window as the transaction sees it (UnknownSession if absent)."""
        ...


class StreamingFollower(Protocol):
    """Takes a large open transaction's changes as they are written (module docstring)."""

    def start(self, windows: TransactionWindows, written: list[Change]) -> ChangeTaker:
        """The transaction holds `written` (in order) so far; return what takes the rest."""
        ...

    def discard(self) -> None:
        """The transaction that was started ended without committing."""
        ...


def change_of(record: LogRecord) -> Change:
    """The change a (non-commit) log record stands for (a `replace` record alone: a
    `TranscriptReplaced` without its events; `changes_of` gathers them).

    >>> change_of(DeleteSessionRecord("agent:main:main", ("w1",)))
    SessionDeleted(session_key='agent:main:main', session_ids=('w1',))
    """
    match record:
        case WindowRecord(window=window):
            return WindowPut(window)
        case EventRecord():
            return EventAppended(
                StoredEvent(record.session_id, record.seq, record.event, record.created_at)
            )
        case ReplaceRecord():
            return TranscriptReplaced(record.session_id, (), record.rebuild_deferred)
        case DeleteSessionRecord():
            return SessionDeleted(record.session_key, record.session_ids)
    raise TypeError(f"no change for {record!r}")


def changes_of(transactions: Iterable[CommittedTransaction]) -> Iterator[tuple[int, Change]]:
    """Every change of `transactions`, in order, with its transaction's generation; a
    `replace` record and the `event_count` event records after it are one change."""
    for transaction in transactions:
        replaced: ReplaceRecord | None = None
        gathered: list[StoredEvent] = []
        for _position, record in transaction.records:
            if replaced is not None:
                assert isinstance(record, EventRecord)  # the catalog's replay checked it
                gathered.append(
                    StoredEvent(record.session_id, record.seq, record.event, record.created_at))
                if len(gathered) < replaced.event_count:
                    continue
                record_change: Change = TranscriptReplaced(
                    replaced.session_id, tuple(gathered), replaced.rebuild_deferred)
                replaced, gathered = None, []
                yield transaction.transaction_id, record_change
            elif isinstance(record, ReplaceRecord) and record.event_count:
                replaced = record
            else:
                yield transaction.transaction_id, change_of(record)


class ChangeFeed:
    """The commit hooks of one store, called in the order they were added.

    >>> feed, seen = ChangeFeed(), []
    >>> feed.add(lambda generation, changes: seen.append((generation, changes)))
    >>> feed.is_followed
    True
    >>> feed.publish(3, [SessionDeleted("k", ("w",))])
    >>> seen
    [(3, [SessionDeleted(session_key='k', session_ids=('w',))])]
    """

    __slots__ = ("_hooks", "streaming")

    def __init__(self) -> None:
        """No hooks yet."""
        self._hooks: list[CommitHook] = []
        #: The follower of large open transactions and how many changes make one large.
        self.streaming: tuple[StreamingFollower, int] | None = None

    @property
    def is_followed(self) -> bool:
        """Whether any hook listens (only then does a transaction keep its changes)."""
        return bool(self._hooks)

    def add(self, hook: CommitHook) -> None:
        """Call `hook(generation, changes)` after each later commit."""
        self._hooks.append(hook)

    def publish(self, generation: int, changes: Sequence[Change]) -> None:
        """Call every hook with `generation` and a list of its own of `changes` (a hook
        added by another hook waits for the next commit)."""
        for hook in list(self._hooks):
            hook(generation, list(changes))

    def stream_to(self, follower: StreamingFollower, after: int) -> None:
        """Hand `follower` each open transaction's changes once it holds `after` of them."""
        self.streaming = (follower, after)

    def clear(self) -> None:
        """Drop every hook and the streaming follower."""
        self._hooks.clear()
        self.streaming = None
