"""A transaction's records kept in runs (`WrittenRecords`: consecutive event records of
one window, seqs in a row, each written right after the one before, keep their window,
first seq, log file and offset once) against the clear version, the list of (position,
record) pairs: the same items by iteration, index and slice, the same catalog after
`Catalog.apply` (a run at a time, `runs`) or the same `CorruptFile`, for records written
back to back as a log writer writes them (so that runs form, broken by a file roll, a
gap, another window, a seq out of turn or a record that is not an event), and a whole
import's events kept as one run a window."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.codec.log_file import (
    DeleteSessionRecord,
    EventRecord,
    LogRecord,
    ReplaceRecord,
    WindowRecord,
)
from engine.directory import MemoryDirectory
from engine.model import SessionWindow
from engine.transcript.log_positions import RecordPosition
from engine.transcript.store import TranscriptStore
from engine.transcript.transaction import WrittenRecords
from tests.transcript.test_commit_columns import replayed

SESSIONS = ("a", "b")
KEYS = ("agent:main:x", "agent:main:y")

#: An event's stamp: often one of a few, so that records in a row share one (as an
#: import's do; 0.0 is also what a record that is not an event is stamped with).
STAMPS = st.one_of(st.sampled_from((0.0, -0.0, 1.0, 3.5)), st.floats(0, 10, allow_nan=False))

#: A record, and how its position follows the one before: 0 right after it, 1 after a
#: gap, 2 at the start of the next log file.
STEPS = st.tuples(
    st.one_of(
        st.builds(EventRecord, st.sampled_from(SESSIONS), st.integers(0, 6),
                  STAMPS, st.just({})),
        st.builds(WindowRecord, st.builds(SessionWindow, st.sampled_from(SESSIONS),
                                          st.sampled_from(KEYS))),
        st.builds(ReplaceRecord, st.sampled_from(SESSIONS), st.integers(0, 3),
                  st.booleans()),
        st.builds(DeleteSessionRecord, st.sampled_from(KEYS), st.just(()))),
    st.sampled_from((0, 0, 0, 0, 1, 2)), st.integers(1, 50))


def same_items(written: list[Any], pairs: list[Any]) -> bool:
    """Equal items whose stamps have the same sign too (`-0.0 == 0.0` would hide one)."""
    return written == pairs and [repr(getattr(record, "created_at", None))
                                 for _, record in written] == \
        [repr(getattr(record, "created_at", None)) for _, record in pairs]


def written_pairs(steps: list[tuple[LogRecord, int, int]], file_number: int, offset: int
                  ) -> tuple[WrittenRecords, list[Any], int, int]:
    written, pairs = WrittenRecords(), []
    for record, step, length in steps:
        if step == 1:
            offset += 3
        elif step == 2:
            file_number, offset = file_number + 1, 8
        position = RecordPosition(file_number, offset, length)
        offset += length
        if isinstance(record, EventRecord):
            written.append_event(record.session_id, record.seq, record.created_at,
                                 file_number, position.offset, length)
        else:
            written.append(position, record)
        pairs.append((position, record))
    return written, pairs, file_number, offset


@settings(max_examples=400, deadline=None)
@given(st.lists(st.lists(STEPS, min_size=1, max_size=16), min_size=1, max_size=3))
def test_runs_are_the_pairs_they_keep(transactions: list[list[Any]]) -> None:
    written_transactions, pairs_transactions = [], []
    file_number, offset = 1, 8
    for steps in transactions:
        written, pairs, file_number, offset = written_pairs(steps, file_number, offset)
        assert same_items(list(written), pairs) and len(written) == len(pairs)
        assert [written[number] for number in range(len(pairs))] == pairs
        assert [written[number - len(pairs)] for number in range(len(pairs))] == pairs
        assert same_items(list(written[1:-1]), pairs[1:-1])
        assert same_items([written[number - len(pairs)] for number in range(len(pairs))],
                          pairs)
        items = [item for run in written.runs() for item in written.run_items(run)]
        assert same_items(items, pairs)
        assert same_items([written[number] for number in range(len(pairs))], pairs)
        assert sum(run[2] for run in written.runs()) == len(pairs)
        written_transactions.append(written)
        pairs_transactions.append(pairs)
    assert replayed(written_transactions) == replayed(pairs_transactions)


def test_a_transcript_written_back_to_back_is_one_run() -> None:
    """What an import writes: a window, then its events in one log file, as one run (its
    numbers kept once, not per event); and then the catalog holds every position."""
    directory = MemoryDirectory()
    with TranscriptStore.create(directory) as store:
        with store.transaction() as transaction:
            for session_id in ("w", "v"):
                transaction.put_window(SessionWindow(session_id, "agent:main:k"))
                for number in range(300):
                    transaction.append_event(session_id, {"type": "custom", "n": number},
                                             1000.0 + number)
            records = transaction.records
            runs = list(records.runs())  # type: ignore[attr-defined]
            assert [(run[0], run[1], run[2]) for run in runs] == [
                (None, 0, 1), ("w", 0, 300), (None, 0, 1), ("v", 0, 300)]
            pairs = list(records)
        positions = {session_id: store._catalog.entry(session_id).events.to_list()
                     for session_id in ("w", "v")}
        assert positions == {session_id: [position for position, record in pairs
                                          if getattr(record, "session_id", None)
                                          == session_id and isinstance(record, EventRecord)]
                             for session_id in ("w", "v")}
        assert [stored.event["n"] for stored in store.events("v")] == list(range(300))
        assert [stored.created_at for stored in store.events("w")][:2] == [1000.0, 1001.0]


def test_one_receipt_stamp_is_kept_once() -> None:
    """An import stamps every event with its receipt time: records in a row with one
    stamp keep it once (a run of stamps), however many they are, and each item still
    reads it; a new stamp, and a record that is not an event, start a stamp run."""
    written = WrittenRecords()
    for seq in range(1000):
        written.append_event("w", seq, 5.0, 1, 8 + 10 * seq, 10)
    written.append(RecordPosition(1, 10_008, 9), DeleteSessionRecord("k", ("w",)))
    written.append_event("v", 0, 5.0, 1, 10_017, 10)
    written.append_event("v", 1, 6.5, 1, 10_027, 10)
    assert written.stamp_runs() == 4
    assert [record.created_at for _, record in written  # type: ignore[union-attr]
            if isinstance(record, EventRecord)] == [5.0] * 1001 + [6.5]
    assert written[999][1] == EventRecord("w", 999, 5.0, {})
    assert written[-1][1] == EventRecord("v", 1, 6.5, {})
