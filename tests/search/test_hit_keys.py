"""A hit made in two steps (`hit_key`, then `whole_hit`) against `search_hit`, and a kernel
run's late hits (`hit_keys`, `finished_hits`) against its eager result.

A partition of a merged search answers with its rows' merge keys and makes whole only
the hits the merge keeps (`engine.search.kernel.search_answer`); those hits must be the
hits `result_of_run` makes of the same rows, score, timestamp, snippet and matched spans
alike. The whole merged search is compared with the eager merge in
`tests/backends/test_late_snippets.py`.
"""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.query.checked_request import check_request
from engine.search import kernel
from engine.search.hits import hit_key, search_hit, whole_hit
from tests.search.test_fast_path import ANALYZER, WINDOWS, Corpus, changes, requests, rows

#: Values a row's timestamp and rank may hold, the odd ones included.
ODD_NUMBERS = [None, 0, -0.0, 1, 2.5, -3.25, float("nan"), float("inf"), float("-inf"), True,
               "10", 2**53 + 1]
#: Excerpts short and long (past the 500-unit bound), astral characters and a lone
#: surrogate included.
excerpts = st.one_of(
    st.text(max_size=40),
    st.builds(lambda piece, count: piece * count,
              st.sampled_from(["ab ", "é", "😀", "\ud800", "x"]), st.integers(240, 520)),
)
spans = st.lists(st.tuples(st.integers(0, 600), st.integers(0, 600)), max_size=4).map(
    lambda found: tuple(sorted((min(pair), max(pair)) for pair in found)))


def same_hit(first, second) -> None:
    assert first == second
    assert first.matched == second.matched
    assert math.copysign(1.0, first.score) == math.copysign(1.0, second.score)
    assert math.copysign(1.0, first.timestamp) == math.copysign(1.0, second.timestamp)


@settings(max_examples=300, deadline=None)
@given(timestamp=st.one_of(st.sampled_from(ODD_NUMBERS), st.floats()),
       rank=st.one_of(st.sampled_from(ODD_NUMBERS), st.floats()),
       excerpt=excerpts, matched=spans, message_id=st.text(max_size=6))
def test_a_hit_made_from_its_key_is_the_hit_made_at_once(timestamp, rank, excerpt, matched,
                                                         message_id):
    values = {"session_key": "agent:main:main", "session_id": "w1", "message_id": message_id}
    eager = search_hit(**values, role="user", timestamp=timestamp, excerpt=excerpt, rank=rank,
                       matched=matched)
    key = hit_key(values["session_key"], values["session_id"], message_id, timestamp, rank)
    assert (key.session_key, key.session_id, key.message_id) == (
        eager.session_key, eager.session_id, eager.message_id)
    assert key.score == eager.score and key.timestamp == eager.timestamp
    same_hit(whole_hit(key, "user", excerpt, matched), eager)


@settings(max_examples=80, deadline=None)
@given(st.lists(rows, min_size=12, max_size=40),
       st.lists(st.tuples(changes, requests), min_size=1, max_size=4))
def test_late_hits_of_a_run_are_its_eager_hits(initial, steps):
    corpus = Corpus()
    for row in initial:
        corpus.add(row)
    for change, request in steps:
        corpus.apply(change)
        run = kernel.run_kernel(corpus.index.view(), WINDOWS, check_request(request), ANALYZER)
        eager = kernel.result_of_run(run, ANALYZER, indexing=False).hits
        keys = kernel.hit_keys(run)
        assert len(keys) == len(eager)
        for key, hit in zip(keys, eager, strict=True):
            assert key == (hit.session_key, hit.session_id, hit.message_id, hit.timestamp,
                           hit.score)
        positions = list(range(len(eager)))[::-1]  # any order, any subset
        for position, late in zip(positions, kernel.finished_hits(run, ANALYZER, keys, positions),
                                  strict=True):
            same_hit(late, eager[position])
