"""Write-path behaviour added for speed (issue 5) that must not change what is stored.

* a writer saves the catalog checkpoint after a commit once enough records piled up
  since the last one, so a reader next to a live writer does not replay the whole log;
* transactions pause the cyclic garbage collector and always restore it.
"""

from __future__ import annotations

import gc

import pytest

import engine.transcript.store as store_module
from engine.directory import MemoryDirectory
from engine.model import SessionWindow
from engine.transcript.store import TranscriptStore


def message(number: int) -> dict[str, object]:
    return {"type": "message", "id": f"m{number}", "message": {"role": "user", "content": "hi"}}


def test_a_large_commit_saves_a_checkpoint_a_reader_uses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_module, "CHECKPOINT_AFTER_RECORDS", 5)
    directory = MemoryDirectory()
    writer = TranscriptStore.create(directory)
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


def test_small_commits_save_no_checkpoint_until_close(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_module, "CHECKPOINT_AFTER_RECORDS", 1000)
    directory = MemoryDirectory()
    writer = TranscriptStore.create(directory)
    with writer.transaction() as transaction:
        transaction.put_window(SessionWindow("w1", "agent:a:k"))
    reader = TranscriptStore.open(directory)
    assert reader.checkpoint_generation is None
    assert reader.generation == 1
    writer.close()
    assert TranscriptStore.open(directory).checkpoint_generation == 1


@pytest.mark.parametrize("enabled_before", [True, False])
def test_transactions_restore_the_garbage_collector(enabled_before: bool) -> None:
    store = TranscriptStore.create(MemoryDirectory())
    was = gc.isenabled()
    try:
        (gc.enable if enabled_before else gc.disable)()
        with store.transaction() as transaction:
            assert not gc.isenabled()
            transaction.put_window(SessionWindow("w1", "agent:a:k"))
        assert gc.isenabled() is enabled_before
        with pytest.raises(RuntimeError), store.transaction():
            raise RuntimeError("abort")
        assert gc.isenabled() is enabled_before
    finally:
        (gc.enable if was else gc.disable)()
        store.close()
