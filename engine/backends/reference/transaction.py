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

from engine.backends.forward_indexing import forward_state
from engine.backends.protocol import BackendTransaction
from engine.backends.replacement import rebuild_is_deferred
from engine.config import EngineConfig
from engine.errors import UnknownSession
from engine.index.lifecycle import needs_reconcile
from engine.model import SessionWindow, StoredEvent
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
        """Append the whole transcript of a window that holds no event, each event
        already checked as `append_event` checks it (`engine.ingest.batch.TranscriptAppender`),
        so it is not checked again; return how many.

        A window the forward indexer would leave dirty (`forward_indexing.forward_state`:
        a rewind, a side append, a new branch) is held by the store's transaction
        (`StoreTransaction.append_held`) and, at its end, rebuilt once from its active
        path, after every other row and in session-id order, where the reconcile after
        the import would have rebuilt it, unless another window waits for reconcile
        then that this transaction did not make (`_waiting_windows`: it is then left
        dirty with them, as before). Any other
        window is appended event by event, as `append_event` does."""
        events = list(events)
        stamps = list(created_at)
        outlines = [StoredEvent(session_id, seq, event, None) for seq, event in enumerate(events)]
        state = forward_state(outlines)
        if state is not None and state.needs_rebuild:
            return self._transaction.append_held(session_id, events, stamps,
                                                 self._waiting_windows)
        for event, stamp in zip(events, stamps, strict=True):
            self._transaction.append_event(session_id, event, stamp)
        return len(stamps)

    def _waiting_windows(self, held: set[str]) -> list[str] | None:
        """The windows besides those `held` that need reconcile (§8.3), as the streaming
        follower's states of the open transaction and its event counts have it, when
        this transaction made them all (they are rebuilt with the held ones, as the
        reconcile after the import would); None when it did not make one of them, or one
        holds more than `index_flush_documents` events (rebuilt in one change, it would
        be read back whole, where reconcile reads it a run at a time)."""
        follower = self._transaction.streamed_to
        pending = getattr(follower, "pending", None)
        if pending is None:
            return None
        states = pending.window_states
        transaction = self._transaction
        waiting = [window.session_id for window in transaction.windows()
                   if window.session_id not in held and needs_reconcile(
                       states.get(window.session_id),
                       transaction.event_count(window.session_id) - 1)]
        longest = self._config.index_flush_documents  # reconcile reads longer ones in runs
        if not all(transaction.made_here(session_id)
                   and transaction.event_count(session_id) <= longest
                   for session_id in waiting):
            return None
        return waiting

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
