"""The phrases of a query over the index, for the fast path of the search stage.

Owns: `phrase_rows` (every row that holds one phrase, how often, and where), the choice
between matching a phrase row by row and over token bitmaps (`bitmaps_pay`), and the
walk that finds the best rows of a phrase without counting its instances in every row
(`best_rows_by_bound`, used by `engine.search.fast_path` for a query of one phrase).
Must not touch: the index's mutable state (it reads one `IndexView`), scores (the
caller hands in its ranks, made by `engine.score.bm25`), scope rules, the order of hits.

Row by row, a phrase costs a few microseconds of interpreted code for each row that
holds all its tokens: tens of thousands of rows for two common words (`of the`). Over the
view's token bitmaps (`engine.index.token_bitmaps`) it is one AND of shifted integers
for the whole index, then either every instance listed (O(index / 8) in C plus
O(instances)) or, for a query of one phrase, only the rows that can reach the first
ranks counted: a row holds a phrase at most as often as it holds each of its tokens, so
the rows of the rarest token, grouped by `(f, D)` (`engine.index.impact_order`), are
walked from their best possible rank until no unread row can reach the `count`-th.

The clear version is `engine.index.matching.phrase_occurrences`; the tests compare both
matchers with `engine.query.phrase_match.phrase_positions` on every row and the walk with
the clear kernel (`tests/search/test_phrase_bitmaps.py`).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from engine.index.impact_order import ImpactOrder
from engine.index.postings import PostingColumns
from engine.index.token_bitmaps import instances_by_row, phrase_bits
from engine.index.view import IndexView
from engine.query.ast import Phrase

#: `bitmaps_pay`: bitmaps are used when the rarest token of a phrase is in at least one
#: row in this many.
BITMAP_SHARE = 32
#: `walk_pays`: a phrase with fewer instances than one in this many rows of its rarest
#: token has its instances listed (`phrase_rows`) rather than its rows walked.
RARE_PHRASE_SHARE = 8


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
    candidates = set(rarest.doc_ids).intersection(
        *(token.doc_ids for token in tokens if token is not rarest)
    )
    found: dict[int, list[int]] = {}
    ordered = sorted(candidates)
    rows = zip(ordered, *(token.positions_in_order(ordered) for token in tokens))
    if len(tokens) == 2:  # the common phrase (`per-session`): one set per row
        for doc_id, first, second in rows:
            following = set(second)
            starts = [start for start in first if start + 1 in following]
            if starts:
                found[doc_id] = starts
    else:
        for doc_id, first, *others in rows:
            later = [set(positions) for positions in others]
            starts = [
                start for start in first
                if all(start + offset in positions for offset, positions in enumerate(later, 1))
            ]
            if starts:
                found[doc_id] = starts
    return PhraseRows(phrase, {doc_id: len(starts) for doc_id, starts in found.items()},
                      found.__getitem__)


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
    (`best_rows_by_bound`) rather than list every instance: not when the phrase (its
    bitmap `bits`) has fewer instances than one in `RARE_PHRASE_SHARE` of those rows,
    which the walk would then read for few matches."""
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
    >>> from engine.index.postings import PostingColumns
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
    chosen: list[tuple[int, float]] = []
    best: list[float] = []  # the `count` smallest exact ranks so far, negated (a max-heap)
    threshold = ceiling  # no row ranked worse is wanted
    for bound, length, group in impacts.walk(bound_of):
        if threshold is not None and bound > threshold:
            break
        doc_ids = group if keep is None else tuple(filter(keep, group))
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
        return chosen
    return [(doc_id, rank) for doc_id, rank in chosen if rank <= threshold]
