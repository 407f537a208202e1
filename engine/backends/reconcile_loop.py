"""Reconcile in transactions of bounded size: the loops every database backend runs.

Owns: walking a list of windows needing reconcile in write transactions of about a
number of events (`reconcile_pending`, what `Maintenance.reconcile` does), and the
front of such a list in one transaction that a caller can stop between windows
(`reconcile_front`, `ReconcilesInBatches.reconcile_batch`). Must not touch: what a
rebuild writes, which windows need one, the transactions themselves: the backend hands
those in as functions (the SQLite and PostgreSQL backends share these loops; the
reference backend reconciles through its log and index instead).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

from engine.backends.protocol import ReconcileBatch
from engine.progress import StepProgress


def reconcile_pending(pending: Sequence[str], transaction: Callable[[], AbstractContextManager[Any]],
                      rebuild: Callable[[str], int], progress: StepProgress | None,
                      batch_events: int) -> int:
    """Rebuild every window of `pending` (`rebuild(session_id)` returns the events it
    read), committing after about `batch_events` events; `progress(done, total)` first and
    after each commit. Returns how many windows it rebuilt.

    >>> from contextlib import nullcontext
    >>> seen = []
    >>> reconcile_pending(["a", "b", "c"], nullcontext, lambda s: 2, lambda d, t: seen.append(d), 3)
    3
    >>> seen
    [0, 2, 3]
    """
    if progress is not None:
        progress(0, len(pending))
    position = 0
    while position < len(pending):
        with transaction():
            events = 0
            while position < len(pending) and events < batch_events:
                events += rebuild(pending[position])
                position += 1
        if progress is not None:
            progress(position, len(pending))
    return len(pending)


def reconcile_front(pending: Sequence[str], max_events: int, stop: Callable[[], bool],
                    transaction: Callable[[], AbstractContextManager[Any]],
                    still_pending: Callable[[str], bool], rebuild: Callable[[str], int],
                    rows_of: Callable[[str], int]) -> ReconcileBatch:
    """In one `transaction()`, rebuild the windows at the front of `pending` that
    `still_pending`, until about `max_events` events were read (at least one window) or
    `stop()` (checked before each window); `rows_of(session_id)` counts a rebuilt
    window's index rows."""
    consumed = windows = rows = events = 0
    with transaction():
        for session_id in pending:
            if stop() or (windows and events >= max_events):
                break
            consumed += 1
            if not still_pending(session_id):
                continue
            events += rebuild(session_id)
            windows += 1
            rows += rows_of(session_id)
    return ReconcileBatch(consumed, windows, rows)
