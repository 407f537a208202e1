"""A held window's rows made as the import writes its events and spooled until the rebuild
with the commit (`engine.backends.reference.row_spool`) against the same rebuild reading
its events back from the committed log (`StreamedIndexing.spool_rows = False`, the
oracle), and against the old path (every event appended one by one, the reconcile after
the import rebuilding the dirty windows): the same live rows in doc-id order, window
states, answers and history; and the spooled rows are what the rebuild took."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.backends.reference import row_spool
from engine.backends.reference.backend import ReferenceBackend
from engine.config import EngineConfig
from engine.directory import MemoryDirectory
from engine.ingest import import_sources
from tests.ingest.test_reference_whole_windows import (
    SMALL,
    WORDS,
    imported,
    index_rows,
    random_corpus,
    window_events,
)
from tests.ingest.test_whole_windows import answers_of, transcripts, write_corpus


def spooled_import(corpus: Path, *, spool: bool, config: EngineConfig = SMALL,
                   queries: tuple[str, ...] = WORDS,
                   chunk_rows: int = row_spool.CHUNK_ROWS) -> tuple[list[object], int, int]:
    """One import handing windows whole, reconciled after it, a held window's rows
    written `chunk_rows` at a time: rows and answers, the windows rebuilt from spooled
    rows, and the reconcile's count."""
    backend = ReferenceBackend.create_in(MemoryDirectory(), config=config)
    taken = 0
    runs = row_spool.SpooledWindow.runs

    def counted(window: row_spool.SpooledWindow):  # type: ignore[no-untyped-def]
        nonlocal taken
        taken += 1
        return runs(window)

    try:
        assert backend._streamed is not None
        backend._streamed.spool_rows = spool
        backend._streamed.spool_chunk_rows = chunk_rows
        row_spool.SpooledWindow.runs = counted  # type: ignore[method-assign]
        import_sources(backend, [corpus], received_at=1.0, whole_windows=True)
        rebuilt = backend.reconcile()
        return [index_rows(backend), answers_of(backend, queries)], taken, rebuilt
    finally:
        row_spool.SpooledWindow.runs = runs  # type: ignore[method-assign]
        backend.close()


@pytest.mark.parametrize("chunk_rows", [1, 2, row_spool.CHUNK_ROWS])
def test_spooled_rows_are_the_rows_read_back(tmp_path: Path, chunk_rows: int) -> None:
    corpus = write_corpus(tmp_path / "corpus", transcripts())
    read_back, none_spooled, _ = spooled_import(corpus, spool=False, chunk_rows=chunk_rows)
    spooled, windows_spooled, rebuilt = spooled_import(corpus, spool=True,
                                                       chunk_rows=chunk_rows)
    assert spooled == read_back and none_spooled == 0 and rebuilt == 0
    assert windows_spooled > 0
    old, _ = imported([[corpus]], whole=False, queries=WORDS)
    assert spooled == old


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(transcripts_drawn=st.lists(window_events(), min_size=1, max_size=6),
       flush=st.sampled_from([2, 3, 6]), chunk_rows=st.sampled_from([1, 2, 64]))
def test_random_trees_spooled_as_read_back(tmp_path: Path, transcripts_drawn: list[list[dict]],
                                           flush: int, chunk_rows: int) -> None:
    """Random windows of two agents in one transaction, runs of `flush` seqs written
    `chunk_rows` rows at a time: the rows, states and answers of the read-back and of
    the old path."""
    drawn = random_corpus(tmp_path, transcripts_drawn, flush)
    if drawn is None:
        return
    corpus, config = drawn
    read_back, _, _ = spooled_import(corpus, spool=False, config=config, chunk_rows=chunk_rows)
    spooled, _, _ = spooled_import(corpus, spool=True, config=config, chunk_rows=chunk_rows)
    assert spooled == read_back
    old, _ = imported([[corpus]], whole=False, config=config, queries=WORDS)
    assert spooled == old
