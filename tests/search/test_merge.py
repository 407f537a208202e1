"""The Gateway merge of partition results (behaviour.md §6 step 5)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from engine.model import SearchHit, SearchResult
from engine.search.merge import (
    RankBounds,
    merge_order_key,
    merge_partition_results,
    rank_bound_of,
    relevance_sorted,
)


def hit(key: str, message_id: str, score: float, timestamp: float = 0.0,
        session_id: str = "w") -> SearchHit:
    return SearchHit(key, session_id, message_id, "user", timestamp, "", score)


def test_scores_of_different_partitions_are_compared_as_they_are() -> None:
    main = SearchResult((hit("agent:main:a", "m1", 3.0), hit("agent:main:a", "m2", 1.0)))
    work = SearchResult((hit("agent:work:b", "w1", 2.0),))
    merged = merge_partition_results([main, work], limit=10)
    assert [h.message_id for h in merged.hits] == ["m1", "w1", "m2"]
    assert merged.truncated is False


def test_ties_break_on_newer_timestamp_then_locale_compare_of_the_message_id() -> None:
    ids = ["M1", "a-b", "m1", "a_b", "m10"]
    tied = SearchResult(tuple(hit("agent:a:k", message_id, 1.0, 5) for message_id in ids)
                        + (hit("agent:a:k", "0-old", 1.0, 4),))
    merged = merge_partition_results([tied, SearchResult(())], limit=10)
    # localeCompare (ICU root collation), not code points: code points would give
    # ["M1", "a-b", "a_b", "m1", "m10"]; the older hit comes last whatever its id
    assert [h.message_id for h in merged.hits] == ["a_b", "a-b", "m1", "M1", "m10", "0-old"]


def test_duplicates_are_dropped_and_the_cut_sets_truncated() -> None:
    first = SearchResult((hit("agent:a:k", "m1", 2.0), hit("agent:a:k", "m2", 1.0)))
    again = SearchResult((hit("agent:a:k", "m1", 2.0),), archived_transcripts_excluded=2)
    merged = merge_partition_results([first, again], limit=2)
    assert [h.message_id for h in merged.hits] == ["m1", "m2"]
    assert merged.truncated is False  # two unique hits fit the limit
    assert merged.archived_transcripts_excluded == 2
    cut = merge_partition_results([first, again], limit=1)
    assert [h.message_id for h in cut.hits] == ["m1"] and cut.truncated is True


def test_any_partition_truncated_or_indexing_carries_over() -> None:
    quiet = SearchResult((hit("agent:a:k", "m1", 1.0),))
    busy = SearchResult((), truncated=True, indexing=True)
    merged = merge_partition_results([quiet, busy], limit=10)
    assert (merged.truncated, merged.indexing) == (True, True)


def test_a_recent_merge_orders_by_timestamp_and_keeps_partition_order_on_ties() -> None:
    # each partition's answer in its kernel's recent order (newest first, then newest row)
    main = SearchResult((hit("agent:main:a", "m2", 9.0, 30), hit("agent:main:a", "m1", 1.0, 10)))
    work = SearchResult((hit("agent:work:b", "w2", 5.0, 30), hit("agent:work:b", "w1", 7.0, 20)))
    merged = merge_partition_results([main, work], limit=3, order="recent")
    # by score (the relevance merge) it would be m2, w1, w2
    assert [h.message_id for h in merged.hits] == ["m2", "w2", "w1"]
    assert merged.truncated is True
    relevance = merge_partition_results([main, work], limit=3)
    assert [h.message_id for h in relevance.hits] == ["m2", "w1", "w2"]


_IDS = st.sampled_from(["m1", "M1", "m10", "m2", "a-b", "a_b", "é", "e", "Z", "z", "0"])


@given(st.lists(st.tuples(_IDS, st.sampled_from([0.0, -0.0, 1.5, 2.0]),
                          st.sampled_from([0.0, 3.0, 7.0])), max_size=30))
def test_the_tie_aware_sort_orders_as_the_whole_key_does(rows: list[tuple[str, float, float]]
                                                        ) -> None:
    """`relevance_sorted` builds collation keys only for ties; the clear version sorts
    by `merge_order_key` (score, timestamp and collation key) for every hit."""
    items = [(hit("agent:a:k", message_id, score, timestamp), 0, position)
             for position, (message_id, score, timestamp) in enumerate(rows)]
    expected = sorted(items, key=lambda item: merge_order_key(item[0]))
    assert relevance_sorted(items) == expected


@given(st.lists(st.lists(st.tuples(st.sampled_from(["m1", "m2", "m3", "m4", "m5"]),
                                   st.sampled_from([0.0, 0.5, 1.5, 2.0, 3.0])), max_size=6),
                max_size=5),
       st.integers(0, 6))
def test_rank_bounds_kept_as_lists_come_equal_the_bound_of_them_all(
        lists: list[list[tuple[str, float]]], limit: int) -> None:
    """`RankBounds` (what a merged search keeps while it asks its partitions) gives after
    each list the clear bound: minus the `limit`-th best score of the distinct hits (each
    hit's best score), None when fewer hits or a score that is not positive."""
    bounds = RankBounds()
    seen: list[list[SearchHit]] = []
    for rows in lists:
        hits = [hit("agent:a:k", message_id, score, 0.0) for message_id, score in rows]
        bounds.add(hits)
        seen.append(hits)
        best: dict[str, float] = {}
        for listed in seen:
            for item in listed:
                best[item.message_id] = max(best.get(item.message_id, item.score), item.score)
        scores = sorted(best.values(), reverse=True)
        expected = (None if limit <= 0 or len(scores) < limit or scores[limit - 1] <= 0.0
                    else -scores[limit - 1])
        assert bounds.bound(limit) == expected
        assert rank_bound_of(seen, limit) == expected
