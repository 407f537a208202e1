"""Compaction of the transcript log (`engine.transcript.compaction`, `TranscriptStore.compact`).

What it must show: deleted windows' records are reclaimed (files shrink), every live
window and its events read the same before and after and after a reopen, a window
re-created under a deleted window's session id keeps its new events, nothing to do
rewrites nothing, a crash at every step (the crash copy of a `MemoryDirectory` at each
write, sync and rename of the compaction) reopens with the committed state and verifies
clean, a full disk during it is a clear StoreError leaving the store whole, and a reader
opened before a compaction reads correctly after it. Every test that touches files runs
on `FileDirectory` and `MemoryDirectory`.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.codec.framing import FOOTER_SIZE
from engine.config import EngineConfig
from engine.directory import Directory, FileDirectory, MemoryDirectory
from engine.errors import StoreError
from engine.model import SessionWindow
from engine.transcript.checkpoint import CHECKPOINT_NAME
from engine.transcript.compaction import (
    COMPACTION_STATE_NAME,
    CompactionOutcome,
    read_compaction_state,
)
from engine.transcript.log_files import LOG_FOLDER
from engine.transcript.store import TranscriptStore
from tests.durability.faulty_directory import EIO, ENOSPC, Fault, FaultyDirectory
from tests.transcript.store_files import directory_maker

#: Small log files: a few transactions each, so several files are sealed.
SMALL = EngineConfig(log_roll_bytes=600)


@pytest.fixture(params=["file", "memory"])
def make_directory(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], Directory]:
    return directory_maker(request.param, tmp_path)


def message(text: str, index: int) -> dict:
    return {"type": "message", "id": f"m{index}", "parentId": None if index == 0 else f"m{index - 1}",
            "message": {"role": "user", "content": text}}


def fill(store: TranscriptStore) -> None:
    """Six windows under four keys, two keys deleted, one deleted id re-created, one
    window moved between keys: every kind of life the rule has to follow."""
    for number in range(6):
        key = f"agent:main:k{number % 4}"
        with store.transaction() as transaction:
            transaction.put_window(SessionWindow(f"w{number}", key, title=f"window {number}"))
            for index in range(4):
                transaction.append_event(f"w{number}", message(f"text {number} {index} " * 5, index),
                                         float(index))
    with store.transaction() as transaction:  # w5 moves from k1 to k3
        transaction.put_window(SessionWindow("w5", "agent:main:k3", title="moved"))
        transaction.append_event("w5", message("after the move", 4), 9.0)
    with store.transaction() as transaction:
        assert transaction.delete_session("agent:main:k0") == 2  # w0, w4
    with store.transaction() as transaction:
        transaction.put_window(SessionWindow("w0", "agent:main:k9", title="re-created"))
        transaction.append_event("w0", message("a new life", 0), 20.0)
    with store.transaction() as transaction:
        assert transaction.delete_session("agent:main:k3") == 2  # w3, w5 (moved)
    with store.transaction() as transaction:
        transaction.append_event("w1", message("still here", 4), 30.0)
    with store.transaction() as transaction:  # w2's four events replaced by two
        transaction.replace_transcript("w2", [message("replaced", 0), message("again", 1)], 31.0)
    with store.transaction() as transaction:  # and by one, then an append
        transaction.replace_transcript("w2", [message("third version", 0)], 32.0)
        transaction.append_event("w2", message("appended after", 1), 33.0)
    with store.transaction() as transaction:  # w0 (re-created) replaced, then deleted
        transaction.replace_transcript("w0", [message("short-lived", 0)], 34.0)
    with store.transaction() as transaction:
        transaction.delete_session("agent:main:k9")
    with store.transaction() as transaction:
        transaction.put_window(SessionWindow("w6", "agent:main:k6"))
        transaction.append_event("w6", message("the last window", 0), 35.0)


def snapshot(store: TranscriptStore) -> dict:
    """Everything a read sees, positions left out."""
    return {
        "generation": store.generation,
        "windows": store.windows(),
        "keys": [(key, [w.session_id for w in store.windows_of(key)]) for key in store.session_keys()],
        "events": {w.session_id: store.events(w.session_id) for w in store.windows()},
        "changes": [(generation, type(change).__name__) for generation, change in store.changes_since(0)
                    if type(change).__name__ == "SessionDeleted"],
        "count": store.stats()["events"],
    }


def log_bytes(directory: Directory) -> int:
    return sum(directory.size(name) for name in directory.list_names(LOG_FOLDER + "/segment-"))


def test_compaction_reclaims_deleted_records_and_keeps_every_live_one(make_directory):
    directory = make_directory()
    with TranscriptStore.create(directory, config=SMALL) as store:
        fill(store)
        before = snapshot(store)
        size = log_bytes(directory)
        outcome = store.compact()
        assert outcome.files_compacted >= 2 and outcome.records_dropped > 0
        assert log_bytes(directory) < size
        # what the files lost, plus the footer the roll gave the open file first
        assert size - log_bytes(directory) + FOOTER_SIZE == outcome.bytes_reclaimed
        assert snapshot(store) == before
        assert store.verify_log() is None
        assert [w.session_id for w in store.windows()] == ["w1", "w2", "w6"]
        assert [e.event["message"]["content"] for e in store.events("w2")] == [
            "third version", "appended after"]
        with store.transaction() as transaction:  # the writer goes on after it
            transaction.append_event("w2", message("after compaction", 4), 40.0)
        after = snapshot(store)
    with TranscriptStore.open(directory) as reopened:
        assert snapshot(reopened) == after
        assert reopened.checkpoint_generation == after["generation"]
        assert reopened.verify_log() is None and reopened.problems() == []
        assert "w4" not in {w.session_id for w in reopened.windows()}
    with TranscriptStore.open(directory, config=EngineConfig(catalog_checkpoints=False)) as replayed:
        assert snapshot(replayed) == after
    assert read_compaction_state(directory).compactions == 1


def test_nothing_to_compact_rewrites_nothing(make_directory):
    directory = make_directory()
    with TranscriptStore.create(directory, config=SMALL) as store:
        for number in range(3):
            with store.transaction() as transaction:
                transaction.put_window(SessionWindow(f"w{number}", "agent:main:main"))
                transaction.append_event(f"w{number}", message("hello " * 20, 0))
        files = {name: directory.read_bytes(name) for name in directory.list_names()}
        assert store.compact() == CompactionOutcome()
        assert {name: directory.read_bytes(name) for name in directory.list_names()} == files
        assert not directory.exists(COMPACTION_STATE_NAME)
        with store.transaction() as transaction:
            transaction.delete_session("agent:main:main")
        assert store.compact().files_compacted >= 1
        assert store.compact() == CompactionOutcome()  # a second one finds nothing
        assert store.windows() == [] and store.generation == 4


def test_the_open_log_file_is_sealed_and_compacted_too(make_directory):
    directory = make_directory()
    with TranscriptStore.create(directory) as store:  # 64 MiB files: all in file 1
        with store.transaction() as transaction:
            transaction.put_window(SessionWindow("a", "agent:main:a"))
            transaction.append_event("a", message("gone " * 50, 0))
            transaction.put_window(SessionWindow("b", "agent:main:b"))
            transaction.append_event("b", message("kept " * 5, 0))
        with store.transaction() as transaction:
            transaction.delete_session("agent:main:a")
        size = directory.size("transcripts/segment-000001.log")
        outcome = store.compact()
        assert outcome.files_compacted == 1
        assert directory.size("transcripts/segment-000001.log") < size
        with store.transaction() as transaction:
            transaction.append_event("b", message("next", 1))
        assert directory.exists("transcripts/segment-000002.log")
        after = snapshot(store)
    with TranscriptStore.open(directory) as reopened:
        assert snapshot(reopened) == after and reopened.verify_log() is None


def test_every_transaction_id_and_the_generation_stay(make_directory):
    directory = make_directory()
    with TranscriptStore.create(directory, config=SMALL) as store:
        fill(store)
        store.compact()
        transactions = [generation for generation, _ in store.changes_since(0)]
        assert store.generation == 16
    with TranscriptStore.open(directory, config=EngineConfig(catalog_checkpoints=False)) as reopened:
        assert reopened.generation == 16
        # the change feed still names every delete, in its transaction
        deletes = [(generation, change.session_ids) for generation, change in reopened.changes_since(0)
                   if type(change).__name__ == "SessionDeleted"]
        assert deletes == [(8, ("w0", "w4")), (10, ("w3", "w5")), (15, ("w0",))]
        replaces = [generation for generation, change in reopened.changes_since(0)
                    if type(change).__name__ == "TranscriptReplaced"]
        assert replaces == [13]  # the last replace of a live window stays; w0's went
        assert max(transactions) == 16


def test_a_reader_opened_before_a_compaction_reads_right_after_it(make_directory):
    directory = make_directory()
    with TranscriptStore.create(directory, config=SMALL) as store:
        fill(store)
        reader = TranscriptStore.open(directory, config=SMALL)
        before = snapshot(reader)
        store.compact()
        assert snapshot(reader) == before  # stale positions reloaded, not "corrupt"
        assert reader.verify_log() is None
        with store.transaction() as transaction:
            transaction.append_event("w1", message("later", 5))
        reader.refresh()
        assert snapshot(reader) == snapshot(store)
        reader.close()


def test_a_reader_reads_the_change_feed_right_after_a_compaction(make_directory):
    directory = make_directory()
    with TranscriptStore.create(directory, config=SMALL) as store:
        fill(store)
        reader = TranscriptStore.open(directory, config=EngineConfig(catalog_checkpoints=False,
                                                                     log_roll_bytes=600))
        store.compact()
        changes = list(reader.changes_since(3))  # stale transaction offsets: reloaded first
        assert changes == list(store.changes_since(3))
        # transactions 4 and 5 made windows deleted later: nothing of them is left
        assert [generation for generation, _ in changes][0] == 6
        assert [generation for generation, change in changes
                if type(change).__name__ == "SessionDeleted"] == [8, 10, 15]
        reader.close()


def test_a_reader_whose_view_was_compacted_away_is_told_to_refresh(make_directory):
    directory = make_directory()
    with TranscriptStore.create(directory, config=SMALL) as store:
        fill(store)
        reader = TranscriptStore.open(directory, config=SMALL)
        with store.transaction() as transaction:
            transaction.delete_session("agent:main:k2")  # w2, which the reader still shows
        store.compact()
        with pytest.raises(StoreError, match="compacted after this reader read it .* refresh or reopen"):
            reader.events("w2")
        reader.events("w1")  # an event still there reads
        reader.refresh()
        assert snapshot(reader) == snapshot(store)
        reader.close()


def compacting_store() -> tuple[MemoryDirectory, dict]:
    directory = MemoryDirectory()
    with TranscriptStore.create(directory, config=SMALL) as store:
        fill(store)
        committed = snapshot(store)
    return directory, committed


def check_committed_state(directory: Directory, committed: dict) -> None:
    with TranscriptStore.open(directory, writer=True, config=SMALL) as store:
        assert snapshot(store) == committed
        assert store.verify_log() is None
        assert [problem for problem in store.problems() if problem.serious] == []
    with TranscriptStore.open(directory, config=SMALL) as store:  # after the writer tidied up
        assert snapshot(store) == committed and store.problems() == []
        assert not read_compaction_state(directory).in_progress


@pytest.mark.parametrize("operation", ["write", "sync", "rename"])
def test_a_crash_at_every_step_of_a_compaction_loses_nothing(operation: str):
    base, committed = compacting_store()
    steps = 0
    for at in itertools.count(1):
        directory = FaultyDirectory(clone_memory(base), Fault(operation, at, EIO))
        store = TranscriptStore.open(directory, writer=True, config=SMALL)
        try:
            store.compact()
        except StoreError:
            pass
        finally:
            store.close()
        crashed = directory.crash_at_fault()
        if crashed is None:  # the compaction needed fewer than `at` of them
            break
        steps += 1
        check_committed_state(crashed, committed)
        check_committed_state(directory.inner, committed)
    assert steps >= 3


def clone_memory(source: MemoryDirectory) -> MemoryDirectory:
    return source.crash_copy()


def test_a_full_disk_during_compaction_is_a_clear_error_and_the_store_stays_whole():
    base, committed = compacting_store()
    for at in itertools.count(1):
        directory = FaultyDirectory(clone_memory(base),
                                    Fault("write", at, ENOSPC, until_space_returns=True))
        store = TranscriptStore.open(directory, writer=True, config=SMALL)
        try:
            store.compact()
            finished = True
        except StoreError as error:
            finished = False
            assert "No space left on device" in str(error)
            assert str(error).startswith("the compaction ") or "compaction.state" in str(error)
            # the writer reloaded: it reads all the same (a refused seal of the open log
            # file fails it, as any refused seal does: the next writer goes on)
            assert snapshot(store) == committed
            directory.space_returns()
        store.close()
        if finished:
            break
        with TranscriptStore.open(directory, writer=True, config=SMALL) as store, \
                store.transaction() as transaction:
            transaction.append_event("w1", message("after the full disk", 5))
        with TranscriptStore.open(directory, config=SMALL) as reopened:
            assert reopened.verify_log() is None and reopened.generation == committed["generation"] + 1
            assert [p for p in reopened.problems() if p.serious] == []
        with TranscriptStore.open(directory, writer=True, config=SMALL) as again:
            again.compact()
        with TranscriptStore.open(directory, config=SMALL) as compacted:
            assert compacted.problems() == [] and compacted.verify_log() is None
            assert compacted.generation == committed["generation"] + 1
    assert at > 2


def test_an_interrupted_compaction_is_a_note_and_the_next_writer_clears_it():
    base, committed = compacting_store()
    directory = FaultyDirectory(clone_memory(base), Fault("rename", 2, EIO))
    with (TranscriptStore.open(directory, writer=True, config=SMALL) as store,
          pytest.raises(StoreError, match="the compaction stopped: .*Input/output error")):
        store.compact()
    crashed = directory.crash_at_fault()
    assert read_compaction_state(crashed).in_progress
    with TranscriptStore.open(crashed, config=SMALL) as reader:
        assert reader.checkpoint_generation is None
        notes = [str(problem) for problem in reader.problems()]
        assert any("a compaction of the transcript log was running or was interrupted" in note
                   for note in notes)
        assert all(not problem.serious for problem in reader.problems())
        assert snapshot(reader) == committed
    TranscriptStore.open(crashed, writer=True, config=SMALL).close()
    assert not read_compaction_state(crashed).in_progress
    assert crashed.exists(CHECKPOINT_NAME)
    with TranscriptStore.open(crashed, config=SMALL) as reopened:
        assert reopened.problems() == [] and reopened.checkpoint_generation == committed["generation"]


def test_a_reader_keeps_answering_while_another_handle_compacts(tmp_path: Path):
    """A writer compacts in a thread, through its own `FileDirectory`, while a reader
    handle reads every window's events and refreshes in a loop: every read answers the
    committed events, none reports damage."""
    path = tmp_path / "store"
    with TranscriptStore.create(FileDirectory(path), config=SMALL) as store:
        for round_number in range(4):
            fill_round(store, round_number)
    reader = TranscriptStore.open(FileDirectory(path), config=SMALL)
    expected = snapshot(reader)
    writer = TranscriptStore.open(FileDirectory(path), writer=True, config=SMALL)
    outcome: list[CompactionOutcome] = []
    thread = threading.Thread(target=lambda: outcome.append(writer.compact()))
    reads = 0
    thread.start()
    try:
        while thread.is_alive() or reads < 3:
            assert {w.session_id: reader.events(w.session_id) for w in reader.windows()} \
                == expected["events"]
            reads += 1
            if reads % 3 == 0:
                reader.refresh()
    finally:
        thread.join()
        writer.close()
    assert outcome and outcome[0].files_compacted > 1
    assert snapshot(reader) == expected
    reader.refresh()
    assert snapshot(reader) == expected and reader.verify_log() is None
    reader.close()


def fill_round(store: TranscriptStore, round_number: int) -> None:
    """Windows of round `round_number`, half of them deleted again."""
    for number in range(6):
        session_id = f"r{round_number}w{number}"
        with store.transaction() as transaction:
            transaction.put_window(SessionWindow(session_id, f"agent:main:{session_id}"))
            for index in range(5):
                transaction.append_event(session_id, message(f"{session_id} {index} " * 8, index))
        if number % 2:
            with store.transaction() as transaction:
                transaction.delete_session(f"agent:main:r{round_number}w{number - 1}")


def test_a_full_disk_while_the_open_log_file_is_sealed_leaves_it_to_the_next_writer():
    """The roll's footer is refused: the writer is failed (as after any refused seal),
    says so, and the next writer cuts the torn footer and compacts."""
    base = MemoryDirectory()
    with TranscriptStore.create(base) as store:  # one open log file
        with store.transaction() as transaction:
            transaction.put_window(SessionWindow("a", "agent:main:a"))
            transaction.append_event("a", message("gone " * 50, 0))
            transaction.put_window(SessionWindow("b", "agent:main:b"))
            transaction.append_event("b", message("kept", 0))
        with store.transaction() as transaction:
            transaction.delete_session("agent:main:a")
        committed = snapshot(store)
    directory = FaultyDirectory(base.crash_copy(), Fault("write", 2, ENOSPC))  # 1: the state
    with TranscriptStore.open(directory, writer=True) as store:
        with pytest.raises(StoreError, match="the compaction stopped: .*No space left"):
            store.compact()
        assert snapshot(store) == committed
        with pytest.raises(StoreError, match="reopen the store"), store.transaction() as transaction:
            transaction.append_event("b", message("refused", 1))
    for crashed in (directory.crash_at_fault(), directory.inner):
        with TranscriptStore.open(crashed, writer=True) as store:
            assert snapshot(store) == committed and store.verify_log() is None
            assert store.compact().files_compacted == 1
            assert snapshot(store) == committed
