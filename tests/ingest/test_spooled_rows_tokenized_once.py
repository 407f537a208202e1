"""A held window's spooled rows are tokenized once, when the rebuild with the commit reads
them back (`engine.backends.reference.row_spool`): the import tokenizes exactly as many
texts as the index gets rows, and a spooled run holds entries, not terms."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.backends.reference import row_spool
from engine.backends.reference.backend import ReferenceBackend
from engine.backends.reference.indexing import IndexedStore
from engine.directory import MemoryDirectory
from engine.ingest import import_sources
from tests.ingest.test_reference_whole_windows import SMALL
from tests.ingest.test_whole_windows import transcripts, write_corpus


def test_each_row_is_tokenized_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = write_corpus(tmp_path / "corpus", transcripts())
    tokenized: list[str] = []
    terms = IndexedStore._terms

    def counted(self: IndexedStore, text: str) -> list[str]:
        tokenized.append(text)
        return terms(self, text)

    written: list[list[object]] = []
    write = row_spool.RowSpool.write

    def kept(self: row_spool.RowSpool, rows: list[row_spool.SpooledRow]) -> tuple[int, int]:
        written.append(list(rows))
        return write(self, rows)

    monkeypatch.setattr(IndexedStore, "_terms", counted)
    monkeypatch.setattr(row_spool.RowSpool, "write", kept)
    backend = ReferenceBackend.create_in(MemoryDirectory(), config=SMALL)
    try:
        import_sources(backend, [corpus], received_at=1.0, whole_windows=True)
        assert backend.reconcile() == 0
        rows = backend.index.document_count
    finally:
        backend.close()
    spooled = [row for chunk in written for row in chunk]
    assert spooled, "no held window's rows were spooled"
    assert all(len(row) == 5 and isinstance(row[3], str) for row in spooled)  # type: ignore[arg-type]
    assert len(tokenized) == rows
