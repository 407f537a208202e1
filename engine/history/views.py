"""Views of one window: the current view after the latest logical reset, and the closed
intervals of the rows outside it.

Owns: the reset semantics of behaviour.md §9.3 as pure functions over a window's events
(`window_history`), and where an anchor lies (`WindowHistory.locate`). Must not touch:
storage (the caller reads the events), paging, byte caps or the JSON shape of rows.

Two kinds of reset exist. A **physical** reset (rotation) starts a new window under the
same key; the old window is retained and is read by naming its `sessionId` with a
`messageId` (`pages.py` picks the window). A **logical** reset is a `reset` event on the
active path of one window, optionally with `firstKeptEntryId`. Of one window:

* the **rows** are the displayable events of its active path (`rows.history_rows`);
* the **current view** is the whole path when it has no reset. Otherwise, with R the
  latest reset: the **kept** rows (the user and assistant messages from
  `firstKeptEntryId` up to R, when that entry lies on the path before R; none
  otherwise), then R and every row after it (post-reset messages and visible
  boundaries). Compactions never close a view; only resets do;
* the **closed interval** of a row outside the current view is `(previous reset,
  closing reset]`: the closing reset is the first reset after the row (the row itself
  when it is a reset), the opening one the last reset before the closing one (none: from
  the start of the path). Every row of the interval is in it, kept-or-not: it shows the
  conversation as it was before that reset, and never a later post-reset turn;
* an id that is not a row of the path (missing, off the active path, rewound away, a
  non-displayable event) has no view: an anchored read of it is empty.

Display ordinals (`seq`, 1-based) are positions in the view or interval a page is read
from. Complexity: one pass over the events to find the path, one over the path.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field

from engine.history.rows import HistoryRow, history_rows, trimmed_id
from engine.model import StoredEvent
from engine.transcript import events as kinds
from engine.transcript.tree import visible_events

#: The roles a reset keeps before it (selectResetKeptEntries, restricted to history).
KEPT_ROLES = ("user", "assistant")

#: `HistoryScope.kind` values.
CURRENT = "current"
INTERVAL = "interval"


@dataclass(frozen=True, slots=True)
class HistoryScope:
    """The ordered rows of the current view or of one closed interval.

    `closing_reset` is the id of the reset that closes an interval (None for the view).
    A row's display ordinal is its index here plus one.
    """

    kind: str
    rows: tuple[HistoryRow, ...]
    closing_reset: str | None = None
    _index: dict[str, int] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        for index, row in enumerate(self.rows):
            self._index.setdefault(row.entry_id, index)

    def index_of(self, entry_id: str) -> int | None:
        """The 0-based index of the row `entry_id`, or None when it is not here."""
        return self._index.get(entry_id)


@dataclass(frozen=True, slots=True)
class Located:
    """Where an anchor lies: the scope it opens and its index there."""

    scope: HistoryScope
    index: int


@dataclass(frozen=True, slots=True)
class WindowHistory:
    """The history of one window: its path rows, its current view, its resets."""

    session_id: str
    rows: tuple[HistoryRow, ...]
    current: HistoryScope
    latest_reset: HistoryRow | None
    _row_index: dict[str, int] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        for index, row in enumerate(self.rows):
            self._row_index.setdefault(row.entry_id, index)

    def locate(self, entry_id: str) -> Located | None:
        """The scope an anchor `entry_id` opens: the current view when the row is in it,
        else its closed interval; None when no row of the path has that id.

        >>> from engine.model import StoredEvent
        >>> def event(seq, kind, entry_id, **fields):
        ...     return StoredEvent("s", seq, {"type": kind, "id": entry_id, **fields})
        >>> events = [event(0, "message", "a", message={"role": "user"}),
        ...           event(1, "reset", "r1"),
        ...           event(2, "message", "b", message={"role": "user"})]
        >>> history = window_history("s", events)
        >>> [row.entry_id for row in history.current.rows]
        ['r1', 'b']
        >>> located = history.locate("a")
        >>> located.scope.kind, [row.entry_id for row in located.scope.rows], located.index
        ('interval', ['a', 'r1'], 0)
        >>> history.locate("nope") is None
        True
        """
        index = self.current.index_of(entry_id)
        if index is not None:
            return Located(self.current, index)
        row_index = self._row_index.get(entry_id)
        if row_index is None:
            return None
        scope = closed_interval(self.rows, self.rows[row_index])
        found = scope.index_of(entry_id)
        return None if found is None else Located(scope, found)


def window_history(session_id: str, events: Sequence[StoredEvent]) -> WindowHistory:
    """The history of a window from its events in `seq` order (the module's rules)."""
    path = visible_events(events)
    rows = tuple(history_rows(path))
    latest_reset = next((row for row in reversed(rows) if row.is_reset), None)
    return WindowHistory(session_id, rows, current_view(path, rows, latest_reset),
                         latest_reset)


def current_view(path: Sequence[StoredEvent], rows: Sequence[HistoryRow],
                 latest_reset: HistoryRow | None) -> HistoryScope:
    """The current view: every row without a reset; else the kept rows, the latest
    reset and everything after it."""
    if latest_reset is None:
        return HistoryScope(CURRENT, tuple(rows))
    reset_at = latest_reset.position
    first_kept = _first_kept_position(path, latest_reset, reset_at)
    kept = [row for row in rows if first_kept <= row.position < reset_at
            and row.kind == kinds.MESSAGE and row.role in KEPT_ROLES]
    after = [row for row in rows if row.position >= reset_at]
    return HistoryScope(CURRENT, tuple(kept + after))


def closed_interval(rows: Sequence[HistoryRow], row: HistoryRow) -> HistoryScope:
    """The closed interval `(previous reset, closing reset]` of a row outside the view.

    A row after every reset has no closing reset; its interval is then everything after
    the last reset (the caller only asks for rows outside the current view, which always
    have one).
    """
    resets = [candidate.position for candidate in rows if candidate.is_reset]
    if row.is_reset:
        closing = row.position
    else:
        after = bisect_right(resets, row.position)
        closing = resets[after] if after < len(resets) else None
    end = closing if closing is not None else (rows[-1].position if rows else -1)
    before = bisect_left(resets, end)
    opening = resets[before - 1] if before > 0 else -1
    closing_id = next((candidate.entry_id for candidate in rows
                       if candidate.position == closing), None)
    return HistoryScope(INTERVAL, tuple(candidate for candidate in rows
                                        if opening < candidate.position <= end),
                        closing_reset=closing_id)


def _first_kept_position(path: Sequence[StoredEvent], reset: HistoryRow, reset_at: int) -> int:
    """Where the kept rows start: `firstKeptEntryId`'s path position when it lies before
    the reset, else the reset itself (nothing kept)."""
    wanted = trimmed_id(reset.stored.event.get("firstKeptEntryId"))
    if wanted is None:
        return reset_at
    for position in range(reset_at - 1, -1, -1):
        event = path[position].event
        if isinstance(event, dict) and trimmed_id(event.get("id")) == wanted:
            return position
    return reset_at
