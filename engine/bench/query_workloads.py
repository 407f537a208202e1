"""The query workloads: one search request against the prepared store, timed call by call.

Owns: `QueryWorkload` (a backend's search, or a comparator's prepared statements, and the
two paired call by call) and the query workloads of a corpus (`query_workloads`: one per
probe of its manifest, plus an agent-namespace scoped query). Must not touch: the other
workload families, the order of runs (`schedule`), statistics, printing.

The query workloads are pure data: a `SearchRequest` plus the number of messages the
corpus holds for it (from the corpus manifest, counted while the corpus was written),
which fixes the answer exactly: `min(n, limit)` hits and `truncated == (n > limit)`
(`HitExpectation`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from engine.backends.protocol import Backend
from engine.bench.adapters import CapabilityMissing
from engine.bench.comparators import PreparedSearch
from engine.bench.workload_protocol import (
    QUERY_LIMIT,
    BenchTarget,
    HitExpectation,
    Sample,
    WorkloadFailed,
    prepared_backend,
)
from engine.model import SearchRequest, SearchResult

#: How long one round of a query workload lasts at least: a query that answers in
#: microseconds is called until then (at most `QueryWorkload.max_repeats` times), so its
#: median rests on hundreds of calls instead of five.
QUERY_ROUND_SECONDS = 0.2


@dataclass(frozen=True, slots=True)
class QueryWorkload:
    """One search request against the prepared store: per round, at least `repeats`
    timed calls, and more until the round has lasted `min_round_seconds` (at most
    `max_repeats` calls).

    Beside a comparator it runs paired (`run_paired_round`): the backend's and the
    comparator's calls alternate in ABBA order inside one round, so both medians come
    from the same seconds of the machine's life. Run one after the other, two cells of a
    microsecond query drift apart between runs on a shared machine by more than the
    difference the ratio is there to show.
    """

    name: str
    query_class: str
    request: SearchRequest
    expectation: HitExpectation
    repeats: int = 5
    group: str = "query"
    comparable: bool = True
    min_round_seconds: float = 0.0
    max_repeats: int = 1000

    def run_round(self, target: BenchTarget) -> list[Sample]:
        if target.comparator is not None:
            return self._comparator_round(target)
        backend = prepared_backend(target)
        samples: list[Sample] = []
        round_started = time.perf_counter()
        while self._more(len(samples), round_started):
            samples.append(self._backend_call(backend))
        return samples

    def run_paired_round(self, target: BenchTarget,
                         comparator_target: BenchTarget) -> tuple[list[Sample], list[Sample]]:
        backend = prepared_backend(target)
        prepared = self._comparator_prepared(comparator_target)
        ours: list[Sample] = []
        theirs: list[Sample] = []
        round_started = time.perf_counter()
        while self._more(len(ours), round_started, paired=True):
            if len(ours) % 2 == 0:
                ours.append(self._backend_call(backend))
                theirs.append(self._comparator_call(prepared))
            else:
                theirs.append(self._comparator_call(prepared))
                ours.append(self._backend_call(backend))
        return ours, theirs

    def _more(self, calls: int, round_started: float, paired: bool = False) -> bool:
        """Whether a round that has made `calls` calls (pairs, when `paired`: a pair
        round lasts twice as long) goes on."""
        if calls < self.repeats:
            return True
        lasted = time.perf_counter() - round_started
        return calls < self.max_repeats and lasted < self.min_round_seconds * (2 if paired else 1)

    def _backend_call(self, backend: Backend) -> Sample:
        started = time.perf_counter()
        result = backend.search(self.request)
        elapsed = time.perf_counter() - started
        self._check(result)
        return Sample(elapsed)

    def _comparator_prepared(self, target: BenchTarget) -> PreparedSearch:
        if target.comparator_store is None:
            raise CapabilityMissing("the comparator is not open")
        return target.comparator_store.prepare_search(self.request)

    def _comparator_call(self, prepared: PreparedSearch) -> Sample:
        started = time.perf_counter()
        rows = prepared.run()
        elapsed = time.perf_counter() - started
        self._check(prepared.result(rows))
        return Sample(elapsed)

    def _comparator_round(self, target: BenchTarget) -> list[Sample]:
        prepared = self._comparator_prepared(target)
        samples: list[Sample] = []
        round_started = time.perf_counter()
        while self._more(len(samples), round_started):
            samples.append(self._comparator_call(prepared))
        return samples

    def _check(self, result: SearchResult) -> None:
        problems = self.expectation.problems(result, self.request.order)
        if problems:
            query = self.request.query
            raise WorkloadFailed(f"{self.name} ({query!r}): " + "; ".join(problems))


def query_workloads(manifest: dict[str, Any], repeats: int = 5) -> list[QueryWorkload]:
    """One workload per probe of the manifest, plus an agent-namespace scoped query."""
    workloads = []
    for name, probe in manifest["probes"].items():
        request = SearchRequest(
            query=probe["query"], limit=QUERY_LIMIT, session_keys=(),
            match=probe["match"], order=probe["order"],
        )
        workloads.append(QueryWorkload(
            f"query/{name}", probe["queryClass"], request,
            HitExpectation(probe["matchingMessages"]), repeats,
            min_round_seconds=QUERY_ROUND_SECONDS,
        ))
    common = manifest["probes"]["common_word"]
    by_agent = common["matchingMessagesByAgent"]
    # An omitted key filter means the agent's partition (behaviour.md §5.3): its own
    # namespace; `global` and `unknown` (filed under the agent "" by the generator) live
    # in the default agent's partition, `main`, not in work_team's (engine.model).
    scoped = by_agent.get("work_team", 0)
    workloads.append(QueryWorkload(
        "query/agent_scope", "agent namespace scope",
        SearchRequest(query=common["query"], agent_id="work_team", limit=QUERY_LIMIT),
        HitExpectation(scoped), repeats, min_round_seconds=QUERY_ROUND_SECONDS,
    ))
    return workloads
