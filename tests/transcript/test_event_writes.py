"""A transaction's event written and kept from its fields, no `EventRecord` made
(`LogWriter.write_event`, `log_file.encode_event_record`, `StoreTransaction.append_event`),
against the clear path: `LogWriter.write` of the record, whose bytes are
`encode_frame(encode_payload(encode_log_value(record)))`: the same bytes at the same
positions with the same running CRC, the same refusal before a byte is written, and the
same change handed on as `change_of(record)`."""

from __future__ import annotations

import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.codec.framing import HEADER_SIZE, DecodeError
from engine.codec.log_file import CommitRecord, EventRecord, LogRecord
from engine.config import EngineConfig
from engine.directory import MemoryDirectory
from engine.model import SessionWindow
from engine.transcript.catalog import Catalog
from engine.transcript.changes import change_of
from engine.transcript.log_files import log_file_name
from engine.transcript.log_reader import LogReader
from engine.transcript.log_writer import LogWriter
from engine.transcript.transaction import StoreTransaction
from tests.transcript.test_log_writer_records import RECORDS, clear_bytes


@settings(max_examples=150, deadline=None)
@given(st.lists(RECORDS, max_size=12))
def test_an_event_written_from_its_fields_is_the_clear_paths_record(
        records: list[LogRecord]) -> None:
    directory = MemoryDirectory()
    writer = LogWriter(directory, EngineConfig())
    writer.begin()
    expected = b""
    for record in [*records, CommitRecord(1, 1.0)]:
        data = clear_bytes(record)
        if isinstance(record, EventRecord):
            place = writer.write_event(record.session_id, record.seq, record.created_at,
                                       record.event)
        elif isinstance(record, CommitRecord):
            position = writer.commit(record)
            place = (position.offset, position.length)
        else:
            position = writer.write(record)
            place = (position.offset, position.length)
        assert place == (HEADER_SIZE + len(expected), len(data))
        expected += data
    writer.flush()
    assert directory.read_bytes(log_file_name(1))[HEADER_SIZE:] == expected
    assert writer._records_crc == zlib.crc32(expected)


def test_an_event_that_cannot_be_stored_is_refused_before_a_byte_is_written() -> None:
    writer = LogWriter(MemoryDirectory(), EngineConfig())
    writer.begin()
    first = writer.write_event("s", 0, 1.0, {"a": 1})
    with pytest.raises(DecodeError):
        writer.write_event("s", 1, 1.0, {"a": 2**64})
    assert writer.write_event("s", 1, 1.0, {"a": 2}) == (
        first[0] + first[1], len(clear_bytes(EventRecord("s", 1, 1.0, {"a": 2}))))


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["w1", "w2"]),
                          st.dictionaries(st.sampled_from(["type", "id", "n"]),
                                          st.integers(0, 9) | st.text(max_size=3),
                                          max_size=3),
                          st.none() | st.floats(0, 2e12)), max_size=8))
def test_a_transactions_event_is_its_records_change_and_position(
        appends: list[tuple[str, dict, float | None]]) -> None:
    directory = MemoryDirectory()
    writer = LogWriter(directory, EngineConfig())
    writer.begin()
    transaction = StoreTransaction(Catalog(), writer, LogReader(directory).read_events,
                                   keep_changes=True)
    for session_id in ("w1", "w2"):
        transaction.put_window(SessionWindow(session_id, f"agent:main:{session_id}"))
    records = []
    for session_id, event, stamp in appends:
        seq = transaction.append_event(session_id, event, stamp)
        position, record = transaction.records[-1]
        assert isinstance(record, EventRecord)
        whole = EventRecord(session_id, seq, record.created_at, event)
        assert record.created_at == (record.created_at if stamp is None else float(stamp))
        assert transaction.changes[-1] == change_of(whole)
        assert transaction.changes[-1].event.event is event
        new_events = transaction._pending[session_id].new_events
        assert new_events[len(new_events) - 1] == position
        records.append((position, whole))
    writer.flush()
    data = directory.read_bytes(log_file_name(1))
    for position, record in records:
        assert data[position.offset:position.offset + position.length] == clear_bytes(record)
