"""The leaf rule and the active path (engine.transcript.tree) on small hand-made windows."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.model import StoredEvent
from engine.transcript.tree import active_path, is_on_active_path, scan_tree, visible_events


def window(*events: dict[str, Any]) -> list[StoredEvent]:
    """Stored events of one window, `seq` in the order given."""
    return [StoredEvent("s", seq, event) for seq, event in enumerate(events)]


def message(entry_id: str, parent: str | None, **extra: Any) -> dict[str, Any]:
    return {"type": "message", "id": entry_id, "parentId": parent,
            "message": {"role": "user", "content": entry_id}, **extra}


def leaf(entry_id: str, parent: str | None, target: str | None) -> dict[str, Any]:
    return {"type": "leaf", "id": entry_id, "parentId": parent, "targetId": target}


def path_ids(events: list[StoredEvent]) -> list[str]:
    return [stored.event["id"] for stored in active_path(events)]


def test_linear_chain_is_the_whole_path() -> None:
    events = window(message("m1", None), message("m2", "m1"), message("m3", "m2"))
    assert path_ids(events) == ["m1", "m2", "m3"]
    assert scan_tree(events).leaf_id == "m3"


def test_rewind_abandons_the_branch() -> None:
    # behaviour.md §12.2: m1 "alpha origin", m2 "beta abandoned", leaf -> m1.
    events = window(message("m1", None), message("m2", "m1"), leaf("l1", "m2", "m1"))
    assert path_ids(events) == ["m1"]
    assert is_on_active_path(events, "m2") is False


def test_append_after_rewind_extends_the_target() -> None:
    events = window(message("m1", None), message("m2", "m1"), leaf("l1", "m2", "m1"),
                    message("m3", "m1"))
    assert path_ids(events) == ["m1", "m3"]


def test_append_whose_parent_is_the_leaf_event_hangs_from_its_target() -> None:
    events = window(message("m1", None), message("m2", "m1"), leaf("l1", "m2", "m1"),
                    message("m3", "l1"))
    assert path_ids(events) == ["m1", "m3"]
    assert scan_tree(events).nodes["m3"].parent_id == "m1"


def test_branch_switch_back_to_an_older_branch() -> None:
    events = window(message("q", None), message("a1", "q"), message("a2", "q"),
                    leaf("l1", "a2", "a1"))
    assert path_ids(events) == ["q", "a1"]


def test_new_branch_append_becomes_the_leaf() -> None:
    events = window(message("q", None), message("a1", "q"), message("a2", "q"))
    assert path_ids(events) == ["q", "a2"]


def test_side_append_joins_the_tree_without_moving_the_leaf() -> None:
    events = window(message("q", None), message("a1", "q"),
                    message("side", "q", appendMode="side"))
    tree = scan_tree(events)
    assert "side" in tree.nodes
    assert path_ids(events) == ["q", "a1"]


def test_opaque_kind_does_not_move_the_leaf_but_can_be_an_ancestor() -> None:
    opaque = {"type": "vendor_note", "id": "v1", "parentId": "m1"}
    events = window(message("m1", None), opaque)
    assert path_ids(events) == ["m1"]
    events = window(message("m1", None), opaque, message("m2", "v1"))
    assert path_ids(events) == ["m1", "v1", "m2"]


def test_parentless_canonical_entry_continues_the_leaf() -> None:
    events = window(message("m1", None), {"type": "message", "id": "m2",
                                          "message": {"role": "user", "content": "x"}})
    assert path_ids(events) == ["m1", "m2"]


def test_leaf_to_null_empties_the_path_and_nothing_is_visible() -> None:
    events = window(message("m1", None), leaf("l1", "m1", None))
    assert path_ids(events) == []
    assert visible_events(events) == []


def test_leaf_with_unknown_target_is_ignored() -> None:
    events = window(message("m1", None), message("m2", "m1"), leaf("l1", "m2", "ghost"))
    tree = scan_tree(events)
    assert tree.leaf_id == "m2"
    assert tree.invalid_leaf_controls == (2,)
    assert path_ids(events) == ["m1", "m2"]


def test_leaf_naming_a_later_entry_is_invalid() -> None:
    events = window(message("m1", None), leaf("l1", "m1", "m2"), message("m2", "m1"))
    assert scan_tree(events).invalid_leaf_controls == (1,)
    assert path_ids(events) == ["m1", "m2"]


def test_missing_parent_keeps_the_reachable_suffix() -> None:
    events = window(message("m2", "gone"), message("m3", "m2"))
    assert path_ids(events) == ["m2", "m3"]


def test_cycle_gives_an_empty_path_and_flat_fallback() -> None:
    events = window(message("a", "b"), message("b", "a"))
    assert path_ids(events) == []
    # no leaf event: a window without a usable tree is read flat
    assert visible_events(events) == events


def test_header_and_id_less_events_are_not_tree_entries() -> None:
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00Z"}
    events = window(header, message("m1", None), {"type": "message", "message": {}})
    tree = scan_tree(events)
    assert sorted(tree.nodes) == ["m1"]
    assert [stored.seq for stored in visible_events(events)] == [1]


def test_events_without_ids_are_visible_flat() -> None:
    events = window({"type": "message", "message": {"role": "user", "content": "a"}},
                    {"type": "message", "message": {"role": "user", "content": "b"}})
    assert visible_events(events) == events


def test_reset_is_on_the_active_path() -> None:
    reset = {"type": "reset", "id": "r1", "parentId": "m2", "firstKeptEntryId": "m2"}
    events = window(message("m1", None), message("m2", "m1"), reset, message("m3", "r1"))
    assert path_ids(events) == ["m1", "m2", "r1", "m3"]


def test_duplicate_id_later_entry_wins() -> None:
    events = window(message("m1", None), message("m2", "m1"), message("m2", None))
    assert path_ids(events) == ["m2"]
    assert active_path(events)[0].seq == 2


# ---- property: random appends, rewinds and branch switches ---------------------------

#: An operation: ("append", parent index or None, side?) or ("leaf", target index or None).
operations = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.one_of(st.none(), st.integers(0, 40)), st.booleans()),
        st.tuples(st.just("leaf"), st.one_of(st.none(), st.integers(0, 40)), st.just(False)),
    ),
    max_size=30,
)


def naive_walk(parents: dict[str, str | None], leaf_id: str | None) -> list[str]:
    """Root-first ancestors of `leaf_id`, written as plainly as possible (the oracle)."""
    path: list[str] = []
    while leaf_id is not None:
        path.insert(0, leaf_id)
        leaf_id = parents[leaf_id]
    return path


@settings(max_examples=150, deadline=None)
@given(operations)
def test_active_path_matches_a_naive_simulation(ops: list[tuple[str, int | None, bool]]) -> None:
    """Messages always name an earlier message (or null), leaf events an earlier message."""
    events: list[dict[str, Any]] = []
    parents: dict[str, str | None] = {}
    messages: list[str] = []
    leaf_id: str | None = None
    saw_leaf = False
    for number, (kind, pick, side) in enumerate(ops):
        chosen = messages[pick % len(messages)] if pick is not None and messages else None
        if kind == "append":
            entry_id = f"m{number}"
            event = message(entry_id, chosen)
            if side:
                event["appendMode"] = "side"
            events.append(event)
            parents[entry_id] = chosen
            messages.append(entry_id)
            if not side:
                leaf_id = entry_id
        else:
            events.append(leaf(f"l{number}", leaf_id, chosen))
            leaf_id, saw_leaf = chosen, True
    stored = window(*events)
    expected = naive_walk(parents, leaf_id)
    assert path_ids(stored) == expected
    assert scan_tree(stored).leaf_id == leaf_id
    visible = [s.event.get("id") for s in visible_events(stored)]
    if expected:
        assert visible == expected
    elif saw_leaf:
        assert visible == []
    else:
        assert visible == [event.get("id") for event in events]
