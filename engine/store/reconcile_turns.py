"""The loop that reconciles a store's partitions one after another.

Owns: `reconcile_in_turn`, the loop of `PartitionedStore.reconcile` and
`reconcile_in_batches` and the progress it reports across partitions. Must not touch:
what a partition's reconcile does (each partition is a whole backend), the store's lock
or its partitions (`engine.store.partitioned` hands them in). Its own module so that
the store's module stays within its size; only a writer that reconciles loads it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from engine.backends.protocol import Backend
    from engine.progress import StepProgress

#: What one partition's reconcile returns (`reconcile_in_turn`).
Outcome = TypeVar("Outcome")


def reconcile_in_turn(partitions: Iterable[Backend], progress: StepProgress | None,
                      reconcile_one: Callable[[Backend, StepProgress], Outcome]
                      ) -> list[Outcome]:
    """`reconcile_one(partition, counted)` for each partition in turn (the loop of both
    `reconcile` and `reconcile_in_batches`); what each returned. `progress(done, total)`
    counts over the partitions seen so far: each partition's total (the last it reported
    to `counted`) is added when its reconcile starts."""
    outcomes: list[Outcome] = []
    finished_work = 0  # the windows of the partitions already reconciled
    partition_total = [0]  # the current partition's total, as it reported it

    def counted(done: int, total: int) -> None:
        partition_total[0] = total
        if progress is not None:
            progress(finished_work + done, finished_work + total)

    for partition in partitions:
        partition_total[0] = 0
        outcomes.append(reconcile_one(partition, counted))
        finished_work += partition_total[0]
    return outcomes

