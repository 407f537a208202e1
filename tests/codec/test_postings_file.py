"""Postings files: round trips of posting lists as packed arrays, and damage."""

from __future__ import annotations

import re
from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.codec.framing import (
    DecodeError,
    decode_payload,
    encode_frame,
    encode_payload,
    encode_record,
)
from engine.codec.postings_file import (
    check_posting_arrays,
    check_postings_file,
    decode_posting_value,
    encode_flat_posting_record,
    encode_flat_posting_value,
    encode_posting_value,
    encode_postings_file,
    read_posting_record,
)
from engine.errors import CorruptFile


@st.composite
def posting_lists(draw: st.DrawFn) -> list[tuple[int, tuple[int, ...]]]:
    doc_ids = sorted(draw(st.sets(st.integers(0, 10_000), max_size=40)))
    return [
        (doc_id, tuple(sorted(draw(st.sets(st.integers(0, 500), min_size=1, max_size=6)))))
        for doc_id in doc_ids
    ]


@settings(max_examples=80, deadline=None)
@given(posting_lists(), st.booleans())
def test_posting_list_round_trip_as_arrays(postings, singles_as_ints):
    positions = [p[0] if singles_as_ints and len(p) == 1 else list(p) for _d, p in postings]
    value = encode_posting_value([d for d, _p in postings], positions)
    decoded = decode_posting_value(decode_payload(encode_payload(value)))
    assert decoded.pairs() == postings
    check_posting_arrays(decoded)


@st.composite
def flat_columns(draw: st.DrawFn) -> tuple[list[int], list[int], list[int]]:
    """Three columns of any widths: a few values up to 2**64 - 1, or long columns (their
    bytes past a `bin 8`, and sometimes past a `bin 16`)."""
    width = draw(st.sampled_from([2**8, 2**16, 2**32, 2**64]))
    values = st.integers(0, width - 1)
    rows = draw(st.sampled_from([1, 1, 2, 40, 300, 20_000]))
    # The run of ids after the drawn ones must stay below 2**64 (what a column holds).
    doc_ids = sorted(draw(st.sets(st.integers(0, min(width - 1, 2**64 - 1 - rows)),
                                  min_size=1, max_size=3)))
    doc_ids = doc_ids + list(range(doc_ids[-1] + 1, doc_ids[-1] + 1 + rows - len(doc_ids)))
    counts = [draw(st.integers(1, 3)) if index < 3 else 1 for index in range(len(doc_ids))]
    positions = [draw(values) if index < 5 else index for index in range(sum(counts))]
    return doc_ids, counts, positions


@settings(max_examples=60, deadline=None)
@given(flat_columns())
def test_a_record_written_byte_by_byte_is_the_msgpack_record(columns):
    """`encode_flat_posting_record` against its oracle, the record msgpack makes of the
    same value (the bytes, not only what they decode to)."""
    expected = encode_record(encode_flat_posting_value(*columns))
    assert encode_flat_posting_record(*columns) == expected
    # as the write buffer hands them: arrays of a wider typecode, narrowed by bytes
    for typecode in ("I", "Q"):
        if max(max(column) for column in columns) < 2 ** (8 * array(typecode).itemsize):
            arrays = [array(typecode, column) for column in columns]
            assert encode_flat_posting_record(*arrays) == expected


@settings(max_examples=40, deadline=None)
@given(posting_lists().filter(bool))
def test_flat_and_paired_columns_write_the_same_file(postings):
    doc_ids = [doc_id for doc_id, _positions in postings]
    counts = [len(positions) for _doc_id, positions in postings]
    flat = [position for _doc_id, positions in postings for position in positions]
    paired = encode_postings_file([("t", doc_ids, [list(p) for _d, p in postings])])
    assert encode_postings_file([("t", doc_ids, counts, flat)]) == paired


def test_posting_columns_take_the_smallest_typecode():
    value = encode_posting_value([1, 70_000], [[300], 5])
    assert value[0] == "postings" and value[1::2] == ["I", "B", "H"]


def test_postings_file_round_trip_through_slots():
    lists = [("alpha", [0], [[0, 4]]), ("beta", [1, 3], [2, [0, 1]])]
    data, slots = encode_postings_file(lists)
    assert check_postings_file(data, "p", decode_lists=True) == 2
    expected = {"alpha": [(0, (0, 4))], "beta": [(1, (2,)), (3, (0, 1))]}
    for term, postings in expected.items():
        frequency, offset, length = slots[term]
        assert frequency == len(postings)
        read = lambda start, size: data[start: start + size]
        assert read_posting_record(read, offset, length, "p").pairs() == postings


def test_flipped_byte_in_postings_names_file_and_offset():
    data, slots = encode_postings_file([("alpha", [0], [0])])
    offset, length = slots["alpha"][1:]
    damaged = bytearray(data)
    damaged[offset + 9] ^= 0xFF
    with pytest.raises(CorruptFile) as caught:
        check_postings_file(bytes(damaged), "index/segment-000001.postings")
    assert caught.value.path == "index/segment-000001.postings"
    assert caught.value.offset == offset
    with pytest.raises(CorruptFile) as caught:
        read_posting_record(lambda start, size: bytes(damaged[start: start + size]),
                            offset, length, "index/segment-000001.postings")
    assert caught.value.offset == offset


def test_inconsistent_columns_are_corruption():
    with pytest.raises(ValueError, match="disagree in length"):
        decode_posting_value(["postings", "B", b"\x01", "B", b"\x02", "B", b"\x00"])
    with pytest.raises(CorruptFile, match="do not increase"):
        data, _slots = encode_postings_file([("a", [5, 3], [0, 1])])
        check_postings_file(data, "p", decode_lists=True)


@pytest.mark.parametrize(("value", "reason"), [
    ("x", "record is not a posting list"),
    ([[7, [3, 4], [[0, 4], [2]]]], "record is not a posting list"),
    (["postings", "B", b"\x01"], "does not have 7 items"),
    (["postings", "Z", b"\x01", "B", b"\x01", "B", b"\x00"], "doc_ids is not a typed byte array"),
    (["postings", "H", b"\x01", "B", b"\x01", "B", b"\x00"], "doc_ids has a partial item"),
    (["postings", "B", b"\x01", "B", b"\x01", "B", "text"], "positions is not a typed byte array"),
])
def test_values_that_are_not_posting_lists_are_decode_errors(value, reason):
    with pytest.raises(DecodeError, match=re.escape(reason)):
        decode_posting_value(value)


def test_a_record_that_is_not_a_posting_list_is_corruption_naming_file_and_offset():
    record = encode_frame(encode_payload([[1, [1], [[0]]]]))  # intact, but no posting list
    data = bytes(40) + record
    with pytest.raises(CorruptFile, match="^p: corrupt at byte offset 40: record is not a posting list$"):
        read_posting_record(lambda start, size: data[start: start + size], 40, len(record), "p")
