"""The per-window index state every backend keeps (behaviour.md §8).

Owns: the per-window index state (watermark, leaf, dirty flag), the state after a
rebuild, and the needs-reconcile predicate (§8.3). Must not touch: storage, tokens, SQL,
the transcript's event vocabulary. Both the reference backend and the SQLite backend keep
these values and call these pure functions, so the two agree on which windows are
searchable and on the `indexing` flag by construction; the differential tests then check
everything else. The decision the forward indexer makes for each appended event (§8.1)
reads the transcript's event kinds, so it lives above both, in
`engine.backends.forward_indexing`.

Vocabulary:
* the *watermark* `indexed_seq` is the last `seq` the forward indexer consumed (-1: none);
* `leaf_event_id` is the id of the leaf after the events the forward indexer accepted;
* `needs_rebuild` (dirty) is sticky until a rebuild from the active path; windows that
  need one are excluded from search until reconciled (§5.3) and make `indexing` true
  (§8.4).

`WindowIndexState` is a NamedTuple, not a frozen dataclass: every search imports this
module and reads a state per window (a NamedTuple's class costs a fraction of a
dataclass's to make, and an instance is made in one C call). It reads, hashes and prints
as the dataclass did, and is rebuilt with `_replace`; unlike the dataclass it also equals
a plain tuple of its values, which nothing compares it with.
"""

from __future__ import annotations

from typing import NamedTuple


class WindowIndexState(NamedTuple):
    """What the index knows about one window (upstream `session_transcript_index_state`)."""

    indexed_seq: int = -1
    leaf_event_id: str | None = None
    needs_rebuild: bool = False


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
