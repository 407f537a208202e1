"""The reference backend's write transaction: the store's, with every write checked first.

Owns: `ReferenceTransaction`, which checks each write as every backend does
(`engine.transcript.validation`) and hands it to the store's transaction (the store itself
keeps events opaque). `replace_transcript` decides in its transaction whether the window
is rebuilt now (`engine.backends.replacement`) and writes the decision into the log's
`replace` record, so a replay decides as the commit did whatever config opens the store
later. Must not touch: the commit and what the index does with it (`indexing`), byte
layouts (`engine.codec`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.backends.protocol import BackendTransaction
from engine.backends.replacement import rebuild_is_deferred
from engine.config import EngineConfig
from engine.errors import UnknownSession
from engine.model import SessionWindow
from engine.transcript.transaction import StoreTransaction
from engine.transcript.validation import (
    check_event,
    check_privacy_change,
    check_replacement,
    check_window,
)


class ReferenceTransaction(BackendTransaction):
    """The store's transaction with every write checked first, as on every backend
    (`engine.transcript.validation`); the store itself keeps events opaque."""

    def __init__(self, transaction: StoreTransaction, config: EngineConfig | None = None) -> None:
        self._transaction = transaction
        self._config = config or EngineConfig()

    def put_window(self, window: SessionWindow) -> None:
        """Insert a window, or replace the metadata of an existing one."""
        check_window(window)
        try:
            stored: SessionWindow | None = self._transaction.window(window.session_id)
        except UnknownSession:
            stored = None
        check_privacy_change(stored, window)
        self._transaction.put_window(window)

    def append_event(
        self, session_id: str, event: dict[str, Any], created_at: float | None = None
    ) -> int:
        """Append one event to an existing window; return its seq."""
        check_event(session_id, event, created_at)
        return self._transaction.append_event(session_id, event, created_at)

    def append_transcript(self, session_id: str, events: Sequence[dict[str, Any]],
                          created_at: Sequence[float | None]) -> int:
        """Append the whole transcript of a window, each event already checked as
        `append_event` checks it (`engine.ingest.batch.TranscriptAppender`), so it is not
        checked again; return how many. The store's transaction takes them one by one."""
        for event, stamp in zip(events, created_at, strict=True):
            self._transaction.append_event(session_id, event, stamp)
        return len(created_at)

    def replace_transcript(
        self, session_id: str, events: Sequence[dict[str, Any]],
        created_at: float | Sequence[float | None] | None = None,
    ) -> int:
        """Replace every event of an existing window by `events`, stamped `created_at`
        (one for all, or one per event); return how many. Every event is checked with
        its stamp before anything is written, so a refused replacement leaves
        the window as it was; whether the index rebuild waits for reconcile
        (`replacement.rebuild_is_deferred`) is written in the log with it, and the
        index applies it at commit (`indexing.IndexedStore._apply`)."""
        self._transaction.window(session_id)  # UnknownSession before anything else
        events = list(events)
        stamps = check_replacement(session_id, events, created_at)
        return self._transaction.replace_transcript(
            session_id, events, stamps,
            rebuild_deferred=rebuild_is_deferred(events, self._config))

    def delete_session(self, session_key: str) -> int:
        """Delete every window of `session_key`; return how many."""
        return self._transaction.delete_session(session_key)
