"""One `chat.history` page: the Gateway's history read (behaviour.md §9.2–§9.5).

Owns: `read_history` and the `HistoryPage` value: picking the window (the key's current
one, or a retained one named by `sessionId`), choosing the rows (tail, offset, anchor,
cursor) and applying the Gateway's byte budget. Must not touch: storage or the index
(it reads through a `HistorySource`), the agent tool's caps (`tool.py`).

A read, step by step:

1. The request's parameters were checked when it was made (`request.py`).
2. The key is read in OpenClaw's form (lower-cased but for opaque peer ids:
   `held_windows`), and must hold a window (`unknown session key '...'` otherwise); the
   page names the key in that form. A `sessionId`
   must be one of the key's windows, else `sessionId does not belong to sessionKey`
   (a missing id, another key's window and another agent's window alike); without it,
   the key's current window is read.
3. **Tail or offset** (no `messageId`, no `cursor`): the page that ends at `T - offset`
   of the current view (`T` its rows) and reaches back until it shows `limit` rows
   (`shown_offset_range`: hidden rows inside it are stepped over, as OpenClaw does; with
   none it is `[T - offset - limit, T - offset)`), the oldest rows dropped while over
   the budget. The page says `totalMessages`, `hasMore`, `nextOffset` (when `hasMore`),
   `offset` (when the request gave one), and the cursors that continue it
   (`olderCursor` when older rows exist, `newerCursor` when newer ones do).
4. **Anchored** (`messageId`): the row's view (the current view, or its closed
   interval when it is a retained row outside it); no such row (missing, off the active
   path, rewound away): `messages: []` and nothing else — never the tail. Else the
   §9.4 window around the anchor, grown around it within the budget (the anchor is
   always kept), with `totalMessages` and no offset or cursor.
5. **Cursor**: the cursor's view must still be the key's current window with the same
   latest reset, and its anchor at the same ordinal; otherwise `windowReset: true` and
   no rows (read the tail again). Else up to `limit` rows beyond the anchor in the
   cursor's direction, cut to the budget from the far end (the row next to the anchor
   always stays), with `hasMore` and the cursors that continue from the page.

Every page leaves out the rows no page shows (`rows.is_hidden`: a user message without
visible text; they keep their ordinals, and cursors step over them), then replaces a
single message larger than 128 KiB by its placeholder. The budget is `min(maxBytes,
6 MiB)`; a page exceeds it only when one row alone does.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from engine.errors import UnknownSession
from engine.history.byte_caps import (
    GATEWAY_MAX_BYTES,
    cap_from_edge,
    cap_newest,
    gateway_cap_around_anchor,
    message_seq,
    replace_oversized,
)
from engine.history.cursor import NEWER, OLDER, HistoryCursor
from engine.history.request import FOREIGN_SESSION_ID, HistoryRequest, HistoryRequestError
from engine.history.rows import display_message, is_hidden
from engine.history.source import HistorySource
from engine.history.views import CURRENT, HistoryScope, WindowHistory, window_history
from engine.history.window_math import (
    PageRange,
    anchor_range,
    newer_range,
    next_offset,
    older_range,
    page_size,
)
from engine.model import SessionWindow, canonical_session_key
from engine.transcript.windows import current_window

FOREIGN_CURSOR = "cursor does not belong to sessionKey"


@dataclass(frozen=True, slots=True)
class HistoryPage:
    """One page of history, as `chat.history` answers it (`to_json`).

    `scope` is `current` (the current view) or `interval` (a retained row's closed
    interval); None when the page read no view (a missing anchor, a moved window).
    `retained` says the window read is not the key's current one (`sessionId`).
    """

    session_key: str
    session_id: str
    messages: tuple[dict[str, Any], ...]
    scope: str | None = None
    total_messages: int | None = None
    offset: int | None = None
    next_offset: int | None = None
    has_more: bool | None = None
    older_cursor: str | None = None
    newer_cursor: str | None = None
    window_reset: bool = False
    retained: bool = False

    def to_json(self) -> dict[str, Any]:
        """`{"sessionKey", "sessionId", "messages", ...}`: the optional members only when
        set (`nextOffset` only when `hasMore`); `scope` and `retained` are not sent."""
        value: dict[str, Any] = {"sessionKey": self.session_key, "sessionId": self.session_id,
                                 "messages": list(self.messages)}
        for name, member in (("offset", self.offset), ("nextOffset", self.next_offset),
                             ("hasMore", self.has_more), ("totalMessages", self.total_messages),
                             ("olderCursor", self.older_cursor),
                             ("newerCursor", self.newer_cursor)):
            if member is not None:
                value[name] = member
        if self.window_reset:
            value["windowReset"] = True
        return value


def read_history(source: HistorySource, request: HistoryRequest) -> HistoryPage:
    """One `chat.history` page (the steps of the module docstring)."""
    held, windows = held_windows(source, request.session_key)
    window_ids = [window.session_id for window in windows]
    current = current_window(windows)
    if current is None:
        raise UnknownSession(f"unknown session key {request.session_key!r}")
    request = replace(request, session_key=held)
    current_id = current.session_id
    budget = min(request.max_bytes if request.max_bytes is not None else GATEWAY_MAX_BYTES,
                 GATEWAY_MAX_BYTES)
    if request.session_id is not None and request.session_id not in window_ids:
        raise HistoryRequestError(FOREIGN_SESSION_ID)
    if request.cursor is not None:
        cursor = HistoryCursor.decode(request.cursor)
        if cursor.session_id not in window_ids:
            raise HistoryRequestError(FOREIGN_CURSOR)
        return _cursor_page(source, request, cursor, current_id, budget)
    session_id = request.session_id if request.session_id is not None else current_id
    history = window_history(session_id, source.events(session_id))
    if request.message_id is not None:
        return _anchored_page(request, history, budget, retained=session_id != current_id)
    return _offset_page(request, history, budget)


def held_windows(source: HistorySource, session_key: str) -> tuple[str, list[SessionWindow]]:
    """The key as the store holds it, and its windows: the key in OpenClaw's form
    (`engine.model.canonical_session_key`), as OpenClaw's Gateway reads a given key, so
    every spelling of a key opens its session; else the key as given (a store written
    before keys were stored in that form keeps them as its input named them)."""
    canonical = canonical_session_key(session_key)
    windows = source.windows_of(canonical)
    if not windows and canonical != session_key:
        given = source.windows_of(session_key)
        if given:
            return session_key, given
    return canonical, windows


def _offset_page(request: HistoryRequest, history: WindowHistory, budget: int) -> HistoryPage:
    view = history.current
    total = len(view.rows)
    offset = request.offset if request.offset is not None else 0
    page_range = shown_offset_range(view, offset, request.page_limit)
    shown, _ = replace_oversized(_shown(view, page_range))
    capped, _ = cap_newest(shown, budget)
    following = next_offset(total, offset, _seqs(capped), _seqs(shown), len(page_range))
    has_more = following < total
    return HistoryPage(
        request.session_key, history.session_id, tuple(capped), CURRENT, total,
        offset=request.offset, next_offset=following if has_more else None,
        has_more=has_more, **_continuing_cursors(history, page_range, capped))


def shown_offset_range(scope: HistoryScope, offset: int, limit: int) -> PageRange:
    """The rows an offset (or tail) page covers: from `T - offset` older rows are taken
    until `limit` of them are shown, so a hidden row inside the page does not cost it a
    shown one (OpenClaw 2026.9.6 fills `limit` with shown rows, and the hidden ones it
    stepped over count in `nextOffset`). Without hidden rows this is
    `window_math.offset_range`, which the tests keep as its oracle."""
    rows = scope.rows
    end = max(0, len(rows) - max(0, offset))
    wanted = page_size(limit)
    start = end
    while start > 0 and wanted > 0:
        start -= 1
        if not is_hidden(rows[start]):
            wanted -= 1
    return PageRange(start, end)


def _anchored_page(request: HistoryRequest, history: WindowHistory, budget: int, *,
                   retained: bool) -> HistoryPage:
    located = history.locate(request.message_id or "")
    if located is None or is_hidden(located.scope.rows[located.index]):
        return HistoryPage(request.session_key, history.session_id, (), retained=retained)
    scope = located.scope
    total = len(scope.rows)
    page_range = anchor_range(total, located.index, request.page_limit)
    shown, _ = replace_oversized(_shown(scope, page_range))
    anchor_id = scope.rows[located.index].entry_id
    capped = gateway_cap_around_anchor(shown, anchor_id, budget)
    return HistoryPage(request.session_key, history.session_id, tuple(capped), scope.kind,
                       total, retained=retained)


def _cursor_page(source: HistorySource, request: HistoryRequest, cursor: HistoryCursor,
                 current_id: str, budget: int) -> HistoryPage:
    history = window_history(current_id, source.events(current_id))
    view = history.current
    total = len(view.rows)
    anchor = view.index_of(cursor.anchor_id)
    if (cursor.session_id != current_id or cursor.reset_seq != _reset_seq(history)
            or anchor is None or anchor + 1 != cursor.anchor_ordinal
            or view.rows[anchor].stored.seq != cursor.anchor_seq):
        return HistoryPage(request.session_key, current_id, (), total_messages=total,
                           window_reset=True)
    if cursor.direction == OLDER:
        page_range = older_range(anchor, request.page_limit)
    else:
        page_range = newer_range(total, anchor, request.page_limit)
    shown, _ = replace_oversized(_shown(view, page_range))
    capped = cap_from_edge(shown, budget, keep_newest=cursor.direction == OLDER)
    cursors = _continuing_cursors(history, page_range, capped)
    has_more = (cursors["older_cursor"] if cursor.direction == OLDER
                else cursors["newer_cursor"]) is not None
    return HistoryPage(request.session_key, current_id, tuple(capped), CURRENT, total,
                       has_more=has_more, **cursors)


def _shown(scope: HistoryScope, page_range: PageRange) -> list[dict[str, Any]]:
    """The shown rows of `page_range` with their display ordinals (hidden rows left out)."""
    return [display_message(scope.rows[index], index + 1)
            for index in range(page_range.start, page_range.end)
            if not is_hidden(scope.rows[index])]


def _seqs(messages: list[dict[str, Any]]) -> list[int]:
    return [seq for seq in map(message_seq, messages) if seq is not None]


def _reset_seq(history: WindowHistory) -> int:
    """The view's identity: the event seq of its latest reset, -1 without one."""
    return history.latest_reset.stored.seq if history.latest_reset is not None else -1


def _continuing_cursors(history: WindowHistory, page_range: PageRange,
                        page: list[dict[str, Any]]) -> dict[str, str | None]:
    """The cursors that continue from a page of the current view: `older` from the oldest
    row it covers when rows are older, `newer` from the newest when rows are newer.

    A page covers its shown rows and the hidden rows of its range next to them (all of
    its range when it shows none), so paging steps over hidden rows and never stops at
    them; rows the byte cap dropped are not covered, so the next page reads them.
    """
    rows = history.current.rows
    seqs = _seqs(page)
    if seqs:
        oldest, newest = seqs[0] - 1, seqs[-1] - 1
        while oldest > page_range.start and is_hidden(rows[oldest - 1]):
            oldest -= 1
        while newest + 1 < page_range.end and is_hidden(rows[newest + 1]):
            newest += 1
    elif len(page_range):
        oldest, newest = page_range.start, page_range.end - 1
    else:
        return {"older_cursor": None, "newer_cursor": None}
    older = _cursor(history, OLDER, oldest) if oldest > 0 else None
    newer = _cursor(history, NEWER, newest) if newest < len(rows) - 1 else None
    return {"older_cursor": older, "newer_cursor": newer}


def _cursor(history: WindowHistory, direction: str, index: int) -> str:
    row = history.current.rows[index]
    return HistoryCursor(direction, history.session_id, _reset_seq(history), row.entry_id,
                         index + 1, row.stored.seq).encode()
