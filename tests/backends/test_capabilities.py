"""Typed backend capabilities: what each backend declares, and what callers do without one.

The real backends must implement every capability they declare (no protocol stub may
stand in for a method), and every caller that needs a capability checks it with
`isinstance` and names the backend and the capability when it is missing.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from engine.backends.protocol import (
    CAPABILITIES,
    AnswersLate,
    Backend,
    BackendTransaction,
    Compactable,
    Diagnosable,
    Explainable,
    Generational,
    Interruptible,
    Maintenance,
    ReconcilesInBatches,
    Refreshable,
    SearchBackend,
    TranscriptReader,
    TranscriptWriter,
    capability_members,
    require_capability,
)
from engine.backends.reference.backend import ReferenceBackend
from engine.backends.reference.transaction import ReferenceTransaction
from engine.backends.sqlite.backend import SqliteBackend
from engine.backends.sqlite.writes import SqliteTransaction
from engine.bench.adapters import finish_indexing
from engine.cli import main, search_commands
from engine.directory import MemoryDirectory
from engine.errors import UsageError
from engine.ingest import import_sources
from engine.model import SearchRequest, SearchResult, SessionWindow
from engine.rpc.server import serve
from engine.store import maintenance
from engine.store.partitioned import PartitionedSnapshotStore, PartitionedStore
from engine.store.transaction import PartitionedTransaction
from engine.transcript.store import TranscriptStore

PROTOCOLS = {*CAPABILITIES, Backend, BackendTransaction}


class SearchOnly:
    """A backend that can search and nothing else (no reconcile, refresh, explain, writes)."""

    name = "tiny"

    def __init__(self) -> None:
        self.requests: list[SearchRequest] = []

    def search(self, request: SearchRequest) -> SearchResult:
        self.requests.append(request)
        return SearchResult(hits=(), indexing=False)

    def stats(self) -> dict[str, int]:
        return {}

    def close(self) -> None:
        pass


def declared(backend_class: type) -> set[type]:
    return {base for base in backend_class.__mro__ if base in PROTOCOLS}


@pytest.mark.parametrize(("backend_class", "expected"), [
    (ReferenceBackend, {Backend, SearchBackend, TranscriptWriter, TranscriptReader,
                        Maintenance, ReconcilesInBatches, Refreshable, Explainable, Diagnosable,
                        AnswersLate, Compactable, Generational}),
    (SqliteBackend, {Backend, SearchBackend, TranscriptWriter, TranscriptReader, Maintenance,
                     ReconcilesInBatches, Interruptible, Compactable, Generational}),
    (ReferenceTransaction, {BackendTransaction}),
    (SqliteTransaction, {BackendTransaction}),
    # a partitioned store offers what its partitions offer
    (PartitionedStore, {Backend, SearchBackend, TranscriptWriter, TranscriptReader, Maintenance,
                        Interruptible, Compactable}),
    (PartitionedSnapshotStore, {Backend, SearchBackend, TranscriptWriter, TranscriptReader,
                                Maintenance, Refreshable, Explainable, Interruptible,
                                Compactable}),
    (PartitionedTransaction, {BackendTransaction}),
])
def test_backends_declare_their_capabilities(backend_class: type, expected: set[type]) -> None:
    assert declared(backend_class) == expected


@pytest.mark.parametrize("backend_class",
                         [ReferenceBackend, SqliteBackend, ReferenceTransaction, SqliteTransaction,
                          PartitionedStore, PartitionedSnapshotStore, PartitionedTransaction])
def test_every_declared_member_is_implemented_not_inherited_from_a_protocol(
        backend_class: type) -> None:
    for capability in declared(backend_class):
        for member in capability_members(capability):
            owner = next(klass for klass in backend_class.__mro__ if member in vars(klass))
            assert owner not in PROTOCOLS, f"{backend_class.__name__}.{member} is a stub"


def test_open_backends_pass_the_runtime_checks(tmp_path: Path) -> None:
    reference = ReferenceBackend.create_in(MemoryDirectory())
    sqlite = SqliteBackend.create(tmp_path / "lite")
    try:
        assert all(isinstance(reference, capability) for capability in CAPABILITIES
                   if capability is not Interruptible)
        assert not isinstance(reference, Interruptible)
        assert isinstance(sqlite, Backend) and isinstance(sqlite, Maintenance)
        assert isinstance(sqlite, Interruptible)
        assert not isinstance(sqlite, Refreshable) and not isinstance(sqlite, Explainable)
    finally:
        reference.close()
        sqlite.close()


def test_a_bare_transcript_store_is_a_reader_and_writer_without_search() -> None:
    with TranscriptStore.create(MemoryDirectory()) as store:
        assert isinstance(store, TranscriptReader) and isinstance(store, TranscriptWriter)
        assert not isinstance(store, SearchBackend)


def test_a_missing_capability_is_an_error_naming_backend_and_capability() -> None:
    backend = SearchOnly()
    assert isinstance(backend, SearchBackend) and not isinstance(backend, Maintenance)
    with pytest.raises(UsageError) as raised:
        require_capability(backend, Maintenance, "reconcile")
    assert str(raised.value) == ("reconcile needs a backend with Maintenance (index_status, "
                                 "reconcile); backend 'tiny' does not offer it")
    assert require_capability(backend, SearchBackend, "search") is backend


def test_reconcile_when_needed_skips_a_backend_that_never_lags() -> None:
    assert maintenance.reconcile_when_needed(SearchOnly()) == 0
    assert finish_indexing(SearchOnly()) == 0


def test_the_reconcile_command_names_the_missing_capability(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        tmp_path: Path) -> None:
    monkeypatch.setattr(maintenance, "open_store",
                        lambda path, command, writer, **options: SearchOnly())
    assert main(["reconcile", "--store", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        "session-search: error: reconcile needs a backend with Maintenance (index_status, "
        "reconcile); backend 'tiny' does not offer it\n")


def test_explain_refuses_a_backend_that_cannot_explain(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        tmp_path: Path) -> None:
    monkeypatch.setattr(search_commands, "open_store", lambda path, command, **options: SearchOnly())
    assert main(["explain", "--store", str(tmp_path), "anything"]) == 2
    assert capsys.readouterr().err == (
        "session-search: error: explain needs a reference store; this one uses 'tiny'\n")


def test_serve_searches_a_backend_that_needs_no_refresh() -> None:
    backend = SearchOnly()
    output = io.StringIO()
    line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "sessions.search",
                       "params": {"sessionKeys": [], "query": "x"}})
    assert serve(backend, io.StringIO(line + "\n"), output) == 1
    assert json.loads(output.getvalue())["result"] == {"hits": [], "truncated": False,
                                                       "indexing": False}
    assert backend.requests == [SearchRequest("x", session_keys=())]


def test_importing_needs_a_target_that_lists_its_windows(tmp_path: Path) -> None:
    source = tmp_path / "flat.jsonl"
    source.write_text(json.dumps({"sessionId": "s", "sessionKey": "global", "messageId": "m",
                                  "role": "user", "timestamp": 5, "text": "hi"}) + "\n",
                      encoding="utf-8")

    class WriteOnly:
        name = "write-only"

        def transaction(self) -> Any:
            raise AssertionError("must not be reached")

    with pytest.raises(UsageError, match="import needs a backend with ImportTarget "
                                         r"\(transaction, windows\); backend 'write-only'"):
        import_sources(WriteOnly(), [source])
    with TranscriptStore.create(MemoryDirectory()) as store:  # a bare store is a target
        assert import_sources(store, [source]).windows == 1
        assert [window.session_id for window in store.windows()] == ["s"]
        assert store.window("s") == SessionWindow("s", "global", created_at=5.0)
