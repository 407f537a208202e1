"""Posting lists: which documents hold a term, and at which token positions.

Owns: the in-memory shape of a posting list and the pure operations on it (merge
segments' lists, drop deleted documents). Must not touch: bytes (that is
`engine.codec.postings_file`), the term dictionary, scoring.

A *document* is one index row (one searchable message), named by its `doc_id`: the
insertion order of the row in the whole index, like the FTS5 rowid. Ids are never reused.

`PostingColumns` is the same list as three parallel columns, the shape the fast query
path of `engine.search.fast_path` reads (a `list[Posting]` stays the clear version).

Invariants of a posting list (checked by `engine.index.check`): doc ids strictly
increase; every position list is non-empty and strictly increasing; every position is
below the document's length in tokens.

`Posting`, `PostingColumns` and `DeletedRuns` are `NamedTuple`s rather than frozen
dataclasses: every process that searches makes these classes at import, and a
dataclass's generated methods cost more to make (a fresh search's start-up, issue 33,
item 5). They compare by their fields as before (and also equal the plain tuple of them).
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Collection, Container, Iterable, Iterator, Sequence
from itertools import accumulate, chain, compress, repeat
from operator import add, attrgetter, sub
from typing import NamedTuple


class Posting(NamedTuple):
    """One document's occurrences of one term: token positions, 0-based, increasing
    (a `NamedTuple`: see the module docstring)."""

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

    @property
    def dense(self) -> bool:
        """Whether row `i` follows row `i - 1` in `values` and they fill it (made by
        `of_counts`, not `picked`): then `counts` describes the rows."""
        return self._counts is not None

    @property
    def counts(self) -> Sequence[int]:
        """The number of positions of each row (only for a `dense` instance)."""
        if self._counts is None:
            raise ValueError("a picked FlatPositions has no counts of its own")
        return self._counts

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


def _joined(columns: Sequence[Sequence[int]]) -> Sequence[int]:
    """The columns one after another: arrays are joined by memory copies (after widening
    a narrower typecode), anything else item by item into an `array("Q")`.

    >>> _joined([array("B", [1, 2]), array("I", [300])])
    array('I', [1, 2, 300])
    """
    if columns and all(isinstance(column, array) and column.typecode in _WIDTH
                       for column in columns):
        widest = max((column.typecode for column in columns), key=_WIDTH.__getitem__)  # type: ignore[union-attr]
        joined = array(widest)
        for column in columns:
            joined.extend(column if column.typecode == widest  # type: ignore[union-attr]
                          else array(widest, column))
        return joined
    return array("Q", chain.from_iterable(columns))


#: The unsigned typecodes a postings file writes, by width.
_WIDTH = {"B": 1, "H": 2, "I": 4, "L": 8, "Q": 8}


def _flat_parts(parts: Sequence[Sequence[tuple[int, ...]]]) -> FlatPositions:
    """The rows of every part, in order, as one `FlatPositions` (values copied once).

    Parts whose rows fill their values in order (`dense`) are joined with their counts
    by memory copies, without summing any row bounds.
    """
    if all(isinstance(part, FlatPositions) and part.dense for part in parts):
        return FlatPositions.of_counts(
            _joined([part.values for part in parts]),  # type: ignore[attr-defined]
            _joined([part.counts for part in parts]))  # type: ignore[attr-defined]
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


#: `bytes.translate` table swapping 0 and 1 (deleted marks to keep marks).
FLIP_KEEP = bytes([1, 0, *range(2, 256)])

_doc_id_of = attrgetter("doc_id")
_positions_of = attrgetter("positions")


class PostingColumns(NamedTuple):
    """A posting list laid out as three parallel columns (the fast query path's shape).

    `doc_ids` increase; `counts[i]` is `len(positions[i])` (the term's frequency in that
    row, bm25's `f`). Same content as a `list[Posting]`, without one object per row, so
    a query can zip, map and filter whole columns. A `NamedTuple` (see the module
    docstring) whose `len` is its row count, as before (so `_make` and `_replace`, which
    check a tuple's length, are not for it).

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

    def positions_in_order(self, doc_ids: Iterable[int]) -> Iterator[Sequence[int]]:
        """`positions_of` of each row of `doc_ids`, which must increase and all hold the
        term: each bisection starts where the last one ended, and a `FlatPositions`
        row is sliced from its flat array without a tuple.

        >>> columns = PostingColumns([1, 4, 9], [2, 1, 1], [(0, 3), (2,), (5,)])
        >>> [tuple(positions) for positions in columns.positions_in_order([4, 9])]
        [(2,), (5,)]
        """
        own = self.doc_ids
        positions = self.positions
        low = 0
        if isinstance(positions, FlatPositions):
            starts, ends = positions.bounds()
            values = positions.values
            for doc_id in doc_ids:
                low = bisect_left(own, doc_id, low)
                yield values[starts[low]:ends[low]]
            return
        for doc_id in doc_ids:
            low = bisect_left(own, doc_id, low)
            yield positions[low]

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
        _joined([part.doc_ids for part in filled]),
        _joined([part.counts for part in filled]),
        _flat_parts([part.positions for part in filled]),
    )


def columns_without_deleted(columns: PostingColumns, deleted: Container[int]) -> PostingColumns:
    """`without_deleted` for columns (the same object when nothing is deleted).

    >>> list(columns_without_deleted(PostingColumns([1, 2], [1, 1], [(0,), (4,)]), {1}).doc_ids)
    [2]
    """
    # One byte per row, 1 = keep, made in C: `bytes(map(...))` marks the deleted rows,
    # `translate` flips the marks.
    keep = bytes(map(deleted.__contains__, columns.doc_ids)).translate(FLIP_KEEP)
    if 0 not in keep:
        return columns
    positions = columns.positions
    return PostingColumns(
        array("Q", compress(columns.doc_ids, keep)),
        array("Q", compress(columns.counts, keep)),
        positions.picked(keep) if isinstance(positions, FlatPositions)
        else list(compress(positions, keep)),
    )


class DeletedRuns(NamedTuple):
    """The tombstones as runs of consecutive doc ids: run `i` is `starts[i] ..
    ends[i] - 1`, runs increasing and apart.

    Tombstones come from whole windows (rebuilt or deleted), so they are long runs: a
    bulk import leaves far fewer runs than tombstones. Dropping them from a posting list
    then costs two binary searches a run instead of a set lookup a row (a `NamedTuple`:
    see the module docstring).

    >>> runs = DeletedRuns.of({7, 3, 4, 5, 9})
    >>> list(runs.starts), list(runs.ends)
    ([3, 7, 9], [6, 8, 10])
    """

    starts: array
    ends: array

    @classmethod
    def of(cls, deleted: Collection[int]) -> DeletedRuns:
        """The runs of a set of doc ids: a run starts at an id whose predecessor is not
        deleted and ends after one whose successor is not (set differences, in C)."""
        ids = deleted if isinstance(deleted, (set, frozenset)) else set(deleted)
        starts = sorted(ids.difference(map(add, ids, repeat(1))))
        lasts = sorted(ids.difference(map(sub, ids, repeat(1))))
        return cls(array("q", starts), array("q", map(add, lasts, repeat(1))))

    @classmethod
    def of_ranges(cls, ranges: Iterable[range]) -> DeletedRuns:
        """The runs of increasing, apart, non-empty ranges (as a manifest stores them).

        >>> list(DeletedRuns.of_ranges([range(3, 6), range(9, 10)]).ends)
        [6, 10]
        """
        ranges = list(ranges)
        return cls(array("q", [run.start for run in ranges]),
                   array("q", [run.stop for run in ranges]))


def columns_without_runs(columns: PostingColumns, runs: DeletedRuns) -> PostingColumns:
    """`columns_without_deleted(columns, set of the runs' doc ids)`, by slices.

    Each run that meets the list removes one index range, found by binary search; the
    kept ranges are copied slice by slice (memory copies, no object per row). The
    positions of a `dense` list stay dense (their value ranges come from the counts);
    others fall back to `picked`. Cost O(r log n + n / copy speed), r = runs in range.

    >>> columns = PostingColumns.of([Posting(doc, (doc % 3, 4)) for doc in range(2, 12)])
    >>> kept = columns_without_runs(columns, DeletedRuns.of({0, 1, 3, 4, 8, 11}))
    >>> list(kept.doc_ids), list(kept.positions)[:2]
    ([2, 5, 6, 7, 9, 10], [(2, 4), (2, 4)])
    """
    doc_ids = columns.doc_ids
    if not doc_ids or not runs.starts:
        return columns
    first, last = doc_ids[0], doc_ids[-1]
    low = bisect_left(runs.ends, first + 1)  # the first run that ends after `first`
    high = bisect_left(runs.starts, last + 1)  # runs from here start after `last`
    removed: list[tuple[int, int]] = []
    position = 0
    for start, end in zip(runs.starts[low:high], runs.ends[low:high]):
        begin = bisect_left(doc_ids, start, position)
        stop = bisect_left(doc_ids, end, begin)
        if begin < stop:
            removed.append((begin, stop))
        position = stop
    if not removed:
        return columns
    kept = list(zip([0, *(stop for _begin, stop in removed)],
                    [*(begin for begin, _stop in removed), len(doc_ids)]))
    kept = [(begin, stop) for begin, stop in kept if begin < stop]
    if not kept:
        return EMPTY_COLUMNS
    positions = columns.positions
    if isinstance(positions, FlatPositions) and positions.dense:
        counts = positions.counts
        values = positions.values
        value_ranges = []
        offset = 0  # where row `previous` starts in `values`
        previous = 0
        for begin, stop in kept:
            offset += sum(counts[previous:begin])
            width = sum(counts[begin:stop])
            value_ranges.append((offset, offset + width))
            offset += width
            previous = stop
        kept_positions: Sequence[tuple[int, ...]] = FlatPositions.of_counts(
            _joined([values[begin:stop] for begin, stop in value_ranges]),
            _joined([counts[begin:stop] for begin, stop in kept]))
    else:
        keep = bytearray(len(doc_ids))
        for begin, stop in kept:
            keep[begin:stop] = b"\x01" * (stop - begin)
        kept_positions = (positions.picked(keep) if isinstance(positions, FlatPositions)
                          else list(compress(positions, keep)))
    return PostingColumns(
        _joined([doc_ids[begin:stop] for begin, stop in kept]),
        _joined([columns.counts[begin:stop] for begin, stop in kept]),
        kept_positions,
    )
