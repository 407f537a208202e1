"""The order in which the harness runs (round, workload, backend) cells.

Owns: interleaving, as a pure function. Must not touch: timing or backends.

Why interleave: a machine drifts (thermal throttling, other tenants, page cache). If
backend A ran all its rounds before backend B, a drift would be charged to one backend.
Instead every round runs every workload on every backend, and the backend order rotates
by one position each round, so over `len(backends)` rounds each backend goes first,
second, … equally often. Workloads keep their order inside a round (a workload may
depend on state an earlier one left, e.g. queries after the import).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Slot:
    """One cell to run: round number (0-based), workload name, backend name."""

    round_number: int
    workload: str
    backend: str


def rotated(items: Sequence[str], shift: int) -> list[str]:
    """`items` rotated left by `shift` positions.

    >>> rotated(["a", "b", "c"], 1), rotated(["a", "b", "c"], 4), rotated([], 2)
    (['b', 'c', 'a'], ['b', 'c', 'a'], [])
    """
    if not items:
        return []
    offset = shift % len(items)
    return list(items[offset:]) + list(items[:offset])


def interleaved_schedule(
    workloads: Sequence[str], backends: Sequence[str], rounds: int
) -> list[Slot]:
    """Every (round, workload, backend) once; backends rotate by one each round.

    >>> [(s.round_number, s.workload, s.backend)
    ...  for s in interleaved_schedule(["q1", "q2"], ["sqlite", "reference"], 2)]
    ... # doctest: +NORMALIZE_WHITESPACE
    [(0, 'q1', 'sqlite'), (0, 'q1', 'reference'), (0, 'q2', 'sqlite'), (0, 'q2', 'reference'),
     (1, 'q1', 'reference'), (1, 'q1', 'sqlite'), (1, 'q2', 'reference'), (1, 'q2', 'sqlite')]
    """
    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, not {rounds}")
    return [
        Slot(round_number, workload, backend)
        for round_number in range(rounds)
        for workload in workloads
        for backend in rotated(backends, round_number)
    ]
