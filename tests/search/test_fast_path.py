"""The fast path of the search stage against its clear version (issue 5).

`fast_path.top_rows` must return exactly what `order_rows(rank_rows(...))` returns: the
same rows in the same order with the same ranks (compared as floats, so bit for bit) and
the same phrase instances, hence the same hits, scores and snippets. The index here is
mutated between queries (rows added, windows deleted, flushes, merges) so the view the
index hands out (`engine.index.view`, with its row columns and term cache) must notice
every change. Timestamps include the
values SQLite orders specially (NULL, NaN, text, ints) and many ties.
"""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.analysis.profiles import SEARCH_PROFILE
from engine.config import EngineConfig
from engine.directory import MemoryDirectory
from engine.index.inverted_index import InvertedIndex
from engine.index.matching import phrase_occurrences, token_positions
from engine.index.writer import flush_index, merge_index
from engine.model import IndexEntry, SearchRequest, SessionWindow
from engine.query.ast import Phrase
from engine.query.checked_request import check_request
from engine.query.cjk import substring_matches
from engine.search import kernel
from engine.search.fast_path import kept_scope_mask, literal_check, scope_mask
from engine.search.phrases import phrase_rows
from engine.search.scope import Scope

ANALYZER = SEARCH_PROFILE.analyzer()
PROFILE = "test-fast-kernel"
CONFIG = EngineConfig()
CLEAR_KERNEL = EngineConfig(fast_kernel=False)
WINDOWS = [
    SessionWindow("w1", "agent:main:main"),
    SessionWindow("w2", "agent:main:other"),
    SessionWindow("w3", "agent:work_team:main"),
    SessionWindow("w4", "global"),
    SessionWindow("w5", "agent:main:cold", archived=True),
]
WORDS = ["the", "saffron", "ballast", "Café", "per-session", "commun", "communication",
         "会议", "明天会议讨论", "OR", "x.", "the the"]
TIMESTAMPS = [0, 1, 1.0, 2.5, 3, None, float("nan"), "2026-01-01", "10", -0.0, 2**53 + 1, 2**53]

#: Common words weigh more, so that most queries match many rows and ranks tie often.
texts = st.lists(
    st.sampled_from(WORDS + ["the"] * 4 + ["saffron", "明天会议讨论"] * 2 + ["ballast"]), min_size=1, max_size=8
).map(" ".join)
rows = st.tuples(
    st.sampled_from([window.session_id for window in WINDOWS]),
    texts,
    st.sampled_from(TIMESTAMPS),
    st.sampled_from(["user", "assistant"]),
)
numeric_rows = st.tuples(
    st.sampled_from([window.session_id for window in WINDOWS]),
    texts,
    st.sampled_from([0, 1, 1.0, 2.5, 3]),
    st.sampled_from(["user", "assistant"]),
)
requests = st.builds(
    SearchRequest,
    query=st.one_of(
        st.sampled_from(["the", "saffron", "ballast", "the saffron", "comm", "the ballast", "讨论", "天会"]),
        st.sampled_from(WORDS + ["comm", "讨论", "cafe 会议", "the saffron", '"the the"']),
        st.lists(st.sampled_from(WORDS + ["comm", "讨论"]), min_size=1, max_size=3).map(" ".join),
    ),
    agent_id=st.sampled_from(["main", "work_team", None]),
    limit=st.sampled_from([None, 1, 2, 2, 3, 30]),
    session_keys=st.sampled_from([None, (), (), ("agent:main:main", "global")]),
    session_id=st.sampled_from([None, None, "w1"]),
    role=st.sampled_from([None, None, "user"]),
    match=st.sampled_from(["exact", "prefix"]),
    order=st.sampled_from(["relevance", "recent"]),
)
#: Between two queries: add rows, delete a window's rows, flush, or merge.
changes = st.one_of(
    st.tuples(st.just("add"), st.lists(rows, min_size=1, max_size=4)),
    st.tuples(st.just("delete"), st.sampled_from([window.session_id for window in WINDOWS])),
    st.tuples(st.just("flush"), st.none()),
    st.tuples(st.just("merge"), st.none()),
)


class Corpus:
    """An index plus the directory its flushes go to."""

    def __init__(self) -> None:
        self.index = InvertedIndex()
        self.directory = MemoryDirectory()
        self.sequence = 0

    def add(self, row: tuple) -> None:
        session_id, text, timestamp, role = row
        self.sequence += 1
        entry = IndexEntry(session_id, f"m{self.sequence % 4}", role, timestamp, text, self.sequence)
        self.index.add_entry(entry, ANALYZER.terms(text))

    def apply(self, change: tuple) -> None:
        kind, argument = change
        if kind == "add":
            for row in argument:
                self.add(row)
        elif kind == "delete":
            self.index.delete_window_rows(argument)
        elif kind == "flush":
            flush_index(self.directory, self.index, PROFILE, CONFIG)
        else:
            merge_index(self.directory, self.index, PROFILE, CONFIG)


def run_both(index: InvertedIndex, request: SearchRequest) -> tuple[kernel.KernelRun, kernel.KernelRun]:
    fast = kernel.run_kernel(index.view(), WINDOWS, check_request(request), ANALYZER)
    clear = kernel.run_kernel(index.view(), WINDOWS, check_request(request), ANALYZER, config=CLEAR_KERNEL)
    return fast, clear


def same_rows(fast: kernel.KernelRun, clear: kernel.KernelRun) -> None:
    assert fast.plan == clear.plan and fast.retried == clear.retried
    assert [row.record.doc_id for row in fast.rows] == [row.record.doc_id for row in clear.rows]
    for fast_row, clear_row in zip(fast.rows, clear.rows):
        assert math.copysign(1.0, fast_row.rank) == math.copysign(1.0, clear_row.rank)
        assert fast_row.rank == clear_row.rank
        assert fast_row.phrase_hits == clear_row.phrase_hits
        assert fast_row.by_substring == clear_row.by_substring
    assert kernel.result_of_run(fast, ANALYZER, indexing=False) == kernel.result_of_run(
        clear, ANALYZER, indexing=False
    )


@settings(max_examples=120, deadline=None)
@given(
    st.lists(rows, min_size=12, max_size=40),
    st.lists(st.tuples(changes, requests), min_size=1, max_size=5),
)
def test_fast_path_equals_clear_version_across_changes(initial, steps):
    corpus = Corpus()
    for row in initial:
        corpus.add(row)
    for change, request in steps:
        fast, clear = run_both(corpus.index, request)
        same_rows(fast, clear)
        corpus.apply(change)
        fast, clear = run_both(corpus.index, request)
        same_rows(fast, clear)


@settings(max_examples=60, deadline=None)
@given(st.lists(numeric_rows, min_size=1, max_size=40), st.lists(requests, min_size=1, max_size=3))
def test_fast_path_with_plain_number_timestamps(initial, request_list):
    """Only plain numbers: the `(timestamp, doc_id)` shortcut of the recent order runs."""
    corpus = Corpus()
    for row in initial:
        corpus.add(row)
    assert corpus.index.view().rows.odd_timestamps == 0
    for request in request_list:
        same_rows(*run_both(corpus.index, request))


def test_many_ties_keep_the_full_order():
    """Thirty identical rows: every rank ties, timestamps decide, then message ids."""
    corpus = Corpus()
    for number in range(30):
        corpus.add((f"w{1 + number % 4}", "saffron ballast", number % 3, "user"))
    for order in ("relevance", "recent"):
        request = SearchRequest(query="saffron", limit=5, session_keys=(), order=order)
        fast, clear = run_both(corpus.index, request)
        same_rows(fast, clear)
        assert len(fast.rows) == 6


def test_every_timestamp_kind_in_one_retry():
    """A substring-only retry (every rank 0.0) over rows with every kind of timestamp:
    text sorts above numbers and NULL below them, so none may be cut too early."""
    corpus = Corpus()
    for number in range(3 * len(TIMESTAMPS)):
        timestamp = TIMESTAMPS[number % len(TIMESTAMPS)]
        corpus.add((f"w{1 + number % 4}", "明天会议讨论 the", timestamp, "user"))
    assert corpus.index.view().rows.odd_timestamps > 0
    for query in ("讨论", "the"):
        for order in ("relevance", "recent"):
            for limit in (1, 2, 5):
                request = SearchRequest(query=query, limit=limit, session_keys=(), order=order)
                fast, clear = run_both(corpus.index, request)
                same_rows(fast, clear)
                assert len(fast.rows) == limit + 1


@settings(max_examples=120, deadline=None)
@given(st.lists(texts, max_size=12), st.sets(st.integers(0, 11)),
       st.one_of(st.lists(st.sampled_from(["the", "saffron", "commun", "会议", "per", "session",
                                           "x"]), min_size=1, max_size=3),
                 # phrases the texts hold often (`per-session`, `the the`, neighbours)
                 st.sampled_from([["per", "session"], ["the", "the"], ["the", "saffron"],
                                  ["saffron", "the"], ["the", "the", "the"]])),
       st.booleans(), st.booleans())
def test_phrase_rows_equal_phrase_occurrences(documents, deleted, terms, prefix, flushed):
    corpus = Corpus()
    for number, text in enumerate(documents):
        corpus.add((f"w{1 + number % 3}", text, number, "user"))
    if flushed:  # the columns are then read from a postings file (flat position arrays)
        corpus.apply(("flush", None))
    for doc_id in sorted(deleted):
        if doc_id < len(documents):
            corpus.index.delete_document(doc_id)
    view = corpus.index.view()
    phrase = Phrase(tuple(terms), prefix)
    # The fast version first: the clear one decodes the segment's postings into objects,
    # which the columns would then be made from instead of the file's flat arrays.
    found = phrase_rows(view, phrase)
    expected = phrase_occurrences(corpus.index, phrase.terms, prefix=prefix)
    assert dict(found.counts) == {doc_id: len(starts) for doc_id, starts in expected.items()}
    assert {doc_id: list(found.starts(doc_id)) for doc_id in found.counts} == expected
    token = view.term_columns(terms[0], prefix=prefix)
    assert dict(zip(token.doc_ids, map(list, token.positions))) == token_positions(
        corpus.index, terms[0], prefix=prefix
    )
    assert corpus.index.term_columns(terms[0]).postings() == corpus.index.postings(terms[0])


@settings(max_examples=200, deadline=None)
@given(st.text("ab会议AB\x00 %_", max_size=12), st.text("ab会议AB\x00%_", max_size=4))
def test_literal_check_equals_substring_matches(text, needle):
    assert literal_check(needle)(text) == substring_matches(text, needle)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["w1", "w2", "w3", "w4"]),
                          st.sampled_from(["user", "assistant", "toolResult"])), max_size=12),
       st.sets(st.sampled_from(["w1", "w2", "w3", "w4"])),
       st.sampled_from([None, "user", "assistant"]))
def test_a_kept_scope_mask_follows_the_groups_the_index_adds(added, selected, role):
    """`kept_scope_mask` equals `scope_mask` after each row, as new groups appear, and
    starts over for the columns of another index."""
    index = InvertedIndex()
    scope = Scope({session_id: "global" for session_id in selected}, 0)
    for number, (session_id, row_role) in enumerate(added):
        index.add_entry(IndexEntry(session_id, f"m{number}", row_role, 0, "a", number), ["a"])
        columns = index.view().rows
        expected = scope_mask(columns, scope.session_keys, role)
        assert kept_scope_mask(columns, scope, role) == expected
        assert kept_scope_mask(columns, scope, role) == expected
    other = InvertedIndex()
    other.add_entry(IndexEntry("w9", "m", "user", 0, "a", 0), ["a"])
    other_columns = other.view().rows
    assert kept_scope_mask(other_columns, scope, role) == scope_mask(
        other_columns, scope.session_keys, role)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 4), st.integers(1, 8)), min_size=1, max_size=60),
    st.lists(st.booleans(), min_size=60, max_size=60),
    st.integers(1, 30),
    st.integers(1, 200),
    st.floats(0.5, 50.0),
    st.booleans(),
    st.sampled_from(["bm25", "ratio"]),
)
def test_best_rows_by_impact_equals_ranking_every_row(rows, kept, count, matching, average, masked,
                                                      ranking):
    """The impact walk against its naive version: rank every kept row, keep those at or
    below the `count`-th smallest rank. Equal sets, equal ranks (bits). Ranked with bm25
    itself, or with `-f / D`, whose groups tie across frequencies (1/2 and 2/4) as bm25's
    rarely do, so that the ties at the threshold are exercised."""
    from engine.index.impact_order import ImpactOrder
    from engine.index.postings import PostingColumns
    from engine.score.bm25 import bm25, inverse_document_frequency
    from engine.search.fast_path import best_rows_by_impact

    frequencies = [frequency for frequency, _ in rows]
    lengths = [length for _, length in rows]
    columns = PostingColumns(list(range(len(rows))), frequencies, [(0,) * f for f in frequencies])
    idf = inverse_document_frequency(len(rows) + matching, len(rows))
    if ranking == "bm25":
        rank_of = lambda frequency, length: bm25([(idf, frequency)], length, average)
    else:
        rank_of = lambda frequency, length: -frequency / length
    keep = (lambda doc_id: kept[doc_id]) if masked else None
    walked = best_rows_by_impact(ImpactOrder.of(columns, lengths), rank_of, keep, count)
    everyone = [(doc_id, rank_of(frequencies[doc_id], lengths[doc_id]))
                for doc_id in range(len(rows)) if keep is None or keep(doc_id)]
    if len(everyone) > count:
        threshold = sorted(rank for _, rank in everyone)[count - 1]
        everyone = [(doc_id, rank) for doc_id, rank in everyone if rank <= threshold]
    assert sorted(walked) == sorted(everyone)
