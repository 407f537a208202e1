"""`ImpactOrder`: one posting list's rows grouped by what bm25 reads of a row.

Owns: the grouping of a term's live rows by `(f, D)`, the term's frequency in the row and
the row's length in tokens, the only two inputs of a one-term bm25 that differ between
rows (`N`, `n` and `avgdl` are the same for every row of a query). Must not touch: the
formula or any score (the search stage scores the groups with `engine.score.bm25`), the
scope, the order of hits.

Why: a one-word query over a common word ranks tens of thousands of rows to keep 26.
Rows that share `(f, D)` share their rank, and for one `f` the rank never gets better as
`D` grows (a longer row dilutes the same hits; every operation of FTS5's formula is
monotonic in `D`, and IEEE rounding keeps each monotonic). So the best rows are found by
walking, for each frequency, its lengths from the shortest, and merging those walks by
rank (`engine.search.fast_path.best_rows_by_impact`): a few dozen groups are scored
instead of every row. Per-block score bounds, the other design proposed, were measured
first and skip nothing on the generated corpus (each block of 16-128 postings holds a
short row and a row with many hits, so every block's bound beats the 26th rank).

The grouping depends only on the posting list and the row lengths, not on any corpus
statistic, so the view keeps it beside the term's columns for as long as it keeps them
(`engine.index.view.IndexView.term_impacts`): it is made by the first query of a term
at a version of the rows, O(rows), and reused by the next ones.

`LengthRuns` and `ImpactOrder` are `NamedTuple`s, not frozen dataclasses: every process
that searches imports this module, and making a dataclass's methods costs more at its
start-up (issue 33, item 5).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator, Sequence
from typing import NamedTuple

from engine.index.postings import PostingColumns


class LengthRuns(NamedTuple):
    """The rows of one term frequency: their distinct lengths, increasing, and the doc
    ids of each length, increasing."""

    frequency: int
    lengths: tuple[int, ...]
    doc_ids: tuple[tuple[int, ...], ...]


class ImpactOrder(NamedTuple):
    """A posting list's rows by `(f, D)` (module docstring): one `LengthRuns` per
    frequency, in increasing frequency.

    >>> from engine.index.postings import PostingColumns
    >>> columns = PostingColumns([1, 2, 5, 7], [1, 2, 1, 1], [(0,), (0, 3), (4,), (1,)])
    >>> order = ImpactOrder.of(columns, [0, 9, 4, 0, 0, 6, 0, 4])
    >>> [(runs.frequency, runs.lengths, runs.doc_ids) for runs in order.by_frequency]
    [(1, (4, 6, 9), ((7,), (5,), (1,))), (2, (4,), ((2,),))]
    """

    by_frequency: tuple[LengthRuns, ...]

    @classmethod
    def of(cls, columns: PostingColumns, lengths: Sequence[int]) -> ImpactOrder:
        """Group `columns` by `(counts[i], lengths[doc_ids[i]])`."""
        groups: dict[tuple[int, int], list[int]] = {}
        for frequency, length, doc_id in zip(columns.counts,
                                             map(lengths.__getitem__, columns.doc_ids),
                                             columns.doc_ids):
            found = groups.get((frequency, length))
            if found is None:
                groups[(frequency, length)] = [doc_id]
            else:
                found.append(doc_id)  # doc ids come increasing: each group stays sorted
        by_frequency: dict[int, tuple[list[int], list[tuple[int, ...]]]] = {}
        for (frequency, length), doc_ids in sorted(groups.items()):  # keys are unique
            lengths_of, doc_ids_of = by_frequency.setdefault(frequency, ([], []))
            lengths_of.append(length)
            doc_ids_of.append(tuple(doc_ids))
        return cls(tuple(LengthRuns(frequency, tuple(lengths_of), tuple(doc_ids_of))
                         for frequency, (lengths_of, doc_ids_of) in by_frequency.items()))

    def walk(self, rank_of: Callable[[int, int], float]
             ) -> Iterator[tuple[float, int, tuple[int, ...]]]:
        """`(rank_of(f, D), D, doc_ids)` of every group, in non-decreasing rank, made as
        they are asked for: each frequency's lengths from the shortest, merged with a
        heap (`rank_of` must not decrease as `D` grows for one `f`; the caller scores).

        >>> columns = PostingColumns([1, 2, 5, 7], [1, 2, 1, 1], [(0,), (0, 3), (4,), (1,)])
        >>> order = ImpactOrder.of(columns, [0, 9, 4, 0, 0, 6, 0, 4])
        >>> [(rank, length, doc_ids) for rank, length, doc_ids in order.walk(lambda f, d: d / f)]
        [(2.0, 4, (2,)), (4.0, 4, (7,)), (6.0, 6, (5,)), (9.0, 9, (1,))]
        """
        heap = [(rank_of(runs.frequency, runs.lengths[0]), position, 0)
                for position, runs in enumerate(self.by_frequency)]
        heapq.heapify(heap)
        while heap:
            rank, position, step = heap[0]
            runs = self.by_frequency[position]
            yield rank, runs.lengths[step], runs.doc_ids[step]
            if step + 1 < len(runs.lengths):
                heapq.heapreplace(heap, (rank_of(runs.frequency, runs.lengths[step + 1]),
                                         position, step + 1))
            else:
                heapq.heappop(heap)
