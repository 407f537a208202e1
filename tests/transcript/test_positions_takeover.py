"""A commit's catalog taking over its transaction's event positions (`Catalog.apply`'s
`positions`, `StoreTransaction.new_positions`) instead of copying them: for any mix of
records and any positions offered (right, wrong, partial), the same catalog as the clear
replay of the same records as (position, record) pairs; positions that are every event
of a new window are the catalog's object afterwards; and a store commit takes them."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.codec.log_file import CommitRecord, EventRecord, LogRecord, WindowRecord
from engine.directory import MemoryDirectory
from engine.errors import CorruptFile
from engine.model import SessionWindow
from engine.transcript.catalog import Catalog, EventPositions
from engine.transcript.log_positions import CommittedTransaction, RecordPosition
from engine.transcript.store import TranscriptStore
from engine.transcript.transaction import WrittenRecords
from tests.transcript.test_commit_columns import RECORDS, catalog_state, replayed


def offered_positions(pairs: list[tuple[RecordPosition, LogRecord]], shift: int
                      ) -> dict[str, EventPositions]:
    """Per window, the positions of its event records in `pairs`, in order (what an
    overlay holds when they are its events from seq 0), the last moved by `shift`."""
    listed: dict[str, list[RecordPosition]] = {}
    for position, record in pairs:
        if isinstance(record, EventRecord):
            listed.setdefault(record.session_id, []).append(position)
    offered: dict[str, EventPositions] = {}
    for session_id, positions in listed.items():
        positions[-1] = positions[-1]._replace(offset=positions[-1].offset + shift)
        offered[session_id] = EventPositions()
        for position in positions:
            offered[session_id].append(position)
    return offered


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(RECORDS, min_size=1, max_size=12), min_size=1, max_size=4),
       st.integers(0, 2), st.booleans())
def test_positions_taken_over_leave_the_clear_replay(
        transactions: list[list[LogRecord]], shift: int, contiguous: bool) -> None:
    catalog = Catalog()
    error = None
    pairs_transactions = []
    offset = 8
    for records in transactions:
        written, pairs = WrittenRecords(), []
        for record in records:
            position = RecordPosition(1, offset, 10) if contiguous else RecordPosition(
                1 + offset % 3, offset, 10 + offset % 7)
            offset += 10 if contiguous else 17
            pairs.append((position, record))
            written.append(position, record)
        pairs_transactions.append(pairs)
        try:
            catalog.apply(CommittedTransaction(written, CommitRecord(1, 0.0), pairs[0][0]),
                          lambda number: f"log-{number}", offered_positions(pairs, shift))
        except CorruptFile as failure:
            error = str(failure)
            break
    assert (catalog_state(catalog), error) == replayed(pairs_transactions)


def test_every_event_of_a_new_window_is_taken_over() -> None:
    window = WindowRecord(SessionWindow("a", "agent:main:x"))
    pairs = [(RecordPosition(1, 8, 10), window)] + [
        (RecordPosition(1, 18 + 10 * seq, 10), EventRecord("a", seq, 1.0, {}))
        for seq in range(3)]
    written = WrittenRecords()
    for position, record in pairs:
        written.append(position, record)
    offered = offered_positions(pairs, 0)
    catalog = Catalog()
    catalog.apply(CommittedTransaction(written, CommitRecord(1, 0.0), pairs[0][0]),
                  lambda number: f"log-{number}", offered)
    assert catalog.entries["a"].events is offered["a"]
    assert catalog_state(catalog) == replayed([pairs])[0]


def test_a_commit_takes_its_new_windows_positions() -> None:
    with TranscriptStore.create(MemoryDirectory()) as store:
        with store.transaction() as transaction:
            transaction.put_window(SessionWindow("w", "agent:main:x"))
            for number in range(3):
                transaction.append_event("w", {"type": "message", "id": f"m{number}"})
            overlay = transaction.new_positions()["w"]
        assert store._catalog.entries["w"].events is overlay
        assert [event.event["id"] for event in store.events("w")] == ["m0", "m1", "m2"]
        with store.transaction() as transaction:  # a committed window: copied onto
            transaction.append_event("w", {"type": "message", "id": "m3"})
            assert "w" not in transaction.new_positions()
        assert [event.seq for event in store.events("w")] == [0, 1, 2, 3]


def _offered(*positions: RecordPosition) -> EventPositions:
    offered = EventPositions()
    for position in positions:
        offered.append(position)
    return offered


# (records written, window a's positions offered): each offer is refused (so copied),
# and the catalog is the clear replay's: a window whose events are two runs (another
# window's record between them), positions named in another log file, a last length
# that is not the record's.
_A_EVENT = EventRecord("a", 0, 1.0, {})
_REFUSED_OFFERS = {
    "two runs": (
        [(RecordPosition(1, 8, 10), WindowRecord(SessionWindow("a", "agent:main:a"))),
         (RecordPosition(1, 18, 10), _A_EVENT),
         (RecordPosition(1, 28, 10), WindowRecord(SessionWindow("b", "agent:main:b"))),
         (RecordPosition(1, 38, 10), EventRecord("a", 1, 1.0, {}))],
        _offered(RecordPosition(1, 18, 10), RecordPosition(1, 38, 10))),
    "another file": (
        [(RecordPosition(1, 8, 10), WindowRecord(SessionWindow("a", "agent:main:a"))),
         (RecordPosition(1, 18, 10), _A_EVENT),
         (RecordPosition(1, 28, 10), EventRecord("a", 1, 1.0, {}))],
        _offered(RecordPosition(2, 18, 10), RecordPosition(2, 28, 10))),
    "another last length": (
        [(RecordPosition(1, 8, 10), WindowRecord(SessionWindow("a", "agent:main:a"))),
         (RecordPosition(1, 18, 10), _A_EVENT),
         (RecordPosition(1, 28, 10), EventRecord("a", 1, 1.0, {}))],
        _offered(RecordPosition(1, 18, 10), RecordPosition(1, 28, 99))),
}


@pytest.mark.parametrize("case", sorted(_REFUSED_OFFERS))
def test_positions_that_are_not_the_written_run_are_copied_instead(case: str) -> None:
    pairs, offered = _REFUSED_OFFERS[case]
    written = WrittenRecords()
    for position, record in pairs:
        written.append(position, record)
    catalog = Catalog()
    catalog.apply(CommittedTransaction(written, CommitRecord(1, 0.0), pairs[0][0]),
                  lambda number: f"log-{number}", {"a": offered})
    assert catalog.entries["a"].events is not offered
    assert (catalog_state(catalog), None) == replayed([pairs])
