"""The tail of a window a streamed import leaves dirty, kept as its events pass
(`engine.backends.reference.spooled_tail`), against the same rebuild with the commit
reading every event back from the committed log (`StreamedIndexing.spool_tails = False`,
the oracle) and against the old path (every event appended one by one, the reconcile
after the import rebuilding the dirty windows): the same live rows in doc-id order,
window states, answers and history; tails broken, replaced, deleted or started on a
window left dirty by an earlier transaction; and the tail's outlines and runs of entries
against the clear `tree.outline` and a filter."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.backends.reference import streaming
from engine.backends.reference.backend import ReferenceBackend
from engine.backends.reference.row_spool import CHUNK_ROWS, RowSpool
from engine.backends.reference.spooled_tail import SpooledTail
from engine.config import EngineConfig
from engine.directory import MemoryDirectory
from engine.ingest import import_sources
from engine.model import SessionWindow, StoredEvent
from engine.transcript.projection import extract_index_entry
from engine.transcript.tree import outline
from tests.ingest.test_reference_whole_windows import (
    SMALL,
    WORDS,
    imported,
    index_rows,
    random_corpus,
    window_events,
)
from tests.ingest.test_whole_windows import answers_of, message, transcripts, write_corpus

QUERIES = (*WORDS, "delta", "side", "branch", "secret", "later", "long")


def long_windows() -> dict[str, tuple[str, list[dict]]]:
    """`transcripts()` and windows longer than a run: rewound early, late, twice, with a
    side append, a rewind to nothing, an incognito one."""
    def long(texts: int, rewinds: dict[int, str], side: int | None = None) -> list[dict]:
        events: list[dict] = []
        parent: str | None = None
        for number in range(texts):
            if number in rewinds:
                events.append({"type": "leaf", "id": f"l{number}", "parentId": parent,
                               "targetId": rewinds[number]})
                parent = rewinds[number]
            extra = {"appendMode": "side"} if number == side else {}
            events.append(message(number, f"long alpha {number} tie", parent, **extra))
            if number % 4 == 3:
                events.append({"type": "custom", "data": {"text": "long custom"}})
            if number != side:
                parent = f"m{number}"
        return events

    windows = transcripts()
    windows.update({
        "l-early": ("agent:main:long-early", long(14, {1: "m0"})),
        "l-late": ("agent:ops:long-late", long(14, {12: "m3"})),
        "l-twice": ("agent:main:long-twice", long(16, {3: "m1", 11: "m5"}, side=7)),
        "l-empty": ("agent:ops:long-empty", [*long(9, {}),
                                              {"type": "leaf", "id": "lx", "parentId": "m8",
                                               "targetId": None}]),
        "l-hidden": ("agent:main:incognito:long", long(12, {2: "m0"})),
    })
    return windows


def tail_import(corpus: Path, *, tails: bool, config: EngineConfig = SMALL,
                held_events: int = 4, chunk_rows: int = CHUNK_ROWS,
                queries: tuple[str, ...] = QUERIES) -> tuple[list[object], int, int]:
    """One import handing windows of fewer than `held_events` events whole (the longer
    ones event by event), reconciled after it: rows and answers, the windows rebuilt
    from their tails, and the reconcile's count."""
    backend = ReferenceBackend.create_in(MemoryDirectory(), config=config)
    used = 0
    committed_tail = streaming.StreamedIndexing.committed_tail

    def counted(follower: streaming.StreamedIndexing, session_id: str, count: int
                ) -> SpooledTail | None:
        nonlocal used
        tail = committed_tail(follower, session_id, count)
        used += tail is not None
        return tail

    try:
        assert backend._streamed is not None
        backend._streamed.spool_tails = tails
        backend._streamed.spool_chunk_rows = chunk_rows
        streaming.StreamedIndexing.committed_tail = counted  # type: ignore[method-assign]
        import_sources(backend, [corpus], received_at=1.0, whole_windows=True,
                       held_events=held_events)
        rebuilt = backend.reconcile()
        return [index_rows(backend), answers_of(backend, queries)], used, rebuilt
    finally:
        streaming.StreamedIndexing.committed_tail = committed_tail  # type: ignore[method-assign]
        backend.close()


@pytest.mark.parametrize("chunk_rows", [1, 2, CHUNK_ROWS])
def test_tails_are_the_events_read_back(tmp_path: Path, chunk_rows: int) -> None:
    corpus = write_corpus(tmp_path / "corpus", long_windows())
    read_back, none_used, _ = tail_import(corpus, tails=False, chunk_rows=chunk_rows)
    tailed, used, rebuilt = tail_import(corpus, tails=True, chunk_rows=chunk_rows)
    assert tailed == read_back and none_used == 0 and rebuilt == 0
    assert used == 6  # every window longer than a run (the incognito one adds no row)
    old, _ = imported([[corpus]], whole=False, queries=QUERIES)
    assert tailed == old


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(transcripts_drawn=st.lists(window_events(), min_size=1, max_size=6),
       flush=st.sampled_from([2, 3, 6]), held_events=st.sampled_from([2, 3]),
       chunk_rows=st.sampled_from([1, 2, 64]))
def test_random_trees_tailed_as_read_back(tmp_path: Path, transcripts_drawn: list[list[dict]],
                                          flush: int, held_events: int,
                                          chunk_rows: int) -> None:
    """Random windows of two agents in one transaction, the longer ones appended event
    by event: the rows, states and answers of the read-back and of the old path."""
    drawn = random_corpus(tmp_path, transcripts_drawn, flush)
    if drawn is None:
        return
    corpus, config = drawn
    options: dict[str, Any] = {"config": config, "held_events": held_events,
                               "chunk_rows": chunk_rows, "queries": WORDS}
    read_back, _, _ = tail_import(corpus, tails=False, **options)
    tailed, _, _ = tail_import(corpus, tails=True, **options)
    assert tailed == read_back
    old, _ = imported([[corpus]], whole=False, config=config, queries=WORDS)
    assert tailed == old


# ----- tails broken, replaced, deleted, started on a window dirty before ---------------

REWOUND = transcripts()["w-rewound"][1]
LONG = [*REWOUND, message(3, "later one", "m2"), message(4, "later two", "m3"),
        message(5, "later three tie", "m4")]


def write_tailed_windows(backend: ReferenceBackend) -> None:
    """Two transactions that stream and ask for the rebuild with their commit (a window
    handed whole): the first leaves a long window dirty without rebuilding it, the
    second goes on with it; long windows appended event by event, one of them then
    replaced (and gone on), one deleted, one recreated after its deletion."""
    with backend.transaction() as transaction:
        transaction.put_window(SessionWindow("before", "agent:main:before"))
        for number, event in enumerate(LONG):
            transaction.append_event("before", event, 1.0)
            if number == 2:
                transaction.put_window(SessionWindow(f"pad-{number}", f"agent:main:p{number}"))
                transaction.append_event(f"pad-{number}", message(0, "pad", None), 1.0)
    with backend.transaction() as transaction:
        keys = ("replaced", "deleted", "recreated", "kept", "whole")
        for session_id in keys:
            transaction.put_window(SessionWindow(session_id, f"agent:main:{session_id}"))
        transaction.append_transcript("whole", REWOUND, [1.0] * len(REWOUND))
        for session_id in keys[:-1]:
            for event in LONG:
                transaction.append_event(session_id, event, 1.0)
        transaction.append_event("before", message(6, "later after tie", "m5"), 1.0)
        transaction.replace_transcript("replaced", LONG[:2], 1.0)
        for event in LONG[2:]:
            transaction.append_event("replaced", event, 1.0)
        transaction.delete_session("agent:main:deleted")
        transaction.delete_session("agent:main:recreated")
        transaction.put_window(SessionWindow("recreated", "agent:main:recreated"))
        for event in LONG:
            transaction.append_event("recreated", event, 1.0)


def test_tails_replaced_deleted_and_left_dirty_before() -> None:
    results = []
    for config, tails in ((SMALL, True), (SMALL, False),
                          (EngineConfig(background_reconcile=False, index_flush_documents=4,
                                        index_merge_segments=2,
                                        stream_large_transactions=False), False)):
        backend = ReferenceBackend.create_in(MemoryDirectory(), config=config)
        if backend._streamed is not None:
            backend._streamed.spool_tails = tails
        write_tailed_windows(backend)
        backend.reconcile()
        results.append([index_rows(backend), answers_of(backend, QUERIES)])
        backend.close()
    assert results[0] == results[1] == results[2]


# ----- the tail itself ------------------------------------------------------------------

@settings(max_examples=50, deadline=None)
@given(events=st.lists(st.one_of(
           st.builds(lambda number, text: message(number, text, None),
                     st.integers(0, 9), st.sampled_from(["alpha", "", "beta gamma"])),
           st.fixed_dictionaries({"type": st.just("leaf"), "id": st.just("l1"),
                                  "targetId": st.sampled_from(["m1", None])}),
           st.just({"type": "custom", "data": {"text": "alpha"}})), max_size=30),
       start=st.integers(0, 5), chunk_events=st.sampled_from([1, 2, 3, 64]),
       data=st.data())
def test_a_tail_holds_the_outlines_and_the_entries_of_its_runs(
        events: list[dict], start: int, chunk_events: int, data: st.DataObject) -> None:
    stored = [StoredEvent("w", start + offset, event, 5.0)
              for offset, event in enumerate(events)]
    tail = SpooledTail(RowSpool(), "w", start, chunk_events)
    for item in stored:
        assert tail.take(item, extract_index_entry(item))
    assert tail.end == start + len(stored)
    assert not tail.take(StoredEvent("w", tail.end + 1, {"type": "custom"}), None)
    assert [(item.seq, item.event) for item in tail.outlines()] == [
        (item.seq, outline(item).event) for item in stored]
    seqs = sorted(data.draw(st.sets(st.integers(start, start + len(stored) + 2))))
    size = data.draw(st.integers(1, 4))
    entries = tail.entries()
    for first in range(0, len(seqs), size):
        run = seqs[first:first + size]
        expected = [entry for item in stored if item.seq in run
                    and (entry := extract_index_entry(item)) is not None]
        assert list(entries.run(run)) == expected
