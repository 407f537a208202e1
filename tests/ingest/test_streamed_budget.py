"""One budget for the buffers of every streamed transaction of a process
(`engine.backends.reference.streaming.SharedBuffers`): an import into a store of several
agents streams a transaction per partition, and their buffers together stay within one
segment's rows (plus what a partition holds below the smallest segment it writes),
with the answers of the commit-time path, its oracle."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from engine.backends.reference import streaming
from engine.backends.reference.backend import ReferenceBackend
from engine.backends.reference.streaming import SHARED_BUFFERS, StreamedIndexing, segment_rows
from engine.bench.corpus_generator import read_manifest
from engine.config import EngineConfig
from engine.ingest import import_sources
from engine.model import SearchRequest
from engine.store.opening import create_partitioned, open_partitioned
from tests.ingest.test_streamed_import import chat, corpus  # noqa: F401 (corpus: a fixture)
from tests.parity.test_backend_differential import reference_partitions

#: Segments of 3 x 20 rows; a buffer is written for the budget from 20 rows on.
SMALL = EngineConfig(index_flush_documents=20, index_merge_segments=3)
AT_COMMIT = replace(SMALL, stream_large_transactions=False, defer_large_commits=False)


def answers(path: Path, source: Path, config: EngineConfig) -> list:
    store = open_partitioned(path, reference_partitions(config), writer=False)
    try:
        requests = [SearchRequest(probe["query"], limit=25, session_keys=(), order=order)
                    for probe in read_manifest(source)["probes"].values()
                    for order in ("relevance", "recent")]
        return [store.search(request) for request in requests]
    finally:
        store.close()


def test_the_buffers_of_all_partitions_share_one_budget(
        corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    peaks: list[int] = []
    partitions: set[int] = set()
    original = StreamedIndexing.take

    def take(self: StreamedIndexing, change: object) -> None:
        original(self, change)
        partitions.add(id(self))
        peaks.append(sum(len(follower.pending.rows.buffer) for follower in SHARED_BUFFERS.open
                         if follower.pending is not None))
        assert peaks[-1] == SHARED_BUFFERS.rows

    monkeypatch.setattr(streaming.StreamedIndexing, "take", take)
    written: list[int] = []
    write_largest = streaming.SharedBuffers.write_largest

    def counted(self: streaming.SharedBuffers, config: EngineConfig) -> None:
        before = self.rows
        write_largest(self, config)
        written.append(before - self.rows)

    monkeypatch.setattr(streaming.SharedBuffers, "write_largest", counted)
    results = {}
    for name, config in (("streamed", SMALL), ("at commit", AT_COMMIT)):
        store = create_partitioned(tmp_path / name, reference_partitions(config),
                                   EngineConfig(background_reconcile=False))
        try:
            import_sources(store, [corpus], received_at=1.0)
            store.reconcile()
        finally:
            store.close()
        results[name] = answers(tmp_path / name, corpus, config)
    assert len(partitions) > 1, "the import streamed one partition only"
    assert any(written), "no buffer was written for the budget"
    # Each partition may keep up to the smallest segment it writes for the budget.
    assert max(peaks) <= segment_rows(SMALL) + len(partitions) * SMALL.index_flush_documents
    assert SHARED_BUFFERS.rows == 0 and not list(SHARED_BUFFERS.open)
    assert results["streamed"] == results["at commit"]
    assert any(result.hits for result in results["streamed"])


def test_a_window_rebuilt_in_one_change_writes_its_rows_when_due(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A replacement rebuilt at once adds all its window's rows in one change: the
    buffer is written when due between those rows, not only after the change."""
    from engine.diagnostics.verify import verify_backend
    from engine.directory import MemoryDirectory
    from engine.index.write_buffer import WriteBuffer
    from engine.model import SessionWindow

    largest: list[int] = [0]
    add = WriteBuffer.add

    def measured(self: WriteBuffer, record: object, terms: object) -> None:
        add(self, record, terms)  # type: ignore[arg-type]
        largest[0] = max(largest[0], len(self))

    monkeypatch.setattr(WriteBuffer, "add", measured)
    limit = segment_rows(SMALL)
    results = []
    for config in (SMALL, AT_COMMIT):
        backend = ReferenceBackend.create_in(MemoryDirectory(), config=config)
        try:
            with backend.transaction() as transaction:
                transaction.put_window(SessionWindow("w", "agent:main:main"))
                for number in range(2 * SMALL.index_flush_documents):
                    transaction.append_event("w", chat(number, f"saffron first {number}"))
                if config is SMALL:
                    largest[0] = 0
                transaction.replace_transcript(
                    "w", [chat(number, f"saffron again {number}") for number in range(5 * limit)])
                inside = largest[0]  # the buffers filled inside the transaction
            assert verify_backend(backend).ok
            results.append([backend.search(SearchRequest(query, limit=25, session_keys=(),
                                                         order=order))
                            for query in ("saffron", "again", "first")
                            for order in ("relevance", "recent")])
            if config is SMALL:
                assert backend._streamed is not None and backend._streamed.started == 1
                assert inside <= limit
        finally:
            backend.close()
    assert results[0] == results[1]
    assert results[0][0].hits and not results[0][4].hits
