"""Terms files: the row table, its columns, text and term records read by offset, and damage.

The clear versions are the values written: every row read back through `SegmentRows`
equals the row handed to the encoder, and `StoredTermDictionary` answers like the
in-memory `TermDictionary` of the same entries.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.codec.framing import HEADER_SIZE, RECORD_HEAD_SIZE, Frame, decode_payload, iter_frames
from engine.codec.terms_file import (
    COLUMNS_KIND,
    COLUMNS_PREFIX_SIZE,
    ROWS_PER_TEXT_RECORD,
    TERMS_PER_RECORD,
    check_terms_file,
    encode_terms_file,
    open_terms_file,
)
from engine.errors import CorruptFile
from engine.index.documents import DocumentRecord
from engine.index.segment_rows import SegmentRows, segment_bounds
from engine.index.stored_terms import PostingsSlot, StoredTermDictionary
from engine.index.termdict import TermDictionary


def opened(data: bytes, location: str = "index/segment-000001.terms"):
    return open_terms_file(lambda offset, length: data[offset: offset + length], len(data), location)


def record(row) -> tuple:
    doc_id, session_id, message_id, role, timestamp, length, seq, text = row
    return (doc_id, session_id, message_id, role, timestamp, length, seq, text)


def as_tuple(found: DocumentRecord) -> tuple:
    return (found.doc_id, found.session_id, found.message_id, found.role, found.timestamp,
            found.length, found.seq, found.text)


ROWS = [
    (3, "w1", "m1", "user", 12.5, 3, 0, "Café crème brûlée"),
    (9, "w2", "m2", "assistant", "2026-01-01", 1, 4, "x"),
    (10, "w2", "m3", "assistant", None, 1, 5, "y"),
    (11, "w1", "m4", "user", 7, 2, 6, "会议 z"),
    (12, "w1", "m5", "assistant", 2**60, 1, 7, "big"),
    (14, "w3", "m6", "user", -0.0, 1, 8, ""),
]


def test_rows_read_back_with_their_values_and_timestamp_types():
    rows = SegmentRows(opened(encode_terms_file(ROWS, [])))
    assert (rows.first, rows.end, len(rows)) == (3, 15, len(ROWS))
    assert list(rows) == [row[0] for row in ROWS]
    assert [as_tuple(rows[row[0]]) for row in ROWS] == [record(row) for row in ROWS]
    assert [type(rows[row[0]].timestamp) for row in ROWS] == [
        float, str, type(None), int, int, float]
    assert math.copysign(1, rows[14].timestamp) == -1  # -0.0 stays -0.0
    assert 4 not in rows and 2 not in rows and 15 not in rows
    with pytest.raises(KeyError):
        rows[13]
    assert [rows[doc_id].text_is_ascii for doc_id in (3, 9, 11)] == [False, True, False]
    assert list(rows.non_ascii_doc_ids(0)) == [3, 11] and list(rows.non_ascii_doc_ids(4)) == [11]
    assert rows.total_tokens() == sum(row[5] for row in ROWS)
    assert segment_bounds(rows) == (3, 14)
    assert rows.doc_ids_by_session() == {"w1": [3, 11, 12], "w2": [9, 10], "w3": [14]}


def test_nan_timestamp_round_trips_as_nan():
    rows = SegmentRows(opened(encode_terms_file([(0, "w", "m", "user", math.nan, 1, 0, "a")], [])))
    assert math.isnan(rows[0].timestamp)


timestamps = st.one_of(
    st.none(), st.floats(allow_nan=False), st.integers(-(2**63), 2**63 - 1),
    st.text(max_size=5),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 5), st.sampled_from(["w1", "w2", "w3"]),
                          st.sampled_from(["user", "assistant"]), timestamps,
                          st.integers(0, 2**32 - 1), st.integers(0, 2**40), st.text(max_size=20)),
                min_size=1, max_size=200))
def test_any_rows_read_back_equal(drawn):
    rows, doc_id = [], 0
    for number, (gap, session_id, role, timestamp, length, seq, text) in enumerate(drawn):
        doc_id += gap
        rows.append((doc_id, session_id, f"m{number}", role, timestamp, length, seq, text))
    read = SegmentRows(opened(encode_terms_file(rows, [])))
    assert [as_tuple(read[row[0]]) for row in rows] == [record(row) for row in rows]
    assert [type(read[row[0]].timestamp) for row in rows] == [type(row[4]) for row in rows]
    assert list(read) == [row[0] for row in rows]


def test_text_records_cover_fixed_slot_ranges():
    rows = [(doc_id, "w", f"m{doc_id}", "user", None, 1, doc_id, f"text {doc_id}")
            for doc_id in range(ROWS_PER_TEXT_RECORD * 2 + 3)]
    reader = opened(encode_terms_file(rows, []))
    assert len(reader.table.text_offsets) == 4  # three records, then where terms start
    assert reader.text_record(2) == [[f"m{n}" for n in range(128, 131)],
                                     [f"text {n}" for n in range(128, 131)]]


def entries_of(terms: list[str]) -> list[tuple[str, int, int, int]]:
    return [(term, number + 1, 16 + 10 * number, 10) for number, term in enumerate(terms)]


@settings(max_examples=40, deadline=None)
@given(st.sets(st.text(alphabet="abcé会", min_size=1, max_size=4), max_size=1500),
       st.text(alphabet="abcé会", max_size=3))
def test_stored_terms_answer_like_the_in_memory_dictionary(terms, probe):
    entries = entries_of(sorted(terms))
    stored = StoredTermDictionary(opened(encode_terms_file([(0, "w", "m", "user", 1.0, 1, 0, "x")],
                                                           entries)), cached_records=2)
    clear = TermDictionary((term, PostingsSlot(*rest)) for term, *rest in entries)
    assert list(stored.terms()) == list(clear.terms())
    assert list(stored.with_prefix(probe)) == list(clear.with_prefix(probe))
    assert stored.get(probe) == clear.get(probe)
    for term in list(terms)[:20]:
        assert stored.get(term) == clear.get(term)
    assert len(stored) == len(entries)


def test_term_records_hold_at_most_terms_per_record_entries():
    entries = entries_of([f"t{number:05d}" for number in range(TERMS_PER_RECORD * 2 + 1)])
    reader = opened(encode_terms_file([(0, "w", "m", "user", 1.0, 1, 0, "x")], entries))
    assert reader.table.term_firsts == ("t00000", f"t{TERMS_PER_RECORD:05d}",
                                        f"t{2 * TERMS_PER_RECORD:05d}")
    assert reader.term_record(2) == [entries[-1]]
    assert reader.term_record_of("s") == -1 and reader.term_record_of("t00600") == 1


def test_damaged_table_is_found_at_open_naming_file_and_offset():
    data = bytearray(encode_terms_file(ROWS, entries_of(["a", "b"])))
    data[HEADER_SIZE + RECORD_HEAD_SIZE + 20] ^= 0xFF
    with pytest.raises(CorruptFile) as caught:
        opened(bytes(data))
    assert caught.value.path == "index/segment-000001.terms"
    assert caught.value.offset == HEADER_SIZE


def test_damaged_text_record_is_found_when_read_and_by_the_full_check():
    data = encode_terms_file(ROWS, entries_of(["a", "b"]))
    start = opened(data).table.text_offsets[0]
    damaged = bytearray(data)
    damaged[start + RECORD_HEAD_SIZE + 3] ^= 0xFF
    rows = SegmentRows(opened(bytes(damaged)))  # the table is intact: open succeeds
    assert rows.table.lengths[0] == 3  # doc 3's column, read without its text
    with pytest.raises(CorruptFile) as caught:
        _ = rows[3].text
    assert caught.value.offset == start
    with pytest.raises(CorruptFile):
        check_terms_file(bytes(damaged), "t")


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_every_flipped_byte_is_found_by_the_full_check(data):
    encoded = encode_terms_file(ROWS, entries_of(["alpha", "beta", "gamma"]))
    position = data.draw(st.integers(0, len(encoded) - 1))
    damaged = bytearray(encoded)
    damaged[position] ^= 0xFF
    with pytest.raises(CorruptFile):
        check_terms_file(bytes(damaged), "t")


def test_truncated_file_is_corrupt_at_open():
    data = encode_terms_file(ROWS, entries_of(["a"]))
    with pytest.raises(CorruptFile):
        opened(data[:-1])
    with pytest.raises(CorruptFile):
        opened(data[: HEADER_SIZE + 4])


def test_full_check_counts_rows_of_an_intact_file():
    assert check_terms_file(encode_terms_file(ROWS, entries_of(["a"])), "t") == len(ROWS)


def test_the_records_decode_as_plain_msgpack_in_their_order():
    data = encode_terms_file(ROWS, entries_of(["a"]))
    frames = [item for item in iter_frames(data) if isinstance(item, Frame)]
    values = [decode_payload(frame.payload) for frame in frames]
    assert [value[0] for value in values] == ["table", COLUMNS_KIND, "texts", "terms"]
    columns = values[1][1]
    assert isinstance(columns, bytes) and frames[1].payload[COLUMNS_PREFIX_SIZE:] == columns


@pytest.mark.parametrize("session_ids", [["w1", "w2"], ["a\x00b", "w2"], ["", "w2"]])
def test_group_tables_round_trip_as_columns_or_pairs(session_ids):
    rows = [(number, session_id, f"m{number}", role, 1.0, 1, number, "x")
            for number, (session_id, role) in enumerate(
                [(session_ids[0], "user"), (session_ids[1], "assistant"), (session_ids[0], "tool")])]
    data = encode_terms_file(rows, [])
    table = opened(data).table
    assert table.group_table == ((session_ids[0], "user"), (session_ids[1], "assistant"),
                                 (session_ids[0], "tool"))
    assert (b"group_sessions" in data) == ("\x00" not in "".join(session_ids))
