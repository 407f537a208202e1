"""A large import indexed as it is read (`engine.backends.reference.streaming`) against the
commit-time path, its oracle: the same rows in the same order, the same answers; and all
or nothing still: a failed import leaves the index and its files as they were, a search
inside the transaction reads the last commit, a failed segment write fails nothing."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from engine.backends.reference.backend import ReferenceBackend
from engine.backends.reference.streaming import segment_rows
from engine.bench.corpus_generator import generate_corpus, read_manifest
from engine.bench.corpus_plan import corpus_size
from engine.config import EngineConfig
from engine.diagnostics.verify import verify_backend
from engine.directory import MemoryDirectory
from engine.errors import FileSystemError, MalformedInput
from engine.ingest import import_sources
from engine.model import SearchRequest, SessionWindow
from tests.durability.faulty_directory import ENOSPC, Fault, FaultyDirectory

#: Small segments and merges, so that an import of the tiny corpus writes and merges
#: several segments inside its transaction.
SMALL = EngineConfig(index_flush_documents=40, index_merge_segments=3)
#: The oracle: every change indexed at its commit (and not left waiting either).
AT_COMMIT = replace(SMALL, stream_large_transactions=False, defer_large_commits=False)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("streamed") / "tiny"
    generate_corpus(corpus_size("tiny"), 20260105, directory)
    return directory


def probes(corpus: Path) -> list[SearchRequest]:
    requests = []
    for probe in read_manifest(corpus)["probes"].values():
        requests.append(SearchRequest(probe["query"], limit=25, session_keys=()))
        requests.append(SearchRequest(probe["query"], limit=25, session_keys=(), order="recent"))
    return requests


def imported(corpus: Path, config: EngineConfig, directory: MemoryDirectory | None = None
             ) -> ReferenceBackend:
    backend = ReferenceBackend.create_in(directory or MemoryDirectory(), config=config)
    import_sources(backend, [corpus], received_at=1.0)
    backend.reconcile()
    return backend


def chat(number: int, text: str) -> dict:
    return {"type": "message", "id": f"m{number}", "parentId": f"m{number - 1}" if number else None,
            "timestamp": 1000 + number, "message": {"role": "user", "content": text}}


def rows(backend: ReferenceBackend) -> list[tuple]:
    return [(row.doc_id, row.session_id, row.message_id, row.role, row.timestamp, row.seq,
             row.text) for row in backend.index.documents()]


def test_a_streamed_import_indexes_what_the_commit_time_path_indexes(corpus: Path) -> None:
    oracle = imported(corpus, AT_COMMIT)
    streamed = imported(corpus, SMALL)
    try:
        assert rows(streamed) == rows(oracle)  # same doc ids: the same rows, same order
        assert dict(streamed.index.window_states) == dict(oracle.index.window_states)
        assert (streamed.index.document_count, streamed.index.total_tokens) == (
            oracle.index.document_count, oracle.index.total_tokens)
        for request in probes(corpus):
            assert streamed.search(request) == oracle.search(request), request
        assert verify_backend(streamed).ok and verify_backend(oracle).ok
        assert not streamed.index_status()
        # Written as it was read: more than one segment, few of each tier.
        assert 1 < len(streamed.index.segments) < 3 * SMALL.index_merge_segments
        names = streamed.store.directory.list_names("index/segment-")
        assert len(names) == 2 * len(streamed.index.segments)  # no file left behind
    finally:
        streamed.close()
        oracle.close()


def test_a_failed_streamed_import_leaves_the_index_and_its_files_as_they_were(
        corpus: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    shutil.copytree(corpus, broken)
    last = sorted((broken / "transcripts").glob("*.jsonl"))[-1]
    last.write_text(last.read_text(encoding="utf-8") + "{not json\n", encoding="utf-8")
    directory = MemoryDirectory()
    backend = ReferenceBackend.create_in(directory, config=SMALL)
    try:
        with backend.transaction() as transaction:
            transaction.put_window(SessionWindow("before", "agent:main:before"))
            transaction.append_event("before", chat(0, "saffron before the import"))
        backend.flush()
        request = SearchRequest("saffron", limit=25, session_keys=())
        files = {name: directory.read_bytes(name) for name in directory.list_names("index/")}
        answer = backend.search(request)
        with pytest.raises(MalformedInput, match="invalid JSON"):
            import_sources(backend, [broken])
        assert {name: directory.read_bytes(name)
                for name in directory.list_names("index/")} == files
        assert backend.search(request) == answer
        assert [window.session_id for window in backend.windows()] == ["before"]
        assert verify_backend(backend).ok
        import_sources(backend, [corpus])  # the same import whole goes through after it
        backend.reconcile()
        assert verify_backend(backend).ok
    finally:
        backend.close()


def test_a_search_inside_a_streamed_transaction_reads_the_last_commit() -> None:
    backend = ReferenceBackend.create_in(MemoryDirectory(), config=SMALL)
    try:
        with backend.transaction() as transaction:
            transaction.put_window(SessionWindow("w", "agent:main:main"))
            transaction.append_event("w", chat(0, "saffron first"))
        request = SearchRequest("saffron", limit=25, session_keys=())
        before = backend.search(request)
        with backend.transaction() as transaction:
            for number in range(1, 3 * SMALL.index_flush_documents):
                transaction.append_event("w", chat(number, f"saffron number {number}"))
            assert backend.search(request) == before  # its segments are its own until it commits
        assert backend.index.document_count == 3 * SMALL.index_flush_documents
        assert backend.search(request) != before
        assert verify_backend(backend).ok
    finally:
        backend.close()


def test_a_failed_segment_write_inside_a_streamed_transaction_fails_nothing() -> None:
    directory = FaultyDirectory(MemoryDirectory())
    backend = ReferenceBackend.create_in(directory, config=SMALL)
    rows = segment_rows(SMALL)
    try:
        with backend.transaction() as transaction:
            transaction.put_window(SessionWindow("w", "agent:main:main"))
            for number in range(rows - 5):
                transaction.append_event("w", chat(number, f"saffron number {number}"))
            # The next five rows fill the buffer: its segment's first file write fails.
            directory.faults = (Fault("write", directory.counts["write"] + 6, ENOSPC),)
            for number in range(rows - 5, rows):
                transaction.append_event("w", chat(number, f"saffron number {number}"))
            assert isinstance(backend.flush_error, FileSystemError)
            for number in range(rows, 2 * rows):
                transaction.append_event("w", chat(number, f"saffron number {number}"))
        request = SearchRequest("saffron", limit=25, session_keys=())
        assert backend.index.document_count == 2 * rows
        assert backend.flush_error is None  # written again, and so at the commit
        assert verify_backend(backend).ok
        reopened = ReferenceBackend.open_in(directory)
        assert reopened.search(request) == backend.search(request)
        reopened.close()
    finally:
        backend.close()
