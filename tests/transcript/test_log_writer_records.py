"""`LogWriter.write` against the clear path it replaced: every record's bytes are
`encode_frame(encode_payload(encode_log_value(record)))`, appended after the file's
header, at the position it returns, with the file's running CRC over them; a record
that cannot be stored is refused before a byte is written. (`write` checks the open
file only when none is open or it is empty, and `encode_log_record` makes an event
record's value without `encode_log_value`; this is their oracle.)"""

from __future__ import annotations

import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.codec.framing import HEADER_SIZE, DecodeError, encode_frame, encode_payload
from engine.codec.log_file import (
    CommitRecord,
    DeleteSessionRecord,
    EventRecord,
    LogRecord,
    ReplaceRecord,
    WindowRecord,
    encode_log_value,
)
from engine.config import EngineConfig
from engine.directory import MemoryDirectory
from engine.model import SessionWindow
from engine.transcript.log_files import log_file_name
from engine.transcript.log_positions import RecordPosition
from engine.transcript.log_writer import LogWriter

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False)
    | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3)
    | st.dictionaries(st.text(max_size=4), children, max_size=3),
    max_leaves=8)
RECORDS: st.SearchStrategy[LogRecord] = st.one_of(
    st.builds(EventRecord, st.text(min_size=1, max_size=6), st.integers(0, 10**6),
              st.integers(0, 2**41) | st.floats(0, 2e12),
              st.dictionaries(st.text(max_size=4), JSON, max_size=4)),
    st.builds(WindowRecord, st.builds(SessionWindow, st.text(min_size=1, max_size=6),
                                      st.text(min_size=1, max_size=6))),
    st.builds(ReplaceRecord, st.text(min_size=1, max_size=6), st.integers(0, 50),
              st.booleans()),
    st.builds(DeleteSessionRecord, st.text(min_size=1, max_size=6),
              st.lists(st.text(max_size=6), max_size=3).map(tuple)))


def clear_bytes(record: LogRecord) -> bytes:
    """The framed record as the clear path makes it."""
    return encode_frame(encode_payload(encode_log_value(record)))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.lists(RECORDS, max_size=8), st.booleans()), max_size=4))
def test_written_records_are_the_clear_paths_bytes_at_the_positions_returned(
        transactions: list[tuple[list[LogRecord], bool]]) -> None:
    directory = MemoryDirectory()
    writer = LogWriter(directory, EngineConfig())
    expected = b""
    for number, (records, commits) in enumerate(transactions, start=1):
        writer.begin()
        written = b""
        for record in [*records, CommitRecord(number, 1.0)] if commits else records:
            data = clear_bytes(record)
            position = (writer.commit(record) if isinstance(record, CommitRecord)
                        else writer.write(record))
            assert position == RecordPosition(1, HEADER_SIZE + len(expected) + len(written),
                                              len(data))
            written += data
        if commits:
            expected += written
        else:
            writer.abort()
    writer.flush()
    if directory.exists(log_file_name(1)):
        assert directory.read_bytes(log_file_name(1))[HEADER_SIZE:] == expected
    assert writer._records_crc == zlib.crc32(expected)


def test_a_record_that_cannot_be_stored_is_refused_before_a_byte_is_written() -> None:
    writer = LogWriter(MemoryDirectory(), EngineConfig())
    writer.begin()
    first = EventRecord("s", 0, 1.0, {"a": 1})
    writer.write(first)
    with pytest.raises(DecodeError):
        writer.write(EventRecord("s", 1, 1.0, {"a": 2**64}))
    assert writer.write(EventRecord("s", 1, 1.0, {"a": 2})).offset == HEADER_SIZE + len(
        clear_bytes(first))
