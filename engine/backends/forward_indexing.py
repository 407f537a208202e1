"""The forward indexer's decision for one appended event (behaviour.md §8.1), for every backend.

Owns: reading an appended transcript event in the index's terms (does it move the leaf,
join the tree beside it, or continue it) and deciding what the forward indexer does with
it. Must not touch: storage, tokens, SQL, what is searchable (the caller says whether the
event yields an index entry). It joins two sibling layers: the event vocabulary of
`engine.transcript.events` (a pure module of constants, also read by the tree rules of
`engine.transcript.tree`, so that the forward indexer and the rebuild can never disagree
about what moves the leaf) and the window index state of `engine.index.lifecycle`. Both
backends call `classify_append`, so they agree on which windows are searchable.

Vocabulary:
* a *canonical entry* is an event of a canonical kind (`events.CANONICAL_KINDS`) with a
  non-blank string `id`; appending one moves the leaf to it, unless it is a *side append*
  (`appendMode: "side"`), which joins the tree beside the active branch;
* an *opaque entry* (another kind with an `id`) joins the tree without moving the leaf.

The forward indexer, for an event appended at `seq` to a window with state `s`:

| condition | action |
|---|---|
| no state and `seq == 0` | process it as below, starting from an empty state |
| no state and `seq > 0` (e.g. an import of an older transcript) | `defer`: leave unindexed; reconcile later |
| `s.needs_rebuild` | `skip` (the rebuild will see it) |
| `seq != s.indexed_seq + 1` | `dirty` |
| a `leaf` event (rewind, branch switch) | `dirty` |
| a side append | `dirty` |
| a canonical entry whose declared `parentId` is not `s.leaf_event_id` (a new branch) | `dirty` |
| a canonical entry whose `parentId` is blank or not a string | `dirty` (the rebuild decides) |
| otherwise | `index` (if it yields an index entry) or `advance`; watermark moves to `seq`; a canonical entry becomes the leaf (one without a `parentId` key continues the leaf) |

`dirty` sets `needs_rebuild` without touching existing rows; windows that need a rebuild
are excluded from search until reconciled (§5.3) and make `indexing` true (§8.4). Marking
dirty is always safe: the rebuild from the active path is the authority.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from engine.index.lifecycle import WindowIndexState
from engine.model import StoredEvent
from engine.transcript import events as kinds

AppendAction = Literal["index", "advance", "dirty", "skip", "defer"]


def canonical_entry_id(event: dict[str, Any]) -> str | None:
    """The id of a canonical tree entry (the kinds that move the leaf), else None.

    >>> canonical_entry_id({"type": "message", "id": "m1"})
    'm1'
    >>> canonical_entry_id({"type": "leaf", "id": "x", "targetId": "m1"}) is None
    True
    >>> canonical_entry_id({"type": "model_snapshot", "id": "o1"}) is None
    True
    """
    if not kinds.is_canonical(event):
        return None
    return kinds.non_blank_string(event.get("id"))


def declared_parent(event: dict[str, Any], leaf_event_id: str | None) -> str | None | object:
    """The parent a canonical entry declares: its `parentId`, the leaf when the key is
    absent, or `...` when the value is unusable (blank or not a string).

    >>> declared_parent({"parentId": "m1"}, "x"), declared_parent({"parentId": None}, "x")
    ('m1', None)
    >>> declared_parent({}, "x"), declared_parent({"parentId": " "}, "x")
    ('x', Ellipsis)
    """
    if "parentId" not in event:
        return leaf_event_id
    value = event["parentId"]
    if value is None:
        return None
    return kinds.non_blank_string(value) or ...


def classify_append(
    state: WindowIndexState | None, stored: StoredEvent, *, indexable: bool
) -> tuple[AppendAction, WindowIndexState | None]:
    """Decide what the forward indexer does with one appended event (see the table above).

    `indexable` says whether the event yields an index entry (behaviour.md §2.3); the
    caller computes it with the projection rules. Returns the action and the new state
    (None while the window has no state).

    >>> event = StoredEvent("w", 0, {"type": "message", "id": "m1", "parentId": None})
    >>> classify_append(None, event, indexable=True)
    ('index', WindowIndexState(indexed_seq=0, leaf_event_id='m1', needs_rebuild=False))
    >>> classify_append(None, StoredEvent("w", 3, {"type": "message", "id": "m4"}), indexable=True)
    ('defer', None)
    >>> rewind = StoredEvent("w", 1, {"type": "leaf", "id": "l1", "targetId": "m1"})
    >>> classify_append(WindowIndexState(0, "m1"), rewind, indexable=False)
    ('dirty', WindowIndexState(indexed_seq=0, leaf_event_id='m1', needs_rebuild=True))
    """
    if state is None:
        if stored.seq != 0:
            return "defer", None
        state = WindowIndexState()
    if state.needs_rebuild:
        return "skip", state
    event = stored.event if isinstance(stored.event, dict) else {}
    # The event's `type` read once (`canonical_entry_id`, `events.is_leaf_control` and
    # `events.is_side_append` each read it, as `events.event_type`: the same answers).
    kind = event.get("type")
    canonical = isinstance(kind, str) and kind in kinds.CANONICAL_KINDS
    entry_id = kinds.non_blank_string(event.get("id")) if canonical else None
    dirty = (
        stored.seq != state.indexed_seq + 1
        or (kind == kinds.LEAF and isinstance(kind, str))
        or (canonical and event.get("appendMode") == kinds.SIDE_APPEND)
        or (entry_id is not None and declared_parent(event, state.leaf_event_id)
            != state.leaf_event_id)
    )
    if dirty:
        return "dirty", state._replace(needs_rebuild=True)
    new_leaf = entry_id if entry_id is not None else state.leaf_event_id
    new_state = WindowIndexState(indexed_seq=stored.seq, leaf_event_id=new_leaf)
    return ("index" if indexable else "advance"), new_state


def forward_state(events: Iterable[StoredEvent]) -> WindowIndexState | None:
    """The state the forward indexer leaves a window in that held no event and no state
    when `events` (seq 0, 1, ...) were appended to it one by one: dirty as soon as one
    event makes it so (dirty is sticky), None for no event. Only the state moves of
    `classify_append` are followed (they do not depend on whether an event is
    indexable), so no text is read.

    A window this leaves clean gets from the forward indexer exactly the rows a rebuild
    of its events would give it; a dirty one gets its rows from a rebuild (reconcile, or
    a writer that rebuilds the window at once, `engine.backends.sqlite.writes`).

    >>> first = StoredEvent("w", 0, {"type": "message", "id": "m1", "parentId": None})
    >>> rewind = StoredEvent("w", 1, {"type": "leaf", "id": "l1", "targetId": "m1"})
    >>> forward_state([first])
    WindowIndexState(indexed_seq=0, leaf_event_id='m1', needs_rebuild=False)
    >>> forward_state([first, rewind]).needs_rebuild, forward_state([]) is None
    (True, True)
    """
    state: WindowIndexState | None = None
    for stored in events:
        state = classify_append(state, stored, indexable=True)[1]
        if state is not None and state.needs_rebuild:
            break
    return state
