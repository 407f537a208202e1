"""Write-side benchmarks: bulk import, single-message append, and reconciliation.

Owns: timing how fast a backend takes data in. Must not touch: the shared prepared stores
other than appending to their own bench window (conftest prepares them).

* `test_bulk_import`: a fresh store per round (`benchmark.pedantic` with a setup), then
  import + reconcile of the whole corpus; asserts the window, event and indexed-message
  counts of the manifest.
* `test_append_one_message`: one message in its own durable transaction, appended to a
  linear window of the prepared store; asserts the new message is searchable.
* `test_reconcile_all_windows`: every window made dirty by a `leaf` event pointing at its
  own leaf (untimed setup on a fresh store), then one timed `reconcile()`; asserts every
  window was rebuilt and the indexed-message count is the corpus's again.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from engine.backends.protocol import Backend
from engine.bench.adapters import finish_indexing, ingest_import_corpus
from engine.bench.corpus_generator import iter_window_leaves
from engine.model import SearchRequest, SessionWindow


def test_bulk_import(benchmark: Any, backend_name: str, corpus: Path,
                     manifest: dict[str, Any], tmp_path: Path, fresh_store: Any) -> None:
    counter = itertools.count()
    opened: list[Backend] = []

    def setup() -> tuple[tuple[Backend], dict[str, Any]]:
        backend = fresh_store(backend_name, tmp_path / f"store-{next(counter)}")
        opened.append(backend)
        return (backend,), {}

    def import_everything(backend: Backend) -> dict[str, int]:
        ingest_import_corpus(backend, corpus)
        finish_indexing(backend)
        return backend.stats()

    try:
        stats = benchmark.pedantic(import_everything, setup=setup, rounds=2, iterations=1)
    finally:
        for backend in opened:
            backend.close()
    counts = manifest["counts"]
    benchmark.extra_info.update(messages=counts["messages"], events=counts["events"])
    assert (stats["windows"], stats["events"]) == (counts["windows"], counts["events"])
    assert stats.get("messages_indexed", counts["searchableMessages"]) == \
        counts["searchableMessages"]


def test_append_one_message(benchmark: Any, backend_name: str,
                            prepared: tuple[Path, Backend]) -> None:
    _, backend = prepared
    session_id = f"bench-append-pytest-{backend_name}"
    with backend.transaction() as transaction:
        transaction.put_window(SessionWindow(session_id, "agent:ops:bench:pytest", kind="system"))
    appended: list[str] = []

    def setup() -> tuple[tuple[dict[str, Any]], dict[str, Any]]:
        number = len(appended) + 1
        event = {
            "type": "message", "id": f"pytest-append-{number:06d}",
            "parentId": appended[-1] if appended else None,
            "timestamp": 1_800_000_000_000 + number,
            "message": {"role": "user", "content": f"Appendmarker number {number}"},
        }
        appended.append(event["id"])
        return (event,), {}

    def append(event: dict[str, Any]) -> None:
        with backend.transaction() as transaction:
            transaction.append_event(session_id, event)

    benchmark.pedantic(append, setup=setup, rounds=20, iterations=1)
    result = backend.search(SearchRequest(query="appendmarker", limit=25, session_keys=()))
    assert len(result.hits) == min(25, len(appended)) and len(appended) >= 1
    assert result.truncated is (len(appended) > 25)


def test_reconcile_all_windows(benchmark: Any, backend_name: str, corpus: Path,
                               manifest: dict[str, Any], tmp_path: Path,
                               fresh_store: Any) -> None:
    counter = itertools.count()
    opened: list[Backend] = []
    leaves = list(iter_window_leaves(corpus))

    def setup() -> tuple[tuple[Backend], dict[str, Any]]:
        backend = fresh_store(backend_name, tmp_path / f"store-{next(counter)}")
        opened.append(backend)
        if not callable(getattr(backend, "reconcile", None)):
            pytest.skip(f"backend {backend_name!r} has no reconcile()")
        ingest_import_corpus(backend, corpus)
        finish_indexing(backend)
        with backend.transaction() as transaction:
            for number, (session_id, leaf) in enumerate(leaves, 1):
                transaction.append_event(session_id, {
                    "type": "leaf", "id": f"bench-leaf-{number}", "parentId": leaf,
                    "targetId": leaf, "timestamp": 1_800_000_000_000 + number,
                })
        return (backend,), {}

    def reconcile(backend: Backend) -> tuple[int, dict[str, int]]:
        return backend.reconcile(), backend.stats()  # type: ignore[attr-defined]

    try:
        rebuilt, stats = benchmark.pedantic(reconcile, setup=setup, rounds=2, iterations=1)
    finally:
        for backend in opened:
            backend.close()
    benchmark.extra_info.update(windows=len(leaves),
                                messages=manifest["counts"]["searchableMessages"])
    assert rebuilt >= len(leaves)
    assert stats.get("messages_indexed", manifest["counts"]["searchableMessages"]) == \
        manifest["counts"]["searchableMessages"]
