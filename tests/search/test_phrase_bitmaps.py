"""Phrases over token bitmaps (`engine.index.token_bitmaps`) against the clear matcher.

The fast phrase path has two parts, each with the clear version as its oracle:

* matching: `phrase_rows` over bitmaps and row by row must both equal
  `engine.query.phrase_match.phrase_positions` run on every live row's own terms
  (documents made of few words, repeated, joined by punctuation, so that phrases
  overlap, repeat a word, and sit at the ends of rows next to each other);
* ranking: a query of one phrase in relevance order walks the rows of its rarest token
  by their best possible rank (`_one_phrase_rows`); its rows, ranks and instances must
  be those of the clear kernel (`EngineConfig(fast_kernel=False)`), with the walk forced
  on and off, with scopes, roles, limits, and bitmaps the view cannot keep.
"""

from __future__ import annotations

from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.analysis.profiles import SEARCH_PROFILE
from engine.config import EngineConfig
from engine.directory import MemoryDirectory
from engine.index import view as view_module
from engine.index.impact_order import ImpactOrder
from engine.index.inverted_index import InvertedIndex
from engine.index.postings import PostingColumns
from engine.index.token_bitmaps import (
    RowReader,
    TokenLine,
    instances_by_row,
    rows_holding,
)
from engine.index.writer import flush_index
from engine.model import IndexEntry, SearchRequest, SessionWindow
from engine.query.ast import Phrase
from engine.query.checked_request import check_request
from engine.query.phrase_match import phrase_positions
from engine.score.bm25 import bm25
from engine.search import kernel, phrases
from engine.search.phrases import (
    best_listed_rows,
    best_phrase_rows,
    best_rows_by_bound,
    phrase_bitmap,
    phrase_rows,
)

ANALYZER = SEARCH_PROFILE.analyzer()
PROFILE = "test-phrase-bitmaps"
CLEAR_KERNEL = EngineConfig(fast_kernel=False)
WINDOWS = [
    SessionWindow("w1", "agent:main:main"),
    SessionWindow("w2", "agent:main:other"),
    SessionWindow("w3", "global"),
]
#: Few words, so that phrases repeat, overlap and meet at the ends of rows; inner
#: punctuation makes one word several tokens (`that's` is `that` `s`).
WORDS = ["a", "a", "b", "of", "the", "the", "that's", "a-b", "b.a", "per-session", "s",
         "a's", "--", "ab", "Of", "THE", "b,a"]
texts = st.lists(st.sampled_from(WORDS), max_size=14).map(" ".join)
TERMS = ["a", "b", "of", "the", "that", "s", "per", "session", "ab", "x"]
phrase_terms = st.one_of(
    st.lists(st.sampled_from(TERMS), min_size=2, max_size=4),
    st.sampled_from([["of", "the"], ["a", "a"], ["a", "b", "a"], ["that", "s"],
                     ["the", "the"], ["a", "a", "a"], ["b", "a"]]),
)


def indexed(documents: list[str], deleted: set[int], flushed: bool) -> InvertedIndex:
    index = InvertedIndex()
    for number, text in enumerate(documents):
        index.add_entry(IndexEntry(f"w{1 + number % 3}", f"m{number}", "user" if number % 2
                                   else "assistant", number % 4, text, number),
                        ANALYZER.terms(text))
    if flushed:  # the columns are then read from a postings file (flat position arrays)
        flush_index(MemoryDirectory(), index, PROFILE, EngineConfig())
    for doc_id in sorted(deleted):
        if doc_id < len(documents):
            index.delete_document(doc_id)
    return index


@settings(max_examples=150, deadline=None)
@given(st.lists(texts, max_size=16), st.sets(st.integers(0, 15)), phrase_terms, st.booleans(),
       st.booleans())
def test_bitmap_and_row_matching_equal_the_clear_matcher(documents, deleted, terms, prefix,
                                                         flushed):
    index = indexed(documents, deleted, flushed)
    phrase = Phrase(tuple(terms), prefix)
    expected = {}
    for doc_id, text in enumerate(documents):
        if doc_id in deleted:
            continue
        starts = phrase_positions(ANALYZER.terms(text), phrase)
        if starts:
            expected[doc_id] = starts
    view = index.view()
    for bitmaps in (True, False):
        found = phrase_rows(view, phrase, bitmaps=bitmaps)
        assert dict(found.counts) == {doc_id: len(starts) for doc_id, starts in expected.items()}
        assert {doc_id: list(found.starts(doc_id)) for doc_id in found.counts} == expected
    bits = phrase_bitmap(view, phrase)
    assert rows_holding(bits, view.token_line()) == len(expected)
    assert bits.bit_count() == sum(map(len, expected.values()))


requests = st.builds(
    SearchRequest,
    query=st.sampled_from(["of-the", "a-a", "the-the", "that's", "a-b-a", "b.a", "a-a-a",
                           "per-session", "s-a", "x-a"]),
    limit=st.sampled_from([1, 2, 3, 5, 30]),
    session_keys=st.sampled_from([(), (), ("agent:main:main",), ("global", "agent:main:other")]),
    role=st.sampled_from([None, None, "user"]),
    match=st.sampled_from(["exact", "exact", "prefix"]),
)


#: `SEED_ROWS`: 0 and 1 count every row the walk would read in one loop at once (after the
#: first group), 10**9 walks to the end.
seed_rows = st.sampled_from([0, 1, 4, 10**9])


@settings(max_examples=150, deadline=None)
@given(st.lists(texts, min_size=1, max_size=60), st.sets(st.integers(0, 59)), requests,
       st.booleans(), st.sampled_from([0, 8, 10**9]), st.booleans(), seed_rows)
def test_one_phrase_walk_equals_the_clear_kernel(documents, deleted, request, flushed,
                                                rare_share, tight_cache, seed):
    """`rare_share` 0 walks every phrase, 10**9 lists every phrase's instances instead;
    `tight_cache` leaves the view room for no bitmap (each is made again when asked);
    `seed` is how many rows the walk reads before the rest are counted in one loop."""
    index = indexed(documents, deleted, flushed)
    checked = check_request(request)
    clear = kernel.run_kernel(index.view(), WINDOWS, checked, ANALYZER, config=CLEAR_KERNEL)
    slots = 1 if tight_cache else view_module.CACHED_BITMAP_SLOTS
    with mock.patch.object(phrases, "RARE_PHRASE_SHARE", rare_share), \
            mock.patch.object(phrases, "BITMAP_SHARE", 10**9), \
            mock.patch.object(phrases, "SEED_ROWS", seed), \
            mock.patch.object(view_module, "CACHED_BITMAP_SLOTS", slots):
        for _ in range(2):  # the second run reads what the view kept
            fast = kernel.run_kernel(index.view(), WINDOWS, checked, ANALYZER)
            assert_same_run(fast, clear)
    if tight_cache:
        assert not index.view()._bitmaps


@settings(max_examples=150, deadline=None)
@given(st.lists(texts, min_size=1, max_size=60), st.sets(st.integers(0, 59)), requests,
       st.sampled_from([0, 8, 10**9]), st.integers(0, 30), st.sampled_from([0.0, -1e-9, 1e-9]),
       seed_rows)
def test_a_merged_search_bound_leaves_out_exactly_the_worse_rows(documents, deleted, request,
                                                                 rare_share, pick, nudge, seed):
    """`rank_bound` (a merged search): when more than `limit` rows match, the rows ranked
    worse than the bound are left out, and the others are those of the clear kernel."""
    index = indexed(documents, deleted, flushed=False)
    checked = check_request(request)
    clear = kernel.run_kernel(index.view(), WINDOWS, checked, ANALYZER, config=CLEAR_KERNEL)
    if not clear.rows:
        return
    bound = clear.rows[min(pick, len(clear.rows) - 1)].rank + nudge
    with mock.patch.object(phrases, "RARE_PHRASE_SHARE", rare_share), \
            mock.patch.object(phrases, "BITMAP_SHARE", 10**9), \
            mock.patch.object(phrases, "SEED_ROWS", seed):
        fast = kernel.run_kernel(index.view(), WINDOWS, checked, ANALYZER, rank_bound=bound)
    assert_bounded_run(fast, clear, bound)


def rows_of(run: kernel.KernelRun) -> list[tuple[int, float, tuple[tuple[int, int, int], ...]]]:
    """What must be equal of a run's rows: which, their ranks and instances."""
    return [(row.record.doc_id, row.rank, row.phrase_hits) for row in run.rows]


def assert_same_run(fast: kernel.KernelRun, clear: kernel.KernelRun) -> None:
    """The fast run has the clear run's rows, ranks, instances, truncation and hits."""
    assert rows_of(fast) == rows_of(clear)
    assert fast.truncated == clear.truncated
    assert kernel.result_of_run(fast, ANALYZER, indexing=False) == \
        kernel.result_of_run(clear, ANALYZER, indexing=False)


def assert_bounded_run(fast: kernel.KernelRun, clear: kernel.KernelRun, bound: float) -> None:
    """The fast run given `bound` has the clear run's rows not ranked worse than it when
    more than `limit` rows match (else all of them), and its truncation."""
    full = len(clear.rows) > clear.limit
    expected = [row for row in clear.rows if not row.rank > bound] if full else list(clear.rows)
    assert rows_of(fast) == [(row.record.doc_id, row.rank, row.phrase_hits) for row in expected]
    assert fast.truncated == clear.truncated


def test_a_phrase_does_not_run_from_one_row_into_the_next():
    """`of` ends a row and `the` starts the next: the empty slot between rows keeps
    them apart, on the bitmaps as in the clear matcher."""
    index = indexed(["x of", "the x", "of the"], set(), flushed=True)
    found = phrase_rows(index.view(), Phrase(("of", "the")), bitmaps=True)
    assert dict(found.counts) == {2: 1}


@st.composite
def counted_rows(draw):
    """Rows of random lengths, a token's count in each (its `f`) and a phrase's count
    (at most `f`, placed on the row's first slots): the inputs of the walk by bound."""
    lengths = draw(st.lists(st.integers(0, 40), min_size=1, max_size=80))
    most = draw(st.sampled_from([1, 2, 40]))  # few counts: many rows share each one
    rows, tokens, instances = [], [], []
    for doc_id, length in enumerate(lengths):
        if length and draw(st.booleans()):
            frequency = draw(st.integers(1, length))
            rows.append(doc_id)
            tokens.append(frequency)
            instances.append(draw(st.integers(0, min(frequency, most))))
    return lengths, rows, tokens, instances


@settings(max_examples=300, deadline=None)
@given(counted_rows(), st.integers(1, 12), st.sampled_from([0, 1, 3, 7, 10**9]),
       st.sampled_from([None, None, 0.0, 0.5, 0.9]), st.booleans(),
       st.floats(0.01, 5.0), st.integers(1, 3))
def test_counting_in_one_loop_equals_the_walk_by_bound(rows, count, seed, ceiling_share, scoped,
                                                       idf, average):
    """`best_phrase_rows` (a seed walk, then the rows that can still reach the first ranks
    counted in one loop) and `best_listed_rows` (every row holding the phrase, the
    shortest of each count ranked first) return the rows and ranks of
    `best_rows_by_bound` (the walk to its end), ties at the threshold included, with
    bm25's ranks, scopes and ceilings."""
    lengths, doc_ids, frequencies, instances = rows
    line = TokenLine.of(lengths)
    bits = 0
    for doc_id, found in zip(doc_ids, instances):
        bits |= ((1 << found) - 1) << line.starts[doc_id]
    reader = RowReader.of(bits, line)
    impacts = ImpactOrder.of(PostingColumns(doc_ids, frequencies,
                                            [tuple(range(f)) for f in frequencies]), lengths)

    def rank_of(found: int, length: int) -> float:
        return bm25([(idf, found)], length, float(average))

    keep = (lambda doc_id: doc_id % 3 != 1) if scoped else None
    ranks = sorted(rank_of(found, lengths[doc_id]) for doc_id, found in zip(doc_ids, instances)
                   if found)
    ceiling = None if ceiling_share is None or not ranks else \
        ranks[int(ceiling_share * (len(ranks) - 1))]
    walked = best_rows_by_bound(
        impacts, rank_of,
        lambda group, length: [rank_of(found, length) if found else None
                               for found in reader.counts(group, length)],
        keep, count, ceiling)
    counted = best_phrase_rows(impacts, rank_of, reader, keep, count, ceiling, seed_rows=seed)
    assert sorted(counted) == sorted(walked)
    listed = best_listed_rows(*reader.holding(), lengths, rank_of, keep, count, ceiling)
    assert sorted(listed) == sorted(walked)


@settings(max_examples=200, deadline=None)
@given(st.floats(1e-6, 8.0), st.floats(1.0, 300.0), st.floats(-6.0, -1e-4),
       st.lists(st.integers(1, 40), min_size=1, max_size=8), st.integers(1, 3000))
def test_the_longest_lengths_are_those_of_every_length_ranked(idf, average, threshold, asked,
                                                              longest):
    """`_LongestLengths` (a guess from the shape of bm25, then bisection) against every
    length ranked with bm25 itself."""
    def rank_of(found: int, length: int) -> float:
        return bm25([(idf, found)], length, average)

    cut = phrases._LongestLengths(rank_of, threshold, longest)
    for found in asked:
        assert cut[found] == max(
            (length for length in range(1, longest + 1) if rank_of(found, length) <= threshold),
            default=0)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 70), min_size=1, max_size=40), st.data())
def test_instances_by_row_lists_every_set_bit(lengths, data):
    """Every set bit, by row, on lines with empty rows and long runs of zero bytes."""
    line = TokenLine.of(lengths)
    expected = {}
    bits = 0
    for doc_id, length in enumerate(lengths):
        starts = sorted(data.draw(st.sets(st.integers(0, length - 1), max_size=length)
                                  if length else st.just(set())))
        if starts:
            expected[doc_id] = starts
            for start in starts:
                bits |= 1 << (line.starts[doc_id] + start)
    assert instances_by_row(bits, line) == expected
    reader = RowReader.of(bits, line)
    assert reader.holding() == (list(expected), list(map(len, expected.values())))
    assert reader.row_counts(range(len(lengths))) == [
        len(expected.get(doc_id, ())) for doc_id in range(len(lengths))]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 20), max_size=30))
def test_the_line_masks_mark_each_rows_first_and_empty_slot(lengths):
    """`TokenLine.gaps` (made from `firsts` by one shift) against its definition."""
    line = TokenLine.of(lengths)
    assert line.firsts == sum(1 << start for start in line.starts)
    assert line.gaps == sum(1 << (start + length) for start, length in zip(line.starts, lengths))
