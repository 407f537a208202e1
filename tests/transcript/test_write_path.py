"""Write-path behaviour added for speed (issue 5) that must not change what is stored.

* a writer saves the catalog checkpoint after a commit once enough records piled up
  since the last one, so a reader next to a live writer does not replay the whole log;
* transactions pause the cyclic garbage collector and always restore it;
* the reference backend manifests a large commit at once (a reopen replays only what
  follows), and a flush drops segments whose rows are all deleted.
"""

from __future__ import annotations

import gc
from dataclasses import replace

import pytest

from engine.backends.reference.backend import ReferenceBackend
from engine.config import EngineConfig
from engine.diagnostics.verify import verify_backend
from engine.directory import MemoryDirectory
from engine.index.loading import read_manifest
from engine.model import SearchRequest, SessionWindow
from engine.transcript.store import TranscriptStore


def message(number: int) -> dict[str, object]:
    return {"type": "message", "id": f"m{number}", "message": {"role": "user", "content": "hi"}}


def test_a_large_commit_saves_a_checkpoint_a_reader_uses() -> None:
    directory = MemoryDirectory()
    writer = TranscriptStore.create(directory, config=EngineConfig(checkpoint_after_records=5))
    with writer.transaction() as transaction:
        transaction.put_window(SessionWindow("w1", "agent:a:k"))
        for number in range(6):
            transaction.append_event("w1", message(number))
    with writer.transaction() as transaction:  # small: below the threshold again
        transaction.append_event("w1", message(6))
    reader = TranscriptStore.open(directory)  # the writer is still open
    assert reader.checkpoint_generation == 1
    assert reader.generation == 2
    assert [event.event["id"] for event in reader.events("w1")] == [f"m{n}" for n in range(7)]
    reader.close()
    writer.close()


def test_small_commits_save_no_checkpoint_until_close() -> None:
    directory = MemoryDirectory()
    writer = TranscriptStore.create(directory, config=EngineConfig(checkpoint_after_records=1000))
    with writer.transaction() as transaction:
        transaction.put_window(SessionWindow("w1", "agent:a:k"))
    reader = TranscriptStore.open(directory)
    assert reader.checkpoint_generation is None
    assert reader.generation == 1
    writer.close()
    assert TranscriptStore.open(directory).checkpoint_generation == 1



def test_a_quiet_writer_saves_the_checkpoint_once_enough_records_are_behind() -> None:
    directory = MemoryDirectory()
    writer = TranscriptStore.create(directory, config=EngineConfig(
        checkpoint_after_records=1000, checkpoint_idle_records=5))
    with writer.transaction() as transaction:  # 4 records: a window, 2 events, the commit
        transaction.put_window(SessionWindow("w1", "agent:a:k"))
        transaction.append_event("w1", message(0))
        transaction.append_event("w1", message(1))
    assert writer.save_checkpoint_when_quiet() is False  # fewer records than the rule's
    assert TranscriptStore.open(directory).checkpoint_generation is None
    with writer.transaction() as transaction:
        transaction.append_event("w1", message(2))
        assert writer.save_checkpoint_when_quiet() is False  # not inside a transaction
    assert writer.save_checkpoint_when_quiet() is True  # 6 records behind
    assert writer.save_checkpoint_when_quiet() is False  # nothing new since
    reader = TranscriptStore.open(directory)  # the writer is still open
    assert (reader.checkpoint_generation, reader.generation) == (2, 2)
    assert reader.save_checkpoint_when_quiet() is False  # a reader never saves
    reader.close()
    writer.close()


def test_records_replayed_at_open_count_towards_the_quiet_checkpoint() -> None:
    """A writer killed before any checkpoint: the next writer replays its records at
    open, and they count, so its first quiet moment saves what a reader would replay."""
    directory = MemoryDirectory()
    config = EngineConfig(checkpoint_after_records=1000, checkpoint_idle_records=5)
    writer = TranscriptStore.create(directory, config=config)
    with writer.transaction() as transaction:
        transaction.put_window(SessionWindow("w1", "agent:a:k"))
        for number in range(4):
            transaction.append_event("w1", message(number))
    crashed = directory.crash_copy()  # killed: its close never saved a checkpoint
    reopened = TranscriptStore.open(crashed, writer=True, config=config)
    assert reopened.save_checkpoint_when_quiet() is True
    assert TranscriptStore.open(crashed, config=config).checkpoint_generation == 1
    reopened.close()
    writer.close()


def test_a_reader_next_to_a_writer_that_finished_reconciling_replays_nothing() -> None:
    """An import below `checkpoint_after_records`, then a reconcile: the writer goes quiet
    with its index and its catalog saved, and a reader opened beside it starts from both;
    without the reconcile the reader replays the import's records."""
    directory = MemoryDirectory()
    config = replace(SMALL, checkpoint_after_records=1000, checkpoint_idle_records=5)
    backend = ReferenceBackend.create_in(directory, config=config)
    import_rewound_window(backend)
    before = ReferenceBackend.open_in(directory)
    assert before.store.checkpoint_generation is None  # the import's records are replayed
    before.close()
    assert backend.reconcile() == 1
    reader = ReferenceBackend.open_in(directory)
    assert reader.store.checkpoint_generation == backend.store.generation == 1
    assert reader.index.generation == 1 and len(reader.index.buffer) == 0
    hits = reader.search(SearchRequest("alpha", limit=10))
    assert sorted(hit.message_id for hit in hits.hits) == ["m0", "m1", "m5", "m6"]
    reader.close()
    backend.close()


# ---- the reference backend manifests a large commit, dirty windows and all -----------

SMALL = EngineConfig(index_flush_documents=3, index_merge_segments=50)


def chat(number: int, parent: str | None, text: str) -> dict[str, object]:
    return {"type": "message", "id": f"m{number}", "parentId": parent, "timestamp": number,
            "message": {"role": "user", "content": text}}


def import_rewound_window(backend: ReferenceBackend) -> None:
    """One transaction: a window of 5 messages, a rewind to m1, then 2 more messages."""
    with backend.transaction() as transaction:
        transaction.put_window(SessionWindow("w1", "agent:main:k"))
        parent = None
        for number in range(5):
            transaction.append_event("w1", chat(number, parent, f"alpha word{number}"))
            parent = f"m{number}"
        transaction.append_event("w1", {"type": "leaf", "id": "l1", "parentId": "m4", "targetId": "m1"})
        transaction.append_event("w1", chat(5, "m1", "alpha after rewind"))
        transaction.append_event("w1", chat(6, "m5", "alpha last"))


def test_a_large_commit_is_manifested_even_when_it_dirtied_a_window() -> None:
    """With deferral off (the clear version) the commit is indexed and flushed at once."""
    directory = MemoryDirectory()
    backend = ReferenceBackend.create_in(directory, config=replace(SMALL, defer_large_commits=False))
    import_rewound_window(backend)
    manifest = read_manifest(directory)
    assert manifest is not None and manifest.generation == backend.store.generation == 1
    reader = ReferenceBackend.open_in(directory)
    assert reader.index.generation == 1 and len(reader.index.buffer) == 0  # nothing replayed
    assert backend.index_status() is True and backend.reconcile() == 1
    hits = backend.search(SearchRequest("alpha", limit=10))
    assert sorted(hit.message_id for hit in hits.hits) == ["m0", "m1", "m5", "m6"]
    assert verify_backend(backend).ok
    reader.close()
    backend.close()


def test_a_deferred_large_commit_skips_the_rows_reconcile_would_delete() -> None:
    directory = MemoryDirectory()
    backend = ReferenceBackend.create_in(directory, config=replace(
        SMALL, stream_large_transactions=False))
    import_rewound_window(backend)
    assert backend._deferred and read_manifest(directory) is None  # waiting for reconcile
    assert backend.reconcile() == 1
    assert backend._index.deleted == set() and backend.index.document_count == 4
    manifest = read_manifest(directory)
    assert manifest is not None and manifest.generation == 1 and manifest.deleted == ()
    hits = backend.search(SearchRequest("alpha", limit=10))
    assert sorted(hit.message_id for hit in hits.hits) == ["m0", "m1", "m5", "m6"]
    assert verify_backend(backend).ok
    backend.close()


@pytest.mark.parametrize("read_before_reconcile", [False, True])
def test_deferring_large_commits_changes_no_answer(read_before_reconcile: bool) -> None:
    """Deferred (and reconciled without the doomed rows, or read first and so applied
    in full) and streamed (indexed as written, `engine.backends.reference.streaming`)
    against the clear version: the same hits, ranks, excerpts and flags."""
    requests = [SearchRequest("alpha", limit=10), SearchRequest("alpha", limit=10, order="recent"),
                SearchRequest("word3 after", limit=10), SearchRequest("other", limit=10)]
    answers = []
    for defer, stream in ((False, False), (True, False), (True, True)):
        backend = ReferenceBackend.create_in(MemoryDirectory(), config=replace(
            SMALL, defer_large_commits=defer, stream_large_transactions=stream))
        with backend.transaction() as transaction:  # a clean window beside the rewound one
            transaction.put_window(SessionWindow("w0", "agent:main:other"))
            for number in range(4):
                transaction.append_event("w0", chat(number, f"m{number - 1}" if number else None,
                                                    f"alpha other {number}"))
        import_rewound_window(backend)
        before = [backend.search(request) for request in requests] if read_before_reconcile else []
        backend.reconcile()
        answers.append((before, [backend.search(request) for request in requests]))
        assert verify_backend(backend).ok
        backend.close()
    assert answers[0] == answers[1] == answers[2]


def test_a_crash_before_reconcile_keeps_the_stale_rows() -> None:
    directory = MemoryDirectory()
    backend = ReferenceBackend.create_in(directory, config=SMALL)
    import_rewound_window(backend)
    before = backend.search(SearchRequest("alpha", limit=10))
    reopened = ReferenceBackend.open_in(directory.crash_copy(), writer=True, config=SMALL)
    assert reopened.search(SearchRequest("alpha", limit=10)) == before
    assert reopened.index.document_count == 5 and reopened.index_status() is True
    reopened.reconcile()
    assert reopened.index.document_count == 4
    reopened.close()
    backend.close()


def test_a_flush_drops_segments_whose_rows_are_all_deleted() -> None:
    directory = MemoryDirectory()  # indexed at commit: one segment of the four rows
    backend = ReferenceBackend.create_in(directory, config=replace(
        SMALL, stream_large_transactions=False))
    with backend.transaction() as transaction:
        transaction.put_window(SessionWindow("w1", "agent:main:k"))
        for number in range(4):
            transaction.append_event("w1", chat(number, f"m{number - 1}" if number else None,
                                                f"alpha word{number}"))
    first = read_manifest(directory)
    assert first is not None and [segment[3] for segment in first.segments] == [4]
    with backend.transaction() as transaction:  # rewind onto the same leaf: rebuild all
        transaction.append_event("w1", {"type": "leaf", "id": "l1", "parentId": "m3", "targetId": "m3"})
    backend.reconcile()
    manifest = read_manifest(directory)
    assert manifest is not None and manifest.deleted == ()
    # the first segment's rows were all deleted: it is gone (the rebuilt rows are in
    # segments of their own, written a run of the window at a time)
    assert "segment-000001" not in [segment[0] for segment in manifest.segments]
    hits = backend.search(SearchRequest("alpha", limit=10)).hits
    assert sorted(hit.message_id for hit in hits) == ["m0", "m1", "m2", "m3"]
    assert directory.list_names("index/segment-000001") == []
    assert verify_backend(backend).ok
    backend.close()


def test_the_indexing_flag_follows_every_change_though_it_is_cached() -> None:
    backend = ReferenceBackend.create_in(MemoryDirectory(), config=SMALL)
    assert backend.index_status() is False
    with backend.transaction() as transaction:
        transaction.put_window(SessionWindow("w1", "agent:main:k"))
        transaction.append_event("w1", chat(0, None, "alpha"))
    assert backend.index_status() is False
    with backend.transaction() as transaction:
        transaction.append_event("w1", {"type": "leaf", "id": "l1", "parentId": "m0", "targetId": "m0"})
    assert backend.index_status() is True
    assert backend.search(SearchRequest("alpha", limit=5)).indexing is True
    backend.reconcile()
    assert backend.index_status() is False
    with backend.transaction() as transaction:
        transaction.delete_session("agent:main:k")
    assert backend.index_status() is False
    backend.rebuild_index()
    assert backend.index_status() is False
    backend.close()


def test_a_closed_backend_is_freed_by_reference_counting_after_a_bulk_import() -> None:
    import weakref

    backend = ReferenceBackend.create_in(MemoryDirectory(), config=SMALL)
    import_rewound_window(backend)
    was_enabled = gc.isenabled()
    gc.disable()  # nothing may be left to a cyclic collection
    try:
        index, store = weakref.ref(backend.index), weakref.ref(backend.store)
        backend.close()
        del backend
        assert index() is None and store() is None  # no cycle kept them (none collected)
    finally:
        if was_enabled:
            gc.enable()


def test_the_manifest_records_the_indexing_flag_a_reader_then_trusts() -> None:
    directory = MemoryDirectory()
    backend = ReferenceBackend.create_in(directory, config=SMALL)
    import_rewound_window(backend)
    assert backend.index.generation == 1  # reading the index applies (and flushes) the import
    assert read_manifest(directory).indexing is True  # the rewound window is dirty
    reader = ReferenceBackend.open_in(directory)
    assert reader._status_key is not None  # seeded from the manifest: no pass needed
    assert reader.index_status() is True
    reader._status_key = None  # computed again, the same answer
    assert reader.index_status() is True
    backend.reconcile()
    assert read_manifest(directory).indexing is False
    reader.refresh()
    assert reader.index_status() is False
    with backend.transaction() as transaction:  # a commit the reader must replay
        transaction.append_event("w1", {"type": "leaf", "id": "l2", "parentId": "m6", "targetId": "m1"})
    replaying = ReferenceBackend.open_in(directory)  # manifest older than the store
    assert replaying.index_status() is True
    for opened in (reader, replaying, backend):
        opened.close()
