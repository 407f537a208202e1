"""History rows: which events of a window's active path history shows, and how.

Owns: the display rule (which active-path events are rows: messages and the visible
boundaries), the `HistoryRow` value, and `display_message`, the JSON object one row
becomes in a history page. Must not touch: views and resets (`views.py`), paging
(`window_math.py`, `pages.py`), byte caps (`byte_caps.py`) or storage.

The rule (behaviour.md §9.3, upstream `isVisibleHistoryNonMessageEvent`):

* every `message` event of the active path is a row, whatever its role (tool results
  included: the agent tool strips them later unless `includeTools`);
* the **visible boundaries** are rows too: `reset`, `compaction`, and `custom_message`
  with `display: true` whose `customType` is not OpenClaw's runtime context
  (`openclaw.runtime-context`);
* nothing else is (leaf controls are never on the path; `model_change`, `custom`,
  `branch_summary`, ... are not shown).

A row keeps its place (its ordinal, and `totalMessages` counts it) even when a page does
not show it: a **user message without visible text** (its `content`, else `text`, is a
string that trims to nothing, an empty list, or a list of `text` blocks that are all
blank) is left out of every page, as OpenClaw's display projection hides it
(`shouldHideProjectedHistoryMessage`, checked against the real OpenClaw); an empty
assistant message is shown. Anchoring on a hidden message gives an empty page.

A message row is shown as its stored `message` object, unchanged, with `timestamp` and
`__openclaw` added (upstream's shape, checked against the real OpenClaw):
``{"role", "content", ..., "timestamp", "__openclaw": {..., "id", "seq"}}``. The time is
the message's own numeric `timestamp` when it has one, else the event's (a number, or an
ISO string through `Date.parse`), else the time the store received the event
(openclaw-state-format.md's display mapping); a whole number of milliseconds is an
integer. `seq` is the row's 1-based display ordinal in the view or interval it was read
from; `__openclaw` fields the message already had are kept. A boundary is shown as
``{"role": "system", "content": [{"type": "text", "text": ...}], "timestamp",
"__openclaw": {"kind": <event type>, "id", "seq", ...}}``: the text of a reset is
`Session reset`, of a compaction its `summary` (else `Conversation compacted`), and a
displayed custom message keeps its own `content` (and says its `customType`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.model import StoredEvent, js_trim
from engine.transcript import events as kinds
from engine.transcript.projection import event_timestamp

#: The `customType` of OpenClaw's hidden runtime-context messages (never displayed).
RUNTIME_CONTEXT_CUSTOM_TYPE = "openclaw.runtime-context"

#: The boundary kinds history can show, besides messages.
BOUNDARY_KINDS = (kinds.RESET, kinds.COMPACTION, kinds.CUSTOM_MESSAGE)

#: The text of a reset boundary, and of a compaction without a summary.
RESET_TEXT = "Session reset"
COMPACTION_TEXT = "Conversation compacted"

#: The metadata member history adds to every shown message (upstream's name).
METADATA = "__openclaw"


@dataclass(frozen=True, slots=True)
class HistoryRow:
    """One displayable event of a window's active path.

    `position` is its 0-based place on the active path, `kind` is `message` or a
    boundary kind, `entry_id` its trimmed id (what `messageId` anchors name).
    """

    position: int
    stored: StoredEvent
    kind: str
    entry_id: str

    @property
    def role(self) -> str | None:
        """The message's role (None for a boundary or a message without a string role)."""
        if self.kind != kinds.MESSAGE:
            return None
        message = self.stored.event.get("message")
        role = message.get("role") if isinstance(message, dict) else None
        return role if isinstance(role, str) else None

    @property
    def is_reset(self) -> bool:
        """True for a logical reset (a `reset` event)."""
        return self.kind == kinds.RESET


def row_kind(event: dict[str, Any]) -> str | None:
    """The kind of row an active-path event is, or None when history does not show it.

    >>> row_kind({"type": "message", "id": "m1", "message": {"role": "toolResult"}})
    'message'
    >>> row_kind({"type": "custom_message", "id": "c", "display": True, "customType": "n"})
    'custom_message'
    >>> row_kind({"type": "custom_message", "id": "c", "display": True,
    ...           "customType": "openclaw.runtime-context"}) is None
    True
    >>> row_kind({"type": "custom_message", "id": "c", "display": False}) is None
    True
    >>> row_kind({"type": "model_change", "id": "x"}) is None
    True
    """
    kind = kinds.event_type(event)
    if kind in (kinds.MESSAGE, kinds.RESET, kinds.COMPACTION):
        return kind
    if (kind == kinds.CUSTOM_MESSAGE and event.get("display") is True
            and event.get("customType") != RUNTIME_CONTEXT_CUSTOM_TYPE):
        return kind
    return None


def history_rows(path: Sequence[StoredEvent]) -> list[HistoryRow]:
    """The rows of an active path (root first): its messages and visible boundaries.

    >>> from engine.model import StoredEvent
    >>> path = [StoredEvent("s", 0, {"type": "message", "id": " m1 ", "message": {}}),
    ...         StoredEvent("s", 1, {"type": "model_change", "id": "x"}),
    ...         StoredEvent("s", 2, {"type": "reset", "id": "r1"})]
    >>> [(row.position, row.kind, row.entry_id) for row in history_rows(path)]
    [(0, 'message', 'm1'), (2, 'reset', 'r1')]
    """
    rows: list[HistoryRow] = []
    for position, stored in enumerate(path):
        event = stored.event
        if not isinstance(event, dict):
            continue
        kind = row_kind(event)
        if kind is None:
            continue
        entry_id = trimmed_id(event.get("id"))
        if entry_id is not None:
            rows.append(HistoryRow(position, stored, kind, entry_id))
    return rows


def trimmed_id(value: object) -> str | None:
    """An event id trimmed as JavaScript trims it; None when it is not a non-blank string.

    >>> trimmed_id("m1"), trimmed_id(" m1\u3000"), trimmed_id("  "), trimmed_id(3)
    ('m1', 'm1', None, None)
    """
    if not isinstance(value, str) or not value:
        return None
    if value.isascii() and value[0] > " " and value[-1] > " ":
        return value  # the common case: nothing to trim (every ASCII blank is <= " ")
    trimmed = js_trim(value)
    return trimmed or None


def is_hidden(row: HistoryRow) -> bool:
    """True for a row no page shows: a user message without visible text.

    >>> from engine.model import StoredEvent
    >>> def user(content):
    ...     event = {"type": "message", "id": "u", "message": {"role": "user", "content": content}}
    ...     return HistoryRow(0, StoredEvent("s", 0, event), "message", "u")
    >>> [is_hidden(user(c)) for c in ("  ", [], [{"type": "text", "text": " "}], "hi",
    ...                                [{"type": "image"}])]
    [True, True, True, False, False]
    """
    if row.role != "user":
        return False
    message = row.stored.event.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if content is None and isinstance(message, dict):
        content = message.get("text")
    if isinstance(content, str):
        return kinds.is_blank(content)
    if not isinstance(content, list):
        return False
    return all(isinstance(block, dict) and block.get("type") == "text"
               and isinstance(block.get("text"), str) and kinds.is_blank(block["text"])
               for block in content)


def display_timestamp(stored: StoredEvent) -> int | float:
    """The time a row is shown with, in epoch milliseconds (see the module rule).

    >>> from engine.model import StoredEvent
    >>> display_timestamp(StoredEvent("s", 0, {"timestamp": "1970-01-01T00:00:01Z",
    ...                                         "message": {"timestamp": 7}}))
    7
    >>> display_timestamp(StoredEvent("s", 0, {"timestamp": "1970-01-01T00:00:01Z"}))
    1000
    >>> display_timestamp(StoredEvent("s", 0, {}, created_at=2.5))
    2.5
    """
    event = stored.event
    message = event.get("message")
    own = message.get("timestamp") if isinstance(message, dict) else None
    if isinstance(own, (int, float)) and not isinstance(own, bool) and math.isfinite(own):
        value = float(own)
    else:
        value = event_timestamp(event, stored.created_at)
    return int(value) if value.is_integer() else value


def display_message(row: HistoryRow, seq: int) -> dict[str, Any]:
    """The JSON object `row` is shown as, with display ordinal `seq` (module rule).

    >>> from engine.model import StoredEvent
    >>> row = HistoryRow(0, StoredEvent("s", 3, {"type": "message", "id": "m1",
    ...     "timestamp": 5, "message": {"role": "user", "content": "hi"}}), "message", "m1")
    >>> display_message(row, 1)
    {'role': 'user', 'content': 'hi', 'timestamp': 5, '__openclaw': {'id': 'm1', 'seq': 1}}
    >>> reset = HistoryRow(1, StoredEvent("s", 4, {"type": "reset", "id": "r1",
    ...     "timestamp": 6, "firstKeptEntryId": "m1"}), "reset", "r1")
    >>> display_message(reset, 2)["__openclaw"]
    {'kind': 'reset', 'id': 'r1', 'seq': 2, 'firstKeptEntryId': 'm1'}
    """
    event = row.stored.event
    timestamp = display_timestamp(row.stored)
    if row.kind == kinds.MESSAGE:
        message = event.get("message")
        shown = dict(message) if isinstance(message, dict) else {}
        previous = shown.pop(METADATA, None)
        metadata = dict(previous) if isinstance(previous, dict) else {}
        shown["timestamp"] = timestamp
        metadata.update({"id": row.entry_id, "seq": seq})
        shown[METADATA] = metadata
        return shown
    metadata = {"kind": row.kind, "id": row.entry_id, "seq": seq}
    if row.kind == kinds.CUSTOM_MESSAGE:
        content = event.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        elif not isinstance(content, list):
            content = []
        if isinstance(event.get("customType"), str):
            metadata["customType"] = event["customType"]
    else:
        text = RESET_TEXT
        if row.kind == kinds.COMPACTION:
            summary = event.get("summary")
            text = summary if isinstance(summary, str) and summary else COMPACTION_TEXT
        content = [{"type": "text", "text": text}]
    first_kept = event.get("firstKeptEntryId")
    if row.kind != kinds.CUSTOM_MESSAGE and isinstance(first_kept, str):
        metadata["firstKeptEntryId"] = first_kept
    return {"role": "system", "content": content, "timestamp": timestamp, METADATA: metadata}
