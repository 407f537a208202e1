"""What the agent tool does to each shown message before its byte cap.

Owns: the tool's per-text truncation, the members it removes and which messages count as
tool messages (behaviour.md §9.5, upstream `sanitizeHistoryMessage` and
`stripToolMessages`). Must not touch: byte budgets (`byte_caps.py`) or which rows a page
holds.

* Tool messages (role `toolResult` or `tool`) are left out unless the caller asks for
  them (`includeTools`).
* Every text is cut to 4,000 UTF-16 units plus `\\n…(truncated)…`: a string
  `content`, each content block's `text`, a `thinking` block's `thinking`, a block's
  `partialJson`, and a string `text` of the message. The cut never splits a surrogate
  pair (`engine.analysis.utf16.truncate_utf16_safe`).
* `details`, `usage` and `cost` are removed, and their removal counts as a truncation.
* Text is **not** redacted: the seed document says transcript text is preserved,
  credentials included, so `contentRedacted` is always false (upstream redacts here with
  its own patterns; that step is deliberately not reproduced).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.analysis.utf16 import truncate_utf16_safe, utf16_length

#: The longest text the tool passes on (`SESSIONS_HISTORY_TEXT_MAX_CHARS`), in UTF-16 units.
TEXT_MAX_UNITS = 4000
#: What follows a cut text.
TRUNCATION_MARKER = "\n…(truncated)…"
#: Roles of tool messages (stripped unless `includeTools`).
TOOL_ROLES = ("toolResult", "tool")
#: Members the tool removes from a message.
REMOVED_MEMBERS = ("details", "usage", "cost")


@dataclass(frozen=True, slots=True)
class Sanitized:
    """A message after the tool's truncation, and whether anything was cut."""

    message: Any
    truncated: bool


def is_tool_message(message: Any) -> bool:
    """True for a shown message whose role is `toolResult` or `tool`.

    >>> is_tool_message({"role": "toolResult"}), is_tool_message({"role": "assistant"})
    (True, False)
    """
    return isinstance(message, dict) and message.get("role") in TOOL_ROLES


def without_tool_messages(messages: Sequence[Any]) -> list[Any]:
    """`messages` without the tool messages (upstream `stripToolMessages`)."""
    return [message for message in messages if not is_tool_message(message)]


def truncate_text(text: str, units: int = TEXT_MAX_UNITS) -> tuple[str, bool]:
    """`text` cut to `units` UTF-16 units plus the marker; and whether it was cut.

    >>> truncate_text("abcdef", 4)
    ('abcd\\n…(truncated)…', True)
    >>> truncate_text("abcd", 4)
    ('abcd', False)
    """
    if utf16_length(text) <= units:
        return text, False
    return truncate_utf16_safe(text, units) + TRUNCATION_MARKER, True


def sanitize_message(message: Any, units: int = TEXT_MAX_UNITS) -> Sanitized:
    """The tool's copy of one shown message (see the module rules).

    >>> result = sanitize_message({"role": "assistant", "usage": {"input": 3},
    ...     "content": [{"type": "text", "text": "x" * 5}, {"type": "thinking",
    ...     "thinking": "y" * 5}]}, units=3)
    >>> result.truncated, result.message
    (True, {'role': 'assistant', 'content': [{'type': 'text', 'text': 'xxx\\n…(truncated)…'}, {'type': 'thinking', 'thinking': 'yyy\\n…(truncated)…'}]})
    """
    if not isinstance(message, dict):
        return Sanitized(message, False)
    entry = dict(message)
    truncated = False
    for member in REMOVED_MEMBERS:
        if member in entry:
            del entry[member]
            truncated = True
    content = entry.get("content")
    if isinstance(content, str):
        entry["content"], cut = truncate_text(content, units)
        truncated = truncated or cut
    elif isinstance(content, list):
        blocks = []
        for block in content:
            shown, cut = _sanitize_block(block, units)
            blocks.append(shown)
            truncated = truncated or cut
        entry["content"] = blocks
    if isinstance(entry.get("text"), str):
        entry["text"], cut = truncate_text(entry["text"], units)
        truncated = truncated or cut
    return Sanitized(entry, truncated)


def _sanitize_block(block: Any, units: int) -> tuple[Any, bool]:
    """One content block with its `text`, `thinking` and `partialJson` cut."""
    if not isinstance(block, dict):
        return block, False
    entry = dict(block)
    truncated = False
    members = ["text", "partialJson"]
    if entry.get("type") == "thinking":
        members.insert(1, "thinking")
    for member in members:
        if isinstance(entry.get(member), str):
            entry[member], cut = truncate_text(entry[member], units)
            truncated = truncated or cut
    return entry, truncated
