"""What every benchmark workload is, receives and returns, and what a right search answer is.

Owns: the contract between a workload and the runner (`Workload`, `PairedWorkload`), the
target a round runs against (`BenchTarget`), a round's samples (`Sample`), a wrong answer
(`WorkloadFailed`), and the exact answer of a search whose corpus holds a known number of
matching messages (`HitExpectation`). Must not touch: any workload's own measurement (the
`*_workloads` modules and `reopen_workload`), the order of runs (`schedule`), statistics,
printing.

A workload runs one *round* against one backend target and returns its samples (seconds
of the timed call, plus named metrics such as messages per second or resident bytes).
Only the call under test is timed; checking the answer happens after the clock stops,
and a wrong answer raises `WorkloadFailed`, so a fast wrong backend cannot win.

A workload a backend cannot run at all (history reads of a backend without a transcript
reader) raises `FeatureNotBuilt`, and the report leaves its rows out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from engine.backends.protocol import Backend
from engine.bench.adapters import BenchServices, CapabilityMissing
from engine.bench.comparators import Comparator, ComparatorStore
from engine.model import SearchResult

#: The store-level limit every query workload uses (the agent tool always sends 25).
QUERY_LIMIT = 25


class WorkloadFailed(AssertionError):
    """A workload's answer was wrong; the message says what was expected and seen."""


@dataclass(frozen=True, slots=True)
class Sample:
    """One timed call: wall seconds and any named metrics it reports."""

    seconds: float
    metrics: dict[str, float] = field(default_factory=dict)


@dataclass(slots=True)
class BenchTarget:
    """One backend under test: its prepared store and scratch space for fresh stores.

    `backend` is the store prepared once (corpus imported) and shared by the read
    workloads; `state` holds what a workload carries between rounds (e.g. the append
    chain's last id). A comparator's target has `comparator` instead, and
    `comparator_store` opened over its compared backend's prepared store.
    """

    backend_name: str
    corpus_directory: Path  # what the importer reads: the corpus folder or its flat file
    manifest: dict[str, Any]
    store_directory: Path
    scratch_directory: Path
    services: BenchServices
    backend: Backend | None = None
    state: dict[str, Any] = field(default_factory=dict)
    comparator: Comparator | None = None
    comparator_store: ComparatorStore | None = None


class Workload(Protocol):
    """What the runner needs from a workload."""

    name: str
    group: str
    query_class: str

    def run_round(self, target: BenchTarget) -> list[Sample]:
        """Run one round; raise WorkloadFailed on a wrong answer, CapabilityMissing to skip."""
        ...


@dataclass(frozen=True, slots=True)
class HitExpectation:
    """The exact answer for a query whose corpus holds `matching` messages."""

    matching: int
    limit: int = QUERY_LIMIT

    def problems(self, result: SearchResult, order: str) -> list[str]:
        """What is wrong with `result` (empty when it is right).

        >>> from engine.model import SearchHit
        >>> hit = SearchHit("k", "s", "m", "user", 1.0, "x", 1.0)
        >>> full = SearchResult((hit, hit), truncated=True)
        >>> HitExpectation(3, limit=2).problems(full, "relevance")
        []
        >>> HitExpectation(3, limit=2).problems(SearchResult((hit,)), "relevance")
        ['expected 2 hits, got 1', 'expected truncated=True, got False']
        """
        problems = []
        expected_hits = min(self.matching, self.limit)
        if len(result.hits) != expected_hits:
            problems.append(f"expected {expected_hits} hits, got {len(result.hits)}")
        if result.truncated != (self.matching > self.limit):
            problems.append(
                f"expected truncated={self.matching > self.limit}, got {result.truncated}"
            )
        if order == "recent":
            stamps = [hit.timestamp for hit in result.hits]
            if stamps != sorted(stamps, reverse=True):
                problems.append("recent order: timestamps are not newest first")
        return problems


class PairedWorkload(Workload, Protocol):
    """A workload that can time a backend and its comparator call by call."""

    def run_paired_round(self, target: BenchTarget,
                         comparator_target: BenchTarget) -> tuple[list[Sample], list[Sample]]:
        """One round of both, alternating calls; (the backend's, the comparator's)."""
        ...


def prepared_backend(target: BenchTarget) -> Backend:
    """The target's prepared store, shared by the read workloads (CapabilityMissing when
    it is not open)."""
    if target.backend is None:
        raise CapabilityMissing("the prepared store is not open")
    return target.backend
