"""Real stores for the agent-tool tests: sessions described as values, written for real.

Owns: `Session` (one session key, its ownership metadata and its messages), `build_store`
(a fresh store of either backend holding exactly those sessions, written through the
store's own transactions), the `backend_name` and `make_store` fixtures (every test that
uses them runs on both backends; the test folders' conftest files import them), `dirty` (a rewind that leaves a window needing reconcile, so
searches report `indexing: true`) and `CountingStore` (a real store behind a thin
delegating class that counts the kernel calls, and can hold a call until it is
interrupted). Must not touch: the tool or the access rules (the tests assert on them).

Nothing here is a mock: every answer comes from the reference or SQLite backend.
"""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from engine.backends.protocol import BackendTransaction, Interruptible, Refreshable
from engine.model import SearchRequest, SearchResult, SessionWindow, StoredEvent
from engine.store.partitioned import PartitionedStore
from engine.store.registry import open_backend

BACKENDS = ("reference", "sqlite", "postgres")


@dataclass(frozen=True, slots=True)
class Message:
    """One user or assistant message of a session."""

    text: str
    role: str = "user"
    timestamp: float = 1000
    message_id: str | None = None


@dataclass(frozen=True, slots=True)
class Session:
    """One session: its key, the metadata of its (single) window, and its messages."""

    key: str
    messages: tuple[Message, ...] = ()
    session_id: str | None = None
    spawned_by: str | None = None
    owner_session_key: str | None = None
    parent_session_key: str | None = None
    incognito: bool = False
    archived: bool = False
    extra_windows: tuple[SessionWindow, ...] = field(default=())


def session(key: str, *texts: str, **metadata: Any) -> Session:
    """A session whose messages are `texts` (user messages, timestamp 1000)."""
    return Session(key, tuple(Message(text) for text in texts), **metadata)


def message_event(message_id: str, parent: str | None, message: Message) -> dict[str, Any]:
    return {"type": "message", "id": message_id, "parentId": parent,
            "timestamp": message.timestamp,
            "message": {"role": message.role, "content": message.text}}


def session_id_of(number: int, described: Session) -> str:
    return described.session_id or f"s{number}"


def write_sessions(store: PartitionedStore, sessions: Sequence[Session]) -> None:
    """Write each session's window and messages in one transaction."""
    with store.transaction() as transaction:
        for number, described in enumerate(sessions):
            session_id = session_id_of(number, described)
            for window in described.extra_windows:
                transaction.put_window(window)
            transaction.put_window(SessionWindow(
                session_id, described.key, spawned_by=described.spawned_by,
                owner_session_key=described.owner_session_key,
                parent_session_key=described.parent_session_key,
                incognito=described.incognito, archived=described.archived))
            parent = None
            for position, message in enumerate(described.messages):
                message_id = message.message_id or f"{session_id}-m{position}"
                transaction.append_event(session_id, message_event(message_id, parent, message))
                parent = message_id


def build_store(path: Path, backend: str, sessions: Sequence[Session]) -> PartitionedStore:
    """A new store of `backend` at `path` holding `sessions` (the caller closes it)."""
    store = open_backend(path, backend=backend, create=True)
    write_sessions(store, sessions)
    return store


def dirty(store: PartitionedStore, session_id: str) -> None:
    """Rewind a window to its first message: it needs reconcile, so searches report
    `indexing: true` (behaviour.md §8.3) until a reconcile runs."""
    events = store.events(session_id)
    first, last = events[0].event["id"], events[-1].event["id"]
    with store.transaction() as transaction:
        transaction.append_event(session_id, {"type": "leaf", "id": f"{session_id}-leaf",
                                              "parentId": last, "targetId": first})


class CountingStore:
    """A real store that counts its kernel calls.

    With `hold_until_interrupted`, each `search` first waits (at most `hold_seconds`) for
    `interrupt()`, which the tool's watchdog calls when a budget runs out: a kernel call
    that is still running at the deadline, made deterministic.
    """

    def __init__(self, store: PartitionedStore, *, hold_until_interrupted: bool = False,
                 hold_seconds: float = 30.0) -> None:
        self.store = store
        self.requests: list[SearchRequest] = []
        self.interrupts = 0
        self.hold = hold_until_interrupted
        self.hold_seconds = hold_seconds
        self._interrupted = threading.Event()

    # the capabilities the tool uses, each delegated
    def search(self, request: SearchRequest) -> SearchResult:
        self.requests.append(request)
        if self.hold:
            self._interrupted.wait(self.hold_seconds)
        return self.store.search(request)

    def interrupt(self) -> None:
        self.interrupts += 1
        self._interrupted.set()
        assert isinstance(self.store, Interruptible)
        self.store.interrupt()

    def refresh(self) -> None:
        if isinstance(self.store, Refreshable):  # a live SQLite store sees every commit
            self.store.refresh()

    def stats(self) -> dict[str, int]:
        return self.store.stats()

    def close(self) -> None:
        self.store.close()

    def transaction(self) -> AbstractContextManager[BackendTransaction]:
        return self.store.transaction()

    def windows(self) -> list[SessionWindow]:
        return self.store.windows()

    def window(self, session_id: str) -> SessionWindow:
        return self.store.window(session_id)

    def windows_of(self, session_key: str) -> list[SessionWindow]:
        return self.store.windows_of(session_key)

    def session_keys(self) -> list[str]:
        return self.store.session_keys()

    def events(self, session_id: str) -> list[StoredEvent]:
        return self.store.events(session_id)

    def event_count(self, session_id: str) -> int:
        return self.store.event_count(session_id)


def scratch_folder() -> tempfile.TemporaryDirectory[str]:
    """A temporary folder for a store built per generated example: in memory (`/dev/shm`)
    when the machine has it, since a store's commits sync to disk ten times slower."""
    memory = "/dev/shm"
    usable = os.path.isdir(memory) and os.access(memory, os.W_OK)
    return tempfile.TemporaryDirectory(prefix="session-search-", dir=memory if usable else None)


StoreMaker = Callable[[Sequence[Session]], PartitionedStore]


@pytest.fixture(params=BACKENDS)
def backend_name(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def make_store(backend_name: str) -> Iterator[StoreMaker]:
    """Builds stores of the test's backend from `Session` values (in a scratch folder);
    closes and removes them after the test."""
    opened: list[PartitionedStore] = []
    with scratch_folder() as folder:

        def make(sessions: Sequence[Session]) -> PartitionedStore:
            store = build_store(Path(folder) / f"store-{len(opened)}", backend_name, sessions)
            opened.append(store)
            return store

        try:
            yield make
        finally:
            for store in opened:
                store.close()
