"""Query latency by class, per backend, on the prepared store.

Owns: one benchmark per (probe, backend): the probes of `engine.bench.probes` (common
word, rare word, diacritics, two-word AND, 3–5 words, inner punctuation, prefix mode, no
hit, text that is never indexed, the CJK substring retry, recent order) plus a query
scoped to one agent's namespace. Must not touch: the corpus or the stores (conftest).

Each benchmark makes one benchmarked call (`Backend.search`) and asserts the exact answer
the corpus manifest records for it: `min(n, 25)` hits and `truncated == (n > 25)`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine.backends.protocol import Backend
from engine.bench.probes import PROBES
from engine.bench.query_workloads import query_workloads
from engine.bench.workload_protocol import QUERY_LIMIT

QUERY_NAMES = [f"query/{probe.name}" for probe in PROBES] + ["query/agent_scope"]


@pytest.mark.parametrize("workload_name", QUERY_NAMES)
def test_query(benchmark: Any, workload_name: str, manifest: dict[str, Any],
               prepared: tuple[Path, Backend]) -> None:
    workload = {w.name: w for w in query_workloads(manifest)}[workload_name]
    _, backend = prepared
    benchmark.extra_info.update(
        query=workload.request.query, query_class=workload.query_class,
        matching_messages=workload.expectation.matching, limit=QUERY_LIMIT,
    )
    result = benchmark(backend.search, workload.request)
    assert workload.expectation.problems(result, workload.request.order) == []
