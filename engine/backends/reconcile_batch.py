"""What one step of a reconcile in batches did: `ReconcileBatch`.

Owns: the value `ReconcilesInBatches.reconcile_batch` returns (`engine.backends.protocol`
names it in its annotations and still offers the name). Must not touch: how a backend
rebuilds its windows. Why a module of its own: the protocols are loaded by every search,
and a search never reconciles, so it need not define this frozen dataclass at start-up
(`tests/cli/test_progress_and_startup.py` pins it as not loaded by a reference search).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ReconcileBatch:
    """What one `reconcile_batch` did: how many windows of the front of the pending list
    it took (`consumed`: rebuilt, or found no longer needing it), how many it rebuilt,
    and the index rows those now hold.

    >>> ReconcileBatch(consumed=3, windows=2, rows=40)
    ReconcileBatch(consumed=3, windows=2, rows=40)
    """

    consumed: int
    windows: int
    rows: int
