"""A long posting list's record written as pieces: the bytes of the whole-record encoder."""

from __future__ import annotations

from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.codec import postings_file
from engine.codec.postings_file import (
    PostingsFileWriter,
    encode_flat_posting_record,
    encode_postings_file,
    flat_posting_record_pieces,
)

#: The largest value of each unsigned typecode's items.
LARGEST = {"B": 0xFF, "H": 0xFFFF, "I": 0xFFFF_FFFF, "L": 0xFFFF_FFFF, "Q": (1 << 64) - 1}


@st.composite
def typed_columns(draw: st.DrawFn) -> tuple[array, array, array]:
    """Three columns as unsigned arrays of any typecode, their values often narrower than
    their typecode needs (so some are narrowed and some are written as views)."""
    counts = draw(st.lists(st.integers(1, 4), min_size=1, max_size=30))
    columns = []
    for length in (len(counts), None, sum(counts)):
        typecode = draw(st.sampled_from(sorted(LARGEST)))
        if length is None:
            columns.append(array(typecode, counts))
            continue
        largest = draw(st.sampled_from([v for v in (0, 0xFF, 0xFFFF, 0xFFFF_FFFF, (1 << 64) - 1)
                                        if v <= LARGEST[typecode]]))
        columns.append(array(typecode, draw(st.lists(st.integers(0, largest),
                                                     min_size=length, max_size=length))))
    return columns[0], columns[1], columns[2]


@given(typed_columns())
@settings(max_examples=300)
def test_the_pieces_join_to_the_whole_record(columns: tuple[array, array, array]):
    expected = encode_flat_posting_record(*(list(column) for column in columns))
    assert b"".join(flat_posting_record_pieces(*columns)) == expected


def long_list(rows: int, typecode: str, top: int) -> tuple[array, array, array]:
    """A list of `rows` rows of 2 positions each, its values at most `top`, in `typecode`."""
    doc_ids = array(typecode, range(top - rows, top) if top >= rows else range(rows))
    counts = array(typecode, [2] * rows)
    positions = array(typecode, [value % (top + 1) for value in range(2 * rows)])
    return doc_ids, counts, positions


def test_a_file_with_long_lists_is_the_file_held_whole():
    lists = [
        ("a", array("B", [1]), array("B", [1]), array("B", [3])),
        ("b", *long_list(20_000, "I", 70_000)),   # doc ids need "I", positions "I"
        ("c", *long_list(20_000, "Q", 255)),      # every column narrowed to "B"
        ("d", *long_list(40_000, "H", 60_000)),   # written as views of "H" arrays
        ("e", [5, 9], [1, 2], [0, 3, 4]),
        ("f", *long_list(8_000, "L", 300)),       # 16,000 positions: under the threshold
        ("g", *long_list(8_192, "H", 300)),       # 16,384 positions: at it
    ]
    written: list[bytes] = []
    writer = PostingsFileWriter(written.append)
    as_pieces = []

    def counted_pieces(doc_ids, counts, positions):
        as_pieces.append(len(positions))
        return flat_posting_record_pieces(doc_ids, counts, positions)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(postings_file, "flat_posting_record_pieces", counted_pieces)
        slots = {term: writer.add(doc_ids, counts, positions)
                 for term, doc_ids, counts, positions in lists}
    assert as_pieces == [40_000, 40_000, 80_000, 16_384]
    writer.finish()
    data, expected_slots = encode_postings_file(
        [(term, list(doc_ids), list(counts), list(positions))
         for term, doc_ids, counts, positions in lists])
    assert b"".join(written) == data
    assert slots == expected_slots
    # No piece handed to `write` holds a long list whole, nor pins a column.
    assert max(len(piece) for piece in written[1:-1] if len(piece) > 100) <= 1 << 16
    assert all(isinstance(piece, bytes) for piece in written)
    for _term, doc_ids, *_columns in lists[1:4]:
        doc_ids.append(0)  # BufferError if a view of it were still held


def test_each_piece_is_let_go_once_written():
    """A long list's doc ids, written first, are no longer held (as a view) while its
    counts and positions are written: the writer lets each piece go as it goes."""
    doc_ids, counts, positions = long_list(40_000, "H", 60_000)  # views of "H" arrays
    writes: list[tuple[int, bool]] = []  # (bytes written, doc ids held meanwhile)

    def write(piece: bytes) -> None:
        try:
            doc_ids.append(0)
            doc_ids.pop()
            writes.append((len(piece), False))
        except BufferError:
            writes.append((len(piece), True))

    PostingsFileWriter(write).add(doc_ids, counts, positions)
    held = [size for size, holding in writes if holding]
    # Held for the record's head and its 80,000 bytes of doc ids, let go for good before
    # the 40,000 bytes of counts and the 160,000 of positions.
    assert 80_000 <= sum(held) < 100_000
    last_held = max(index for index, (_size, holding) in enumerate(writes) if holding)
    assert sum(size for size, _holding in writes[last_held + 1:]) >= 200_000
