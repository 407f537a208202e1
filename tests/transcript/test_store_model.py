"""Random transactions, aborts and crashes against a plain-dict model of the store."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.config import EngineConfig
from engine.directory import MemoryDirectory
from engine.errors import UnknownSession
from engine.model import SessionWindow
from engine.transcript.changes import EventAppended, SessionDeleted, TranscriptReplaced, WindowPut
from engine.transcript.store import TranscriptStore
from engine.transcript.transaction import StoreTransaction

TINY = EngineConfig(log_roll_bytes=150)
SESSION_IDS = ["s0", "s1", "s2", "s3"]
KEYS = ["agent:a:main", "agent:b:main", "global"]

operations = st.one_of(
    st.tuples(st.just("put"), st.sampled_from(SESSION_IDS), st.sampled_from(KEYS)),
    st.tuples(st.just("append"), st.sampled_from(SESSION_IDS), st.integers(0, 99)),
    st.tuples(st.just("delete"), st.sampled_from(KEYS), st.just(0)),
    st.tuples(st.just("replace"), st.sampled_from(SESSION_IDS),
              st.lists(st.integers(0, 99), max_size=4)),
)
transactions = st.tuples(
    st.lists(operations, min_size=1, max_size=5),
    st.sampled_from(["commit", "commit", "abort", "crash-after-commit", "crash-inside"]),
)


class Model:
    """Windows (session id → key, in first-insertion order) and their event payloads."""

    def __init__(self) -> None:
        self.windows: dict[str, str] = {}
        self.events: dict[str, list[dict[str, Any]]] = {}
        self.key_members: dict[str, list[str]] = {}  # windows of a key, in joining order

    def put(self, session_id: str, key: str) -> None:
        previous = self.windows.get(session_id)
        if previous != key:
            if previous is not None:
                self.key_members[previous].remove(session_id)
            self.key_members.setdefault(key, []).append(session_id)
        self.windows[session_id] = key
        self.events.setdefault(session_id, [])

    def append(self, session_id: str, event: dict[str, Any]) -> int | None:
        if session_id not in self.windows:
            return None
        self.events[session_id].append(event)
        return len(self.events[session_id]) - 1

    def replace(self, session_id: str, events: list[dict[str, Any]]) -> int | None:
        if session_id not in self.windows:
            return None
        self.events[session_id] = list(events)
        return len(events)

    def delete(self, key: str) -> int:
        doomed = [sid for sid, owner in self.windows.items() if owner == key]
        for session_id in doomed:
            del self.windows[session_id]
            del self.events[session_id]
        self.key_members.pop(key, None)
        return len(doomed)

    def state(self) -> tuple[object, ...]:
        members = {key: ids for key, ids in self.key_members.items() if ids}
        return list(self.windows.items()), self.events, members


def observed(store: TranscriptStore | StoreTransaction) -> tuple[object, ...]:
    windows = [(w.session_id, w.session_key) for w in store.windows()]
    events = {w.session_id: [e.event for e in store.events(w.session_id)]
              for w in store.windows()}
    members = {key: [w.session_id for w in store.windows_of(key)] for key in KEYS}
    return windows, events, {key: ids for key, ids in members.items() if ids}


def replay_feed(store: TranscriptStore) -> tuple[object, ...]:
    """Rebuild the state from `changes_since(0)` alone."""
    model = Model()
    for _generation, change in store.changes_since(0):
        if isinstance(change, WindowPut):
            model.put(change.window.session_id, change.window.session_key)
        elif isinstance(change, EventAppended):
            assert model.append(change.event.session_id, change.event.event) == change.event.seq
        elif isinstance(change, TranscriptReplaced):
            events = [stored.event for stored in change.events]
            assert [stored.seq for stored in change.events] == list(range(len(events)))
            assert model.replace(change.session_id, events) == len(events)
        elif isinstance(change, SessionDeleted):
            assert model.delete(change.session_key) == len(change.session_ids)
    return model.state()


def written_as_modelled(write: Callable[[], int], expected: int | None) -> None:
    """`write()` returns what the model expects, or is refused (`UnknownSession`) when
    the model says the window is absent (None)."""
    if expected is None:
        with pytest.raises(UnknownSession):
            write()
    else:
        assert write() == expected


def apply(transaction: Any, model: Model, operation: tuple[str, str, Any]) -> None:
    kind, name, value = operation
    if kind == "put":
        transaction.put_window(SessionWindow(name, value))
        model.put(name, value)
    elif kind == "append":
        event = {"id": f"e{value}", "n": value}
        written_as_modelled(lambda: transaction.append_event(name, event),
                            model.append(name, event))
    elif kind == "replace":
        events = [{"id": f"r{number}", "n": number} for number in value]
        written_as_modelled(lambda: transaction.replace_transcript(name, events),
                            model.replace(name, events))
    else:
        assert transaction.delete_session(name) == model.delete(name)


@settings(max_examples=100, deadline=None)
@given(st.lists(transactions, max_size=8))
def test_store_matches_the_model(plan: list[tuple[list[Any], str]]) -> None:
    directory = MemoryDirectory()
    store = TranscriptStore.create(directory, config=TINY)
    model = Model()
    generation = 0
    for operations_of_transaction, ending in plan:
        scratch = copy.deepcopy(model)
        crashed: MemoryDirectory | None = None
        try:
            with store.transaction() as transaction:
                for operation in operations_of_transaction:
                    apply(transaction, scratch, operation)
                    assert observed(transaction) == scratch.state()  # reads see own writes
                if ending == "abort":
                    raise LookupError("abort")
                if ending == "crash-inside":
                    crashed = directory.crash_copy()
        except LookupError:
            pass
        if ending in ("commit", "crash-after-commit"):
            model = scratch
            generation = store.generation
        # crash-inside: the copy was taken before the commit, so it holds the old state
        if ending == "crash-after-commit":
            crashed = directory.crash_copy()
        if crashed is not None:
            store.close()
            directory = crashed
            store = TranscriptStore.open(directory, writer=True, config=TINY)
            assert store.generation == generation
        assert observed(store) == model.state()
    store.close()
    with TranscriptStore.open(directory) as reader:
        assert observed(reader) == model.state()
        assert replay_feed(reader) == model.state()
