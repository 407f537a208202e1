"""A query of one phrase matched row by row (its words too rare for token bitmaps) against
the clear kernel: `fast_path._listed_phrase_rows`, which ranks only the rows that can
reach the first ranks (`phrases.best_listed_rows`, cut early by a merged search's rank
bound), and `fast_path.without_surplus_ties`, which leaves out the rows tied at the last
rank that the order cannot reach.

`BITMAP_SHARE` 0 makes every phrase of several tokens take the row-by-row path (the
tests of `test_phrase_bitmaps.py` force the bitmaps instead); the clear kernel
(`EngineConfig(fast_kernel=False)`) is the oracle of rows, ranks, instances and hits,
with and without a rank bound, scopes, roles, limits and timestamps that tie.
"""

from __future__ import annotations

from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.config import EngineConfig
from engine.directory import MemoryDirectory
from engine.index.inverted_index import InvertedIndex
from engine.index.writer import flush_index
from engine.model import IndexEntry
from engine.query.checked_request import check_request
from engine.search import kernel, phrases
from engine.search.phrases import best_listed_rows
from tests.search.test_phrase_bitmaps import (
    ANALYZER,
    CLEAR_KERNEL,
    WINDOWS,
    assert_bounded_run,
    assert_same_run,
    requests,
    texts,
)

#: Plain numbers that tie often (the tie cut runs), or with NULLs too (it does not).
plain_timestamps = st.sampled_from([0, 1, 1, 2.5, 3])
any_timestamps = st.sampled_from([0, 1, None])

def indexed(documents: list[tuple[str, object]], deleted: set[int], flushed: bool) -> InvertedIndex:
    index = InvertedIndex()
    for number, (text, timestamp) in enumerate(documents):
        index.add_entry(IndexEntry(f"w{1 + number % 3}", f"m{number % 5}", "user" if number % 2
                                   else "assistant", timestamp, text, number),
                        ANALYZER.terms(text))
    if flushed:
        flush_index(MemoryDirectory(), index, "test-listed-phrase-rows", EngineConfig())
    for doc_id in sorted(deleted):
        if doc_id < len(documents):
            index.delete_document(doc_id)
    return index


documents = st.one_of(
    st.lists(st.tuples(texts, plain_timestamps), min_size=1, max_size=60),
    st.lists(st.tuples(texts, any_timestamps), min_size=1, max_size=60),
)


@settings(max_examples=200, deadline=None)
@given(documents, st.sets(st.integers(0, 59)), requests, st.booleans())
def test_a_phrase_matched_row_by_row_equals_the_clear_kernel(rows, deleted, request, flushed):
    index = indexed(rows, deleted, flushed)
    checked = check_request(request)
    clear = kernel.run_kernel(index.view(), WINDOWS, checked, ANALYZER, config=CLEAR_KERNEL)
    with mock.patch.object(phrases, "BITMAP_SHARE", 0):
        fast = kernel.run_kernel(index.view(), WINDOWS, checked, ANALYZER)
    assert_same_run(fast, clear)


@settings(max_examples=200, deadline=None)
@given(documents, st.sets(st.integers(0, 59)), requests, st.integers(0, 30),
       st.sampled_from([0.0, -1e-9, 1e-9]), st.booleans())
def test_a_bound_leaves_out_exactly_the_worse_rows_row_by_row(rows, deleted, request, pick,
                                                              nudge, bitmaps):
    """`rank_bound` (a merged search) on both phrase paths: when more than `limit` rows
    match, the rows ranked worse than the bound are left out, the others are the clear
    kernel's."""
    index = indexed(rows, deleted, flushed=False)
    checked = check_request(request)
    clear = kernel.run_kernel(index.view(), WINDOWS, checked, ANALYZER, config=CLEAR_KERNEL)
    if not clear.rows:
        return
    bound = clear.rows[min(pick, len(clear.rows) - 1)].rank + nudge
    with mock.patch.object(phrases, "BITMAP_SHARE", 10**9 if bitmaps else 0):
        fast = kernel.run_kernel(index.view(), WINDOWS, checked, ANALYZER, rank_bound=bound)
    assert_bounded_run(fast, clear, bound)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 4), st.integers(1, 12)), max_size=40),
       st.integers(1, 8), st.one_of(st.none(), st.floats(-3.0, 0.0)), st.booleans())
def test_best_listed_rows_equals_ranking_every_row(rows, count, ceiling, scoped):
    """The ranks of `best_listed_rows` (a length cut per count, the ceiling's cut first)
    are those of every row ranked and cut at the `count`-th rank and at the ceiling."""
    doc_ids = list(range(len(rows)))
    counts = [instances for instances, _length in rows]
    lengths = [length for _instances, length in rows]
    keep = (lambda doc_id: doc_id % 3 != 1) if scoped else None

    def rank_of(instances: int, length: int) -> float:
        return -instances / (instances + 0.5 + 0.25 * length)

    kept = [doc_id for doc_id in doc_ids if keep is None or keep(doc_id)]
    ranked = sorted((rank_of(counts[doc_id], lengths[doc_id]), doc_id) for doc_id in kept)
    if len(ranked) >= count:
        threshold = ranked[count - 1][0]
        if ceiling is not None:
            threshold = min(threshold, ceiling)
    else:
        threshold = ceiling
    expected = [(doc_id, rank) for rank, doc_id in ranked if threshold is None or rank <= threshold]
    found = best_listed_rows(doc_ids, counts, lengths, rank_of, keep, count, ceiling)
    assert sorted(found) == sorted(expected)
