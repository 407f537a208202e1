"""Transcript event kinds and the validation an importer applies to each event.

Owns: the names of the event kinds (behaviour.md §2, openclaw-state-format.md), which
kinds are *canonical tree entries* (they move the active leaf when appended),
`validation_problem`, the one function that says whether a JSON value is an acceptable
transcript event, and the JavaScript whitespace rules (`js_trim`, `is_blank`) with which
upstream reads event fields. Must not touch: storage, the tree walk (`tree.py`), what is searchable
(`projection.py`) or file formats (`engine.ingest`).

The event shapes, as they arrive (every other field is kept as it came):

* ``{"type": "session", "id": <session uuid>, ...}`` — OpenClaw's header line; data only,
  never a tree entry.
* ``{"type": "message", "id": "m1", "parentId": null | "m0", "timestamp": ISO | ms,
  "message": {"role": "user" | "assistant" | "toolResult" | ..., "content": str | [blocks],
  "timestamp"?: ms}}`` — blocks are objects with a ``type``: ``text`` / ``input_text`` /
  ``output_text`` (searchable), ``thinking``, ``image``, ``toolCall`` (never searchable).
* ``{"type": "leaf", "id": "l1", "parentId": ..., "targetId": "m1" | null}`` — a control
  event: moves the active leaf to ``targetId`` (a rewind or a branch switch).
* ``{"type": "reset", "id": ..., "parentId": ..., "firstKeptEntryId"?: "m3"}`` — a logical
  reset inside one physical transcript.
* ``{"type": "compaction", "id": ..., "parentId": ..., "firstKeptEntryId"?, ...}``.
* ``{"type": "custom_message", "id": ..., "parentId": ..., "display": bool, ...}``.
* any other ``type`` (``model_change``, ``custom``, ``branch_summary``, ...): kept as it came.

Validation is deliberately narrow: it rejects only what would make the event unusable
(not an object, no string ``type``, a message without an id or role, a leaf control
without a target, a wrongly typed field the engine reads). Unknown fields and unknown
kinds are data, not errors.
"""

from __future__ import annotations

from typing import Any

from engine.model import js_trim

SESSION_HEADER = "session"
MESSAGE = "message"
LEAF = "leaf"
RESET = "reset"
COMPACTION = "compaction"
CUSTOM_MESSAGE = "custom_message"

#: Kinds that are canonical tree entries: appending one (without ``appendMode: "side"``)
#: makes it the active leaf. Upstream's list plus ``reset`` (a logical reset sits on the
#: active path, behaviour.md §2.3 and §9.3). Other kinds with an ``id`` and a ``parentId``
#: are *opaque* tree entries: they join the tree but do not move the leaf.
CANONICAL_KINDS = frozenset({
    MESSAGE,
    RESET,
    COMPACTION,
    CUSTOM_MESSAGE,
    "custom",
    "branch_summary",
    "model_change",
    "thinking_level_change",
    "label",
    "session_info",
})

#: Message roles the search index accepts (behaviour.md §2.3 rule 2).
SEARCHABLE_ROLES = ("user", "assistant")

#: Content block types whose ``text`` is searchable (behaviour.md §2.3 rule 3).
TEXT_BLOCK_TYPES = frozenset({"text", "input_text", "output_text"})

#: The ``appendMode`` value of a side append: the entry joins the tree, the leaf stays.
SIDE_APPEND = "side"




def is_blank(text: str) -> bool:
    """True when `text` holds only JavaScript whitespace (`/\\S/` would not match).

    >>> is_blank(" \\u3000\\ufeff"), is_blank(" x ")
    (True, False)
    """
    return not js_trim(text)


def non_blank_string(value: Any) -> str | None:
    """Return `value` unchanged when it is a string with a non-whitespace character.

    >>> non_blank_string(" m1 "), non_blank_string("  "), non_blank_string(7)
    (' m1 ', None, None)
    """
    if isinstance(value, str) and not is_blank(value):
        return value
    return None


def event_type(event: Any) -> str | None:
    """The event's `type` when the event is an object with a string `type`.

    >>> event_type({"type": "leaf"}), event_type({"type": 3}), event_type([])
    ('leaf', None, None)
    """
    if isinstance(event, dict) and isinstance(event.get("type"), str):
        return event["type"]
    return None


def is_leaf_control(event: Any) -> bool:
    """True for a `leaf` control event (rewind or branch switch).

    >>> is_leaf_control({"type": "leaf", "id": "l1", "targetId": "m1"})
    True
    """
    return event_type(event) == LEAF


def is_canonical(event: Any) -> bool:
    """True for an event of a canonical tree-entry kind (see `CANONICAL_KINDS`).

    >>> is_canonical({"type": "message"}), is_canonical({"type": "leaf"})
    (True, False)
    """
    return event_type(event) in CANONICAL_KINDS


def is_side_append(event: Any) -> bool:
    """True for a canonical entry appended beside the active branch (`appendMode: "side"`).

    >>> is_side_append({"type": "message", "appendMode": "side"})
    True
    """
    return is_canonical(event) and event.get("appendMode") == SIDE_APPEND


def validation_problem(event: Any) -> str | None:
    """Return why `event` is not an acceptable transcript event, or None when it is.

    >>> validation_problem({"type": "message", "id": "m1", "parentId": None,
    ...                     "message": {"role": "user", "content": "hi"}}) is None
    True
    >>> validation_problem({"type": "message", "message": {"role": "user"}})
    'a message event needs a non-blank string "id"'
    >>> validation_problem({"type": "leaf", "id": "l1", "parentId": "m2"})
    'a leaf event needs "targetId" (a non-blank string, or null)'
    >>> validation_problem({"type": "model_change", "anything": [1, 2]}) is None
    True
    >>> validation_problem([1, 2])
    'an event must be a JSON object'
    """
    if not isinstance(event, dict):
        return "an event must be a JSON object"
    kind = event.get("type")
    if not isinstance(kind, str) or is_blank(kind):
        return 'an event needs a non-blank string "type"'
    if kind == SESSION_HEADER:
        return None
    problem = _common_field_problem(event)
    if problem is not None:
        return problem
    if kind == MESSAGE:
        return _message_problem(event)
    if kind == LEAF:
        return _leaf_problem(event)
    if kind in (RESET, COMPACTION):
        return _optional_reference_problem(event, "firstKeptEntryId", kind)
    if kind == CUSTOM_MESSAGE and "display" in event and not isinstance(event["display"], bool):
        return 'a custom_message "display" must be true or false'
    return None


def _common_field_problem(event: dict[str, Any]) -> str | None:
    """Fields every tree entry shares: `id`, `parentId`, `timestamp`."""
    if "id" in event and event["id"] is not None and not isinstance(event["id"], str):
        return '"id" must be a string'
    if "parentId" in event:
        parent = event["parentId"]
        if parent is not None and non_blank_string(parent) is None:
            return '"parentId" must be a non-blank string or null'
    if event.get("timestamp") is not None:
        stamp = event["timestamp"]
        if isinstance(stamp, bool) or not isinstance(stamp, (int, float, str)):
            return '"timestamp" must be an ISO-8601 string, epoch milliseconds, or null'
    return None


def _message_problem(event: dict[str, Any]) -> str | None:
    """A `message` needs an id and a `message` object with a string role."""
    if non_blank_string(event.get("id")) is None:
        return 'a message event needs a non-blank string "id"'
    message = event.get("message")
    if not isinstance(message, dict):
        return 'a message event needs a "message" object'
    role = message.get("role")
    if not isinstance(role, str) or is_blank(role):
        return 'a message needs a non-blank string "role"'
    content = message.get("content")
    if content is not None and not isinstance(content, (str, list)):
        return 'a message "content" must be a string or a list of blocks'
    if isinstance(content, list):
        for index, block in enumerate(content):
            if not isinstance(block, dict):
                return f'content block {index} must be a JSON object'
            if not isinstance(block.get("type"), str):
                return f'content block {index} needs a string "type"'
    if "text" in message and not isinstance(message["text"], str):
        return 'a message "text" must be a string'
    return None


def _leaf_problem(event: dict[str, Any]) -> str | None:
    """A `leaf` control needs an id, a `parentId` key and a `targetId` (string or null)."""
    if non_blank_string(event.get("id")) is None:
        return 'a leaf event needs a non-blank string "id"'
    if "parentId" not in event:
        return 'a leaf event needs "parentId" (a non-blank string, or null)'
    target = event.get("targetId", ...)
    if target is ... or (target is not None and non_blank_string(target) is None):
        return 'a leaf event needs "targetId" (a non-blank string, or null)'
    return None


def _optional_reference_problem(event: dict[str, Any], field: str, kind: str) -> str | None:
    """An optional id reference such as `firstKeptEntryId` must be a non-blank string."""
    if non_blank_string(event.get("id")) is None:
        return f'a {kind} event needs a non-blank string "id"'
    if field in event and non_blank_string(event[field]) is None:
        return f'a {kind} "{field}" must be a non-blank string'
    return None
