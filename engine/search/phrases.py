"""The phrases of a query over the index, for the fast path of the search stage.

Owns: `phrase_rows` (every row that holds one phrase, how often, and where), the choice
between matching a phrase row by row and over token bitmaps (`bitmaps_pay`), and the
search for the best rows of a phrase without counting its instances in every row
(`best_phrase_rows`, used by `engine.search.fast_path` for a query of one phrase: a walk
by bound, `best_rows_by_bound`, then the rows still in reach counted in one loop; or,
for a phrase much rarer than its words or matched row by row, `best_listed_rows` over
the rows holding it).
Must not touch: the index's mutable state (it reads one `IndexView`), scores (the
caller hands in its ranks, made by `engine.score.bm25`), scope rules, the order of hits.

Row by row, a phrase costs a few microseconds of interpreted code for each row that
holds all its tokens: tens of thousands of rows for two common words (`of the`). Over the
view's token bitmaps (`engine.index.token_bitmaps`) it is one AND of shifted integers
for the whole index, then either every instance listed (O(index / 8) in C plus
O(instances)) or, for a query of one phrase, only the rows that can reach the first
ranks counted: a row holds a phrase at most as often as it holds each of its tokens, so
the rows of the rarest token, grouped by `(f, D)` (`engine.index.impact_order`), are
walked from their best possible rank until no unread row can reach the `count`-th (or,
past its first few hundred rows, every row still in reach is counted at once).

The clear version is `engine.index.matching.phrase_occurrences`; the tests compare both
matchers with `engine.query.phrase_match.phrase_positions` on every row, the walk with
the clear kernel, and `best_phrase_rows` with the walk to its end
(`tests/search/test_phrase_bitmaps.py`).
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import chain, compress, repeat
from operator import add, and_, eq, itemgetter, le, not_

from engine.index.impact_order import ImpactOrder
from engine.index.postings import FlatPositions, PostingColumns
from engine.index.token_bitmaps import RowReader, instances_by_row, phrase_bits
from engine.index.view import IndexView
from engine.query.ast import Phrase

#: `bitmaps_pay`: bitmaps are used when the rarest token of a phrase is in at least one
#: row in this many.
BITMAP_SHARE = 32
#: `walk_pays`: a phrase with fewer instances than one in this many rows of its rarest
#: token has the rows holding it listed (`best_listed_rows`) rather than its rarest
#: token's rows walked.
RARE_PHRASE_SHARE = 8
#: `best_phrase_rows`: how many kept rows the walk by bound reads before the rest of the
#: rows that can reach the first ranks are counted in one loop.
SEED_ROWS = 512
#: `shortest`: a list of lengths at most this many times the count asked is sorted
#: whole rather than walked by a heap.
SORTED_SHARE = 16
#: `SEED_ROWS` of a walk given a ceiling (a merged search's rank bound, already close to
#: the threshold the walk would find).
BOUNDED_SEED_ROWS = 64


@dataclass(frozen=True, slots=True)
class PhraseRows:
    """One phrase over the whole index (fast path): instances per row, and their starts."""

    phrase: Phrase
    counts: Mapping[int, int]
    starts: Callable[[int], Sequence[int]]


def phrase_rows(view: IndexView, phrase: Phrase, *, bitmaps: bool | None = None) -> PhraseRows:
    """`phrase_occurrences` of `engine.index.matching` (the clear version), from columns.

    A phrase of several tokens is matched over token bitmaps
    (`engine.index.token_bitmaps`) when `bitmaps` says so, or, when it is None, when
    `bitmaps_pay` does; otherwise row by row over the rows that hold every token.
    """
    terms = phrase.terms
    if not terms:
        return PhraseRows(phrase, {}, lambda doc_id: ())
    last = len(terms) - 1
    tokens = [
        view.term_columns(term, prefix=phrase.prefix and position == last)
        for position, term in enumerate(terms)
    ]
    if len(tokens) == 1:
        only = tokens[0]
        return PhraseRows(phrase, dict(zip(only.doc_ids, only.counts)), only.positions_of)
    if not all(tokens):
        return PhraseRows(phrase, {}, lambda doc_id: ())
    if bitmaps if bitmaps is not None else bitmaps_pay(view, tokens):
        found_by_row = instances_by_row(phrase_bitmap(view, phrase), view.token_line())
        return PhraseRows(phrase, {doc_id: len(starts) for doc_id, starts in found_by_row.items()},
                          found_by_row.__getitem__)
    rarest = min(tokens, key=len)
    ordered: list[int]
    if all(token.doc_ids == rarest.doc_ids for token in tokens):  # words always together
        ordered = list(rarest.doc_ids)
    else:
        ordered = sorted(set(rarest.doc_ids).intersection(
            *(token.doc_ids for token in tokens if token is not rarest)))
    if len(tokens) == 2:  # the common phrase (`per-session`)
        return PhraseRows(phrase, *_two_token_rows(ordered, tokens[0], tokens[1]))
    found: dict[int, list[int]] = {}
    for doc_id, first, *others in zip(ordered, *(token.positions_in_order(ordered)
                                                 for token in tokens)):
        later = [set(positions) for positions in others]
        starts = [
            start for start in first
            if all(start + offset in positions for offset, positions in enumerate(later, 1))
        ]
        if starts:
            found[doc_id] = starts
    return PhraseRows(phrase, {doc_id: len(starts) for doc_id, starts in found.items()},
                      found.__getitem__)


def _two_token_rows(ordered: list[int], first: PostingColumns, second: PostingColumns
                    ) -> tuple[dict[int, int], Callable[[int], Sequence[int]]]:
    """The counts and starts of `phrase_rows` for a phrase of two tokens over the rows
    `ordered` (increasing, each holding both). A row holding each token once (most rows
    of rare words) is matched with C loops over the columns, its one start the first
    token's position when the second follows it; the other rows one at a time.

    >>> first = PostingColumns([1, 4, 9], [2, 1, 1], [(0, 3), (2,), (5,)])
    >>> second = PostingColumns([1, 4, 9], [2, 1, 1], [(1, 4), (3,), (7,)])
    >>> counts, starts = _two_token_rows([1, 4, 9], first, second)
    >>> counts, list(starts(1)), list(starts(4))
    ({1: 2, 4: 1}, [0, 3], [2])
    """
    first_indexes = _column_indexes(first, ordered)
    second_indexes = _column_indexes(second, ordered)
    once: list[bool] = []
    everywhere_once = (_one_position_each(first, first_indexes)
                       and _one_position_each(second, second_indexes))
    if not everywhere_once:
        # A row holds each token at least once: twice in all means once each.
        once = list(map(eq, map(add, _picked(first.counts, first_indexes),
                                    _picked(second.counts, second_indexes)), repeat(2)))
        everywhere_once = all(once)
    first_starts = _first_positions(first, first_indexes)
    if isinstance(first_starts, Iterator):
        first_starts = list(first_starts)
    follows = map(eq, map(add, first_starts, repeat(1)), _first_positions(second, second_indexes))
    matched = list(follows if everywhere_once else map(and_, once, follows))
    if everywhere_once:  # one start a row: read when asked, not a tuple a row
        return (dict.fromkeys(compress(ordered, matched), 1),
                _OnlyStarts(ordered, first_starts, matched))
    found: dict[int, Sequence[int]] = dict(zip(compress(ordered, matched),
                                               zip(compress(first_starts, matched))))
    counts = dict.fromkeys(found, 1)
    more = compress(zip(ordered, first_indexes, second_indexes), map(not_, once))
    for doc_id, first_index, second_index in more:
        following = set(second.positions[second_index])
        starts = [start for start in first.positions[first_index] if start + 1 in following]
        if starts:
            found[doc_id] = starts
            counts[doc_id] = len(starts)
    return dict(sorted(counts.items())), found.__getitem__


class _OnlyStarts:
    """`starts` of a phrase of two tokens whose rows hold each token once: row
    `ordered[i]` holds it at `first_starts[i]` when `matched[i]` (KeyError otherwise, as
    a dict of the starts would raise), found by bisection when a row is asked (only the
    rows ranked first are).

    >>> starts = _OnlyStarts([2, 5, 9], [4, 0, 7], [True, False, True])
    >>> starts(9), starts(2)
    ((7,), (4,))
    >>> starts(5)
    Traceback (most recent call last):
    ...
    KeyError: 5
    """

    __slots__ = ("first_starts", "matched", "ordered")

    def __init__(self, ordered: list[int], first_starts: Sequence[int],
                 matched: list[bool]) -> None:
        self.ordered, self.first_starts, self.matched = ordered, first_starts, matched

    def __call__(self, doc_id: int) -> tuple[int]:
        index = bisect_left(self.ordered, doc_id)
        if index == len(self.ordered) or self.ordered[index] != doc_id or not self.matched[index]:
            raise KeyError(doc_id)
        return (self.first_starts[index],)


def _column_indexes(token: PostingColumns, ordered: list[int]) -> Sequence[int]:
    """Where each row of `ordered` (increasing, each held by `token`) is in its columns
    (a `range` over all of them when `ordered` is every row of `token`)."""
    if len(ordered) == len(token.doc_ids):
        return range(len(ordered))
    return list(map(bisect_left, repeat(token.doc_ids), ordered))


def _picked(column: Sequence[int], indexes: Sequence[int]) -> Iterable[int]:
    """`column[index]` for each of `indexes`: the column itself when `indexes` is the
    `range` over all of it (`_column_indexes`), one lookup less a row.

    >>> list(_picked([5, 6, 7], range(3))), list(_picked([5, 6, 7], [0, 2]))
    ([5, 6, 7], [5, 7])
    """
    if isinstance(indexes, range) and len(indexes) == len(column):
        return column
    return map(column.__getitem__, indexes)


def _one_position_each(token: PostingColumns, indexes: Sequence[int]) -> bool:
    """Whether `indexes` are all the rows of `token` and each holds it once, known
    without reading a row: a dense flat column of as many positions as rows (each row
    holds at least one).

    >>> from array import array
    >>> once = PostingColumns([2, 5], [1, 1], FlatPositions.of_counts(array("I", [4, 0]), [1, 1]))
    >>> _one_position_each(once, range(2)), _one_position_each(once, [1])
    (True, False)
    """
    positions = token.positions
    return (isinstance(positions, FlatPositions) and positions.dense
            and isinstance(indexes, range) and len(indexes) == len(positions.values))


def _first_positions(token: PostingColumns, indexes: Sequence[int]) -> Iterable[int]:
    """The first position of `token` in each of its rows at `indexes` (C loops over a
    flat position array; the array itself when each row holds one)."""
    positions = token.positions
    if _one_position_each(token, indexes):
        return positions.values  # type: ignore[union-attr]
    if isinstance(positions, FlatPositions):
        return map(positions.values.__getitem__, _picked(positions.bounds()[0], indexes))
    return map(itemgetter(0), map(positions.__getitem__, indexes))


def bitmaps_pay(view: IndexView, tokens: Sequence[PostingColumns]) -> bool:
    """Whether matching a phrase over bitmaps is expected to beat matching it row by row:
    when its rarest token is in at least one row in `BITMAP_SHARE` (a bitmap pass costs
    about as much as matching one row in that many, and row by row is done only for the
    rows that hold every token)."""
    return min(map(len, tokens)) * BITMAP_SHARE >= view.document_count


def phrase_bitmap(view: IndexView, phrase: Phrase) -> int:
    """The bitmap of the slots where `phrase` (of at least one token) starts."""
    last = len(phrase.terms) - 1
    return phrase_bits([view.term_bitmap(term, prefix=phrase.prefix and position == last)
                        for position, term in enumerate(phrase.terms)])


def walk_pays(bits: int, tokens: Sequence[PostingColumns]) -> bool:
    """Whether a query of one phrase should walk its rarest token's rows
    (`best_phrase_rows`) rather than list the rows holding it (`best_listed_rows`): not
    when the phrase (its bitmap `bits`) has fewer instances than one in
    `RARE_PHRASE_SHARE` of those rows, which the walk would then read for few matches."""
    return bits.bit_count() * RARE_PHRASE_SHARE >= min(map(len, tokens))


def best_rows_by_bound(
    impacts: ImpactOrder,
    bound_of: Callable[[int, int], float],
    ranks_of: Callable[[Sequence[int], int], Iterable[float | None]],
    keep: Callable[[int], bool] | None,
    count: int,
    ceiling: float | None = None,
) -> list[tuple[int, float]]:
    """Every kept row whose exact rank is at most the `count`-th smallest exact rank of
    the kept rows (all of them when fewer are kept), as `(doc_id, rank)`; with
    `ceiling`, only those not ranked worse than it.

    `impacts` groups the rows by `(f, D)`, `bound_of(f, D)` is a rank no row of the group
    can beat (it must not decrease as `D` grows for one `f`), and `ranks_of(doc_ids, D)`
    the exact rank of each of those rows of length `D`, None for a row that does not
    match. Groups are walked by bound (`ImpactOrder.walk`), and the walk stops at the
    first group whose bound is worse than the `count`-th exact rank found so far (or than
    `ceiling`): no unread row can then reach it.

    >>> from engine.index.impact_order import ImpactOrder
    >>> from engine.index.postings import FlatPositions, PostingColumns
    >>> columns = PostingColumns([0, 1, 2, 3], [3, 1, 2, 1], [(0, 1, 2), (0,), (0, 1), (0,)])
    >>> impacts = ImpactOrder.of(columns, [5, 2, 5, 9])
    >>> exact = {0: 1, 1: None, 2: 2, 3: 1}
    >>> ranks_of = lambda doc_ids, d: [None if exact[doc_id] is None else -exact[doc_id] / d
    ...                                for doc_id in doc_ids]
    >>> best_rows_by_bound(impacts, lambda f, d: -f / d, ranks_of, None, 2)
    [(0, -0.2), (2, -0.4)]
    >>> best_rows_by_bound(impacts, lambda f, d: -f / d, ranks_of, None, 2, -0.3)
    [(2, -0.4)]
    """
    return _walk_by_bound(impacts, bound_of, ranks_of, keep, count, ceiling)[0]


def _walk_by_bound(
    impacts: ImpactOrder,
    bound_of: Callable[[int, int], float],
    ranks_of: Callable[[Sequence[int], int], Iterable[float | None]],
    keep: Callable[[int], bool] | None,
    count: int,
    ceiling: float | None,
    rows: int | None = None,
) -> tuple[list[tuple[int, float]], float | None, float | None]:
    """The walk of `best_rows_by_bound`, stopped early (`rows`) once it has read that
    many kept rows and holds a threshold: `(its answer, the threshold, the bound of the
    first group not read)`, the bound None when the walk ended (the answer is then
    whole). A threshold is the `count`-th smallest exact rank read (or `ceiling`, when
    smaller or when fewer rows were found), never better than the `count`-th smallest
    of all the kept rows."""
    chosen: list[tuple[int, float]] = []
    best: list[float] = []  # the `count` smallest exact ranks so far, negated (a max-heap)
    threshold = ceiling  # no row ranked worse is wanted
    read = 0
    for bound, length, group in impacts.walk(bound_of):
        if threshold is not None and bound > threshold:
            break
        if rows is not None and read >= rows and threshold is not None:
            return chosen, threshold, bound
        doc_ids = group if keep is None else tuple(filter(keep, group))
        read += len(doc_ids)
        for doc_id, rank in zip(doc_ids, ranks_of(doc_ids, length)):
            if rank is None or (threshold is not None and rank > threshold):
                continue
            chosen.append((doc_id, rank))
            if len(best) < count:
                heapq.heappush(best, -rank)
                if len(best) < count:
                    continue
            elif rank < -best[0]:
                heapq.heapreplace(best, -rank)
            else:
                continue
            threshold = -best[0] if ceiling is None else min(ceiling, -best[0])
    if threshold is None:
        return chosen, None, None
    return [(doc_id, rank) for doc_id, rank in chosen if rank <= threshold], threshold, None


def best_phrase_rows(
    impacts: ImpactOrder,
    rank_of: Callable[[int, int], float],
    reader: RowReader,
    keep: Callable[[int], bool] | None,
    count: int,
    ceiling: float | None = None,
    *,
    seed_rows: int | None = None,
) -> list[tuple[int, float]]:
    """`best_rows_by_bound` of a phrase query whose rank is `rank_of(f, D)` for a row of
    `D` tokens holding the phrase `f` times (the same function bounds a group of the
    rarest token's rows, `f` its count of that token), the phrase's instances counted on
    `reader`; the same rows and ranks, read with less work per row.

    The walk by bound reads a group at a time (a heap step, a bound, a call): a phrase
    whose words repeat inside long rows (`the the`, `to the`) walks thousands of groups,
    since a row's count of its rarest word bounds its count of the phrase loosely. So the
    walk runs only until it has read `seed_rows` kept rows (`SEED_ROWS`) and holds a
    threshold `T` (the `count`-th exact rank so far, or `ceiling`). Then every row of a
    group whose bound is not worse than `T` (for each `f`, a first run of its lengths,
    found by bisection) has its instances counted in one loop, and the rows ranked not
    worse than `T` are ranked: a row of `c` instances is when its length is at most the
    longest one ranked not worse than `T` with `c` instances (`_LongestLengths`; ranks
    never improve as `D` grows). `T` is never better than the `count`-th rank of all the
    kept rows (unless it is `ceiling`, and every kept row ranked not worse is then the
    answer), and any row ranked as well has a bound not worse than `T`: it was counted,
    and the answer is cut at the `count`-th rank of the rows ranked.

    >>> from engine.index.postings import FlatPositions, PostingColumns
    >>> from engine.index.token_bitmaps import RowReader, TokenLine
    >>> line = TokenLine.of([3, 2, 3, 1])
    >>> columns = PostingColumns([0, 1, 2, 3], [3, 1, 2, 1], [(0, 1, 2), (0,), (0, 1), (0,)])
    >>> impacts = ImpactOrder.of(columns, line.lengths)
    >>> reader = RowReader.of(0b10000101, line)  # instances: row 0 twice, row 2 once
    >>> rank = lambda f, d: -f / d
    >>> best_phrase_rows(impacts, rank, reader, None, 1, seed_rows=0)
    [(0, -0.6666666666666666)]
    >>> sorted(best_phrase_rows(impacts, rank, reader, None, 2, seed_rows=0))
    [(0, -0.6666666666666666), (2, -0.3333333333333333)]
    """
    chosen, threshold, stopped_at = _walk_by_bound(
        impacts, rank_of, lambda doc_ids, length: [
            rank_of(instances, length) if instances else None
            for instances in reader.counts(doc_ids, length)],
        keep, count, ceiling,
        (SEED_ROWS if ceiling is None else BOUNDED_SEED_ROWS) if seed_rows is None else seed_rows)
    if stopped_at is None or threshold is None:
        return chosen
    lengths = reader.line.lengths
    rows: list[int] = []
    for runs in impacts.by_frequency:
        end = bisect_right(runs.lengths, threshold, key=partial(rank_of, runs.frequency))
        rows.extend(chain.from_iterable(runs.doc_ids[:end]))
    counts = reader.row_counts(rows)
    cut = _LongestLengths(rank_of, threshold,
                          max(runs.lengths[-1] for runs in impacts.by_frequency))
    ranked = []
    for doc_id, instances in zip(compress(rows, counts), filter(None, counts)):
        length = lengths[doc_id]
        if length <= cut[instances] and (keep is None or keep(doc_id)):
            ranked.append((doc_id, rank_of(instances, length)))
    if len(ranked) < count:  # only when `threshold` is the ceiling
        return ranked
    last = heapq.nsmallest(count, [rank for _doc_id, rank in ranked])[-1]
    return [(doc_id, rank) for doc_id, rank in ranked if rank <= last]


def best_listed_rows(
    doc_ids: Sequence[int],
    counts: Sequence[int],
    lengths: Sequence[int],
    rank_of: Callable[[int, int], float],
    keep: Callable[[int], bool] | None,
    count: int,
    ceiling: float | None = None,
) -> list[tuple[int, float]]:
    """`best_rows_by_bound` of a phrase query from every row holding the phrase
    (`doc_ids`, each holding it `counts` times, listed from its bitmap: the walk does
    not pay for a phrase rarer than its rarest word, `walk_pays`), ranking only a few.

    Among rows holding the phrase equally often the shortest rank best, so the `count`
    best ranks are among those of the `count` shortest rows of each count: their
    `count`-th rank `T` is found from these alone, and the rows ranked not worse than
    `T` are those of each count `c` no longer than the longest length ranked not worse
    with `c` instances (`_LongestLengths`).

    >>> rank = lambda f, d: -f / d
    >>> best_listed_rows([0, 2, 5], [1, 2, 1], [4, 0, 5, 0, 0, 2], rank, None, 2)
    [(2, -0.4), (5, -0.5)]
    >>> best_listed_rows([0, 2, 5], [1, 2, 1], [4, 0, 5, 0, 0, 2], rank, None, 2, -0.45)
    [(5, -0.5)]
    """
    # Rebound below, never changed: a caller's lists are read as they are.
    ids = doc_ids if doc_ids.__class__ is list else list(doc_ids)
    instances_of = counts if counts.__class__ is list else list(counts)
    row_lengths = list(map(lengths.__getitem__, ids))
    if ceiling is not None and ids:
        # No row ranked worse than the ceiling is returned, and when `count` rows are
        # ranked not worse, the `count`-th best rank is among theirs: only these rows
        # matter (a length cut per count, as below), and few are ranked.
        near = _not_longer(row_lengths, instances_of,
                           _LongestLengths(rank_of, ceiling, max(row_lengths)))
        ids, instances_of, row_lengths = (list(compress(column, near))
                                          for column in (ids, instances_of, row_lengths))
    if keep is not None:
        kept = list(map(keep, ids))
        ids, instances_of, row_lengths = (list(compress(column, kept))
                                          for column in (ids, instances_of, row_lengths))
    if not ids:
        return []
    by_count: dict[int, list[int]]
    one_count = instances_of.count(instances_of[0]) == len(instances_of)  # (common)
    if one_count:
        by_count = {instances_of[0]: row_lengths}
    else:
        by_count = {}
        for instances, length in zip(instances_of, row_lengths):
            found = by_count.get(instances)
            if found is None:
                by_count[instances] = [length]
            else:
                found.append(length)
    best = [rank_of(instances, length) for instances, found in by_count.items()
            for length in shortest(count, found)]
    threshold = heapq.nsmallest(count, best)[-1] if len(best) >= count else None
    if ceiling is not None:
        threshold = ceiling if threshold is None else min(threshold, ceiling)
    if threshold is not None and one_count:  # `_not_longer` of one cut, in C
        instances = instances_of[0]
        longest = _LongestLengths(rank_of, threshold, max(row_lengths))[instances]
        chosen = list(map(le, row_lengths, repeat(longest)))
        ids, row_lengths = list(compress(ids, chosen)), list(compress(row_lengths, chosen))
        return list(zip(ids, map(rank_of, repeat(instances), row_lengths)))
    if threshold is not None:
        chosen = _not_longer(row_lengths, instances_of,
                             _LongestLengths(rank_of, threshold, max(row_lengths)))
        ids, instances_of, row_lengths = (list(compress(column, chosen))
                                          for column in (ids, instances_of, row_lengths))
    # else fewer than `count` rows: all of them
    return list(zip(ids, map(rank_of, instances_of, row_lengths)))


def shortest(count: int, lengths: list[int]) -> list[int]:
    """`heapq.nsmallest(count, lengths)` (ints): sorted in C when the list is at most
    `SORTED_SHARE` times `count` long, where sorting it all is cheaper than the heap's
    loop in Python over it; the same list either way.

    >>> shortest(2, [5, 1, 4, 1]), shortest(2, [9] * 200 + [3])
    ([1, 1], [3, 9])
    """
    if len(lengths) <= SORTED_SHARE * count:
        return sorted(lengths)[:count]
    return heapq.nsmallest(count, lengths)


def _not_longer(row_lengths: list[int], instances_of: list[int], cut: _LongestLengths
                ) -> list[bool]:
    """Whether each row (its length and instance count) is no longer than the longest
    length `cut` allows its count (C loops)."""
    return list(map(le, row_lengths, map(cut.__getitem__, instances_of)))


class _LongestLengths(dict[int, int]):
    """`cut[x]`: the longest row length up to `longest` whose rank with `x` instances
    (`rank_of(x, D)`) is not worse than `threshold`, 0 when none is (a row holding an
    instance is never empty); found when first asked (`_last_not_worse`).

    >>> cut = _LongestLengths(lambda f, d: -f / d, -0.5, 7)
    >>> [cut[x] for x in (1, 2, 3, 4)], _LongestLengths(lambda f, d: -f / d, -3.0, 7)[2]
    ([2, 4, 6, 7], 0)
    """

    __slots__ = ("longest", "rank_of", "threshold")

    def __init__(self, rank_of: Callable[[int, int], float], threshold: float,
                 longest: int) -> None:
        super().__init__()
        self.rank_of, self.threshold, self.longest = rank_of, threshold, longest

    def __missing__(self, instances: int) -> int:
        rank_at = partial(self.rank_of, instances)
        if rank_at(self.longest) <= self.threshold:
            found = self.longest
        else:
            found = _last_not_worse(rank_at, self.threshold, 0, self.longest)
        self[instances] = found
        return found


def _last_not_worse(rank_at: Callable[[int], float], threshold: float, low: int,
                    high: int) -> int:
    """The largest length in `low + 1 .. high - 1` whose rank (`rank_at`, never better
    as the length grows) is not worse than `threshold`, or `low` when none is: the
    rank at `high` is known to be worse, and the one at `low` is not asked.

    bm25's rank of one phrase is `-a / (c + d * length)` for constants of the query and
    the row's count, so the length where the reciprocal of the rank crosses the
    threshold's is a close first guess (from the ranks at `low + 1` and `high`); the
    bisection that follows is what is exact.

    >>> rank = lambda length: -3 / (2 + 0.5 * length)
    >>> [_last_not_worse(rank, threshold, 0, 40) for threshold in (-2.0, -1.0, -0.3, -0.1)]
    [0, 2, 16, 39]
    """
    if high - low > 3 and threshold < 0:
        first, first_rank, high_rank = low + 1, rank_at(low + 1), rank_at(high)
        if first_rank > threshold:
            return low
        if high_rank < 0 and high_rank != first_rank:
            share = (1 / threshold - 1 / first_rank) / (1 / high_rank - 1 / first_rank)
            guess = first + int(share * (high - first))
            low = first
            for probe in (guess, guess + 1):  # narrow the bracket around the guess
                if low < probe < high:
                    if rank_at(probe) <= threshold:
                        low = probe
                    else:
                        high = probe
                        break
    return bisect_right(range(high), threshold, lo=low + 1, key=rank_at) - 1
