"""Token bitmaps: phrase instances found by a few big-integer operations, not row by row.

Owns: `TokenLine`, the rows of one view (every doc id below its next one) laid end to
end on one line of token slots (row `d` at `starts[d] .. starts[d] + D - 1`, then one empty slot), a term's bitmap over
that line (bit `starts[d] + p` set when the term is at position `p` of row `d`), and
what a phrase's bitmap says: how many rows hold it, how often each row does, and where.
Must not touch: scoring, the scope, the order of hits (the search stage does those with
what it reads here), files, or the index's mutable state.

Why: a phrase of two common words (`of the`) has tens of thousands of candidate rows, and
matching positions row by row costs a few microseconds of interpreted code a row. Over
bitmaps, the rows where token `i` of the phrase follows token `0` are one AND of shifted
integers (`phrase_bits`), which CPython runs in C over the whole line at once, and the
number of rows that hold the phrase (bm25's `n`) is one subtraction (`rows_holding`):
with the empty slot after each row set, subtracting 1 at each row's first slot borrows
through a row only when none of its bits is set, and the borrow then clears that row's
empty slot. The empty slot also keeps a phrase from running from the end of one row into
the next.

Costs: a line is O(rows), a term's bitmap O(line + positions) (the view keeps both for
its version, `engine.index.view`); a phrase's bitmap and its row count are O(line / 64)
machine words; listing every instance is O(line / 8) in C plus O(instances) in Python,
and one row's instances O(its length). Listing the rows holding a bitmap finds each one's
doc id among a few rows (`TokenLine.block_rows`, a table of O(line >> BLOCK_BITS) made
once per line). The clear version, matching each row's positions
(`engine.index.matching.phrase_occurrences`), is the oracle of the tests.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_right
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import accumulate, chain, repeat
from operator import add

from engine.index.postings import FlatPositions, PostingColumns

#: `TokenLine.block_rows`: the line's slots in blocks of `1 << BLOCK_BITS`, a few rows each
#: (a row holds tens of tokens on average), and few enough to be counted at once.
BLOCK_BITS = 9
#: `bytes.translate` table writing a byte-per-slot map as the digits of a base-2 number.
_DIGITS = bytes.maketrans(b"\x00\x01", b"01")
_ONE = re.compile("1")
#: `bytes.translate` table marking every non-zero byte with 1.
_MARK_NONZERO = bytes([0] + [1] * 255)
#: `_BITS[byte]`: the numbers of the bits set in `byte`, increasing.
_BITS = tuple(tuple(bit for bit in range(8) if value >> bit & 1) for value in range(256))
#: `_POPCOUNT[byte]`: how many bits `byte` has set.
_POPCOUNT = tuple(map(len, _BITS))


@dataclass(frozen=True, slots=True, eq=False)
class TokenLine:
    """The rows of `lengths` (indexed by doc id) on one line of slots, an empty slot
    after each.

    >>> line = TokenLine.of([2, 0, 3])
    >>> line.starts, line.size
    ([0, 3, 4], 8)
    >>> bin(line.gaps), bin(line.firsts)
    ('0b10001100', '0b11001')
    """

    #: `starts[d]`: the slot of row `d`'s first token; the row's empty slot is
    #: `starts[d] + lengths[d]`, the slot before `starts[d + 1]`.
    starts: list[int]
    size: int
    lengths: Sequence[int]
    _masks: list[int] = field(default_factory=list)
    _blocks: list[array[int]] = field(default_factory=list)

    @classmethod
    def of(cls, lengths: Sequence[int]) -> TokenLine:
        """The line of the rows `lengths` (each row's length in tokens, by doc id)."""
        lengths = lengths[:]  # a copy: the view's row columns grow in place
        ends = list(accumulate(map(add, lengths, repeat(1)), initial=0))
        return cls(ends[:-1], ends[-1], lengths)

    @property
    def gaps(self) -> int:
        """The bitmap of every row's empty slot."""
        self._ensure_masks()
        return self._masks[0]

    @property
    def firsts(self) -> int:
        """The bitmap of every row's first slot (its empty slot, for a row of no token)."""
        self._ensure_masks()
        return self._masks[1]

    def _ensure_masks(self) -> None:
        if not self._masks and self.size:
            found = bytearray(self.size)
            deque(map(found.__setitem__, self.starts, repeat(1)), maxlen=0)
            firsts = _bitmap_of_map(found)
            # A row's empty slot is the slot before the next row's first (the last row's,
            # the line's last slot): one shift, not a second map of the line.
            self._masks.extend((firsts >> 1 | 1 << (self.size - 1), firsts))
        elif not self._masks:
            self._masks.extend((0, 0))

    def row_of(self, slot: int) -> int:
        """The doc id of the row that holds `slot`.

        >>> TokenLine.of([2, 0, 3]).row_of(5)
        2
        """
        return bisect_right(self.starts, slot) - 1

    def block_rows(self) -> array[int]:
        """`block_rows()[b]`: how many rows start at or before slot `b << BLOCK_BITS`
        (`bisect_right(starts, b << BLOCK_BITS)`), for every block of slots of the line
        and the one after it, made the first time it is asked (one C loop) and kept.

        The row holding a slot `s` of block `b` is then found by bisecting only the few
        rows `starts[block_rows[b] : block_rows[b + 1]]` (`bisect_right` of `s` in the
        whole line is at least the first bound and at most the second) instead of the
        whole line (`row_of`, the clear version): fewer comparisons, and fewer row starts
        read from memory, where a bisection of a long line reads one far from the last.

        >>> line = TokenLine.of([300, 0, 700])  # rows start at slots 0, 301 and 302
        >>> list(line.block_rows())  # blocks start at slots 0, 512, 1024 (and 1536)
        [1, 3, 3, 3]
        """
        if not self._blocks:
            step = 1 << BLOCK_BITS
            self._blocks.append(array("i", map(bisect_right, repeat(self.starts),
                                                range(0, self.size + 2 * step, step))))
        return self._blocks[0]


def _bitmap_of_map(slots: bytearray) -> int:
    """The integer whose bit `i` is `slots[i]` (each 0 or 1); `slots` is reversed.

    >>> _bitmap_of_map(bytearray([1, 0, 1, 1]))
    13
    """
    if not slots:
        return 0
    slots.reverse()  # base-2 digits are written from the highest bit
    return int(slots.translate(_DIGITS), 2)


def term_bitmap(columns: PostingColumns, line: TokenLine) -> int:
    """The bitmap of one term's positions on `line` (its rows must be on the line).

    >>> line = TokenLine.of([2, 0, 3])
    >>> bin(term_bitmap(PostingColumns([0, 2], [1, 2], [(1,), (0, 2)]), line))
    '0b1010010'
    """
    positions = columns.positions
    if isinstance(positions, FlatPositions) and positions.dense:
        values: Sequence[int] | Iterator[int] = positions.values
    else:
        values = chain.from_iterable(positions)
    slots = map(add, values, chain.from_iterable(
        map(repeat, map(line.starts.__getitem__, columns.doc_ids), columns.counts)))
    found = bytearray(line.size)
    deque(map(found.__setitem__, slots, repeat(1)), maxlen=0)
    return _bitmap_of_map(found)


def phrase_bits(bitmaps: Sequence[int]) -> int:
    """The slots where a phrase starts: token `i` of it at the slot `i` further on.

    >>> bin(phrase_bits([0b0110, 0b1100])), bin(phrase_bits([0b111, 0b111, 0b111]))
    ('0b110', '0b1')
    """
    found = bitmaps[0]
    for offset, bitmap in enumerate(bitmaps[1:], 1):
        found &= bitmap >> offset
    return found


def rows_holding(bits: int, line: TokenLine) -> int:
    """How many rows hold at least one set bit of `bits` (a phrase's `n`); no bit may be
    set on an empty slot.

    >>> line = TokenLine.of([2, 0, 3])
    >>> rows_holding(0b0100010, line), rows_holding(0b0010000, line), rows_holding(0, line)
    (2, 1, 0)
    """
    gaps = line.gaps
    return (((bits | gaps) - line.firsts) & gaps).bit_count()


def instances_by_row(bits: int, line: TokenLine) -> dict[int, list[int]]:
    """`{doc_id: phrase start positions}` of every set bit, rows increasing.

    The bitmap's non-zero bytes are found in C (`bytes.translate` marks them, and
    `bytes.find` runs from one to the next), so the cost is O(line / 8) plus
    O(set bits) in Python.

    >>> instances_by_row(0b1010010, TokenLine.of([2, 0, 3]))
    {0: [1], 2: [0, 2]}
    >>> instances_by_row(1 << 9 | 1 << 8 | 1 << 2, TokenLine.of([7, 3]))
    {0: [2], 1: [0, 1]}
    >>> instances_by_row(1 << 21 | 1 << 17 | 1, TokenLine.of([1, 0, 0, 15, 2]))
    {0: [0], 3: [13], 4: [1]}
    """
    data = bits.to_bytes((line.size + 7) // 8, "little")
    marked = data.translate(_MARK_NONZERO)
    found: dict[int, list[int]] = {}
    starts = line.starts
    row, following, positions = 0, 0, None
    byte = marked.find(1)
    while byte >= 0:
        base = byte << 3
        for bit in _BITS[data[byte]]:
            slot = base + bit
            if positions is None or slot >= following:  # the next row holding one
                row = bisect_right(starts, slot, row) - 1
                following = starts[row + 1] if row + 1 < len(starts) else line.size
                positions = found[row] = []
            positions.append(slot - starts[row])
        byte = marked.find(1, byte + 1)
    return found


@dataclass(frozen=True, slots=True)
class RowReader:
    """One phrase bitmap read row by row: its bytes, made once (O(line / 8))."""

    line: TokenLine
    data: bytes

    @classmethod
    def of(cls, bits: int, line: TokenLine) -> RowReader:
        return cls(line, bits.to_bytes((line.size + 7) // 8, "little"))

    def _row_bits(self, doc_id: int) -> int:
        start = self.line.starts[doc_id]
        length = self.line.lengths[doc_id]
        word = int.from_bytes(self.data[start >> 3:(start + length + 7) >> 3], "little")
        return (word >> (start & 7)) & ~(-1 << length)

    def count(self, doc_id: int) -> int:
        """How many set bits row `doc_id` holds.

        >>> reader = RowReader.of(0b1010010, TokenLine.of([2, 0, 3]))
        >>> [reader.count(doc_id) for doc_id in range(3)]
        [1, 0, 2]
        """
        return self._row_bits(doc_id).bit_count()

    def counts(self, doc_ids: Sequence[int], length: int) -> list[int]:
        """`count(doc_id)` of each row of `doc_ids`, rows of `length` tokens each (one
        loop, without a call a row).

        >>> RowReader.of(0b1010010, TokenLine.of([2, 3, 3])).counts([1, 2], 3)
        [1, 0]
        """
        starts, data, from_bytes = self.line.starts, self.data, int.from_bytes
        mask = ~(-1 << length)
        width = length + 7
        found = []
        for doc_id in doc_ids:
            start = starts[doc_id]
            word = from_bytes(data[start >> 3:(start + width) >> 3], "little")
            found.append((word >> (start & 7) & mask).bit_count())
        return found

    def row_counts(self, doc_ids: Iterable[int]) -> list[int]:
        """`count(doc_id)` of each row of `doc_ids`, rows of any length (one loop).

        >>> RowReader.of(0b1010010, TokenLine.of([2, 0, 3])).row_counts([2, 1, 0])
        [2, 0, 1]
        """
        starts, lengths, data, from_bytes = self.line.starts, self.line.lengths, self.data, int.from_bytes
        found = []
        for doc_id in doc_ids:
            start = starts[doc_id]
            length = lengths[doc_id]
            word = from_bytes(data[start >> 3:(start + length + 7) >> 3], "little")
            found.append((word >> (start & 7) & ~(-1 << length)).bit_count())
        return found

    def holding(self) -> tuple[list[int], list[int]]:
        """The rows holding a set bit, increasing, and how many each holds: the counts
        of `instances_by_row` without the positions (a byte wholly inside the row being
        counted is added at once).

        >>> RowReader.of(0b1010010, TokenLine.of([2, 0, 3])).holding()
        ([0, 2], [1, 2])
        >>> RowReader.of(0xFFFF << 3 | 1, TokenLine.of([1, 0, 30])).holding()
        ([0, 2], [1, 16])
        """
        data, line = self.data, self.line
        find = data.translate(_MARK_NONZERO).find
        rows: list[int] = []
        counts: list[int] = []
        starts, last, size = line.starts, len(line.starts) - 1, line.size
        blocks = line.block_rows()
        # `following` (the first slot after the current row) starts at 0, so the first
        # set bit always starts a row, with no test of whether one was found yet.
        row, following = 0, 0
        byte = find(1)
        while byte >= 0:
            base = byte << 3
            if base + 8 <= following:  # the whole byte is in the current row
                counts[-1] += _POPCOUNT[data[byte]]
            else:
                for bit in _BITS[data[byte]]:
                    slot = base + bit
                    if slot >= following:  # the next row holding one
                        block = slot >> BLOCK_BITS
                        row = bisect_right(starts, slot, blocks[block],
                                           blocks[block + 1]) - 1
                        following = starts[row + 1] if row < last else size
                        rows.append(row)
                        counts.append(1)
                    else:
                        counts[-1] += 1
            byte = find(1, byte + 1)
        return rows, counts

    def positions(self, doc_id: int) -> list[int]:
        """The positions of row `doc_id` whose bit is set, increasing.

        >>> RowReader.of(0b1010010, TokenLine.of([2, 0, 3])).positions(2)
        [0, 2]
        """
        row = self._row_bits(doc_id)
        if not row:
            return []
        digits = format(row, "b")[::-1]
        return [match.start() for match in _ONE.finditer(digits)]

