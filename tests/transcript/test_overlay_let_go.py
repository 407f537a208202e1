"""A committed transaction lets its overlay go with its records
(`StoreTransaction.let_records_go`): the new event positions of its windows are the
catalog's once applied, and are not held a second time through the checkpoint save and
the commit hooks. A read of the closed transaction then reads the catalog, which holds
what its overlay held."""

from __future__ import annotations

from engine.directory import MemoryDirectory
from engine.model import SessionWindow
from engine.transcript.store import TranscriptStore


def test_a_committed_transaction_keeps_no_overlay_and_reads_what_it_wrote() -> None:
    directory = MemoryDirectory()
    seen: list[object] = []
    with TranscriptStore.create(directory) as store:
        with store.transaction() as transaction:
            transaction.put_window(SessionWindow("w", "agent:main:k"))
            transaction.put_window(SessionWindow("v", "agent:main:j"))
            for number in range(4):
                transaction.append_event("w", {"type": "x", "n": number}, 3.0)
        store.add_commit_hook(lambda generation, changes: seen.append(
            (len(closed._pending), closed.event_count("w"))))
        closed = transaction
        with store.transaction() as transaction:
            transaction.append_event("w", {"type": "x", "n": 4}, 4.0)
            transaction.delete_session("agent:main:j")
            transaction.put_window(SessionWindow("u", "agent:main:k"))
            before = ([window.session_id for window in transaction.windows()],
                      [window.session_id for window in transaction.windows_of("agent:main:k")],
                      [stored.event["n"] for stored in transaction.events("w")])
            assert transaction._pending
            closed = transaction
        assert seen == [(0, 5)]
        assert not closed._pending and not closed._joined and not closed._relinked
        after = ([window.session_id for window in closed.windows()],
                 [window.session_id for window in closed.windows_of("agent:main:k")],
                 [stored.event["n"] for stored in closed.events("w")])
        assert after == before == (["w", "u"], ["w", "u"], [0, 1, 2, 3, 4])
        assert [window.session_id for window in store.windows()] == ["w", "u"]
