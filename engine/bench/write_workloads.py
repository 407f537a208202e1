"""The write workloads: importing a whole corpus into a fresh store, and appending one
message at a time.

Owns: `IngestWorkload` (create a store, import the corpus, reconcile what the import left
dirty; a comparator's bare write path instead) and `AppendWorkload` (single messages, each
in its own durable transaction). Must not touch: the other workload families, the order of
runs (`schedule`), statistics, printing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.bench.adapters import finish_indexing, remove_store
from engine.bench.workload_protocol import BenchTarget, Sample, WorkloadFailed, prepared_backend
from engine.model import SessionWindow


@dataclass(frozen=True, slots=True)
class IngestWorkload:
    """Create a fresh store, import the whole corpus and reconcile what the import left
    dirty (one sample per round): the time until every message is searchable. A
    comparator writes the corpus its bare way instead (`Comparator.bare_import`)."""

    name: str = "ingest/import"
    group: str = "ingest"
    query_class: str = "bulk import and indexing"
    comparable: bool = True

    def run_round(self, target: BenchTarget) -> list[Sample]:
        directory = target.scratch_directory / f"ingest-{target.backend_name}"
        if directory.exists():
            remove_store(directory)
        started = time.perf_counter()
        if target.comparator is not None:
            stats: dict[str, Any] = target.comparator.bare_import(target.corpus_directory, directory)
            imported = finished = time.perf_counter()
            reconciled_windows = 0
        else:
            backend = target.services.open_store(target.backend_name, directory, True, True)
            try:
                target.services.import_corpus(backend, target.corpus_directory)
                imported = time.perf_counter()
                reconciled_windows = finish_indexing(backend)
                finished = time.perf_counter()
                stats = backend.stats()
            finally:
                backend.close()
        elapsed = finished - started
        counts = target.manifest["counts"]
        checks = [("windows", "windows"), ("events", "events")]
        if "messages_indexed" in stats:
            checks.append(("messages_indexed", "searchableMessages"))
        problems = [
            f"expected {counts[key]} {name}, got {stats.get(name)}"
            for name, key in checks
            if stats.get(name) != counts[key]
        ]
        size_bytes = _directory_bytes(directory)
        remove_store(directory)
        if problems:
            raise WorkloadFailed(f"{self.name}: " + "; ".join(problems))
        return [Sample(elapsed, {
            "messages_per_second": counts["messages"] / elapsed if elapsed > 0 else 0.0,
            "import_seconds": imported - started,
            "reconcile_seconds": finished - imported,
            "reconciled_windows": float(reconciled_windows),
            "store_bytes": float(size_bytes),
        })]


def _directory_bytes(directory: Path) -> int:
    return sum(path.stat().st_size for path in directory.rglob("*") if path.is_file())


APPEND_SESSION_KEY = "agent:ops:bench:append"


@dataclass(frozen=True, slots=True)
class AppendWorkload:
    """Append single messages, each in its own durable transaction, to a linear window.

    The window (`agent:ops:bench:append`, one per backend) is created untimed on first
    use; each message's `parentId` is the previous one, so the index never goes dirty.
    The text holds no probe word, so the query answers do not change.
    """

    repeats: int = 20
    name: str = "append/one_message"
    group: str = "append"
    query_class: str = "single-message append (fsync)"

    def run_round(self, target: BenchTarget) -> list[Sample]:
        backend = prepared_backend(target)
        session_id = f"bench-append-{target.backend_name}"
        if "append_parent" not in target.state:
            with backend.transaction() as transaction:
                transaction.put_window(SessionWindow(session_id, APPEND_SESSION_KEY, kind="system"))
            target.state["append_parent"] = None
            target.state["append_count"] = 0
        samples = []
        for _ in range(self.repeats):
            number = target.state["append_count"] + 1
            event = {
                "type": "message", "id": f"append-{number:08d}",
                "parentId": target.state["append_parent"],
                "timestamp": 1_800_000_000_000 + number,
                "message": {"role": "user", "content": f"Benchmark append number {number}"},
            }
            started = time.perf_counter()
            with backend.transaction() as transaction:
                transaction.append_event(session_id, event)
            samples.append(Sample(time.perf_counter() - started))
            target.state["append_parent"] = event["id"]
            target.state["append_count"] = number
        return samples
