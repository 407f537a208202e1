"""`forward_indexing.classify_append` reads an event's `type` once; its answers are those
of the clear reading through `events.is_leaf_control`, `events.is_side_append` and
`canonical_entry_id` (each reading the type itself), for every kind of type value (a
canonical kind, a leaf, another string, a number, a list, none) and every state."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.backends.forward_indexing import canonical_entry_id, classify_append, declared_parent
from engine.index.lifecycle import WindowIndexState
from engine.model import StoredEvent
from engine.transcript import events as kinds

TYPES = st.sampled_from(["message", "leaf", "reset", "compaction", "custom_message",
                         "model_change", "", 3, None, ["leaf"], {"a": 1}, True])
IDS = st.sampled_from(["m1", "m2", " ", "", None, 7])
MISSING = object()


def clear(state: WindowIndexState | None, stored: StoredEvent, indexable: bool) -> tuple:
    """The decision as the module's table says it, each helper reading the event."""
    if state is None:
        if stored.seq != 0:
            return "defer", None
        state = WindowIndexState()
    if state.needs_rebuild:
        return "skip", state
    event = stored.event if isinstance(stored.event, dict) else {}
    entry_id = canonical_entry_id(event)
    if (stored.seq != state.indexed_seq + 1 or kinds.is_leaf_control(event)
            or kinds.is_side_append(event)
            or (entry_id is not None
                and declared_parent(event, state.leaf_event_id) != state.leaf_event_id)):
        return "dirty", state._replace(needs_rebuild=True)
    leaf = entry_id if entry_id is not None else state.leaf_event_id
    return ("index" if indexable else "advance"), WindowIndexState(stored.seq, leaf)


@st.composite
def events(draw: Any) -> Any:
    event: dict[str, Any] = {}
    for key, values in (("type", TYPES), ("id", IDS), ("parentId", IDS),
                        ("appendMode", st.sampled_from(["side", "main", None]))):
        value = draw(st.one_of(st.just(MISSING), values))
        if value is not MISSING:
            event[key] = value
    return draw(st.sampled_from([event, event, [event], "text"]))


@settings(max_examples=600, deadline=None)
@given(events(), st.integers(0, 3),
       st.one_of(st.none(), st.builds(WindowIndexState, st.integers(-1, 2),
                                      st.sampled_from([None, "m1", "m2"]), st.booleans())),
       st.booleans())
def test_one_read_of_the_type_decides_as_the_helpers_do(event: Any, seq: int,
                                                        state: WindowIndexState | None,
                                                        indexable: bool) -> None:
    stored = StoredEvent("w", seq, event)
    assert classify_append(state, stored, indexable=indexable) == clear(state, stored, indexable)
