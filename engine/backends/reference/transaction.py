"""The reference backend's write transaction: the store's, with every write checked first.

Owns: `ReferenceTransaction`, which checks each write as every backend does
(`engine.transcript.validation`) and hands it to the store's transaction (the store itself
keeps events opaque). `replace_transcript` decides in its transaction whether the window
is rebuilt now (`engine.backends.replacement`) and writes the decision into the log's
`replace` record, so a replay decides as the commit did whatever config opens the store
later. Must not touch: the commit and what the index does with it (`indexing`), byte
layouts (`engine.codec`; it borrows only `smallest_typecode`, the narrowest array
typecode for a held path's seqs).

A new window's whole transcript (`append_transcript`, an import that reconciles after
it) whose events the forward indexer would leave dirty (`forward_indexing.forward_state`)
is held by the streaming follower (`streaming.StreamedIndexing.hold`, with its active
path): its events are appended as any, its rows are made by the rebuild with the
commit, where the reconcile after the import would have made them. Any later write to
such a window tells the follower (`extended`, `release`).
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from engine.backends.forward_indexing import forward_state
from engine.backends.protocol import BackendTransaction
from engine.backends.replacement import rebuild_is_deferred
from engine.codec.postings_file import smallest_typecode
from engine.config import EngineConfig
from engine.errors import UnknownSession
from engine.model import SessionWindow, StoredEvent
from engine.transcript.transaction import StoreTransaction
from engine.transcript.tree import scan_tree, visible_events
from engine.transcript.validation import (
    check_event,
    check_privacy_change,
    check_replacement,
    check_shaped_event,
    check_window,
)

if TYPE_CHECKING:
    from engine.backends.reference.streaming import StreamedIndexing


class ReferenceTransaction(BackendTransaction):
    """The store's transaction with every write checked first, as on every backend
    (`engine.transcript.validation`); the store itself keeps events opaque."""

    def __init__(self, transaction: StoreTransaction, config: EngineConfig | None = None,
                 follower: StreamedIndexing | None = None) -> None:
        """`follower`: the backend's streaming follower, which holds new windows that
        their events leave dirty (module docstring); None holds none."""
        self._transaction = transaction
        self._config = config or EngineConfig()
        self._follower = follower
        if follower is not None:
            follower.begin()

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
        if self._follower is not None:
            self._follower.extended(session_id)
        return self._transaction.append_event(session_id, event, created_at)

    def append_shaped_event(self, session_id: str, event: dict[str, Any],
                            created_at: float | None = None) -> int:
        """`append_event` of an event an importer already checked with
        `events.validation_problem` (`engine.ingest.batch.ShapedAppender`): the rest of
        `check_event` is made here (`check_shaped_event`, the same messages), so the event
        is not checked twice."""
        check_shaped_event(session_id, event, created_at)
        if self._follower is not None:
            self._follower.extended(session_id)
        return self._transaction.append_event(session_id, event, created_at)

    def append_transcript(self, session_id: str, events: Sequence[dict[str, Any]],
                          created_at: Sequence[float | None]) -> int:
        """Append the whole transcript of a window that holds no event, each event
        already checked as `append_event` checks it (`engine.ingest.batch.TranscriptAppender`),
        so it is not checked again; return how many. The store's transaction takes them
        one by one; a window they leave dirty is held first (module docstring)."""
        follower = self._follower
        if follower is not None:
            follower.extended(session_id)
            if self._transaction.event_count(session_id) == 0:
                self._hold_when_dirty(follower, session_id, events, created_at)
        for event, stamp in zip(events, created_at, strict=True):
            self._transaction.append_event(session_id, event, stamp)
        if follower is not None:
            follower.transcript_written(session_id)
        return len(created_at)

    @staticmethod
    def _hold_when_dirty(follower: StreamedIndexing, session_id: str,
                         events: Sequence[dict[str, Any]],
                         created_at: Sequence[float | None]) -> None:
        """Hold window `session_id` (`StreamedIndexing.hold`) when `events`, its whole
        transcript, leave it dirty, with its active path when that is in seq order (a
        rebuild reads it back in runs then); ask for the rebuild with the commit
        either way (the reconcile after the import rebuilds what the import leaves
        waiting, held or not)."""
        from engine.backends.reference.streaming import HeldWindow  # writes only

        follower.rebuild_on_commit = True
        stored = [StoredEvent(session_id, seq, event, stamp)
                  for seq, (event, stamp) in enumerate(zip(events, created_at, strict=True))]
        state = forward_state(stored)
        if state is None or not state.needs_rebuild:
            return
        tree = scan_tree(stored)
        # An array of the narrowest integers that hold the window's seqs, not a tuple of
        # ints: a held window's path waits until the commit.
        seqs = array(smallest_typecode(len(stored)),
                     [event.seq for event in visible_events(stored, tree)])
        in_order = all(earlier < later for earlier, later in pairwise(seqs))
        follower.hold(session_id,
                      HeldWindow(len(stored), tree.leaf_id, seqs) if in_order else None)

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
        if self._follower is not None:
            self._follower.release(session_id)
        return self._transaction.replace_transcript(
            session_id, events, stamps,
            rebuild_deferred=rebuild_is_deferred(events, self._config))

    def delete_session(self, session_key: str) -> int:
        """Delete every window of `session_key`; return how many."""
        if self._follower is not None:
            for window in self._transaction.windows_of(session_key):
                self._follower.release(window.session_id)
        return self._transaction.delete_session(session_key)
