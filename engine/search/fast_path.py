"""The fast path of the search stage: the first rows of the clear path, from columns.

Owns: `top_rows`, which returns exactly `order_rows(rank_rows(...), order, count)` of
`engine.search.clear_path` (the clear version, and its test oracle in
`tests/search/test_fast_path.py`) while touching per matching row only the columns of an
`IndexView` (`engine.index.row_columns`), never a `DocumentRecord`; the scope mask over
those columns; and the LIKE shortcuts of the CJK retry. Must not touch: the index's
mutable state (it reads one `IndexView`), the formulas (`engine.score.bm25` itself scores
every row, so the ranks are the same bits), the order keys (`engine.search.order`).

How it is faster:

* a phrase is `{doc_id: instances}` plus a way to get its instance starts
  (`engine.search.phrases`); a one-token phrase reads them straight from the view's
  cached posting columns, a longer one is matched over token bitmaps when its tokens are
  common;
* a query of one phrase of common tokens in relevance order counts the rows that hold
  it (bm25's `n`) on its bitmap, then reads only the rows that can reach the first ranks
  (`_one_phrase_rows`, `engine.search.phrases.best_phrase_rows` and `best_listed_rows`);
* a query of one phrase whose tokens are too rare for bitmaps ranks, of the rows holding
  it, only those that can reach the first ranks (`_listed_phrase_rows`, with
  `engine.search.phrases.best_listed_rows`), cut early by a merged search's rank bound;
* the rows tied at the last rank that the order cannot reach are left out before any is
  read from the index (`without_surplus_ties`, when every timestamp is a plain number);
* the scope and role filter is one mask lookup per row (`scope_mask`), the mask kept with
  the scope while it is kept (`kept_scope_mask`);
* bm25 depends on a row only through `(D, f_1, ..., f_k)`, so each distinct tuple is
  scored once with `score.bm25` itself (same function, same arguments: same bits);
* relevance: any of the first `count` rows has a rank no larger than the `count`-th
  smallest rank, so only rows up to that rank become `RankedRow`s and are ordered with
  the full `relevance_key`;
* a one-token query in relevance order ranks groups of rows, not rows: its rows grouped
  by `(f, D)` (`engine.index.impact_order`, kept by the view beside the term's columns)
  are walked from the best rank, and the walk stops after the group of the `count`-th
  kept row and its ties (`best_rows_by_impact`), so a word in 70 % of the rows costs a
  few dozen bm25 calls instead of one dictionary lookup per row;
* recent: the first `count` rows by `(timestamp, doc_id)` descending, then ranked;
* the CJK retry needs no gram index: only rows whose text holds a non-ASCII character can
  match a CJK needle, and a needle without ASCII letters is matched against their visible
  texts with `in`, in C (`literal_candidates`).

Against the clear path (bench `--only query`), a common word, recent order and an agent
scope are each more than an order of magnitude faster, and faster than SQLite FTS5 in
the same conditions.
"""

from __future__ import annotations

import heapq
import math
import operator
from collections.abc import Callable, Iterable, Mapping
from itertools import compress, islice, repeat
from typing import TYPE_CHECKING

from engine.index.impact_order import ImpactOrder
from engine.index.postings import PostingColumns
from engine.index.row_columns import RowColumns
from engine.index.view import IndexView
from engine.query.ast import Phrase, QueryPlan
from engine.query.cjk import substring_matches
from engine.score.bm25 import bm25, inverse_document_frequency, phrase_bm25
from engine.search.order import RankedRow, order_rows, sqlite_value_key
from engine.search.scope import Scope

if TYPE_CHECKING:  # imported when a phrase is matched (see `top_rows`)
    from engine.search.phrases import PhraseRows

#: A `RankedRow` made from the tuple of its four fields in C (the `NamedTuple`'s
#: generated `__new__` is Python).
_new_row = tuple.__new__


class _ScoreMemo(dict):
    """bm25 of a row from its key `(D, f_1, ..., f_k)`, computed once per distinct key."""

    __slots__ = ("average", "idfs")

    def __init__(self, idfs: list[float], average: float) -> None:
        super().__init__()
        self.idfs = idfs
        self.average = average

    def __missing__(self, key: tuple[int, ...]) -> float:
        value = bm25(zip(self.idfs, key[1:]), key[0], self.average)
        self[key] = value
        return value


class _PhraseScoreMemo(dict):
    """`_ScoreMemo` of a query of one phrase: bm25 of a row from its key `(D, f)`, by
    `score.bm25.phrase_bm25` (the same bits as `bm25` of the one pair)."""

    __slots__ = ("average", "idf")

    def __init__(self, idf: float, average: float) -> None:
        super().__init__()
        self.idf = idf
        self.average = average

    def __missing__(self, key: tuple[int, int]) -> float:
        value = self[key] = phrase_bm25(self.idf, key[1], key[0], self.average)
        return value


def scope_mask(
    rows: RowColumns, session_keys: Mapping[str, str], role: str | None
) -> bytearray | None:
    """`mask[group]` = 1 when the group's rows are in scope with `role`; None: all are.

    >>> from engine.index.inverted_index import InvertedIndex
    >>> from engine.model import IndexEntry
    >>> index = InvertedIndex()
    >>> _ = index.add_entry(IndexEntry("w1", "m1", "user", 5.0, "a b", 0), ["a", "b"])
    >>> _ = index.add_entry(IndexEntry("w2", "m2", "assistant", None, "a", 1), ["a"])
    >>> rows = index.view().rows
    >>> list(scope_mask(rows, {"w2": "global"}, None)), scope_mask(rows, {"w1": "", "w2": ""}, None)
    ([0, 1], None)
    >>> list(scope_mask(rows, {"w1": "", "w2": ""}, "user"))
    [1, 0]
    """
    mask = _group_mask(rows, session_keys, role, 0)
    return None if all(mask) else mask


def _group_mask(rows: RowColumns, session_keys: Mapping[str, str], role: str | None,
                first: int) -> bytearray:
    """The mask of the groups from number `first` on (all 1s and 0s, never None)."""
    in_scope = map(session_keys.__contains__, islice(rows.group_sessions, first, None))
    if role is None:
        return bytearray(in_scope)
    roles = map(role.__eq__, islice(rows.group_roles, first, None))
    return bytearray(map(operator.and_, in_scope, roles))


def kept_scope_mask(rows: RowColumns, scope: Scope, role: str | None) -> bytearray | None:
    """`scope_mask(rows, scope.session_keys, role)`, kept in `scope.derived`.

    Groups are only ever appended to `rows` (their numbers never change), so a kept mask
    stays right for the groups it covers and is extended by the new ones. It is kept
    for one `RowColumns` object at a time (another index's numbering differs).

    >>> from engine.index.inverted_index import InvertedIndex
    >>> from engine.model import IndexEntry
    >>> index = InvertedIndex()
    >>> _ = index.add_entry(IndexEntry("w1", "m1", "user", 5.0, "a", 0), ["a"])
    >>> scope = Scope({"w1": "global"}, 0)
    >>> kept_scope_mask(index.view().rows, scope, None) is None
    True
    >>> _ = index.add_entry(IndexEntry("w2", "m2", "user", 5.0, "a", 0), ["a"])
    >>> list(kept_scope_mask(index.view().rows, scope, None))
    [1, 0]
    """
    key = ("scope mask", role)
    kept = scope.derived.get(key)
    groups = len(rows.group_sessions)
    if kept is None or kept[0] is not rows:
        mask = _group_mask(rows, scope.session_keys, role, 0)
    elif kept[1] == groups:
        return kept[2]
    else:
        mask = kept[3] + _group_mask(rows, scope.session_keys, role, kept[1])
    scope.derived[key] = kept = (rows, groups, None if all(mask) else mask, mask)
    return kept[2]


def literal_candidates(view: IndexView, needle: str) -> tuple[list[int], bool] | None:
    """Live rows whose text may contain `needle` (LIKE), in doc-id order, and whether
    they are exactly the rows that do; None: any row may.

    A match contains every character of the visible needle (before any NUL), so a
    non-ASCII needle (every CJK needle) can only match a non-ASCII row. When the
    needle has no ASCII letter, LIKE's folding cannot matter, and the rows are cut to
    those whose visible text contains it (`in`, run by `map` over the kept texts; a
    needle with a character wider than any of a text's returns at once).
    `literal_check` still decides the other needles.

    >>> from engine.index.inverted_index import InvertedIndex
    >>> from engine.model import IndexEntry
    >>> index = InvertedIndex()
    >>> for number, text in enumerate(["会议", "开会", "Café", "a\\x00会议", "x"]):
    ...     _ = index.add_entry(IndexEntry("w", f"m{number}", "user", 0, text, number), [])
    >>> view = index.view()
    >>> literal_candidates(view, "会议"), literal_candidates(view, "é")
    (([0], True), ([2], True))
    >>> literal_candidates(view, "x") is None
    True
    >>> literal_candidates(view, "会C")
    ([0, 1, 2, 3], False)
    """
    visible = needle.split("\x00", 1)[0]
    if visible.isascii():
        return None
    doc_ids, texts = view.non_ascii_rows(), view.visible_texts()
    if any("A" <= character <= "Z" or "a" <= character <= "z" for character in visible):
        return doc_ids, False
    return list(compress(doc_ids, map(operator.contains, texts, repeat(visible)))), True



def _recent_first(view: IndexView, doc_ids: list[int], count: int) -> list[int]:
    """The first `count` of `doc_ids` by timestamp DESC (SQLite order), doc id DESC."""
    rows = view.rows
    if rows.odd_timestamps == 0:
        timestamps = rows.timestamps
        return [doc_id for _timestamp, doc_id in
                heapq.nlargest(count, zip(map(timestamps.__getitem__, doc_ids), doc_ids))]
    return heapq.nlargest(
        count, doc_ids,
        key=lambda doc_id: (sqlite_value_key(view.document(doc_id).timestamp), doc_id),
    )


def _newest_and_ties(rows: RowColumns, doc_ids: list[int], count: int) -> list[int]:
    """The rows whose timestamp is at least the `count`-th newest (all when some row's
    timestamp is not a plain number): a superset of the first `count` rows when every
    rank is equal, since the relevance order then starts with timestamp DESC."""
    if rows.odd_timestamps:
        return doc_ids
    timestamps = rows.timestamps
    threshold = heapq.nlargest(count, map(timestamps.__getitem__, doc_ids))[-1]
    return [doc_id for doc_id in doc_ids if timestamps[doc_id] >= threshold]


def literal_check(needle: str) -> Callable[[str], bool]:
    """A test equal to `substring_matches(text, needle)` (SQLite LIKE), for one needle.

    LIKE lowercases ASCII letters only, and letters only to letters; so when the visible
    needle (before any NUL) holds no ASCII letter, a folded match is a plain match, and
    the test is a `str.find` over the text before its first NUL, without copying or
    folding the text. Other needles use `substring_matches` itself.

    >>> [literal_check("会议")(text) for text in ("开会议", "会 议", "a\\x00会议", "会议\\x00")]
    [True, False, False, True]
    >>> literal_check("Cat")("a CAT")
    True
    """
    visible = needle.split("\x00", 1)[0]
    if any("A" <= character <= "Z" or "a" <= character <= "z" for character in visible):
        return lambda text: substring_matches(text, needle)

    def check(text: str) -> bool:
        end = text.find("\x00")
        return text.find(visible, 0, len(text) if end < 0 else end) >= 0

    return check


def top_rows(
    view: IndexView,
    plan: QueryPlan,
    scope: Scope,
    role: str | None,
    order: str,
    count: int,
    *,
    cjk_grams: bool = True,
    rank_bound: float | None = None,
    phrase_bitmaps: bool | None = None,
) -> tuple[list[RankedRow], bool]:
    """The first `count` rows of `order_rows(rank_rows(...), order, count)`, faster, and
    whether at least `count` rows match (all of them in scope).

    With `rank_bound` (relevance order only), when at least `count` rows match, the
    rows ranked worse than the bound are left out before any of them is read: a merged
    search passes the rank no row of its answer can be worse than
    (`engine.search.merge.rank_bound_of`), so those rows would be read only to be
    dropped. The rows returned are then the first ones of the order that are not ranked
    worse than `rank_bound`, and the flag says that the full answer had `count` rows.
    """
    if plan.matches_nothing or count <= 0:
        return [], False
    if order != "relevance":
        rank_bound = None
    if (order == "relevance" and not plan.substrings and len(plan.phrases) == 1
            and len(plan.phrases[0].terms) == 1):
        return _one_word_rows(view, plan.phrases[0], scope, role, count, rank_bound)
    # Imported here: a one-word query (the commonest kind, and a fresh `search`'s) never
    # needs the phrases' instances or bitmaps, and each module costs start-up time.
    from engine.search.phrases import bitmaps_pay, phrase_rows

    if order == "relevance" and not plan.substrings and len(plan.phrases) == 1:
        phrase = plan.phrases[0]
        tokens = [view.term_columns(term, prefix=phrase.prefix and position == len(phrase.terms) - 1)
                  for position, term in enumerate(phrase.terms)]
        if not (tokens and all(tokens)):  # a token the index does not hold: no row
            return [], False
        if phrase_bitmaps if phrase_bitmaps is not None else bitmaps_pay(view, tokens):
            return _one_phrase_rows(view, phrase, tokens, scope, role, count, rank_bound)
        return _listed_phrase_rows(view, phrase_rows(view, phrase, bitmaps=False), scope,
                                   role, count, rank_bound)
    rows = view.rows
    phrases = [phrase_rows(view, phrase, bitmaps=phrase_bitmaps) for phrase in plan.phrases]
    narrowed: list[int] | None = None  # rows that may hold every substring
    checks = [(term.text, literal_check(term.text)) for term in plan.substrings]
    if cjk_grams:
        for term in plan.substrings:
            found = literal_candidates(view, term.text)
            if found is None:
                continue
            if found[1]:  # exactly the rows holding this needle: no need to check it again
                checks = [(needle, check) for needle, check in checks if needle != term.text]
            if narrowed is None:
                narrowed = found[0]
            else:
                narrowed = sorted(set(narrowed).intersection(found[0]))
    candidates: Iterable[int]
    if phrases:
        counts = [item.counts for item in phrases]
        smallest = min(counts, key=len)
        if len(counts) == 1 and narrowed is None:
            candidates = smallest.keys()
        else:
            others = [other for other in counts if other is not smallest]
            if narrowed is not None:
                others.append(narrowed)
            candidates = set(smallest).intersection(*others)
    elif narrowed is not None:
        candidates = narrowed
    else:
        candidates = list(view.live_doc_ids())
    if not candidates:  # a word the index does not hold: no mask to build
        return [], False
    mask = kept_scope_mask(rows, scope, role)
    if mask is None:
        eligible = list(candidates)
    else:
        groups = rows.groups
        eligible = list(compress(candidates, map(mask.__getitem__, map(groups.__getitem__, candidates))))
    if checks:
        eligible = [
            doc_id for doc_id in eligible
            if all(check(view.text(doc_id)) for _needle, check in checks)
        ]
    memo = _ScoreMemo(
        [inverse_document_frequency(view.document_count, len(item.counts)) for item in phrases],
        view.average_length,
    )

    def score_keys(doc_ids: list[int]) -> Iterable[tuple[int, ...]]:
        return zip(map(rows.lengths.__getitem__, doc_ids),
                   *(map(item.counts.__getitem__, doc_ids) for item in phrases))

    if order == "recent":
        chosen = _recent_first(view, eligible, count)
    elif len(eligible) <= count:
        chosen = eligible
    elif not phrases:  # every rank is 0.0: the order starts with timestamp DESC
        chosen = _newest_and_ties(rows, eligible, count)
    else:
        ranks = list(map(memo.__getitem__, score_keys(eligible)))
        threshold = heapq.nsmallest(count, ranks)[-1]
        chosen = [doc_id for doc_id, rank in zip(eligible, ranks) if rank <= threshold]
    ranks = list(map(memo.__getitem__, score_keys(chosen))) if phrases else [0.0] * len(chosen)
    ranked_ids = list(zip(chosen, ranks))
    full = len(eligible) >= count
    if rank_bound is not None and full:
        ranked_ids = _not_worse(ranked_ids, rank_bound)
    by_substring = bool(plan.substrings)
    ranked = [
        RankedRow(
            view.document(doc_id),
            rank,
            tuple(
                (phrase_index, start, len(item.phrase.terms))
                for phrase_index, item in enumerate(phrases)
                for start in item.starts(doc_id)
            ),
            by_substring=by_substring,
        )
        for doc_id, rank in ranked_ids
    ]
    return order_rows(ranked, order, count), full


def _not_worse(ranked_ids: list[tuple[int, float]], bound: float) -> list[tuple[int, float]]:
    """The `(doc_id, rank)` pairs not ranked worse than `bound` (a rank that does not
    compare, NaN, is kept: only a row known to be worse is left out).

    >>> _not_worse([(4, -2.0), (7, -0.5), (9, -1.0)], -1.0)
    [(4, -2.0), (9, -1.0)]
    """
    return [(doc_id, rank) for doc_id, rank in ranked_ids if not rank > bound]


def without_surplus_ties(rows: RowColumns, chosen: list[tuple[int, float]], count: int
                         ) -> list[tuple[int, float]]:
    """`chosen` without the rows tied at its worst rank that the relevance order cannot
    put among its first `count`, when every timestamp is a plain number.

    `chosen` holds every row ranked at most the `count`-th rank (`best_rows_by_impact`,
    `best_listed_rows`, `best_phrase_rows`), so more than `count` rows only when ranks
    tie at its worst. The order after the rank is timestamp DESC: of the tied rows, only
    those at least as new as the newest `count - better` of them can be among the first
    `count` (as `_newest_and_ties`), so no other tied row is read from the index.

    >>> from engine.index.row_columns import RowColumns
    >>> from array import array
    >>> rows = RowColumns(timestamps=array("d", [5, 9, 7, 9, 1]))
    >>> without_surplus_ties(rows, [(0, -2.0), (1, -1.0), (2, -1.0), (3, -1.0), (4, -1.0)], 3)
    [(0, -2.0), (1, -1.0), (3, -1.0)]
    >>> without_surplus_ties(rows, [(0, -2.0), (1, -1.0), (2, -1.0)], 3)
    [(0, -2.0), (1, -1.0), (2, -1.0)]
    """
    if len(chosen) <= count or rows.odd_timestamps:
        return chosen
    ranks = [rank for _doc_id, rank in chosen]
    if any(map(math.isnan, ranks)):  # no rank order to trust
        return chosen
    worst = max(ranks)
    better = [pair for pair in chosen if pair[1] < worst]
    if len(better) >= count:  # not cut at the `count`-th rank: nothing to leave out
        return chosen
    tied = [pair for pair in chosen if not pair[1] < worst]
    timestamps = rows.timestamps
    newest = heapq.nlargest(count - len(better),
                            [timestamps[doc_id] for doc_id, _rank in tied])[-1]
    return better + [pair for pair in tied if timestamps[pair[0]] >= newest]


def _one_word_rows(view: IndexView, phrase: Phrase, scope: Scope, role: str | None,
                   count: int, rank_bound: float | None = None
                   ) -> tuple[list[RankedRow], bool]:
    """`top_rows` of a one-token query in relevance order: its best `(f, D)`
    groups (`best_rows_by_impact`), ranked and ordered like every other row."""
    term = phrase.terms[0]
    columns = view.term_columns(term, prefix=phrase.prefix)
    if not columns.doc_ids:
        return [], False
    mask = kept_scope_mask(view.rows, scope, role)
    keep: Callable[[int], bool] | None = None
    if mask is not None:
        groups = view.rows.groups
        keep = lambda doc_id: bool(mask[groups[doc_id]])
    memo = _PhraseScoreMemo(inverse_document_frequency(view.document_count, len(columns)),
                            view.average_length)
    chosen = best_rows_by_impact(view.term_impacts(term, prefix=phrase.prefix),
                                 lambda frequency, length: memo[(length, frequency)], keep, count)
    full = len(chosen) >= count  # the walk stops once `count` kept rows are out
    if rank_bound is not None and full:
        chosen = _not_worse(chosen, rank_bound)
    chosen = without_surplus_ties(view.rows, chosen, count)
    chosen.sort()  # doc-id order, as the other paths hand rows to `order_rows`
    document, positions_of, zeros, ones = view.document, columns.positions_of, repeat(0), repeat(1)
    ranked = [_new_row(RankedRow, (document(doc_id), rank,
                                   tuple(zip(zeros, positions_of(doc_id), ones)), False))
              for doc_id, rank in chosen]
    return order_rows(ranked, "relevance", count), full


def _one_phrase_rows(view: IndexView, phrase: Phrase, tokens: list[PostingColumns],
                     scope: Scope, role: str | None, count: int,
                     rank_bound: float | None = None) -> tuple[list[RankedRow], bool]:
    """`top_rows` of a query of one phrase of several tokens in relevance order, over
    bitmaps: bm25's `n` from the phrase's bitmap (`rows_holding`), then the rows of its
    rarest token walked by their best possible rank (`best_phrase_rows`: a row holds
    the phrase at most as often as it holds each of its tokens), each counted exactly
    from the bitmap, until no unread row can reach the `count`-th rank; when the walk
    does not pay (`walk_pays`), the rows holding the phrase listed from its bitmap and
    only the shortest of each count ranked first (`best_listed_rows`)."""
    from engine.index.token_bitmaps import RowReader, rows_holding
    from engine.search.phrases import (
        best_listed_rows,
        best_phrase_rows,
        phrase_bitmap,
        walk_pays,
    )

    line = view.token_line()
    bits = phrase_bitmap(view, phrase)
    if not bits:
        return [], False
    reader = RowReader.of(bits, line)
    walks = walk_pays(bits, tokens)
    holding = None if walks else reader.holding()  # then also bm25's `n`, at no cost
    matching = rows_holding(bits, line) if holding is None else len(holding[0])
    keep, memo, ceiling = _phrase_ranking(view, scope, role, matching, count, rank_bound)
    if holding is None:
        last = len(phrase.terms) - 1
        rarest = min(range(len(tokens)), key=lambda position: len(tokens[position]))
        impacts = view.term_impacts(phrase.terms[rarest],
                                    prefix=phrase.prefix and rarest == last)
        chosen = best_phrase_rows(impacts, lambda frequency, length: memo[(length, frequency)],
                                  reader, keep, count, ceiling)
    else:
        chosen = best_listed_rows(*holding, line.lengths,
                                  lambda instances, length: memo[(length, instances)],
                                  keep, count, ceiling)
    return _ordered_phrase_rows(view, chosen, ceiling, rank_bound, count, len(phrase.terms),
                                reader.positions)


def _listed_phrase_rows(view: IndexView, found: PhraseRows, scope: Scope, role: str | None,
                        count: int, rank_bound: float | None = None
                        ) -> tuple[list[RankedRow], bool]:
    """`top_rows` of a query of one phrase of several tokens in relevance order, matched
    row by row (`found`: its tokens are too rare for bitmaps to pay): only the rows that
    can reach the first ranks are ranked (`best_listed_rows`: the `count` shortest rows
    of each instance count find the `count`-th rank, the rows of each count no longer
    than the longest one ranked as well are the answer), instead of every matching row,
    and a merged search's bound cuts them as soon as every matching row is in scope."""
    from engine.search.phrases import best_listed_rows

    counts = found.counts
    if not counts:
        return [], False
    keep, memo, ceiling = _phrase_ranking(view, scope, role, len(counts), count, rank_bound)
    chosen = best_listed_rows(list(counts), list(counts.values()), view.rows.lengths,
                              lambda instances, length: memo[(length, instances)],
                              keep, count, ceiling)
    return _ordered_phrase_rows(view, chosen, ceiling, rank_bound, count,
                                len(found.phrase.terms), found.starts)


def _phrase_ranking(view: IndexView, scope: Scope, role: str | None, matching: int,
                    count: int, rank_bound: float | None
                    ) -> tuple[Callable[[int], bool] | None, _PhraseScoreMemo, float | None]:
    """What ranking the `matching` rows of a query of one phrase needs: the scope test
    (None: every row is in scope), the scores, and the ceiling of the walk: when every
    matching row is in scope, `matching` says whether `count` rows match, and a merged
    search's bound can cut the rows short from the first one read."""
    mask = kept_scope_mask(view.rows, scope, role)
    keep: Callable[[int], bool] | None = None
    if mask is not None:
        groups = view.rows.groups
        keep = lambda doc_id: bool(mask[groups[doc_id]])
    memo = _PhraseScoreMemo(inverse_document_frequency(view.document_count, matching),
                            view.average_length)
    return keep, memo, rank_bound if mask is None and matching >= count else None


def _ordered_phrase_rows(view: IndexView, chosen: list[tuple[int, float]],
                         ceiling: float | None, rank_bound: float | None, count: int,
                         width: int, starts: Callable[[int], Iterable[int]]
                         ) -> tuple[list[RankedRow], bool]:
    """The first `count` rows of `chosen` (the rows of a query of one phrase of `width`
    tokens that can be among them, found with `ceiling`), made `RankedRow`s with their
    instances (`starts`), and whether `count` rows match; with `rank_bound`, only those
    not ranked worse."""
    full = len(chosen) >= count if ceiling is None else True
    if rank_bound is not None and full:
        chosen = _not_worse(chosen, rank_bound)
    chosen = without_surplus_ties(view.rows, chosen, count)
    chosen.sort()  # doc-id order, as the other paths hand rows to `order_rows`
    document, zeros, widths = view.document, repeat(0), repeat(width)
    ranked = [_new_row(RankedRow, (document(doc_id), rank,
                                   tuple(zip(zeros, starts(doc_id), widths)), False))
              for doc_id, rank in chosen]
    return order_rows(ranked, "relevance", count), full


def best_rows_by_impact(
    impacts: ImpactOrder,
    rank_of: Callable[[int, int], float],
    keep: Callable[[int], bool] | None,
    count: int,
) -> list[tuple[int, float]]:
    """Every kept row whose rank is at most the `count`-th smallest rank of the kept
    rows (all of them when fewer are kept), as `(doc_id, rank)`, by group.

    `rank_of(f, D)` must not decrease as `D` grows for one `f` (bm25 does not: see
    `engine.index.impact_order`). Each frequency's lengths are walked from the shortest,
    and the walks are merged by rank with a heap (`ImpactOrder.walk`), so groups come
    out in non-decreasing rank; once `count` kept rows are out, the walk stops at the
    first group ranked worse than the last one needed, and every group tied with it is
    still taken, as the `threshold` of `top_rows` takes every row tied at it. The naive version, every
    row ranked and cut at that threshold, is its oracle in the tests.

    >>> from engine.index.impact_order import ImpactOrder
    >>> from engine.index.postings import PostingColumns
    >>> columns = PostingColumns([0, 1, 2, 3], [1, 1, 2, 1], [(0,), (0,), (0, 1), (0,)])
    >>> impacts = ImpactOrder.of(columns, [5, 2, 5, 9])
    >>> rank = lambda f, d: -f / d
    >>> best_rows_by_impact(impacts, rank, None, 2)
    [(1, -0.5), (2, -0.4)]
    >>> best_rows_by_impact(impacts, rank, lambda doc_id: doc_id != 1, 2)
    [(2, -0.4), (0, -0.2)]
    """
    chosen: list[tuple[int, float]] = []
    threshold: float | None = None
    for rank, _length, doc_ids in impacts.walk(rank_of):
        if threshold is not None and rank > threshold:
            break
        chosen.extend((doc_id, rank) for doc_id in (
            doc_ids if keep is None else filter(keep, doc_ids)))
        if threshold is None and len(chosen) >= count:
            threshold = rank
    return chosen
