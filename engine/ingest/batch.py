"""One import: the open write transaction plus what the import has added so far.

Owns: the rules every input form shares — a window is added once (never a duplicate of
the store or of an earlier source), a key keeps at most one current window, events go
to windows of this import only — the replacement of stored windows' transcripts (with
`replace`, or `replace_stored` for a live import), and the counts the import reports.
Must not touch: file formats (`corpus.py`, `flat.py`) or how the transaction stores
things.

With `replace` (`session-search import --replace`), a window the store already holds is
not a `DuplicateImport`: its metadata is written again and its transcript replaced by
the events this import reads for it (`BackendTransaction.replace_transcript`, in the
same transaction, when `finish` runs after the sources are read; behaviour.md §8.2
decides whether its index is rebuilt then or by reconcile). A live import
(`live_state.py`) replaces a stored window's transcript the same way
(`replace_stored`), whatever `replace` says. Its events are checked as they are read,
each with its receipt stamp (its own `created_at`, e.g. an OpenClaw database's, or the
import's `received_at`), so a bad one is reported at its file and line, and kept in
memory with its stamp until `finish` (a replacement is written whole, every event with
its stamp). A window read twice in one import is still refused.

Besides the windows and events added, the report counts the messages whose role is
never indexed (only `user` and `assistant` messages are searchable, behaviour.md §2.3), so
that an import of tool results or system prompts says they will not be found.

An `ImportBatch` lives inside `target.transaction()`: when any check here (or any
reader) raises, the caller's `with` block ends with the exception and the transaction is
discarded, so nothing of the import is visible.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from engine.backends.protocol import BackendTransaction
from engine.errors import DuplicateImport, InputError, MalformedInput, UnknownSession
from engine.model import SessionWindow, StoredEvent
from engine.progress import StepProgress
from engine.transcript.events import SEARCHABLE_ROLES
from engine.transcript.validation import check_event, check_shaped_event
from engine.transcript.windows import chain_problems

#: How many records (windows + events) pass between two progress reports.
PROGRESS_EVERY = 256
#: The most events of one window held to be handed whole (`ImportBatch.whole_transcript`):
#: a longer window is appended event by event, as before, so an import holds at most
#: this many events whatever the corpus.
WHOLE_WINDOW_EVENTS = 4096


@dataclass(frozen=True, slots=True)
class ImportReport:
    """What one import added: its sources (with their forms) and the counts.

    `unindexed_roles` counts, per role, the messages stored that search never sees
    (roles other than `user` and `assistant`), in role order.
    """

    sources: tuple[tuple[str, str], ...]
    windows: int
    events: int
    notes: tuple[str, ...] = ()
    unindexed_roles: tuple[tuple[str, int], ...] = ()
    #: Windows of the store whose transcript this import replaced (`--replace`).
    replaced: int = 0
    #: Windows of the store that this import appended new messages to (a flat chat log
    #: that grew since it was imported).
    extended: int = 0
    #: Bytes the store reclaimed when it compacted after replacing (None: it did not).
    reclaimed: int | None = None

    def to_json(self) -> dict[str, Any]:
        """The report as the `import --json` output."""
        return {
            "sources": [{"path": path, "form": form} for path, form in self.sources],
            "windows": self.windows,
            "replaced": self.replaced,
            "extended": self.extended,
            "reclaimedBytes": self.reclaimed,
            "events": self.events,
            "unindexedRoles": dict(self.unindexed_roles),
            "notes": list(self.notes),
        }


@runtime_checkable
class TranscriptAppender(Protocol):
    """A transaction that takes a new window's whole transcript at once, its events
    checked by the importer (`ImportBatch.whole_transcript`): the SQLite backend's
    indexes it once, from its final active branch; the reference backend's appends the
    events one by one without checking them again, and when they leave the window dirty
    its streamed index rebuilds it with the commit instead of indexing them
    (`engine.backends.reference.streaming`); the partitioned store's routes it."""

    def append_transcript(self, session_id: str, events: Sequence[dict[str, Any]],
                          created_at: Sequence[float | None]) -> int:
        """Append `events`, each already checked (`validation.check_event`) and stamped
        by its item of `created_at`, to a window that holds none yet; how many."""
        ...


class ShapedAppender(Protocol):
    """A transaction that appends an event an importer already checked with
    `events.validation_problem` (a reader's `shaped` event) making only the rest of
    `check_event` (`validation.check_shaped_event`), so the event is not checked twice:
    the reference backend's and the partitioned store's (which routes it)."""

    def append_shaped_event(self, session_id: str, event: dict[str, Any],
                            created_at: float | None = None) -> int:
        """`append_event` of an event found shaped; its seq."""
        ...


class ImportBatch:
    """The state of one import inside its transaction."""

    def __init__(
        self,
        transaction: BackendTransaction,
        existing_windows: Iterable[SessionWindow],
        received_at: float | None = None,
        progress: StepProgress | None = None,
        expected_lines: int = 0,
        replace: bool = False,
        read_events: Callable[[str], list[StoredEvent]] | None = None,
        whole_windows: bool = False,
        held_events: int = WHOLE_WINDOW_EVENTS,
    ) -> None:
        self.transaction = transaction
        #: Hand each new window's transcript to the transaction whole
        #: (`whole_transcript`); only an import that reconciles after it does.
        self.whole_windows = whole_windows and isinstance(transaction, TranscriptAppender)
        #: Appends a `shaped` event without checking it twice, when the transaction can
        #: (a `ShapedAppender`'s method, asked by name), else `append_event`.
        appender = getattr(transaction, "append_shaped_event", None)
        self._append_shaped: Callable[[str, dict[str, Any], float | None], int] = (
            appender if appender is not None else transaction.append_event)
        #: The most events of one window held to hand it whole (`WHOLE_WINDOW_EVENTS`).
        self.held_events = held_events
        #: Windows this import added that hold no event yet.
        self._fresh: set[str] = set()
        #: The window whose transcript is being read whole: its id, events and stamps.
        self._holding: tuple[str, list[dict[str, Any]], list[float | None]] | None = None
        #: The events a stored window holds (for a flat log that continues one).
        self.read_events = read_events
        #: Replace the transcript of a window the store holds instead of refusing it.
        self.replace = replace
        #: session id -> the events read so far (each with its receipt stamp) for a
        #: stored window being replaced.
        self.replacements: dict[str, list[tuple[dict[str, Any], float | None]]] = {}
        self.received_at = received_at
        #: Called as `progress(lines read, expected lines)` every `PROGRESS_EVERY` records.
        self.progress = progress
        self.expected_lines = expected_lines
        #: source file -> the last line a record came from; their sum is the lines read.
        self._last_line: dict[str, int] = {}
        self.lines_read = 0
        self.windows: dict[str, SessionWindow] = {}
        self.stored_ids: set[str] = set()
        #: session key -> session id of its current window (the first one seen).
        self.current_by_key: dict[str, str] = {}
        for window in existing_windows:
            self.windows[window.session_id] = window
            self.stored_ids.add(window.session_id)
            if window.current:
                self.current_by_key.setdefault(window.session_key, window.session_id)
        self.added_at: dict[str, str] = {}
        self.window_count = 0
        self.replaced_count = 0
        self.extended_ids: set[str] = set()
        self.event_count = 0
        #: role -> messages of that role that are stored but never indexed.
        self.unindexed_roles: Counter[str] = Counter()
        #: Things the user should know that are not errors (e.g. a skipped file).
        self.notes: list[str] = []

    # ---- windows --------------------------------------------------------------------

    def check_new(self, session_id: str, path: str, line: int | None) -> None:
        """Raise `DuplicateImport` when `session_id` is in the store or already imported."""
        where = f"{path}:{line}" if line is not None else path
        if session_id in self.stored_ids and not self.replace:
            raise DuplicateImport(
                f'{where}: session window "{session_id}" is already in the store; '
                "nothing was imported")
        if session_id in self.added_at:
            raise DuplicateImport(
                f'{where}: session window "{session_id}" was already read from '
                f"{self.added_at[session_id]}; nothing was imported")

    def is_replacement(self, session_id: str) -> bool:
        """Whether `session_id` names a stored window whose transcript this import replaces."""
        return self.replace and session_id in self.stored_ids

    def start_replacement(self, session_id: str, path: str, line: int | None) -> None:
        """Replace the transcript of stored window `session_id` (its metadata unchanged)
        by the events read for it from here on."""
        self.check_new(session_id, path, line)
        self.replacements[session_id] = []
        self.added_at[session_id] = f"{path}:{line}" if line is not None else path
        self.replaced_count += 1

    def replace_stored(self, session_id: str, path: str) -> None:
        """Replace the transcript of stored window `session_id` by the events appended
        for it from here on (a live import whose source shrank or changed; its metadata
        is `update_window`'s). Refused for a window this import already added or
        replaces."""
        if session_id not in self.stored_ids:
            raise UnknownSession(f"unknown session id {session_id!r}")
        if session_id in self.replacements:
            raise DuplicateImport(
                f'{path}: session window "{session_id}" was already read from '
                f"{self.added_at.get(session_id, path)}; nothing was imported")
        self.replacements[session_id] = []
        self.added_at.setdefault(session_id, path)
        self.replaced_count += 1

    def current_of(self, session_key: str) -> SessionWindow | None:
        """The current window of `session_key` (in the store or added by this import)."""
        session_id = self.current_by_key.get(session_key)
        return self.windows[session_id] if session_id is not None else None

    def add_window(self, window: SessionWindow, path: str, line: int | None) -> None:
        """Add a new window; its key must not already have another current window."""
        self.check_new(window.session_id, path, line)
        replacing = self.is_replacement(window.session_id)
        if replacing:
            stored = self.windows[window.session_id]
            if self.current_by_key.get(stored.session_key) == window.session_id:
                del self.current_by_key[stored.session_key]
        if window.current:
            holder = self.current_of(window.session_key)
            if holder is not None:
                raise MalformedInput(
                    path, line,
                    f'key "{window.session_key}" already has a current window '
                    f'"{holder.session_id}"; mark one of them "current": false')
        try:
            self.transaction.put_window(window)
        except MalformedInput:
            raise
        except InputError as error:
            raise MalformedInput(path, line, str(error)) from None
        self.windows[window.session_id] = window
        if window.current:
            self.current_by_key[window.session_key] = window.session_id
        self.added_at[window.session_id] = f"{path}:{line}" if line is not None else path
        if replacing:
            self.replacements[window.session_id] = []
            self.replaced_count += 1
        else:
            self.window_count += 1
            self._fresh.add(window.session_id)
        self._counted(path, line)

    def retire(self, window: SessionWindow) -> SessionWindow:
        """Make a current window retained (`current=False`) and write the change."""
        retained = dataclasses.replace(window, current=False)
        self.transaction.put_window(retained)
        self.windows[window.session_id] = retained
        if self.current_by_key.get(window.session_key) == window.session_id:
            del self.current_by_key[window.session_key]
        return retained

    def extend(self, session_id: str, path: str) -> None:
        """Let this import append events to window `session_id`, which the store already
        holds (a live import continuing a transcript that grew)."""
        self.added_at.setdefault(session_id, path)

    def continue_stored(self, session_id: str, path: str, line: int) -> list[StoredEvent]:
        """Let a flat chat log continue stored window `session_id` (it is read from here
        on; refused when this import already read it): return the events it holds."""
        if session_id in self.added_at:
            raise DuplicateImport(
                f'{path}:{line}: session window "{session_id}" was already read from '
                f"{self.added_at[session_id]}; nothing was imported")
        if self.read_events is None:
            raise DuplicateImport(
                f'{path}:{line}: session window "{session_id}" is already in the store; '
                "nothing was imported")
        self.added_at[session_id] = f"{path}:{line}"
        return self.read_events(session_id)

    def update_window(self, window: SessionWindow, path: str) -> None:
        """Write new metadata for a window the store holds or this import added; a key
        still keeps at most one current window."""
        if window.current:
            holder = self.current_of(window.session_key)
            if holder is not None and holder.session_id != window.session_id:
                raise MalformedInput(
                    path, None,
                    f'key "{window.session_key}" already has a current window '
                    f'"{holder.session_id}"')
        try:
            self.transaction.put_window(window)
        except InputError as error:
            raise MalformedInput(path, None, str(error)) from None
        previous = self.windows.get(window.session_id)
        if previous is not None and self.current_by_key.get(
                previous.session_key) == window.session_id:
            del self.current_by_key[previous.session_key]
        self.windows[window.session_id] = window
        if window.current:
            self.current_by_key[window.session_key] = window.session_id

    def check_chains(self, path: str) -> None:
        """Raise `MalformedInput` when the windows' links now form a cycle."""
        for problem in chain_problems(self.windows.values()):
            if "cycle" in problem:
                raise MalformedInput(path, None, problem)

    # ---- events ---------------------------------------------------------------------

    @contextmanager
    def whole_transcript(self, session_id: str) -> Iterator[None]:
        """Read one source's events of window `session_id` as its whole transcript: when
        the import hands windows whole (`whole_windows`) and this import added the window
        and gave it no event yet, the events `append`ed inside the block are held (each
        checked once, as it is read) and handed to the transaction at its end, in one
        `append_transcript` (the SQLite backend indexes the window once from its final
        active branch instead of leaving a rewound window to reconcile); otherwise they
        are appended one by one, and so are those of a window that reaches
        `held_events` (`WHOLE_WINDOW_EVENTS` unless told), from there on, so that the events held stay few whatever
        the corpus. Only a block that ends without an exception hands them over (one
        that raised fails the import)."""
        if not self.whole_windows or session_id not in self._fresh or self._holding is not None:
            yield
            return
        self._fresh.discard(session_id)
        holding = self._holding = (session_id, [], [])
        try:
            yield
        finally:
            self._holding = None
        _, events, stamps = holding
        if events:
            assert isinstance(self.transaction, TranscriptAppender)
            self.transaction.append_transcript(session_id, events, stamps)

    def append(self, session_id: str, event: dict[str, Any], path: str, line: int | None,
               *, created_at: float | None = None, shaped: bool = False) -> int:
        """Append the event read at `path:line` to a window this import added; return seq.
        Its receipt time is `created_at`, else the import's `received_at`. `shaped`: the
        reader already checked it with `events.validation_problem`, so that check is not
        run again on it when it is held (`whole_transcript`).

        A value the store refuses (an `InputError`, e.g. a lone surrogate it cannot
        encode) is reported as `MalformedInput` at that line.
        """
        if session_id not in self.added_at:
            raise DuplicateImport(
                f'events for window "{session_id}" can only be imported with the window')
        replacement = self.replacements.get(session_id)
        holding = self._holding
        try:
            stamp = self.received_at if created_at is None else created_at
            if holding is not None and holding[0] == session_id:
                (check_shaped_event if shaped else check_event)(session_id, event, stamp)
                seq = len(holding[1])
                holding[1].append(event)
                holding[2].append(stamp)
                if len(holding[1]) >= self.held_events:  # too long to hold: as before
                    self._holding = None
                    for held, held_stamp in zip(holding[1], holding[2], strict=True):
                        self._append_shaped(session_id, held, held_stamp)  # checked above
                    holding[1].clear()
            elif replacement is None:
                self._fresh.discard(session_id)
                seq = (self._append_shaped if shaped else self.transaction.append_event)(
                    session_id, event, stamp)
            else:
                check_event(session_id, event, stamp)
                seq = len(replacement)
                replacement.append((event, stamp))
        except MalformedInput:
            raise
        except InputError as error:
            raise MalformedInput(path, line, str(error)) from None
        self.event_count += 1
        role = _unindexed_role(event)
        if role is not None:
            self.unindexed_roles[role] += 1
        self._counted(path, line)
        return seq

    def finish(self) -> None:
        """Write the replacements read (after every source, inside the transaction),
        each event with its own receipt stamp."""
        for session_id, stamped in self.replacements.items():
            self.transaction.replace_transcript(session_id, [event for event, _ in stamped],
                                                [stamp for _, stamp in stamped])
        self.replacements.clear()

    # ---- progress -------------------------------------------------------------------

    def report_progress(self) -> None:
        """Tell `progress` how many lines of the sources are read (the importer also calls
        it when reading ends). Lines, not records: a line is what the estimate counts."""
        if self.progress is not None:
            self.progress(self.lines_read, max(self.lines_read, self.expected_lines))

    def _counted(self, path: str, line: int | None) -> None:
        """Note that a record came from `path:line`; report every `PROGRESS_EVERY` records."""
        if self.progress is None:
            return
        if line is not None:
            last = self._last_line.get(path, 0)
            if line > last:
                self.lines_read += line - last
                self._last_line[path] = line
        if (self.window_count + self.event_count) % PROGRESS_EVERY == 0:
            self.report_progress()


def _unindexed_role(event: dict[str, Any]) -> str | None:
    """The role of a message event that search never indexes, else None.

    >>> _unindexed_role({"type": "message", "message": {"role": "toolResult"}})
    'toolResult'
    >>> _unindexed_role({"type": "message", "message": {"role": "user"}}) is None
    True
    """
    if event.get("type") != "message":
        return None
    message = event.get("message")
    role = message.get("role") if isinstance(message, dict) else None
    if isinstance(role, str) and role not in SEARCHABLE_ROLES:
        return role
    return None
