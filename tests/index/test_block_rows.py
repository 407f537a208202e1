"""`TokenLine.block_rows` and the bisection of a few rows it allows (`RowReader.holding`)
against the clear versions: `row_of` (a bisection of the whole line) and
`instances_by_row`, on lines of many blocks, long rows and empty ones."""

from __future__ import annotations

from bisect import bisect_right

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.index.token_bitmaps import BLOCK_BITS, RowReader, TokenLine, instances_by_row

#: Rows from empty to several blocks long, so that blocks hold many rows, one, or part
#: of one.
lengths_lists = st.lists(st.one_of(st.integers(0, 3), st.integers(0, 70),
                                   st.integers(400, 1600)), min_size=1, max_size=40)


@settings(max_examples=200, deadline=None)
@given(lengths_lists)
def test_block_rows_count_the_rows_starting_by_each_block(lengths):
    line = TokenLine.of(lengths)
    blocks = line.block_rows()
    for block in range((line.size >> BLOCK_BITS) + 2):
        assert blocks[block] == bisect_right(line.starts, block << BLOCK_BITS)
    for slot in range(line.size):  # the few rows bisected bound the slot's row
        block = slot >> BLOCK_BITS
        assert blocks[block] <= bisect_right(line.starts, slot) <= blocks[block + 1]


@settings(max_examples=200, deadline=None)
@given(lengths_lists, st.data())
def test_the_rows_holding_a_bitmap_are_those_of_instances_by_row(lengths, data):
    line = TokenLine.of(lengths)
    slots = [line.starts[doc_id] + position
             for doc_id, length in enumerate(lengths) for position in range(length)]
    chosen = data.draw(st.sets(st.sampled_from(slots), max_size=60) if slots
                       else st.just(set()))
    bits = sum(1 << slot for slot in chosen)
    expected = instances_by_row(bits, line)
    assert RowReader.of(bits, line).holding() == (list(expected),
                                                   list(map(len, expected.values())))


def test_a_line_is_read_the_same_before_and_after_its_blocks_are_made():
    line = TokenLine.of([600, 0, 5, 900, 1])
    bits = 1 << (line.starts[0] + 599) | 1 << line.starts[2] | 1 << (line.starts[3] + 512)
    assert not line._blocks  # made when first asked
    assert RowReader.of(bits, line).holding() == ([0, 2, 3], [1, 1, 1])
    assert len(line._blocks) == 1
    assert RowReader.of(bits, line).holding() == ([0, 2, 3], [1, 1, 1])
