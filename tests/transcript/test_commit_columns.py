"""A commit's records read from their runs (`WrittenRecords.runs` and `run_items`, what
`Catalog.apply` reads at a commit) against the clear path, the same records replayed as
a sequence of (position, record) pairs: the same catalog (windows, keys, every event
position, counts, transaction starts) or the same `CorruptFile`, for any mix of windows,
events in and out of seq, unknown windows, replacements (whole, short, interrupted) and
deletes; and an event record kept from its fields (`WrittenRecords.append_event`, what a
transaction's `append_event` writes) is the record kept whole."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.codec.log_file import (
    CommitRecord,
    DeleteSessionRecord,
    EventRecord,
    LogRecord,
    ReplaceRecord,
    WindowRecord,
)
from engine.errors import CorruptFile
from engine.model import SessionWindow
from engine.transcript.catalog import Catalog
from engine.transcript.log_positions import CommittedTransaction, RecordPosition
from engine.transcript.transaction import WrittenRecords

SESSIONS = ("a", "b", "c")
KEYS = ("agent:main:x", "agent:main:y")

RECORDS: st.SearchStrategy[LogRecord] = st.one_of(
    st.builds(EventRecord, st.sampled_from(SESSIONS), st.integers(0, 4), st.just(2.0),
              st.just({})),
    st.builds(EventRecord, st.sampled_from(SESSIONS), st.integers(0, 4), st.just(2.0),
              st.just({})),
    st.builds(WindowRecord, st.builds(SessionWindow, st.sampled_from(SESSIONS),
                                      st.sampled_from(KEYS))),
    st.builds(ReplaceRecord, st.sampled_from(SESSIONS), st.integers(0, 3), st.booleans()),
    st.builds(DeleteSessionRecord, st.sampled_from(KEYS), st.just(())))


def catalog_state(catalog: Catalog) -> list[Any]:
    return [[(session_id, entry.window, entry.events.to_list())
             for session_id, entry in catalog.entries.items()],
            {key: list(ids) for key, ids in catalog.keys.items()}, catalog.event_total,
            list(catalog.transaction_files), list(catalog.transaction_offsets)]


def replayed(transactions: list[Any]) -> tuple[list[Any], str | None]:
    """The catalog after applying `transactions` in order (each a `WrittenRecords` or
    a list of pairs), up to the first that does not fit, and that one's error."""
    catalog = Catalog()
    for records in transactions:
        try:
            catalog.apply(CommittedTransaction(records, CommitRecord(1, 0.0), records[0][0]),
                          lambda number: f"log-{number}")
        except CorruptFile as error:
            return catalog_state(catalog), str(error)
    return catalog_state(catalog), None


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(RECORDS, min_size=1, max_size=12), min_size=1, max_size=4),
       st.booleans())
def test_a_commit_read_from_its_columns_is_the_clear_replay(
        transactions: list[list[LogRecord]], whole_events: bool) -> None:
    written_transactions, pairs_transactions = [], []
    offset = 8
    for records in transactions:
        written, pairs = WrittenRecords(), []
        for record in records:
            position = RecordPosition(1 + offset % 3, offset, 10 + offset % 7)
            offset += 17
            pairs.append((position, record))
            if isinstance(record, EventRecord) and not whole_events:
                written.append_event(record.session_id, record.seq, record.created_at,
                                     *(position.file_number, position.offset,
                                       position.length))
            else:
                written.append(position, record)
        expected = [(position, EventRecord(record.session_id, record.seq,
                                           record.created_at, {}))
                    if isinstance(record, EventRecord) else (position, record)
                    for position, record in pairs]
        assert list(written) == expected
        written_transactions.append(written)
        pairs_transactions.append(pairs)
    assert replayed(written_transactions) == replayed(pairs_transactions)


def test_events_of_a_window_in_order_and_a_replacement() -> None:
    """A plain case of both paths: events appended, replaced, appended again."""
    window = WindowRecord(SessionWindow("a", "agent:main:x"))
    records: list[LogRecord] = [window, EventRecord("a", 0, 1.0, {}),
                                EventRecord("a", 1, 1.0, {}), ReplaceRecord("a", 1, False),
                                EventRecord("a", 0, 1.0, {}), EventRecord("a", 1, 1.0, {})]
    written = WrittenRecords()
    pairs = [(RecordPosition(1, 8 + 10 * number, 10), record)
             for number, record in enumerate(records)]
    for position, record in pairs:
        written.append(position, record)
    state, error = replayed([written])
    assert error is None and (state, error) == replayed([pairs])
    assert state[0] == [("a", window.window, [RecordPosition(1, 48, 10),
                                              RecordPosition(1, 58, 10)])]
