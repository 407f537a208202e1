"""The writes of the reference-backend state machines, shared: new windows, appends on and
off the active path (linear, branching, side), rewinds, deletes, reconcile, flush, merge.

A machine extends `WindowWriteRules` with its own invariants and rules; it sets `KEYS`
and `WORDS` and makes `self.backend` (the writer) before the rules run.
"""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

from engine.backends.reference.backend import ReferenceBackend
from engine.model import SessionWindow


class WindowWriteRules(RuleBasedStateMachine):
    """Random writes through `self.backend`, remembering each window's key and entries."""

    KEYS: tuple[str, ...] = ("agent:main:a", "agent:main:b", "global")
    WORDS: tuple[str, ...] = ("amber", "basil", "cedar", "dill")
    backend: ReferenceBackend

    def __init__(self) -> None:
        super().__init__()
        self.windows: dict[str, str] = {}  # session id -> key
        self.entry_ids: dict[str, list[str]] = {}
        self.counter = 0

    def next_id(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def put_new_window(self, key: str, archived: bool = False) -> None:
        session_id = self.next_id("s")
        with self.backend.transaction() as transaction:
            transaction.put_window(SessionWindow(session_id, key, archived=archived))
        self.windows[session_id] = key
        self.entry_ids[session_id] = []

    @initialize()
    def first_windows(self):
        for key in self.KEYS[:3]:
            self.put_new_window(key)

    @rule(data=st.data())
    def new_window(self, data):
        self.put_new_window(data.draw(st.sampled_from(self.KEYS)))

    @precondition(lambda self: self.windows)
    @rule(data=st.data(), role=st.sampled_from(["user", "assistant", "toolResult"]),
          parent_kind=st.sampled_from(["leaf", "leaf", "leaf", "other", "side"]))
    def append_message(self, data, role, parent_kind):
        session_id = data.draw(st.sampled_from(sorted(self.windows)))
        words = data.draw(st.lists(st.sampled_from(self.WORDS), min_size=1, max_size=3))
        known = self.entry_ids[session_id]
        parent = known[-1] if known else None
        if parent_kind == "other" and known:
            parent = data.draw(st.sampled_from(known))
        message_id = self.next_id("m")
        event = {"type": "message", "id": message_id, "parentId": parent, "timestamp": self.counter,
                 "message": {"role": role, "content": " ".join(words)}}
        if parent_kind == "side":
            event["appendMode"] = "side"
        with self.backend.transaction() as transaction:
            transaction.append_event(session_id, event)
        known.append(message_id)

    @precondition(lambda self: any(self.entry_ids.values()))
    @rule(data=st.data())
    def rewind(self, data):
        session_id = data.draw(st.sampled_from(sorted(s for s, ids in self.entry_ids.items() if ids)))
        target = data.draw(st.sampled_from(self.entry_ids[session_id]))
        with self.backend.transaction() as transaction:
            transaction.append_event(session_id, {"type": "leaf", "id": self.next_id("l"),
                                                  "parentId": self.entry_ids[session_id][-1], "targetId": target})

    @precondition(lambda self: self.windows)
    @rule(data=st.data())
    def delete(self, data):
        key = data.draw(st.sampled_from(self.KEYS))
        with self.backend.transaction() as transaction:
            transaction.delete_session(key)
        for session_id in [s for s, k in self.windows.items() if k == key]:
            del self.windows[session_id]
            del self.entry_ids[session_id]

    @rule()
    def reconcile(self):
        self.backend.reconcile()
        assert self.backend.index_status() is False

    @rule(merge=st.booleans())
    def flush_or_merge(self, merge):
        self.backend.merge() if merge else self.backend.flush()
