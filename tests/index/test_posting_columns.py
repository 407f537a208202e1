"""Posting lists as columns (the fast query path's shape) against `list[Posting]`.

A `FrozenSegment` given `read_columns` (positions left in their flat array) must answer
`term_columns` like one that builds the columns from its postings; and joining or
filtering columns must not change what they hold.
"""

from __future__ import annotations

from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.codec.postings_file import (
    check_postings_file,
    encode_postings_file,
    read_posting_record,
)
from engine.errors import CorruptFile, StoreError
from engine.index.postings import (
    DeletedRuns,
    FlatPositions,
    Posting,
    PostingColumns,
    columns_without_deleted,
    columns_without_runs,
    concatenate_columns,
)
from engine.index.segment import FrozenSegment, PostingsSlot
from engine.index.termdict import TermDictionary


@st.composite
def posting_lists(draw: st.DrawFn, first_doc: int = 0) -> list[tuple[int, tuple[int, ...]]]:
    doc_ids = sorted(draw(st.sets(st.integers(first_doc, first_doc + 60), max_size=12)))
    return [
        (doc_id, tuple(sorted(draw(st.sets(st.integers(0, 40), min_size=1, max_size=5)))))
        for doc_id in doc_ids
    ]


def as_columns(lists):
    """`(term, postings)` pairs as the `(term, doc_ids, positions)` a postings file takes."""
    return [(term, [d for d, _p in postings], [list(p) for _d, p in postings])
            for term, postings in lists]


def as_pairs(columns: PostingColumns) -> list[tuple[int, tuple[int, ...]]]:
    return list(zip(columns.doc_ids, columns.positions))


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.sampled_from(["a", "ab", "b"]), posting_lists(), max_size=3))
def test_frozen_segment_reads_columns_like_its_postings(lists):
    lists = {term: postings for term, postings in lists.items() if postings}
    data, slots = encode_postings_file(as_columns(sorted(lists.items())))
    dictionary = TermDictionary((term, PostingsSlot(*slot)) for term, slot in slots.items())

    def read(offset: int, length: int) -> bytes:
        return data[offset: offset + length]

    def read_postings(slot: PostingsSlot) -> list[Posting]:
        return [Posting(d, p) for d, p in read_posting_record(read, slot.offset, slot.length, "p").pairs()]

    def read_columns(slot: PostingsSlot) -> PostingColumns:
        lists = read_posting_record(read, slot.offset, slot.length, "p")
        return PostingColumns(lists.doc_ids.tolist(), lists.counts.tolist(),
                              FlatPositions.of_counts(lists.positions, lists.counts))

    plain = FrozenSegment("s", {}, dictionary, read_postings)
    lazy = FrozenSegment("s", {}, dictionary, read_postings, read_columns)
    for term in ["a", "ab", "b", "missing"]:
        expected = plain.term_columns(term)
        found = lazy.term_columns(term)
        assert (list(found.doc_ids), list(found.counts), list(found.positions)) == (
            list(expected.doc_ids), list(expected.counts), list(expected.positions))
        assert found.postings() == list(plain.postings(term))
        for doc_id, positions in as_pairs(expected):
            assert found.positions_of(doc_id) == positions


@settings(max_examples=60, deadline=None)
@given(posting_lists(0), posting_lists(100), st.sets(st.integers(0, 160)))
def test_joining_and_filtering_lazy_columns(first, second, deleted):
    def lazy(postings):
        flat = [position for _doc_id, positions in postings for position in positions]
        counts = [len(positions) for _doc_id, positions in postings]
        return PostingColumns([d for d, _p in postings], counts, FlatPositions.of_counts(flat, counts))

    plain = PostingColumns.of([Posting(d, p) for d, p in second])
    joined = concatenate_columns([lazy(first), plain])
    assert as_pairs(joined) == first + second
    kept = columns_without_deleted(joined, deleted)
    assert as_pairs(kept) == [(d, p) for d, p in first + second if d not in deleted]
    assert list(kept.counts) == [len(p) for d, p in first + second if d not in deleted]


def array_columns(postings, typecode):
    """Columns as a postings file gives them: arrays of `typecode`, dense positions."""
    flat = array(typecode, [position for _doc_id, positions in postings for position in positions])
    counts = array(typecode, [len(positions) for _doc_id, positions in postings])
    return PostingColumns(array(typecode, [d for d, _p in postings]), counts,
                          FlatPositions.of_counts(flat, counts))


@settings(max_examples=150, deadline=None)
@given(posting_lists(0), posting_lists(100), st.sets(st.integers(0, 170)) | st.just(set(range(171))),
       st.sampled_from(["B", "H", "I", "Q"]), st.booleans())
def test_dropping_deleted_rows_by_runs_equals_the_set_filter(first, second, deleted, typecode,
                                                             dense):
    """The oracle is `columns_without_deleted`; runs must keep exactly the same rows."""
    parts = [array_columns(first, typecode), array_columns(second, "I")]
    if not dense:  # positions already picked once: the fallback path
        parts = [columns_without_deleted(part, {-1, 3}) for part in parts]
    joined = concatenate_columns(parts)
    expected = columns_without_deleted(joined, deleted)
    found = columns_without_runs(joined, DeletedRuns.of(deleted))
    assert as_pairs(found) == as_pairs(expected)
    assert list(found.counts) == list(expected.counts)
    for doc_id, positions in as_pairs(expected):
        assert found.positions_of(doc_id) == positions


@settings(max_examples=25, deadline=None)
@given(st.lists(posting_lists(), min_size=1, max_size=3), st.data())
def test_opening_check_finds_every_flipped_byte(lists, data):
    """The one-CRC check of an open counts like the full walk, and any flipped byte
    (header, record, footer) is still an error naming the file."""
    lists = [postings for postings in lists if postings]
    encoded, _slots = encode_postings_file(
        as_columns([(f"t{number}", postings) for number, postings in enumerate(lists)]))
    assert check_postings_file(encoded, "p") == check_postings_file(
        encoded, "p", decode_lists=True) == len(lists)
    position = data.draw(st.integers(0, len(encoded) - 1))
    damaged = bytearray(encoded)
    damaged[position] ^= data.draw(st.integers(1, 255))
    with pytest.raises((CorruptFile, StoreError), match="^p"):
        check_postings_file(bytes(damaged), "p")
