"""A long window's rebuild with the commit of an import scans its tree keeping only ids,
parents and seqs (`tree.scan_path`, `IndexedStore.lean_tree_scan`), against the clear
version holding every event's outline (`lean_tree_scan = False`): the same rows in
doc-id order, window states and answers, with and without the spooled tails, and the
same as the old path (events appended one by one, reconciled after)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.backends.reference.backend import ReferenceBackend
from engine.directory import MemoryDirectory
from engine.ingest import import_sources
from tests.ingest.test_reference_whole_windows import SMALL, imported, index_rows
from tests.ingest.test_spooled_tails import QUERIES, long_windows
from tests.ingest.test_whole_windows import answers_of, write_corpus


def rebuilt(corpus: Path, *, lean: bool, tails: bool) -> list[object]:
    """Rows and answers of one import that reconciles after it, its long windows (more
    than 4 events) appended event by event and rebuilt with its commit."""
    backend = ReferenceBackend.create_in(MemoryDirectory(), config=SMALL)
    try:
        assert backend._streamed is not None
        backend.lean_tree_scan = lean
        backend._streamed.spool_tails = tails
        import_sources(backend, [corpus], received_at=1.0, whole_windows=True, held_events=4)
        assert backend.reconcile() == 0
        return [index_rows(backend), answers_of(backend, QUERIES)]
    finally:
        backend.close()


@pytest.mark.parametrize("tails", [True, False])
def test_lean_tree_scan_rebuilds_as_the_outlines_do(tmp_path: Path, tails: bool) -> None:
    corpus = write_corpus(tmp_path / "corpus", long_windows())
    lean = rebuilt(corpus, lean=True, tails=tails)
    assert lean == rebuilt(corpus, lean=False, tails=tails)
    old, _ = imported([[corpus]], whole=False, queries=QUERIES)
    assert lean == old
