"""A transaction made from its collaborators only: a catalog, a log writer, a read function.

No `TranscriptStore` is involved: what the transaction writes reaches the log through the
writer it was given, its reads go through the read function it was given, and the records
it hands over replay to the same catalog a replay of the log builds.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from engine.codec.log_file import CommitRecord, EventRecord, ReplaceRecord, WindowRecord
from engine.config import EngineConfig
from engine.directory import MemoryDirectory
from engine.errors import CorruptFile, InputError, StoreError, UnknownSession, UsageError
from engine.model import SessionWindow, StoredEvent
from engine.transcript.catalog import Catalog
from engine.transcript.changes import EventAppended, TranscriptReplaced, WindowPut, changes_of
from engine.transcript.log_positions import CommittedTransaction, RecordPosition
from engine.transcript.log_reader import LogReader
from engine.transcript.log_writer import LogWriter
from engine.transcript.store import TranscriptStore
from engine.transcript.transaction import StoreTransaction

MAIN = SessionWindow("w1", "agent:main:main", title="first")


def message(text: str) -> dict[str, object]:
    return {"type": "message", "id": text, "message": {"role": "user", "content": text}}


def commit(catalog: Catalog, writer: LogWriter, transaction: StoreTransaction) -> None:
    """What the store does at the end of a transaction block, by hand."""
    generation = catalog.generation + 1
    writer.commit(CommitRecord(generation, 0.0))
    records = transaction.records
    catalog.apply(CommittedTransaction(records, CommitRecord(generation, 0.0), records[0][0]),
                  str)
    transaction.closed = True


def begun(directory: MemoryDirectory, catalog: Catalog, writer: LogWriter,
          read_events=None, keep_changes: bool = False) -> StoreTransaction:
    writer.begin()
    read = read_events or LogReader(directory).read_events
    return StoreTransaction(catalog, writer, read, keep_changes=keep_changes)


def test_reads_inside_see_the_writes_and_the_catalog_is_left_alone() -> None:
    directory, catalog = MemoryDirectory(), Catalog()
    writer = LogWriter(directory, EngineConfig())
    transaction = begun(directory, catalog, writer, keep_changes=True)
    transaction.put_window(MAIN)
    assert [transaction.append_event("w1", message(text), created_at=5.0)
            for text in ("a", "b")] == [0, 1]
    assert transaction.windows() == [MAIN] and transaction.windows_of(MAIN.session_key) == [MAIN]
    assert [stored.event["id"] for stored in transaction.events("w1")] == ["a", "b"]
    assert transaction.event_count("w1") == 2
    assert (catalog.entries, catalog.generation) == ({}, 0)  # nothing committed yet
    assert transaction.changes == [
        WindowPut(MAIN),
        EventAppended(StoredEvent("w1", 0, message("a"), 5.0)),
        EventAppended(StoredEvent("w1", 1, message("b"), 5.0)),
    ]
    kinds = [type(record) for _, record in transaction.records]
    assert kinds == [WindowRecord, EventRecord, EventRecord]
    assert all(record.event == {} for _, record in transaction.records
               if isinstance(record, EventRecord))  # positions, not events, are kept


def test_its_records_replay_to_the_catalog_a_replay_of_the_log_builds() -> None:
    directory, catalog = MemoryDirectory(), Catalog()
    writer = LogWriter(directory, EngineConfig(log_roll_bytes=150))
    for texts in (["a", "b"], ["c"], ["d", "e", "f"]):
        transaction = begun(directory, catalog, writer)
        if catalog.generation == 0:
            transaction.put_window(MAIN)
        for text in texts:
            transaction.append_event("w1", message(text))
        commit(catalog, writer, transaction)
    writer.close()
    replayed = Catalog()
    for committed in LogReader(directory).iter_transactions():
        replayed.apply(committed, str)
    assert replayed.generation == catalog.generation == 3
    assert [entry.window for entry in replayed.entries.values()] == [MAIN]
    assert replayed.entry("w1").events.to_list() == catalog.entry("w1").events.to_list()
    assert len({position.file_number for position in catalog.entry("w1").events.to_list()}) > 1
    assert list(replayed.transaction_files) == list(catalog.transaction_files)
    assert list(replayed.transaction_offsets) == list(catalog.transaction_offsets)


def test_committed_events_are_read_through_the_function_it_was_given() -> None:
    directory, catalog = MemoryDirectory(), Catalog()
    writer = LogWriter(directory, EngineConfig())
    first = begun(directory, catalog, writer)
    first.put_window(MAIN)
    first.append_event("w1", message("a"))
    commit(catalog, writer, first)
    reader = LogReader(directory)
    calls: list[tuple[str, int, int]] = []

    def read_events(session_id: str, first_seq: int,
                    positions: Sequence[RecordPosition]) -> list[StoredEvent]:
        calls.append((session_id, first_seq, len(positions)))
        return reader.read_events(session_id, first_seq, positions)

    second = begun(directory, catalog, writer, read_events)
    assert [stored.event["id"] for stored in second.events("w1")] == ["a"]
    assert second.append_event("w1", message("b")) == 1
    assert [stored.event["id"] for stored in second.events("w1")] == ["a", "b"]
    assert calls == [("w1", 0, 1), ("w1", 0, 2)]  # committed and new events in one read
    assert second.changes is None  # nobody follows: no changes kept
    assert catalog.entry("w1").events.count == 1  # the commit has not happened
    with pytest.raises(UnknownSession):
        second.events("absent")



def test_a_replacement_drops_the_committed_events_and_replays_alike() -> None:
    """`replace_transcript` writes one `replace` record and the new events; reads inside
    see only them, the commit leaves the catalog a replay of the log builds, and the
    change feed gathers the record and its events into one `TranscriptReplaced`."""
    directory, catalog = MemoryDirectory(), Catalog()
    writer = LogWriter(directory, EngineConfig())
    transaction = begun(directory, catalog, writer)
    transaction.put_window(MAIN)
    for text in ("a", "b", "c"):
        transaction.append_event("w1", message(text), created_at=1.0)
    commit(catalog, writer, transaction)
    transaction = begun(directory, catalog, writer, keep_changes=True)
    assert transaction.replace_transcript("w1", [message("x"), message("y")], 2.0,
                                          rebuild_deferred=True) == 2
    assert transaction.append_event("w1", message("z"), created_at=3.0) == 2
    assert [stored.event["id"] for stored in transaction.events("w1")] == ["x", "y", "z"]
    assert transaction.changes == [
        TranscriptReplaced("w1", (StoredEvent("w1", 0, message("x"), 2.0),
                                  StoredEvent("w1", 1, message("y"), 2.0)), True),
        EventAppended(StoredEvent("w1", 2, message("z"), 3.0)),
    ]
    assert [type(record) for _, record in transaction.records] == [
        ReplaceRecord, EventRecord, EventRecord, EventRecord]
    commit(catalog, writer, transaction)
    writer.close()
    assert (len(catalog.entries["w1"].events), catalog.event_total) == (3, 3)
    replayed = Catalog()
    transactions = list(LogReader(directory).iter_transactions())
    for committed in transactions:
        replayed.apply(committed, str)
    assert replayed.entries["w1"].events.to_list() == catalog.entries["w1"].events.to_list()
    assert [change for _, change in changes_of(transactions[1:])] == transaction.changes
    with pytest.raises(UnknownSession):
        begun(directory, catalog, LogWriter(directory, EngineConfig())).replace_transcript(
            "nope", [])


def test_a_replace_record_without_all_its_events_is_refused_by_the_replay() -> None:
    catalog = Catalog()
    window = (RecordPosition(1, 16, 10), WindowRecord(MAIN))
    short = (RecordPosition(1, 26, 10), ReplaceRecord("w1", 2, False))
    event = (RecordPosition(1, 36, 10), EventRecord("w1", 0, 0.0, {}))
    with pytest.raises(CorruptFile, match="1 events short of the replaced window 'w1'"):
        catalog.apply(CommittedTransaction((window, short, event), CommitRecord(1, 0.0),
                                           window[0]), str)
    other = (RecordPosition(1, 36, 10), WindowRecord(MAIN))
    with pytest.raises(CorruptFile, match="expected event 0 of the replaced window 'w1'"):
        Catalog().apply(CommittedTransaction((window, short, other), CommitRecord(1, 0.0),
                                             window[0]), str)


def test_a_replacement_that_fails_half_way_never_commits() -> None:
    """A bare store writes each record as it comes: when an event of a replacement cannot
    be stored after the `replace` record was written, the transaction refuses further
    writes and its end commits nothing, even if the caller swallowed the error."""
    store = TranscriptStore.create(MemoryDirectory())
    with store.transaction() as transaction:
        transaction.put_window(MAIN)
        transaction.append_event("w1", message("a"), created_at=1.0)
    with pytest.raises(StoreError, match="nothing was committed: replacing the transcript"):
        with store.transaction() as transaction:
            with pytest.raises(InputError, match="cannot be stored"):
                transaction.replace_transcript("w1", [message("x"), {"type": "x", "v": 2**70}])
            with pytest.raises(UsageError, match="this transaction cannot go on"):
                transaction.append_event("w1", message("y"))
    assert store.generation == 1
    assert [stored.event["id"] for stored in store.events("w1")] == ["a"]
    with store.transaction() as transaction:  # the next transaction works as usual
        transaction.replace_transcript("w1", [message("z")], 2.0)
    assert [stored.event["id"] for stored in store.events("w1")] == ["z"]
    store.close()
