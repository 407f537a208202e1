"""An event a reader already checked (`shaped`), appended one by one, is checked once
(`ImportBatch` through `append_shaped_event`: `ReferenceTransaction`'s, routed by the
partitioned store's), against the clear path, the transaction's own `append_event`
(which runs all of `check_event`): on the reference backend alone and on a partitioned
store of both backends, with windows too long to hold (their held events and those
after), the same store and answers, or the same refusal at the same line for an event
whose value or stamp no store keeps."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine.backends.reference.transaction import ReferenceTransaction
from engine.errors import MalformedInput
from engine.ingest import import_sources
from engine.store.registry import open_or_create_store, open_store
from engine.store.transaction import PartitionedTransaction
from tests.ingest.test_whole_windows import QUERIES, answers_of, transcripts, write_corpus

BACKENDS = ("reference", "sqlite")


def imported(folder: Path, backend: str, corpus: Path, *, shaped: bool,
             monkeypatch: pytest.MonkeyPatch) -> tuple[list[object] | None, str | None]:
    """The answers of a partitioned store after importing `corpus` (windows of more
    than two events appended one by one), or the import's refusal; with `shaped`
    False, through the transactions' `append_event` alone."""
    with monkeypatch.context() as patched:
        if not shaped:
            patched.delattr(ReferenceTransaction, "append_shaped_event")
            patched.delattr(PartitionedTransaction, "append_shaped_event")
        store = open_or_create_store(folder, "import", backend=backend).backend
        try:
            import_sources(store, [corpus], received_at=1.0, whole_windows=True,
                           held_events=2)
        except MalformedInput as error:
            refused = str(error)
        else:
            refused = None
        finally:
            store.close()
    if refused is not None:
        return None, refused
    store = open_store(folder, "search")
    try:
        return answers_of(store, QUERIES), None
    finally:
        store.close()


def corpus_with(tmp_path: Path, name: str, bad: dict[str, Any] | None, at: int
                ) -> Path:
    """`transcripts()` with `bad` put at event `at` of its longest window."""
    windows = transcripts()
    key, events = windows["a-opaque"]
    events = [dict(event) for event in events]
    if bad is not None:
        events.insert(at, bad)
    windows["a-opaque"] = (key, events)
    return write_corpus(tmp_path / name, windows)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("bad", "at"), [
    (None, 0),
    ({"type": "custom", "id": "big", "n": 2**64}, 1),  # among the held events
    ({"type": "custom", "id": "big", "n": 2**64}, 5),  # after them
    ({"type": "custom", "id": "deep", "n": json.loads("[" * 600 + "]" * 600)}, 4),
])
def test_shaped_events_are_checked_once_as_before(tmp_path: Path, backend: str,
                                                  bad: dict[str, Any] | None, at: int,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = corpus_with(tmp_path, "corpus", bad, at)
    old = imported(tmp_path / "old", backend, corpus, shaped=False, monkeypatch=monkeypatch)
    new = imported(tmp_path / "new", backend, corpus, shaped=True, monkeypatch=monkeypatch)
    assert new == old
    assert (old[1] is None) == (bad is None)
