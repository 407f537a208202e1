"""Keeping an index in step with its transcripts, for callers that hold any backend.

Owns: when `reconcile` runs on behalf of the importer, the benchmark and the `reconcile`
command, and what they report back. Must not touch: how a backend reconciles (its own
`Maintenance.reconcile`) or what needs it (`engine.index.lifecycle`).

Two entry points, because two situations:

* `reconcile_when_needed(backend)` — after a bulk write (an import), bring the index up
  to date if this backend's index can lag (`Maintenance`); a backend without it indexed
  every commit already, so there is nothing to do and the answer is 0;
* `reconcile_store(path)` — the user asked for a reconcile: open the store as writer
  (`registry.open_store`, so a bad path is refused as every command refuses it; no
  background run) and run it batch by batch as the background worker does
  (`PartitionedStore.reconcile_in_batches`), counting the windows rebuilt, the index rows
  they hold and the orphaned windows swept; a store without it is an error naming it
  (`require_capability`).

Both pass an optional `progress(done, total)` through to the backend's `reconcile`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from engine.backends.protocol import Maintenance, require_capability
from engine.config import EngineConfig
from engine.progress import StepProgress
from engine.store.registry import open_store

#: The `reconcile` command's store: it reconciles in the foreground, so no background run.
QUIET = EngineConfig(background_reconcile=False)


@dataclass(frozen=True, slots=True)
class ReconcileOutcome:
    """How many windows a reconcile rebuilt, the index rows they hold, the orphaned
    windows it swept, and whether indexing is still needed."""

    reconciled: int
    indexing: bool
    rows: int = 0
    orphans: int = 0

    def to_json(self) -> dict[str, Any]:
        """`{"reconciled", "rows", "orphans", "indexing"}`."""
        return {"reconciled": self.reconciled, "rows": self.rows, "orphans": self.orphans,
                "indexing": self.indexing}


def reconcile_when_needed(backend: object, progress: StepProgress | None = None) -> int:
    """Reconcile `backend` if its index can lag its transcripts; the windows rebuilt."""
    if isinstance(backend, Maintenance):
        return int(backend.reconcile(progress))
    return 0


def reconcile_store(
    path: str | os.PathLike[str], progress: StepProgress | None = None
) -> ReconcileOutcome:
    """Open the store at `path` as its writer, reconcile it, report, close."""
    backend = open_store(path, "reconcile", writer=True, config=QUIET)
    try:
        maintained = require_capability(backend, Maintenance, "reconcile")
        done = backend.reconcile_in_batches(progress)
        return ReconcileOutcome(reconciled=done.windows, indexing=maintained.index_status(),
                                rows=done.rows, orphans=done.orphans)
    finally:
        backend.close()
