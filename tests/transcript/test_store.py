"""TranscriptStore: round trips, transactions, readers, change feed; on both directories."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.config import EngineConfig
from engine.directory import Directory, FileDirectory, MemoryDirectory
from engine.errors import InputError, StoreError, UnknownSession, UsageError
from engine.model import SessionWindow, StoredEvent
from engine.transcript.changes import EventAppended, SessionDeleted, WindowPut
from engine.transcript.store import TranscriptStore

MAIN = SessionWindow("w1", "agent:main:main", title="first")
RESET = SessionWindow("w2", "agent:main:main", previous_session_id="w1", reason="reset")
OTHER = SessionWindow("w3", "agent:ops:telegram:group:9")
GLOBAL = SessionWindow("w4", "global")


@pytest.fixture(params=["file", "memory"])
def make_directory(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], Directory]:
    counter = itertools.count()
    if request.param == "file":
        return lambda: FileDirectory(tmp_path / f"store-{next(counter)}")
    return MemoryDirectory


@pytest.fixture
def directory(make_directory: Callable[[], Directory]) -> Directory:
    return make_directory()


def fill(store: TranscriptStore) -> None:
    with store.transaction() as transaction:
        transaction.put_window(MAIN)
        assert transaction.append_event("w1", {"id": "a", "type": "message"}, 10.0) == 0
        assert transaction.append_event("w1", {"id": "b", "text": "é"}, 11.0) == 1
        transaction.put_window(OTHER)
        transaction.append_event("w3", {"id": "c"}, 12.0)
    with store.transaction() as transaction:
        transaction.put_window(RESET)
        transaction.put_window(GLOBAL)
        assert transaction.append_event("w2", {"id": "d"}, 13.0) == 0
        assert transaction.append_event("w1", {"id": "e"}, 14.0) == 2


def snapshot(store: TranscriptStore) -> dict[str, object]:
    """Everything a reader can observe, as plain values."""
    return {
        "windows": [(w.session_id, w.session_key, w.title, w.extra) for w in store.windows()],
        "keys": store.session_keys(),
        "events": {w.session_id: [(e.seq, e.event, e.created_at) for e in store.events(w.session_id)]
                   for w in store.windows()},
        "generation": store.generation,
    }


def test_round_trip_and_reopen(directory: Directory) -> None:
    store = TranscriptStore.create(directory)
    fill(store)
    assert [w.session_id for w in store.windows()] == ["w1", "w3", "w2", "w4"]
    assert [w.session_id for w in store.windows_of("agent:main:main")] == ["w1", "w2"]
    assert store.session_keys() == ["agent:main:main", "agent:ops:telegram:group:9", "global"]
    assert store.events("w1") == [
        StoredEvent("w1", 0, {}, 10.0), StoredEvent("w1", 1, {}, 11.0),
        StoredEvent("w1", 2, {}, 14.0)]
    assert [e.event for e in store.events("w1")] == [
        {"id": "a", "type": "message"}, {"id": "b", "text": "é"}, {"id": "e"}]
    assert store.event("w1", 1).event == {"id": "b", "text": "é"}
    assert store.event_count("w1") == 3
    assert store.window("w2") == RESET
    assert store.generation == 2
    stats = store.stats()
    assert {k: v for k, v in stats.items() if k != "bytes"} == {
        "agents": 2, "sessions": 3, "windows": 4, "events": 5}
    assert stats["bytes"] == sum(directory.size(n) for n in directory.list_names()
                                 if n != "LOCK")
    before = snapshot(store)
    store.close()
    with TranscriptStore.open(directory) as reader:
        assert snapshot(reader) == before
        assert reader.backend == "reference"


def test_put_window_replaces_metadata_in_place(directory: Directory) -> None:
    with TranscriptStore.create(directory, backend="sqlite") as store:
        fill(store)
        moved = SessionWindow("w1", "agent:other:main", title="renamed", extra={"k": 1})
        with store.transaction() as transaction:
            transaction.put_window(moved)
        assert [w.session_id for w in store.windows()] == ["w1", "w3", "w2", "w4"]
        assert store.window("w1").title == "renamed"
        assert [w.session_id for w in store.windows_of("agent:main:main")] == ["w2"]
        assert store.event_count("w1") == 3
    with TranscriptStore.open(directory) as reader:
        assert reader.window("w1").extra == {"k": 1}
        assert [w.session_id for w in reader.windows_of("agent:other:main")] == ["w1"]
        assert reader.backend == "sqlite"


def test_delete_session_removes_every_window_and_event(directory: Directory) -> None:
    with TranscriptStore.create(directory) as store:
        fill(store)
        with store.transaction() as transaction:
            assert transaction.delete_session("agent:main:main") == 2
            assert transaction.delete_session("agent:none:main") == 0
            with pytest.raises(UnknownSession):
                transaction.events("w1")
        assert [w.session_id for w in store.windows()] == ["w3", "w4"]
        assert store.stats()["events"] == 1
        for session_id in ("w1", "w2"):
            with pytest.raises(UnknownSession, match=repr(session_id)):
                store.events(session_id)
        with store.transaction() as transaction:  # a deleted id can be used again
            transaction.put_window(MAIN)
            assert transaction.append_event("w1", {"id": "new"}) == 0
    with TranscriptStore.open(directory) as reader:
        assert [w.session_id for w in reader.windows()] == ["w3", "w4", "w1"]
        assert [e.event for e in reader.events("w1")] == [{"id": "new"}]


def test_aborted_transaction_leaves_nothing(directory: Directory) -> None:
    store = TranscriptStore.create(directory)
    fill(store)
    before = snapshot(store)
    sizes = {name: directory.size(name) for name in directory.list_names()}
    with pytest.raises(RuntimeError, match="boom"), store.transaction() as transaction:
        transaction.put_window(SessionWindow("w9", "agent:x:main"))
        transaction.append_event("w9", {"id": "z"})
        transaction.append_event("w1", {"id": "z"})
        transaction.delete_session("global")
        raise RuntimeError("boom")
    assert snapshot(store) == before
    assert {name: directory.size(name) for name in directory.list_names()} == sizes
    with store.transaction() as transaction:
        assert transaction.append_event("w1", {"id": "f"}) == 3
    store.close()
    with TranscriptStore.open(directory) as reader:
        assert reader.generation == 3
        assert [e.event["id"] for e in reader.events("w1")] == ["a", "b", "e", "f"]


def test_reads_inside_a_transaction_see_its_writes(directory: Directory) -> None:
    with TranscriptStore.create(directory) as store:
        fill(store)
        with store.transaction() as transaction:
            transaction.append_event("w1", {"id": "x"}, 1.0)
            transaction.put_window(SessionWindow("w5", "agent:main:cron:1"))
            transaction.append_event("w5", {"id": "y"}, 2.0)
            assert [e.event["id"] for e in transaction.events("w1")] == ["a", "b", "e", "x"]
            assert transaction.event_count("w5") == 1
            assert transaction.window("w5").session_key == "agent:main:cron:1"
            assert [w.session_id for w in transaction.windows()][-1] == "w5"
            assert store.event_count("w1") == 3  # not visible outside before commit
            with pytest.raises(UnknownSession):
                store.window("w5")
        assert store.event_count("w1") == 4


def test_write_errors_are_clear(directory: Directory) -> None:
    with TranscriptStore.create(directory) as store:
        with store.transaction() as transaction:
            with pytest.raises(UnknownSession, match="unknown session id 'nope'"):
                transaction.append_event("nope", {"id": "a"})
            with pytest.raises(InputError, match="must be a JSON object"):
                transaction.put_window(MAIN)
                transaction.append_event("w1", ["not", "an", "object"])  # type: ignore[arg-type]
            with pytest.raises(InputError, match="cannot be stored"):
                transaction.append_event("w1", {"huge": 2**80})
            with pytest.raises(InputError, match="non-empty session key"):
                transaction.put_window(SessionWindow("w9", ""))
            with pytest.raises(UsageError, match="already open"), store.transaction():
                pass
        assert store.event_count("w1") == 0
        with pytest.raises(UsageError, match="already ended"):
            transaction.append_event("w1", {})


def test_empty_transaction_commits_nothing(directory: Directory) -> None:
    with TranscriptStore.create(directory) as store:
        with store.transaction():
            pass
        assert store.generation == 0
        assert store.stats()["bytes"] == directory.size("store.meta")


def test_create_and_open_errors(directory: Directory) -> None:
    with pytest.raises(StoreError, match="no store here"):
        TranscriptStore.open(directory)
    TranscriptStore.create(directory).close()
    with pytest.raises(StoreError, match="a store already exists here"):
        TranscriptStore.create(directory)
    with (TranscriptStore.open(directory) as reader,
          pytest.raises(StoreError, match="read-only"),
          reader.transaction()):
        pass
    store = TranscriptStore.open(directory, writer=True)
    store.close()
    with pytest.raises(StoreError, match="closed"), store.transaction():
        pass


def test_readers_follow_the_writer_with_refresh(directory: Directory) -> None:
    writer = TranscriptStore.create(directory, config=EngineConfig(log_roll_bytes=150))
    reader = TranscriptStore.open(directory)
    assert reader.windows() == []
    fill(writer)
    assert reader.generation == 0
    reader.refresh()
    assert snapshot(reader) == snapshot(writer)
    with writer.transaction() as transaction:
        transaction.append_event("w1", {"id": "pending"})
        transaction.events("w1")  # flushes the uncommitted record to the file
        reader.refresh()
        assert reader.event_count("w1") == 3
    for number in range(5):  # several log file rolls
        with writer.transaction() as transaction:
            transaction.append_event("w3", {"n": number})
    reader.refresh()
    assert snapshot(reader) == snapshot(writer)
    assert len(directory.list_names("transcripts/segment-")) > 2
    writer.close()
    reader.close()


def test_change_feed_and_commit_hooks(directory: Directory) -> None:
    store = TranscriptStore.create(directory, config=EngineConfig(log_roll_bytes=100))
    seen: list[tuple[int, list[object]]] = []
    store.add_commit_hook(lambda generation, changes: seen.append((generation, changes)))
    fill(store)
    with store.transaction() as transaction:
        transaction.delete_session("agent:main:main")
    assert [generation for generation, _ in seen] == [1, 2, 3]
    assert seen[2][1] == [SessionDeleted("agent:main:main", ("w1", "w2"))]
    first = seen[0][1]
    assert first[0] == WindowPut(MAIN)
    assert isinstance(first[1], EventAppended) and first[1].event.event == {
        "id": "a", "type": "message"}
    feed = list(store.changes_since(0))
    assert [(g, c) for g, c in feed] == [(g, c) for g, changes in seen for c in changes]
    assert [g for g, _ in store.changes_since(2)] == [3]
    assert list(store.changes_since(3)) == []
    store.close()
    with TranscriptStore.open(directory) as reader:
        assert list(reader.changes_since(0)) == feed
    with pytest.raises(UsageError, match="non-negative"):
        list(store.changes_since(-1))


def test_open_path_creates_then_opens(tmp_path: Path) -> None:
    path = tmp_path / "s"
    with TranscriptStore.open_path(path, create=True, backend="postgres") as store:
        assert store.is_writer and store.backend == "postgres"
        fill(store)
    with TranscriptStore.open_path(path) as reader:
        assert not reader.is_writer and reader.backend == "postgres"
        assert reader.stats()["events"] == 5
    with TranscriptStore.open_path(path, writer=True, create=True) as writer:
        assert writer.is_writer and writer.generation == 2


def test_a_hook_added_during_a_transaction_gets_its_changes(directory: Directory) -> None:
    with TranscriptStore.create(directory) as store:
        seen: list[tuple[int, list[object]]] = []
        with store.transaction() as transaction:
            transaction.put_window(GLOBAL)
            store.add_commit_hook(lambda generation, changes: seen.append((generation, changes)))
            transaction.append_event("w4", {"id": "x"}, 1.0)
        assert seen == [(1, [WindowPut(GLOBAL), EventAppended(StoredEvent("w4", 0, {}, 1.0))])]
        assert seen[0][1][1].event.event == {"id": "x"}


def test_reader_change_feed_stops_at_what_it_has_seen(directory: Directory) -> None:
    writer = TranscriptStore.create(directory)
    fill(writer)
    reader = TranscriptStore.open(directory)
    with writer.transaction() as transaction:
        transaction.append_event("w3", {"id": "later"})
    assert [g for g, _ in reader.changes_since(0)][-1] == 2
    reader.refresh()
    assert [(g, c.event.event) for g, c in reader.changes_since(2)] == [(3, {"id": "later"})]
    writer.close()
    reader.close()


def test_event_by_seq(directory: Directory) -> None:
    with TranscriptStore.create(directory) as store:
        fill(store)
        assert store.event("w1", 2).event == {"id": "e"}
        with pytest.raises(UnknownSession, match="has no event with seq 3"):
            store.event("w1", 3)
        with pytest.raises(UnknownSession, match="unknown session id 'zz'"):
            store.event("zz", 0)


def test_windows_of_keeps_joining_order_through_replacements(directory: Directory) -> None:
    with TranscriptStore.create(directory) as store:
        fill(store)  # agent:main:main holds w1 then w2
        with store.transaction() as transaction:
            transaction.put_window(SessionWindow("w1", "agent:main:main", title="again"))
            assert [w.session_id for w in transaction.windows_of("agent:main:main")] == [
                "w1", "w2"]
            transaction.put_window(SessionWindow("w3", "agent:main:main"))  # moved in
            assert [w.session_id for w in transaction.windows_of("agent:main:main")] == [
                "w1", "w2", "w3"]
            assert transaction.windows_of("agent:ops:telegram:group:9") == []
            assert transaction.session_keys() == ["agent:main:main", "global"]
        assert [w.session_id for w in store.windows_of("agent:main:main")] == ["w1", "w2", "w3"]
        assert store.session_keys() == ["agent:main:main", "global"]


def test_closing_inside_a_transaction_commits_nothing(directory: Directory) -> None:
    store = TranscriptStore.create(directory)
    fill(store)
    with pytest.raises(StoreError, match="closed inside the transaction"), \
            store.transaction() as transaction:
        transaction.append_event("w1", {"id": "lost"})
        store.close()
    with TranscriptStore.open(directory, writer=True) as reopened:
        assert reopened.generation == 2
        assert reopened.event_count("w1") == 3
        assert reopened.recovered_tail is None
