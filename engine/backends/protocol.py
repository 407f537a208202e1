"""The `Backend` protocol every search backend implements, and its write transaction.

Owns: the interface the conformance suite, the importers, the CLI and the benchmarks
talk to. Must not touch: any implementation.

Writes go through `Backend.transaction()`: a context manager yielding a
`BackendTransaction`; leaving the block normally commits durably (fsync or
`synchronous=FULL`), leaving it with an exception discards everything written in it.
The same method names are implemented by `engine.transcript.store.TranscriptStore`'s
transaction, so an importer written against this protocol also loads a bare store.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Protocol

from engine.model import SearchRequest, SearchResult, SessionWindow


class BackendTransaction(Protocol):
    """The write operations of one all-or-nothing transaction."""

    def put_window(self, window: SessionWindow) -> None:
        """Insert a session window, or replace the metadata of an existing one."""
        ...

    def append_event(
        self, session_id: str, event: dict[str, Any], created_at: float | None = None
    ) -> int:
        """Append one event to a window that exists; return its `seq` (0-based)."""
        ...

    def delete_session(self, session_key: str) -> int:
        """Delete every window of `session_key` (and their index rows); return the count."""
        ...


class Backend(Protocol):
    """A store plus a search index, created for one backend kind and remembering it."""

    name: str

    def transaction(self) -> AbstractContextManager[BackendTransaction]:
        """Begin a write transaction (the store's single writer only)."""
        ...

    def search(self, request: SearchRequest) -> SearchResult:
        """Run the store-level search of behaviour.md §5."""
        ...

    def windows(self) -> list[SessionWindow]:
        """Every session window the store holds, in insertion order."""
        ...

    def stats(self) -> dict[str, int]:
        """Counts: agents, sessions, windows, events, messages indexed, bytes."""
        ...

    def close(self) -> None:
        """Release files, locks and connections."""
        ...
