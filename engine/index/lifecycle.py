"""Index-state decisions shared by every backend (behaviour.md §8).

Owns: the per-window index state (watermark, leaf, dirty flag), the forward-indexing
decision made in the same transaction as an append (§8.1), and the needs-reconcile
predicate (§8.3). Must not touch: storage, tokens, SQL. Both the reference backend and
the SQLite backend call these pure functions, so the two agree on which windows are
searchable and on the `indexing` flag by construction; the differential tests then check
everything else.

Vocabulary:
* a *tree entry* is an event with a non-blank string `id` whose type is neither the
  OpenClaw file header (`session`) nor a leaf-control event (`leaf`);
* the *watermark* `indexed_seq` is the last `seq` the forward indexer consumed (-1: none);
* `leaf_event_id` is the id of the newest tree entry the forward indexer accepted.

The forward indexer (§8.1), for an event appended at `seq` to a window with state `s`:

| condition | action |
|---|---|
| no state and `seq == 0` | process it as below, starting from an empty state |
| no state and `seq > 0` (e.g. an import of an older transcript) | `defer`: leave unindexed; reconcile later |
| `s.needs_rebuild` | `skip` (the rebuild will see it) |
| `seq != s.indexed_seq + 1` | `dirty` |
| a `leaf` event (rewind, branch switch) | `dirty` |
| a tree entry whose `parentId` is not `s.leaf_event_id` (a side append) | `dirty` |
| otherwise | `index` (if it yields an index entry) or `advance`; watermark moves to `seq` |

`dirty` sets `needs_rebuild` without touching existing rows; windows that need a rebuild
are excluded from search until reconciled (§5.3) and make `indexing` true (§8.4).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

from engine.model import StoredEvent

AppendAction = Literal["index", "advance", "dirty", "skip", "defer"]

NON_TREE_TYPES = frozenset({"session", "leaf"})


@dataclass(frozen=True, slots=True)
class WindowIndexState:
    """What the index knows about one window (upstream `session_transcript_index_state`)."""

    indexed_seq: int = -1
    leaf_event_id: str | None = None
    needs_rebuild: bool = False


def tree_entry_id(event: dict[str, Any]) -> str | None:
    """The id of a tree entry, or None for headers, leaf-control events and id-less events.

    >>> tree_entry_id({"type": "message", "id": " m1 "})
    'm1'
    >>> tree_entry_id({"type": "leaf", "id": "x", "targetId": "m1"}) is None
    True
    >>> tree_entry_id({"type": "message"}) is None
    True
    """
    if event.get("type") in NON_TREE_TYPES:
        return None
    value = event.get("id")
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


def parent_id_of(event: dict[str, Any]) -> str | None:
    """The trimmed `parentId` of an event, or None when absent, null or blank.

    >>> parent_id_of({"parentId": "m1"}), parent_id_of({"parentId": None})
    ('m1', None)
    """
    value = event.get("parentId")
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


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
    event = stored.event
    entry_id = tree_entry_id(event)
    dirty = (
        stored.seq != state.indexed_seq + 1
        or event.get("type") == "leaf"
        or (entry_id is not None and parent_id_of(event) != state.leaf_event_id)
    )
    if dirty:
        return "dirty", replace(state, needs_rebuild=True)
    new_leaf = entry_id if entry_id is not None else state.leaf_event_id
    new_state = WindowIndexState(indexed_seq=stored.seq, leaf_event_id=new_leaf)
    return ("index" if indexable else "advance"), new_state


def rebuilt_state(last_seq: int, active_leaf_id: str | None) -> WindowIndexState:
    """The state after a full rebuild of a window from its active path.

    >>> rebuilt_state(7, "m5")
    WindowIndexState(indexed_seq=7, leaf_event_id='m5', needs_rebuild=False)
    """
    return WindowIndexState(indexed_seq=last_seq, leaf_event_id=active_leaf_id)


def needs_reconcile(state: WindowIndexState | None, last_seq: int) -> bool:
    """§8.3: a window with events needs work when it has no state, is dirty, or lags.

    `last_seq` is the newest seq of the window (-1 when it has no events).

    >>> needs_reconcile(None, -1), needs_reconcile(None, 0)
    (False, True)
    >>> needs_reconcile(WindowIndexState(4, "m"), 4), needs_reconcile(WindowIndexState(3, "m"), 4)
    (False, True)
    """
    if last_seq < 0:
        return False
    if state is None:
        return True
    return state.needs_rebuild or last_seq > state.indexed_seq
