"""A reference import that hands new windows whole and streams (`whole_windows=True`:
the windows the forward indexer would leave dirty are held, `streaming.StreamedIndexing.hold`,
and rebuilt with the commit, `maintenance.IndexMaintenance._on_commit`) against the old
path, its oracle (`whole_windows=False`: every event appended one by one and indexed
forward, the dirty windows rebuilt by the reconcile after the import): the index's live
rows in doc-id order and its window states, every search (both orders, with every row at
one stamp, so `recent` orders by row), every history page; and the reconcile after the
new path finds nothing left. Small buffers (`index_flush_documents` of a few rows) make
these imports stream, write segments, and read long windows back in runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.backends.reference.backend import ReferenceBackend
from engine.bench.corpus_generator import read_manifest
from engine.config import EngineConfig
from engine.directory import MemoryDirectory
from engine.errors import MalformedInput
from engine.ingest import import_sources
from engine.ingest.batch import WHOLE_WINDOW_EVENTS
from tests.ingest.test_whole_windows import (
    QUERIES,
    answers_of,
    message,
    renamed,
    tiny,  # noqa: F401 (a fixture)
    transcripts,
    write_corpus,
    write_flat,
    write_held_windows,
)

#: Buffers of a few rows: an import of a few windows streams and writes segments, and a
#: window of more than four events is read back in runs.
SMALL = EngineConfig(background_reconcile=False, index_flush_documents=4,
                     index_merge_segments=2)


def index_rows(backend: ReferenceBackend) -> list[object]:
    """The index's live rows in doc-id order, and its window states."""
    index = backend.index
    rows = [(record.session_id, record.message_id, record.role, record.timestamp,
             record.text, record.seq) for record in index.documents()]
    return [rows, sorted(index.window_states.items())]


def imported(steps: list[list[Path]], *, whole: bool, reconcile: list[bool] | None = None,
             held_events: int = WHOLE_WINDOW_EVENTS, config: EngineConfig = SMALL,
             queries: tuple[str, ...] = QUERIES) -> tuple[list[object], list[int]]:
    """A reference backend after one import per step (reconciled after it unless
    `reconcile` says otherwise): its rows, answers and history, and the windows each
    reconcile rebuilt."""
    backend = ReferenceBackend.create_in(MemoryDirectory(), config=config)
    try:
        rebuilt = []
        for position, sources in enumerate(steps):
            reconciling = True if reconcile is None else reconcile[position]
            import_sources(backend, sources, received_at=1.0,
                           whole_windows=whole and reconciling, held_events=held_events)
            if reconciling:
                rebuilt.append(backend.reconcile())
        return [index_rows(backend), answers_of(backend, queries)], rebuilt
    finally:
        backend.close()


def same_as_old_path(steps: list[list[Path]], **options: Any) -> tuple[list[int], list[int]]:
    """Check both paths leave the same index and answers; each path's reconciles."""
    old, old_rebuilt = imported(steps, whole=False, **options)
    new, new_rebuilt = imported(steps, whole=True, **options)
    assert new == old
    return old_rebuilt, new_rebuilt


@pytest.mark.parametrize("held_events", [WHOLE_WINDOW_EVENTS, 4, 2])
def test_rewound_windows_are_rebuilt_with_the_commit(tmp_path: Path, held_events: int) -> None:
    """Rewinds, side appends, branches, opaque entries, an incognito and an empty
    window; with `held_events` of 4, windows too long to hold are appended event by
    event, left dirty by the forward indexer and rebuilt with the commit all the same
    (read back in runs when longer than a run); with 2, no window is handed whole, so
    the import asks for no rebuild and its reconcile rebuilds them, as before."""
    corpus = write_corpus(tmp_path / "corpus", transcripts())
    old, new = same_as_old_path([[corpus]], held_events=held_events)
    assert old == [6] and new == ([6] if held_events == 2 else [0])


def test_the_generated_corpus(tiny: Path) -> None:  # noqa: F811 (the fixture)
    queries = tuple(probe["query"] for probe in read_manifest(tiny)["probes"].values())
    old, new = same_as_old_path([[tiny]], queries=queries)
    assert old[0] > 0 and new == [0]
    same_as_old_path([[tiny]], queries=queries, held_events=8)


def test_windows_waiting_from_an_earlier_import(tmp_path: Path) -> None:
    """The first import is not reconciled; the second one's commit rebuilds its own
    dirty windows and the first one's, in the reconcile's order."""
    windows = transcripts()
    first = write_corpus(tmp_path / "first", renamed(windows, "-1"))
    second = write_corpus(tmp_path / "second", windows)
    old, new = same_as_old_path([[first], [second]], reconcile=[False, True])
    assert old == [12] and new == [0]


def test_windows_interleaved_with_a_flat_log(tmp_path: Path) -> None:
    windows = transcripts()
    first = write_corpus(tmp_path / "first", renamed(windows, "-1"))
    second = write_corpus(tmp_path / "second", windows)
    flat = write_flat(tmp_path / "chat.jsonl", [
        ("agent:main:x-1", "w-flat-1", "f1", "flat later tie"),
        ("agent:ops:y", "w-flat", "f1", "flat alpha tie"),
        ("agent:main:x-1", "w-flat-1", "f2", "flat later two")])
    for steps in ([[first, flat], [second]], [[flat, second, first]]):
        _, new = same_as_old_path(steps)
        assert new == [0] * len(steps)


def test_a_held_window_that_goes_on_is_deleted_or_replaced() -> None:
    """In one streamed transaction, windows handed whole and left dirty: one gets
    another event, one is deleted, one replaced; the rows of the old path."""
    results = []
    for whole in (False, True):
        backend = ReferenceBackend.create_in(MemoryDirectory(), config=SMALL)
        write_held_windows(backend, whole=whole)
        rebuilt = backend.reconcile()
        results.append((index_rows(backend), answers_of(backend)))
        backend.close()
        assert rebuilt == (0 if whole else 2)
    assert results[0] == results[1]


def test_a_failed_import_holds_nothing_after_it(tmp_path: Path) -> None:
    """An import that fails leaves the index as it was, and the next import is the
    old path's."""
    windows = transcripts()
    good = write_corpus(tmp_path / "good", windows)
    bad = write_corpus(tmp_path / "bad", renamed(windows, "-2"))
    with open(bad / "transcripts" / "z-rewound-2.jsonl", "a", encoding="utf-8") as file:
        file.write('{"type": "message", "id": "m9", "parentId": "m2", "message": 5}\n')
    other = write_corpus(tmp_path / "other", renamed(windows, "-3"))
    results = []
    for whole in (False, True):
        backend = ReferenceBackend.create_in(MemoryDirectory(), config=SMALL)
        import_sources(backend, [good], received_at=1.0, whole_windows=whole)
        backend.reconcile()
        before = [index_rows(backend), answers_of(backend)]
        with pytest.raises(MalformedInput):
            import_sources(backend, [bad], received_at=1.0, whole_windows=whole)
        assert [index_rows(backend), answers_of(backend)] == before
        import_sources(backend, [other], received_at=1.0, whole_windows=whole)
        backend.reconcile()
        results.append([index_rows(backend), answers_of(backend)])
        backend.close()
    assert results[0] == results[1]


def test_a_rebuild_that_fails_is_left_to_the_reconcile(tmp_path: Path) -> None:
    """The commit is durable before its rebuild: when that cannot read a file, the
    import still commits and the reconcile after it rebuilds the windows left."""
    corpus = write_corpus(tmp_path / "corpus", transcripts())
    old, _ = imported([[corpus]], whole=False)
    backend = ReferenceBackend.create_in(MemoryDirectory(), config=SMALL)
    try:
        def unreadable(*arguments: object, **options: object) -> int:
            raise OSError("the log cannot be read")

        backend._rebuild_waiting = unreadable  # type: ignore[method-assign]
        import_sources(backend, [corpus], received_at=1.0, whole_windows=True)
        del backend._rebuild_waiting
        assert backend.index_status() and backend.reconcile() == 6
        assert [index_rows(backend), answers_of(backend)] == old
    finally:
        backend.close()


# ----- random trees ---------------------------------------------------------------------

WORDS = ("alpha", "beta", "gamma", "tie")


@st.composite
def window_events(draw: st.DrawFn) -> list[dict]:
    """A transcript of messages under random parents, rewinds (`leaf` events) to
    random earlier messages, side appends, tool results and events without ids."""
    events: list[dict] = []
    ids: list[str] = []
    for number in range(draw(st.integers(0, 12))):
        kind = draw(st.sampled_from(("message", "message", "message", "leaf", "custom")))
        parent = draw(st.sampled_from([None, *ids])) if ids else None
        if kind == "leaf" and ids:
            events.append({"type": "leaf", "id": f"l{number}", "parentId": ids[-1],
                           "targetId": draw(st.sampled_from(ids))})
        elif kind == "custom":
            events.append({"type": "custom", "data": {"text": "alpha custom"}})
        else:
            extra = {"appendMode": "side"} if draw(st.booleans()) and ids else {}
            role = draw(st.sampled_from(("user", "assistant", "toolResult")))
            text = " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=3)))
            events.append(message(number, text, parent, role=role, **extra))
            ids.append(f"m{number}")
    return events


def random_corpus(tmp_path: Path, transcripts_drawn: list[list[dict]], flush: int
                  ) -> tuple[Path, EngineConfig] | None:
    """The drawn windows, of two agents, as a corpus directory, and a config of `flush`
    rows a buffer; None when this example's corpus was written already."""
    folder = tmp_path / f"corpus-{abs(hash(json.dumps(transcripts_drawn))) % 10**9}-{flush}"
    if folder.exists():
        return None
    windows = {f"w{number}": (f"agent:{('main', 'ops')[number % 2]}:k{number}", events)
               for number, events in enumerate(transcripts_drawn)}
    return write_corpus(folder, windows), EngineConfig(
        background_reconcile=False, index_flush_documents=flush, index_merge_segments=2)


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(transcripts_drawn=st.lists(window_events(), min_size=1, max_size=6),
       held_events=st.sampled_from([2, 5, WHOLE_WINDOW_EVENTS]),
       flush=st.sampled_from([2, 3, 6]))
def test_random_trees_answer_as_the_old_path(tmp_path: Path, transcripts_drawn: list[list[dict]],
                                             held_events: int, flush: int) -> None:
    """Random windows of two agents, imported in one transaction: the rows, states and
    answers of the old path, and nothing left for the reconcile after it."""
    drawn = random_corpus(tmp_path, transcripts_drawn, flush)
    if drawn is None:
        return
    corpus, config = drawn
    old, new = same_as_old_path([[corpus]], held_events=held_events, config=config,
                                queries=WORDS)
    assert new == [0] or new == old  # no rebuild asked for when no window was handed whole
