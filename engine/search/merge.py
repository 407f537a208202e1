"""The Gateway's merge of per-partition results (behaviour.md §6 step 5).

Owns: `merge_partition_results`, the one rule by which a search over several agents'
partitions becomes one answer, for every backend, and `merge_partition_answers`, the
same rule over answers whose hits get their snippets only when the merge keeps them
(`PartitionAnswer`: cutting 25 excerpts per partition to keep 25 in all costs a
five-partition search four fifths of its excerpts). Must not touch: how a partition is
searched (each partition's own kernel answer, with its own bm25 statistics, comes in
whole) or scoring: scores of different partitions are compared as they are, exactly as
the Gateway compares the scores of different agent databases.

The rule: hits of every partition sorted by score descending, timestamp descending,
then `messageId` in JavaScript `localeCompare` order (`engine.analysis.collation`);
de-duplicated on (sessionKey, sessionId, messageId), the first kept; cut to the limit.
`truncated` when any partition truncated or the merged list exceeds the limit;
`indexing` when any partition is indexing; `archivedTranscriptsExcluded` summed. The
sort is stable, so hits that tie on all three keep their partitions' order (partitions
in the order given, each in its kernel order).

`order="recent"` (a decision of ours): the Gateway does not forward `order` to the
stores, so upstream never merges a recent search; merging one by score would undo it.
So a recent merge sorts by timestamp descending only, and hits with equal timestamps
keep their partitions' order (partitions in the order given, each in its kernel's recent
order, newest row first); de-duplication, the cut and the flags are as above.

>>> from engine.model import SearchHit
>>> def hit(message_id, score, timestamp=0):
...     return SearchHit("agent:a:k", "w", message_id, "user", timestamp, "", score)
>>> first = SearchResult((hit("m2", 2.0), hit("m1", 1.0)), truncated=False)
>>> second = SearchResult((hit("M1", 1.0), hit("m2", 2.0)), indexing=True)
>>> merged = merge_partition_results([first, second], limit=2)
>>> [(h.message_id, h.score) for h in merged.hits], merged.truncated, merged.indexing
([('m2', 2.0), ('m1', 1.0)], True, True)
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

from engine.analysis.collation import locale_compare_key
from engine.light_values import FrozenValue
from engine.model import NO_HITS, SearchHit, SearchResult


class HitKey(NamedTuple):
    """What the merge reads of a hit (`SearchHit`'s fields of the same names): its
    identity, timestamp and score. A partition that finishes its hits late answers with
    these (`PartitionAnswer.keys`) instead of hits without snippets: a tuple, where a
    `SearchHit` would be made only to be dropped or made again whole."""

    session_key: str
    session_id: str
    message_id: str
    timestamp: float
    score: float


#: What the merge orders: whole hits, or the keys of hits made later.
MergeItem = SearchHit | HitKey


def merge_order_key(hit: MergeItem) -> tuple[float, float, bytes]:
    """Score descending, timestamp descending, messageId ascending (`localeCompare`)."""
    return (-hit.score, -hit.timestamp, locale_compare_key(hit.message_id))


def relevance_sorted(items: Sequence[tuple[MergeItem, int, int]]
                     ) -> list[tuple[MergeItem, int, int]]:
    """`items` (hit first) sorted by `merge_order_key`, stably, computing a messageId's
    collation key only where two hits tie on score and timestamp: the same order, but a
    merge without ties (nearly every one) neither loads ICU nor builds a key per hit.

    >>> from engine.model import SearchHit
    >>> hits = [SearchHit("k", "w", m, "user", t, "", s)
    ...         for m, t, s in [("m2", 5, 1.0), ("M1", 5, 1.0), ("m1", 5, 1.0), ("z", 9, 1.0)]]
    >>> [item[0].message_id for item in relevance_sorted([(hit, 0, 0) for hit in hits])]
    ['z', 'm1', 'M1', 'm2']
    """
    ordered = sorted(items, key=lambda item: (-item[0].score, -item[0].timestamp))
    start = 0
    while start < len(ordered):
        first = ordered[start][0]
        end = start + 1
        while (end < len(ordered) and ordered[end][0].score == first.score
               and ordered[end][0].timestamp == first.timestamp):
            end += 1
        if end - start > 1:
            ordered[start:end] = sorted(ordered[start:end],
                                        key=lambda item: locale_compare_key(item[0].message_id))
        start = end
    return ordered


def recent_order_key(hit: MergeItem) -> float:
    """Timestamp descending (the merge of a `recent` search; ties keep their order)."""
    return -hit.timestamp


class PartitionAnswer(FrozenValue):
    """A partition's answer whose hits may still lack their snippets.

    The merge reads a hit's score, timestamp and identity only, so a partition may
    answer with hits whose `snippet` is not cut yet and `finish`, which returns the
    whole hits at the given positions of `result.hits` (the same hits with their
    snippets): the merge then asks only for the hits it keeps. None: the hits are whole.

    `keys` (with `finish`): the hits' `HitKey`s in their order, standing for
    `result.hits`, which is then empty (`result` keeps the flags and counts); `finish`
    makes the hits at positions of `keys`. A frozen slotted value
    (`engine.light_values.FrozenValue`), lighter to make than a frozen dataclass.
    """

    __slots__ = ("finish", "keys", "result")
    _compared = ("result", "finish", "keys")
    result: SearchResult
    finish: Callable[[Sequence[int]], Sequence[SearchHit]] | None
    keys: Sequence[HitKey] | None

    def __init__(self, result: SearchResult,
                 finish: Callable[[Sequence[int]], Sequence[SearchHit]] | None = None,
                 keys: Sequence[HitKey] | None = None) -> None:
        if keys is not None and finish is None:
            raise ValueError("an answer of hit keys needs the `finish` that makes its hits")
        object.__setattr__(self, "result", result)
        object.__setattr__(self, "finish", finish)
        object.__setattr__(self, "keys", keys)

    @property
    def candidates(self) -> Sequence[MergeItem]:
        """What the merge orders of this answer: its keys, else its hits."""
        return self.result.hits if self.keys is None else self.keys


#: The answer of a partition with nothing to say (shared: a `PartitionAnswer` is frozen).
NO_ANSWER = PartitionAnswer(NO_HITS)


def merge_partition_results(
    results: Sequence[SearchResult], limit: int, *, order: str = "relevance"
) -> SearchResult:
    """One answer from the partitions' answers, as the Gateway merges agent stores.

    Even one partition's answer is re-sorted and cut, as the Gateway does with one store's
    (a request scoped to one agent, by contrast, is that partition's answer as it is and
    does not come here). `order` is the request's (`recent`: see the module docstring).
    """
    unique = merged_order([result.hits for result in results], order)
    return merged_result(results, tuple(hit for hit, _number, _position in unique[:limit]),
                         len(unique), limit)


def merge_partition_answers(
    answers: Sequence[PartitionAnswer], limit: int, *, order: str = "relevance"
) -> SearchResult:
    """`merge_partition_results` over answers that may finish their hits late: the same
    hits in the same order, each finished by its partition only if the merge keeps it.

    >>> from engine.model import SearchHit
    >>> bare = SearchHit("global", "w", "m1", "user", 0, "", 2.0)
    >>> asked = []
    >>> def finish(positions):
    ...     asked.extend(positions)
    ...     return [SearchHit("global", "w", "m1", "user", 0, "[whole]", 2.0)]
    >>> later = PartitionAnswer(SearchResult((bare, bare)), finish)
    >>> [hit.snippet for hit in merge_partition_answers([later], limit=1).hits], asked
    (['[whole]'], [0])
    """
    results = [answer.result for answer in answers]
    candidates = [answer.candidates for answer in answers]
    if not any(candidates):  # nothing to order or finish
        return merged_result(results, (), 0, limit)
    unique = merged_order(candidates, order)
    return merged_result(results, finished_hits(answers, unique[:limit]), len(unique), limit)


def rank_bound_of(hit_lists: Iterable[Sequence[MergeItem]], limit: int) -> float | None:
    """A rank no hit of a relevance merge of these lists and any others can be worse
    than, for the partitions still to answer (`AnswersLate.search_answer`): minus the
    `limit`-th best score among the distinct hits (per (sessionKey, sessionId,
    messageId), its best score), or None when there are fewer of them or that score is
    not positive.

    Why it is safe: those `limit` distinct hits take part in the merge, so a hit scored
    below all of them is never among its first `limit`; a row ranked worse than the bound
    (`rank > bound`, a finite rank being minus the score) is such a hit. Below a positive
    score also lie the rows without a finite rank (score 0).

    >>> from engine.model import SearchHit
    >>> hits = [SearchHit("k", "w", m, "user", 0.0, "", s) for m, s in [("a", 3.0), ("b", 1.5),
    ...                                                                   ("a", 2.0)]]
    >>> rank_bound_of([hits], 2), rank_bound_of([hits], 3), rank_bound_of([hits[:1]], 1)
    (-1.5, None, -3.0)
    """
    bounds = RankBounds()
    for hits in hit_lists:
        bounds.add(hits)
    return bounds.bound(limit)


class RankBounds:
    """`rank_bound_of` over the hit lists added so far, each hit read once as its list is
    added (a merged search asks its partitions one after another, and each one asked
    after the first `limit` hits gets the bound of all the answers before it).

    >>> from engine.model import SearchHit
    >>> hits = [SearchHit("k", "w", m, "user", 0.0, "", s) for m, s in [("a", 3.0), ("b", 1.5),
    ...                                                                   ("a", 2.0)]]
    >>> bounds = RankBounds()
    >>> bounds.add(hits[:1]); bounds.bound(2)
    >>> bounds.add(hits[1:]); bounds.bound(2), bounds.bound(3), bounds.distinct
    (-1.5, None, 2)
    """

    __slots__ = ("_best",)

    def __init__(self) -> None:
        self._best: dict[tuple[str, str, str], float] = {}

    @property
    def distinct(self) -> int:
        """How many distinct hits the lists added hold."""
        return len(self._best)

    def add(self, hits: Iterable[MergeItem]) -> None:
        """Take one more partition's hits into account."""
        best = self._best
        for hit in hits:
            identity = (hit.session_key, hit.session_id, hit.message_id)
            if hit.score > best.get(identity, float("-inf")):
                best[identity] = hit.score

    def bound(self, limit: int) -> float | None:
        """`rank_bound_of(every list added, limit)`."""
        scores = self._best.values()
        if len(scores) < limit or limit <= 0:
            return None
        # The `limit`-th largest (no score kept is NaN: `add` keeps only larger ones); a
        # merge's few dozen sorted in C rather than walked by the heap in Python.
        score = (sorted(scores, reverse=True)[limit - 1] if len(scores) <= 4 * limit
                 else heapq.nlargest(limit, scores)[-1])
        return -score if score > 0.0 else None


def merged_order(hit_lists: Sequence[Sequence[MergeItem]], order: str
                 ) -> list[tuple[MergeItem, int, int]]:
    """Every partition's hits (each with its partition's number and its position there)
    in the merge's order, de-duplicated on (sessionKey, sessionId, messageId), the first
    kept."""
    items = [(hit, number, position) for number, hits in enumerate(hit_lists)
             for position, hit in enumerate(hits)]
    if not items:
        return items
    if order == "recent":
        ordered = sorted(items, key=lambda item: recent_order_key(item[0]))
    else:
        ordered = relevance_sorted(items)
    seen: set[tuple[str, str, str]] = set()
    unique: list[tuple[MergeItem, int, int]] = []
    for item in ordered:
        hit = item[0]
        identity = (hit.session_key, hit.session_id, hit.message_id)
        if identity not in seen:
            seen.add(identity)
            unique.append(item)
    return unique


def merged_result(results: Sequence[SearchResult], hits: tuple[SearchHit, ...],
                  unique: int, limit: int) -> SearchResult:
    """The merged answer: `hits` (already cut), `truncated` when any partition truncated
    or the `unique` hits exceed the limit, `indexing` when any partition is indexing,
    the archived counts summed."""
    truncated = unique > limit
    indexing = False
    archived = 0
    for result in results:
        truncated = truncated or result.truncated
        indexing = indexing or result.indexing
        archived += result.archived_transcripts_excluded
    if not (hits or truncated or indexing or archived):
        return NO_HITS  # the shared empty answer (a `SearchResult` is frozen)
    return SearchResult(hits=hits, truncated=truncated, indexing=indexing,
                        archived_transcripts_excluded=archived)


def finished_hits(answers: Sequence[PartitionAnswer],
                  kept: Sequence[tuple[MergeItem, int, int]]) -> tuple[SearchHit, ...]:
    """The kept hits (each with its answer's number and its position there), whole: one
    `finish` call per answer that has one, for the positions kept of it."""
    wanted: dict[int, list[int]] = {}
    for _hit, number, position in kept:
        if answers[number].finish is not None:
            wanted.setdefault(number, []).append(position)
    whole: dict[tuple[int, int], SearchHit] = {}
    for number, positions in wanted.items():
        finish = answers[number].finish
        assert finish is not None
        whole.update(zip(((number, position) for position in positions), finish(positions),
                         strict=True))
    return tuple(whole[number, position] if number in wanted else hit  # type: ignore[misc]
                 for hit, number, position in kept)
