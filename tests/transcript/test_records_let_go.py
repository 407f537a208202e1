"""A committed transaction lets its records go (`StoreTransaction.let_records_go`, called
by the store's commit once the catalog has applied them): a large import's records are
not held through the checkpoint save and the commit hooks after it. The store reads the
same afterwards: the records were the catalog's input only."""

from __future__ import annotations

from engine.config import EngineConfig
from engine.directory import MemoryDirectory
from engine.model import SessionWindow
from engine.transcript.store import TranscriptStore


def _message(message_id: str, parent: str | None) -> dict:
    return {"type": "message", "id": message_id, "parentId": parent, "timestamp": 5,
            "message": {"role": "user", "content": f"text {message_id}"}}


def test_a_committed_transaction_holds_no_records_and_the_store_reads_the_same() -> None:
    directory = MemoryDirectory()
    seen_in_hook: list[int] = []
    with TranscriptStore.create(directory, config=EngineConfig(log_roll_bytes=400)) as store:
        store.add_commit_hook(lambda generation, changes: seen_in_hook.append(len(changes)))
        with store.transaction() as transaction:
            transaction.put_window(SessionWindow("w", "agent:main:k"))
            for number in range(20):
                transaction.append_event("w", _message(f"m{number}",
                                                       f"m{number - 1}" if number else None))
            assert len(transaction.records) == 21  # written, not yet committed
        assert len(transaction.records) == 0
        assert seen_in_hook == [21]
        events = [stored.event["id"] for stored in store.events("w")]
    assert events == [f"m{number}" for number in range(20)]
    with TranscriptStore.open(directory) as reopened:
        assert [stored.event["id"] for stored in reopened.events("w")] == events
        assert reopened.window("w").session_key == "agent:main:k"
