"""Posting lists: which documents hold a term, and at which token positions.

Owns: the in-memory shape of a posting list and the pure operations on it (merge
segments' lists, drop deleted documents). Must not touch: bytes (that is
`engine.codec.postings_file`), the term dictionary, scoring.

A *document* is one index row (one searchable message), named by its `doc_id`: the
insertion order of the row in the whole index, like the FTS5 rowid. Ids are never reused.

`PostingColumns` is the same list as three parallel columns, the shape the fast query
path of `engine.index.kernel` reads (a `list[Posting]` stays the clear version).

Invariants of a posting list (checked by `engine.index.check`): doc ids strictly
increase; every position list is non-empty and strictly increasing; every position is
below the document's length in tokens.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Container, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import accumulate, chain, compress, repeat
from operator import add, attrgetter


@dataclass(frozen=True, slots=True)
class Posting:
    """One document's occurrences of one term: token positions, 0-based, increasing."""

    doc_id: int
    positions: tuple[int, ...]


def positions_by_term(terms: Sequence[str]) -> dict[str, list[int]]:
    """Group the token positions of one document's term sequence by term.

    >>> positions_by_term(["to", "be", "or", "not", "to", "be"])
    {'to': [0, 4], 'be': [1, 5], 'or': [2], 'not': [3]}
    """
    grouped: dict[str, list[int]] = {}
    for position, term in enumerate(terms):
        grouped.setdefault(term, []).append(position)
    return grouped


def concatenate(lists: Iterable[Sequence[Posting]]) -> list[Posting]:
    """Join posting lists of segments that cover increasing, disjoint doc-id ranges.

    >>> concatenate([[Posting(1, (0,))], [], [Posting(4, (2, 3))]])
    [Posting(doc_id=1, positions=(0,)), Posting(doc_id=4, positions=(2, 3))]
    """
    joined: list[Posting] = []
    for postings in lists:
        joined.extend(postings)
    return joined


def merge_sorted(lists: Iterable[Sequence[Posting]]) -> list[Posting]:
    """Merge posting lists whose doc-id ranges may interleave (same doc never twice).

    >>> merge_sorted([[Posting(3, (0,))], [Posting(1, (1,)), Posting(5, (0,))]])
    [Posting(doc_id=1, positions=(1,)), Posting(doc_id=3, positions=(0,)), Posting(doc_id=5, positions=(0,))]
    """
    joined = concatenate(lists)
    joined.sort(key=lambda posting: posting.doc_id)
    return joined


def without_deleted(postings: Sequence[Posting], deleted: Container[int]) -> list[Posting]:
    """The postings whose document is not in `deleted` (the tombstones).

    >>> without_deleted([Posting(1, (0,)), Posting(2, (0,))], {1})
    [Posting(doc_id=2, positions=(0,))]
    """
    return [posting for posting in postings if posting.doc_id not in deleted]


class FlatPositions(Sequence[tuple[int, ...]]):
    """Each row's positions as a slice of one flat array of all rows' positions.

    Row `i` is `values[starts[i]:ends[i]]`; reading a row makes its tuple (not kept).
    Made from a postings file's `counts` and `positions` columns, the row bounds are
    summed from the counts the first time a row is read (`itertools.accumulate`, in C),
    so a query that shows no row of a long list pays nothing for its positions, and
    dropping deleted rows only filters the two bound lists (`picked`).

    >>> from array import array
    >>> column = FlatPositions.of_counts(array("B", [0, 3, 2, 7, 8]), [2, 3])
    >>> column[1], list(column), len(column)
    ((2, 7, 8), [(0, 3), (2, 7, 8)], 2)
    >>> list(column.picked([False, True]))
    [(2, 7, 8)]
    """

    __slots__ = ("_counts", "_ends", "_starts", "values")

    def __init__(self, values: Sequence[int], starts: Sequence[int] | None,
                 ends: Sequence[int] | None, counts: Sequence[int] | None = None) -> None:
        self.values = values
        self._starts = starts
        self._ends = ends
        self._counts = counts

    @classmethod
    def of_counts(cls, values: Sequence[int], counts: Sequence[int]) -> FlatPositions:
        """Rows of `counts[i]` positions each, one after another in `values`."""
        return cls(values, None, None, counts)

    def bounds(self) -> tuple[Sequence[int], Sequence[int]]:
        """`(starts, ends)` of every row in `values`."""
        if self._starts is None or self._ends is None:
            starts = array("Q", accumulate(self._counts or (), initial=0))
            self._ends = starts[1:]
            del starts[-1]
            self._starts = starts
        return self._starts, self._ends

    def __len__(self) -> int:
        if self._counts is not None and self._starts is None:
            return len(self._counts)
        return len(self.bounds()[0])

    def __getitem__(self, index):  # type: ignore[override]
        starts, ends = self.bounds()
        if isinstance(index, slice):
            return [tuple(self.values[start:end]) for start, end in zip(starts[index], ends[index])]
        return tuple(self.values[starts[index]:ends[index]])

    def __iter__(self) -> Iterator[tuple[int, ...]]:
        values = self.values
        for start, end in zip(*self.bounds()):
            yield tuple(values[start:end])

    def picked(self, keep: Sequence[bool]) -> FlatPositions:
        """The rows whose `keep` is true (the values are shared, not copied)."""
        starts, ends = self.bounds()
        return FlatPositions(self.values, array("Q", compress(starts, keep)),
                             array("Q", compress(ends, keep)))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    def __repr__(self) -> str:
        return repr(list(self))


def _flat_parts(parts: Sequence[Sequence[tuple[int, ...]]]) -> FlatPositions:
    """The rows of every part, in order, as one `FlatPositions` (values copied once)."""
    values = array("Q")
    starts = array("Q")
    ends = array("Q")
    for part in parts:
        offset = len(values)
        if isinstance(part, FlatPositions):
            part_starts, part_ends = part.bounds()
            values.extend(part.values if isinstance(part.values, array) and
                          part.values.typecode == "Q" else array("Q", part.values))
            starts.extend(map(add, part_starts, repeat(offset)))
            ends.extend(map(add, part_ends, repeat(offset)))
        else:
            for positions in part:
                starts.append(len(values))
                values.extend(positions)
                ends.append(len(values))
    return FlatPositions(values, starts, ends)


#: `bytes.translate` table swapping 0 and 1.
_FLIP = bytes([1, 0, *range(2, 256)])

_doc_id_of = attrgetter("doc_id")
_positions_of = attrgetter("positions")


@dataclass(frozen=True, slots=True)
class PostingColumns:
    """A posting list laid out as three parallel columns (the fast query path's shape).

    `doc_ids` increase; `counts[i]` is `len(positions[i])` (the term's frequency in that
    row, bm25's `f`). Same content as a `list[Posting]`, without one object per row, so
    a query can zip, map and filter whole columns.

    >>> columns = PostingColumns.of([Posting(1, (0, 3)), Posting(4, (2,))])
    >>> columns.counts, columns.positions_of(4), columns.positions_of(2)
    ([2, 1], (2,), ())
    """

    doc_ids: Sequence[int]  # a list, or an `array` (columns read from a file, joined or
    counts: Sequence[int]   # filtered: no Python object per row for the GC to walk)
    positions: Sequence[tuple[int, ...]]  # a list, or a `FlatPositions` (lazy)

    @classmethod
    def of(cls, postings: Sequence[Posting]) -> PostingColumns:
        """The columns of a posting list."""
        positions = list(map(tuple, map(_positions_of, postings)))  # C loops; a tuple stays itself
        return cls(list(map(_doc_id_of, postings)), list(map(len, positions)), positions)

    def __len__(self) -> int:
        return len(self.doc_ids)

    def positions_of(self, doc_id: int) -> tuple[int, ...]:
        """The positions in row `doc_id` (empty when the row does not hold the term)."""
        index = bisect_left(self.doc_ids, doc_id)
        if index < len(self.doc_ids) and self.doc_ids[index] == doc_id:
            return self.positions[index]
        return ()

    def postings(self) -> list[Posting]:
        """Back to one `Posting` per row (for comparing with the clear version).

        >>> PostingColumns([3], [1], [(5,)]).postings()
        [Posting(doc_id=3, positions=(5,))]
        """
        return [Posting(doc_id, positions) for doc_id, positions in zip(self.doc_ids, self.positions)]


EMPTY_COLUMNS = PostingColumns([], [], [])


def concatenate_columns(parts: Sequence[PostingColumns]) -> PostingColumns:
    """`concatenate` for columns: segments cover increasing, disjoint doc-id ranges.

    >>> list(concatenate_columns([PostingColumns([1], [1], [(0,)]), EMPTY_COLUMNS,
    ...                           PostingColumns([4], [2], [(2, 3)])]).doc_ids)
    [1, 4]
    """
    filled = [part for part in parts if part.doc_ids]
    if not filled:
        return EMPTY_COLUMNS
    if len(filled) == 1:
        return filled[0]
    return PostingColumns(
        array("Q", chain.from_iterable(part.doc_ids for part in filled)),
        array("Q", chain.from_iterable(part.counts for part in filled)),
        _flat_parts([part.positions for part in filled]),
    )


def columns_without_deleted(columns: PostingColumns, deleted: Container[int]) -> PostingColumns:
    """`without_deleted` for columns (the same object when nothing is deleted).

    >>> list(columns_without_deleted(PostingColumns([1, 2], [1, 1], [(0,), (4,)]), {1}).doc_ids)
    [2]
    """
    # One byte per row, 1 = keep, made in C: `bytes(map(...))` marks the deleted rows,
    # `translate` flips the marks.
    keep = bytes(map(deleted.__contains__, columns.doc_ids)).translate(_FLIP)
    if 0 not in keep:
        return columns
    positions = columns.positions
    return PostingColumns(
        array("Q", compress(columns.doc_ids, keep)),
        array("Q", compress(columns.counts, keep)),
        positions.picked(keep) if isinstance(positions, FlatPositions)
        else list(compress(positions, keep)),
    )
