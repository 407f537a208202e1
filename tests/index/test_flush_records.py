"""A flush's postings file written by `PostingsFileWriter.add_flat_lists` (every list in
one loop, records written some at a time) is the file `add` makes one list at a time,
and `encode_postings_file` whole (the oracles), whatever the lists: one row and one
position with doc ids and positions below and above 256 and 65536, long lists whose
columns narrow to each typecode, arrays of "I" and "Q" as the write buffer keeps them,
and files long enough to be written in several pieces. `_narrowest_typecode` (the
typecode read from the bytes) agrees with `smallest_typecode` of the largest value."""

from __future__ import annotations

import random
from array import array

import pytest

from engine.codec.postings_file import (
    PostingsFileWriter,
    _narrowest_typecode,
    encode_postings_file,
    smallest_typecode,
)
from engine.index.documents import DocumentRecord
from engine.index.write_buffer import WriteBuffer

#: Values around each typecode's limits.
EDGES = (0, 1, 255, 256, 65_535, 65_536, 2**32 - 1)


def _written(lists, one_at_a_time: bool) -> tuple[bytes, list]:
    pieces: list[bytes] = []
    writer = PostingsFileWriter(pieces.append)
    if one_at_a_time:
        entries = [(term, *writer.add(doc_ids, counts, positions))
                   for term, doc_ids, counts, positions in lists]
    else:
        entries = writer.add_flat_lists(lists)
    writer.finish()
    return b"".join(pieces), entries


def _random_lists(seed: int, terms: int, typecode: str) -> list:
    generator = random.Random(seed)
    lists = []
    for number in range(terms):
        rows = generator.choice((1, 1, 1, 2, 3, 40))
        largest = generator.choice((300, 70_000, 2**32 - 1 if typecode == "I" else 2**40))
        doc_ids = sorted(generator.sample(range(largest), rows))
        counts = [generator.choice((1, 1, 2, 7)) for _ in doc_ids]
        top = generator.choice((10, 256, 300, 70_000))
        positions = [position for count in counts
                     for position in sorted(generator.sample(range(top), count))]
        lists.append((f"t{number:06d}", array(typecode, doc_ids), array(typecode, counts),
                      array(typecode, positions)))
    return lists


@pytest.mark.parametrize("typecode", ["I", "Q"])
@pytest.mark.parametrize("seed", range(6))
def test_the_loop_writes_the_file_of_one_list_at_a_time(seed: int, typecode: str) -> None:
    lists = _random_lists(seed, 3000, typecode)
    looped = _written(lists, one_at_a_time=False)
    assert looped == _written(lists, one_at_a_time=True)
    data, slots = encode_postings_file(lists)
    assert looped[0] == data
    assert looped[1] == [(term, *slot) for term, slot in slots.items()]


@pytest.mark.parametrize("doc_id", EDGES)
@pytest.mark.parametrize("position", EDGES)
def test_one_row_one_position_at_every_width(doc_id: int, position: int) -> None:
    lists = [("a", array("I", [doc_id]), array("I", [1]), array("I", [position])),
             ("b", [doc_id], [1], [position])]
    assert _written(lists, one_at_a_time=False) == _written(lists, one_at_a_time=True)


def test_a_long_file_is_written_in_pieces_with_the_same_bytes() -> None:
    pieces: list[bytes] = []
    writer = PostingsFileWriter(pieces.append)
    lists = _random_lists(7, 20_000, "I")
    writer.add_flat_lists(lists)
    writer.finish()
    assert 3 < len(pieces) < len(lists)  # header, several held pieces, footer
    assert b"".join(pieces) == _written(lists, one_at_a_time=True)[0]


def test_an_empty_list_of_lists_writes_an_empty_file() -> None:
    assert _written([], one_at_a_time=False) == _written([], one_at_a_time=True)


@pytest.mark.parametrize("typecode", ["I", "Q"])
def test_the_typecode_read_from_the_bytes_is_that_of_the_largest(typecode: str) -> None:
    generator = random.Random(3)
    limit = 2**32 if typecode == "I" else 2**64
    for _ in range(2000):
        top = generator.choice([1] + [2 ** (8 * byte) for byte in range(1, 9)])
        values = array(typecode, [generator.randrange(min(top, limit))
                                  for _ in range(generator.choice((0, 1, 5)))])
        assert (_narrowest_typecode(values.tobytes(), values.itemsize, len(values))
                == smallest_typecode(max(values, default=0)))
    for byte in range(8 if typecode == "Q" else 4):  # each byte's boundary, both sides
        for value in ((1 << 8 * byte) - 1, 1 << 8 * byte):
            values = array(typecode, [0, value, 1])
            assert (_narrowest_typecode(values.tobytes(), values.itemsize, len(values))
                    == smallest_typecode(value)), value


@pytest.mark.parametrize("doc_ids, positions", [([-1], [3]), ([3], [-2]), ([-70_000], [1])])
def test_a_negative_value_fails_as_add_fails(doc_ids: list[int], positions: list[int]) -> None:
    """Out of every column's range: both paths raise, neither writes a wrapped byte."""
    for one_at_a_time in (True, False):
        with pytest.raises(OverflowError):
            _written([("t", doc_ids, [1], positions)], one_at_a_time=one_at_a_time)


def test_a_flush_of_the_buffer_writes_the_file_of_its_columns() -> None:
    buffer = WriteBuffer()
    generator = random.Random(5)
    words = [f"w{number}" for number in range(400)]
    for doc_id in range(600):
        terms = generator.choices(words, k=generator.choice((1, 3, 80, 300)))
        buffer.add(DocumentRecord(doc_id, "s", f"m{doc_id}", "user", 1.0, " ".join(terms),
                                  len(terms), doc_id), terms)
    for deleted in (frozenset(), frozenset(range(0, 600, 7))):
        looped = _written(list(buffer.posting_columns(deleted)), one_at_a_time=False)
        assert looped == _written(list(buffer.posting_columns(deleted)), one_at_a_time=True)
