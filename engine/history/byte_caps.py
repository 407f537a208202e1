"""Byte budgets of history pages: the Gateway's caps and the agent tool's caps.

Owns: how a page of shown rows is cut to a byte budget (behaviour.md §9.5), as pure
functions over lists of shown messages, and the two oversized-message placeholders.
Must not touch: which rows a page holds before the cap (`window_math.py`), per-text
truncation (`sanitize.py`) or storage. Sizes are `engine.analysis.js_json.js_json_bytes`: the UTF-8
bytes of `JSON.stringify`, as OpenClaw measures.

The Gateway (`chat.history`), with budget `B = min(maxBytes, 6 MiB)` (`maxBytes` at
least 1,024), measured as the JSON array of the page's messages:

1. a message larger than 128 KiB on its own is replaced by a placeholder that keeps its
   role, time, tool identity, `id` and `seq` (`[chat.history omitted: message too
   large]`);
2. anchored pages grow around the anchor (`cap_around_anchor`): start from the
   anchor's **seq group** (the rows sharing its display ordinal); if that group alone
   exceeds `B`, the page is the anchor alone. Otherwise add the next older group, then
   the next newer one, alternately, while each fits; a side that no longer fits stops
   growing. Jump-to-message therefore always keeps the requested message;
3. unanchored pages drop their oldest rows while over `B`, keeping at least the newest
   (`cap_newest`); cursor pages drop whole seq groups from the end away from their
   cursor, keeping at least the group next to it (`cap_from_edge`), so paging goes
   through a large message instead of skipping it or ending early.

A page therefore never exceeds its budget unless it is a single row (group) that is
larger than the budget on its own: the lone-anchor case (or the lone row next to a
cursor or at the tail).

The agent tool (`sessions_history`), with budget 80 KiB, after its per-text truncation:
anchored pages grow the same way one item at a time (`cap_items_around`, each added
item costing its bytes plus a comma), falling back to dropping the oldest when the
anchor is not in the page (a stripped tool message); then the hard cap
(`hard_cap`): still over the budget, keep only the last item; that too big, replace it
with `{"role": "assistant", "content": "[sessions_history omitted: message too
large]", "__openclaw": {"seq", "id"}}`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.analysis.js_json import js_json_bytes as json_bytes
from engine.history.rows import METADATA

#: The Gateway's largest page (`DEFAULT_MAX_CHAT_HISTORY_MESSAGES_BYTES`).
GATEWAY_MAX_BYTES = 6 * 1024 * 1024
#: The smallest `maxBytes` a request may give.
MIN_MAX_BYTES = 1024
#: A message larger than this on its own is replaced by a placeholder
#: (`CHAT_HISTORY_MAX_SINGLE_MESSAGE_BYTES`).
SINGLE_MESSAGE_MAX_BYTES = 128 * 1024
#: The agent tool's budget for its `messages` array (`SESSIONS_HISTORY_MAX_BYTES`).
TOOL_MAX_BYTES = 80 * 1024

GATEWAY_PLACEHOLDER_TEXT = "[chat.history omitted: message too large]"
TOOL_PLACEHOLDER_TEXT = "[sessions_history omitted: message too large]"

#: Tool identity members a Gateway placeholder keeps (upstream's list).
TOOL_IDENTITY_KEYS = ("toolCallId", "tool_call_id", "toolUseId", "tool_use_id", "toolName",
                      "tool_name", "name")

Message = dict[str, Any]


def message_seq(message: Any) -> int | None:
    """The display ordinal of a shown message (`__openclaw.seq`), or None.

    >>> message_seq({"__openclaw": {"seq": 3}}), message_seq({"role": "user"})
    (3, None)
    """
    metadata = message.get(METADATA) if isinstance(message, dict) else None
    seq = metadata.get("seq") if isinstance(metadata, dict) else None
    return seq if isinstance(seq, int) and not isinstance(seq, bool) and seq > 0 else None


def message_id(message: Any) -> str | None:
    """The id of a shown message (`__openclaw.id`), or None.

    >>> message_id({"__openclaw": {"id": "m1"}}), message_id({"__openclaw": {"id": ""}})
    ('m1', None)
    """
    metadata = message.get(METADATA) if isinstance(message, dict) else None
    entry_id = metadata.get("id") if isinstance(metadata, dict) else None
    return entry_id if isinstance(entry_id, str) and entry_id else None


def array_bytes(sizes: Sequence[int]) -> int:
    """The JSON bytes of an array whose items have `sizes`: brackets plus commas.

    >>> array_bytes([]), array_bytes([5]), array_bytes([5, 7])
    (2, 7, 15)
    """
    return 2 + sum(sizes) + max(0, len(sizes) - 1)


@dataclass(frozen=True, slots=True)
class Group:
    """The rows `[start, end)` sharing one display ordinal, and their summed cost."""

    start: int
    end: int
    cost: int


def seq_group(messages: Sequence[Message], index: int, costs: Sequence[int]) -> Group:
    """The seq group of `messages[index]`: its neighbours with the same `seq`.

    >>> rows = [{"__openclaw": {"seq": s}} for s in (1, 2, 2, 3)]
    >>> seq_group(rows, 2, [1, 1, 1, 1]), seq_group(rows, 3, [1, 1, 1, 1])
    (Group(start=1, end=3, cost=2), Group(start=3, end=4, cost=1))
    """
    seq = message_seq(messages[index])
    start, end, cost = index, index + 1, costs[index]
    if seq is None:
        return Group(start, end, cost)
    while start > 0 and message_seq(messages[start - 1]) == seq:
        start -= 1
        cost += costs[start]
    while end < len(messages) and message_seq(messages[end]) == seq:
        cost += costs[end]
        end += 1
    return Group(start, end, cost)


def cap_around_anchor(messages: Sequence[Message], anchor_id: str, max_cost: int,
                      costs: Sequence[int]) -> list[Message]:
    """Grow a page around its anchor's seq group, older then newer, while it fits
    (upstream `capChatHistoryAroundMessage`); the anchor alone when its group does not
    fit; empty when the anchor is not in `messages`.

    >>> rows = [{"__openclaw": {"id": name, "seq": seq}}
    ...         for seq, name in enumerate("abcde", start=1)]
    >>> [message_id(row) for row in cap_around_anchor(rows, "c", 3, [1] * 5)]
    ['b', 'c', 'd']
    >>> [message_id(row) for row in cap_around_anchor(rows, "c", 4, [1, 1, 1, 9, 1])]
    ['a', 'b', 'c']
    >>> [message_id(row) for row in cap_around_anchor(rows, "c", 1, [1, 1, 5, 1, 1])]
    ['c']
    """
    anchor = next((index for index, message in enumerate(messages)
                   if message_id(message) == anchor_id), None)
    if anchor is None:
        return []
    group = seq_group(messages, anchor, costs)
    if group.cost > max_cost:
        return [messages[anchor]]
    start, end, cost = group.start, group.end, group.cost
    grow_older, grow_newer = start > 0, end < len(messages)
    while grow_older or grow_newer:
        if grow_older:
            older = seq_group(messages, start - 1, costs)
            if cost + older.cost <= max_cost:
                start, cost = older.start, cost + older.cost
            else:
                grow_older = False
        grow_older = grow_older and start > 0
        if grow_newer:
            newer = seq_group(messages, end, costs)
            if cost + newer.cost <= max_cost:
                end, cost = newer.end, cost + newer.cost
            else:
                grow_newer = False
        grow_newer = grow_newer and end < len(messages)
    return list(messages[start:end])


def gateway_cap_around_anchor(messages: Sequence[Message], anchor_id: str,
                              budget: int) -> list[Message]:
    """`cap_around_anchor` with the Gateway's costs: each row its bytes plus a comma,
    against the budget minus the closing bracket, so the array fits `budget`."""
    costs = [json_bytes(message) + 1 for message in messages]
    return cap_around_anchor(messages, anchor_id, budget - 1, costs)


def cap_newest(items: Sequence[Message], budget: int,
               sizes: Sequence[int] | None = None) -> tuple[list[Message], int]:
    """Drop the oldest items while the array is over `budget`, keeping at least the
    newest (upstream `capArrayByJsonBytes`); return the items kept and their bytes.

    >>> cap_newest([{"a": 1}, {"b": 2}, {"c": 3}], 17)
    ([{'b': 2}, {'c': 3}], 17)
    >>> cap_newest([{"a": 1}, {"b": 2}], 3)
    ([{'b': 2}], 9)
    """
    if not items:
        return [], 2
    sizes = list(sizes) if sizes is not None else [json_bytes(item) for item in items]
    total = array_bytes(sizes)
    start = 0
    while total > budget and start < len(items) - 1:
        total -= sizes[start] + 1
        start += 1
    return list(items[start:]), total


def cap_from_edge(messages: Sequence[Message], budget: int, *, keep_newest: bool) -> list[Message]:
    """A cursor page cut to `budget`: whole seq groups are dropped from the end away
    from the cursor (the oldest for an `older` page, `keep_newest=True`; the newest for a
    `newer` page) while the array is over budget, keeping at least the group next to
    the cursor.

    >>> rows = [{"__openclaw": {"id": name, "seq": seq}}
    ...         for seq, name in enumerate("abc", start=1)]
    >>> [message_id(row) for row in cap_from_edge(rows, 70, keep_newest=True)]
    ['b', 'c']
    >>> [message_id(row) for row in cap_from_edge(rows, 10, keep_newest=False)]
    ['a']
    """
    if not messages:
        return []
    costs = [json_bytes(message) + 1 for message in messages]
    total = 1 + sum(costs)
    start, end = 0, len(messages)
    while total > budget:
        if keep_newest:
            group = seq_group(messages, start, costs)
            if group.end >= end:
                break
            start, total = group.end, total - group.cost
        else:
            group = seq_group(messages, end - 1, costs)
            if group.start <= start:
                break
            end, total = group.start, total - group.cost
    return list(messages[start:end])


def replace_oversized(messages: Sequence[Message],
                      single_max: int = SINGLE_MESSAGE_MAX_BYTES) -> tuple[list[Message], int]:
    """Each message larger than `single_max` bytes replaced by the Gateway placeholder;
    return the page and how many were replaced.

    >>> page, replaced = replace_oversized([{"role": "user", "content": "x" * 50,
    ...     "timestamp": 1, "__openclaw": {"id": "m", "seq": 1}}], 40)
    >>> replaced, page[0]["content"][0]["text"], page[0]["__openclaw"]["reason"]
    (1, '[chat.history omitted: message too large]', 'oversized')
    """
    replaced = 0
    page: list[Message] = []
    for message in messages:
        if json_bytes(message) <= single_max:
            page.append(message)
        else:
            replaced += 1
            page.append(gateway_placeholder(message))
    return page, replaced


def gateway_placeholder(message: Message) -> Message:
    """The Gateway's stand-in for a message too large to send."""
    metadata = message.get(METADATA) if isinstance(message.get(METADATA), dict) else {}
    role = message.get("role") if isinstance(message.get("role"), str) else "assistant"
    placeholder: Message = {"role": role, "timestamp": message.get("timestamp", 0),
                            "content": [{"type": "text", "text": GATEWAY_PLACEHOLDER_TEXT}]}
    for key in TOOL_IDENTITY_KEYS:
        if isinstance(message.get(key), str):
            placeholder[key] = message[key]
    if isinstance(message.get("isError"), bool):
        placeholder["isError"] = message["isError"]
    kept = {key: metadata[key] for key in ("kind", "id", "seq") if key in metadata}
    placeholder[METADATA] = {**kept, "truncated": True, "reason": "oversized"}
    return placeholder


def cap_items_around(items: Sequence[Message], anchor_id: str,
                     budget: int) -> tuple[list[Message], int]:
    """The tool's growth around its anchor, one item at a time, older then newer
    (upstream `capSessionsHistoryAroundMessage`); `cap_newest` when the anchor is not
    among `items`. Returns the items kept and their bytes (which exceed `budget` only
    when the anchor alone does).

    >>> rows = [{"__openclaw": {"id": name}} for name in "abc"]
    >>> cap_items_around(rows, "b", 60)
    ([{'__openclaw': {'id': 'a'}}, {'__openclaw': {'id': 'b'}}], 53)
    """
    anchor = next((index for index, item in enumerate(items)
                   if message_id(item) == anchor_id), None)
    if anchor is None:
        return cap_newest(items, budget)
    sizes = [json_bytes(item) for item in items]
    start, end, total = anchor, anchor + 1, sizes[anchor] + 2
    grow_older, grow_newer = start > 0, end < len(items)
    while grow_older or grow_newer:
        if grow_older:
            candidate = total + sizes[start - 1] + 1
            if candidate <= budget:
                start, total = start - 1, candidate
            else:
                grow_older = False
        grow_older = grow_older and start > 0
        if grow_newer:
            candidate = total + sizes[end] + 1
            if candidate <= budget:
                end, total = end + 1, candidate
            else:
                grow_newer = False
        grow_newer = grow_newer and end < len(items)
    return list(items[start:end]), total


@dataclass(frozen=True, slots=True)
class HardCapped:
    """The tool's page after its hard cap: items, their bytes, whether the cap cut."""

    items: tuple[Message, ...]
    bytes: int
    capped: bool


def hard_cap(items: Sequence[Message], total: int, budget: int) -> HardCapped:
    """Still over `budget`: only the last item, or its placeholder when that is too big
    too (upstream `enforceSessionsHistoryHardCap`).

    >>> hard_cap([{"a": 1}], 9, 100)
    HardCapped(items=({'a': 1},), bytes=9, capped=False)
    >>> big = {"role": "user", "content": "x" * 200, "__openclaw": {"id": "m", "seq": 4}}
    >>> hard_cap([big], 300, 100).items[0]
    {'role': 'assistant', 'content': '[sessions_history omitted: message too large]', '__openclaw': {'seq': 4, 'id': 'm'}}
    """
    if total <= budget:
        return HardCapped(tuple(items), total, False)
    last = list(items[-1:])
    last_bytes = json_bytes(last)
    if last_bytes <= budget:
        return HardCapped(tuple(last), last_bytes, True)
    placeholder = [tool_placeholder(last[0] if last else None)]
    return HardCapped(tuple(placeholder), json_bytes(placeholder), True)


def tool_placeholder(source: Message | None) -> Message:
    """The tool's stand-in for a message too large for its budget."""
    placeholder: Message = {"role": "assistant", "content": TOOL_PLACEHOLDER_TEXT}
    seq, entry_id = message_seq(source), message_id(source)
    if seq is not None or entry_id is not None:
        metadata: dict[str, Any] = {}
        if seq is not None:
            metadata["seq"] = seq
        if entry_id is not None:
            metadata["id"] = entry_id
        placeholder[METADATA] = metadata
    return placeholder

