"""The rebuild with a streamed import's commit lets each held window go as it rebuilds it
(`maintenance.IndexMaintenance._rebuild_waiting` pops it from the held windows): a held
path (an integer an event) and its spooled rows wait until their window is rebuilt, not
until every held window is. The rows are those of the reconcile the rebuild stands for
(`tests/ingest/test_reference_whole_windows.py` compares them)."""

from __future__ import annotations

from pathlib import Path

from engine.backends.reference import streaming
from engine.backends.reference.backend import ReferenceBackend
from engine.directory import MemoryDirectory
from engine.ingest import import_sources
from tests.ingest.test_reference_whole_windows import SMALL
from tests.ingest.test_spooled_tails import long_windows
from tests.ingest.test_whole_windows import write_corpus


def test_held_windows_are_let_go_as_they_are_rebuilt(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "corpus", long_windows())
    given: list[dict[str, streaming.HeldWindow | None]] = []
    rebuilds = streaming.StreamedIndexing.rebuilds

    def kept(follower: streaming.StreamedIndexing) -> dict[str, streaming.HeldWindow | None] | None:
        taken = rebuilds(follower)
        if taken:
            given.append(taken)
            given.append(dict(taken))  # what it held, kept here
        return taken

    backend = ReferenceBackend.create_in(MemoryDirectory(), config=SMALL)
    try:
        streaming.StreamedIndexing.rebuilds = kept  # type: ignore[method-assign]
        import_sources(backend, [corpus], received_at=1.0, whole_windows=True, held_events=40)
        assert given and any(window is not None for window in given[1].values())
        assert given[0] == {}  # each taken as its window was rebuilt
        assert backend.windows_needing_reconcile() == []
        assert not backend.index_status()
    finally:
        streaming.StreamedIndexing.rebuilds = rebuilds  # type: ignore[method-assign]
        backend.close()
