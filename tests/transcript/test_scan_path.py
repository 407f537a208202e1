"""`tree.scan_path` (a window's tree scanned one event at a time, keeping only ids,
parents and seqs) against the clear version it replaces in a long window's rebuild:
`scan_tree` and `visible_events` over every event held, on random windows of every kind
of tree entry, leaf event, duplicate, blank and missing field; and the events it reads
are let go as they are scanned."""

from __future__ import annotations

import gc
import weakref
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.model import StoredEvent
from engine.transcript.tree import ScannedPath, outline, scan_path, scan_tree, visible_events

IDS = ("m1", "m2", "m3", "l1", "l2", " ", "")
#: A field's value: absent (`...`), null, one of a few ids (blank ones included), a number.
VALUES = st.sampled_from((..., None, *IDS, 7))


@st.composite
def events(draw: st.DrawFn) -> Any:
    """One event: a tree entry of any kind, a leaf event, a header, or not an object."""
    if draw(st.integers(0, 19)) == 0:
        return draw(st.sampled_from(["text", 3, ["message"]]))
    kind = draw(st.sampled_from(["message", "compaction", "custom_message", "reset", "leaf",
                                 "leaf", "session", "custom", "branch_summary", 5]))
    event: dict[str, Any] = {"type": kind}
    for name in ("id", "parentId", "targetId"):
        value = draw(VALUES)
        if value is not ...:
            event[name] = value
    if draw(st.booleans()):
        event["appendMode"] = draw(st.sampled_from(["side", "main"]))
    event["message"] = {"role": "user", "content": "text"}
    return event


@settings(max_examples=400, deadline=None)
@given(st.lists(events(), max_size=40), st.integers(0, 3))
def test_scan_path_is_the_tree_and_visible_events_of_the_outlines(
        drawn: list[Any], start: int) -> None:
    stored = [StoredEvent("w", start + offset, event, 2.0) for offset, event in enumerate(drawn)]
    outlines = [outline(item) for item in stored]
    tree = scan_tree(outlines)
    path = scan_path(iter(stored))
    assert path.count == len(outlines)
    assert path.leaf_id == tree.leaf_id
    assert path.seqs == [item.seq for item in visible_events(outlines, tree)]
    assert path == scan_path(outlines) == scan_path(stored)


class Event(dict):  # type: ignore[type-arg]
    """An event that can be watched (`weakref`), as a plain dict cannot."""


def test_scan_path_lets_each_event_go_once_scanned() -> None:
    watched: list[weakref.ref[Event]] = []

    def window(count: int) -> Any:
        """A chain of `count` messages, rewound to the second after half of them."""
        parent = None
        for number in range(count):
            event = Event(type="message", id=f"m{number}", parentId=parent,
                          message={"role": "user", "content": "x" * 100})
            watched.append(weakref.ref(event))
            yield StoredEvent("w", len(watched) - 1, event)
            parent = f"m{number}"
            if number == count // 2:
                rewind = Event(type="leaf", id="l", parentId=parent, targetId="m1")
                watched.append(weakref.ref(rewind))
                yield StoredEvent("w", len(watched) - 1, rewind)
                parent = "m1"

    path = scan_path(window(50))
    gc.collect()
    assert all(reference() is None for reference in watched)
    assert path == ScannedPath(51, "m49", [0, 1, *range(27, 51)])
