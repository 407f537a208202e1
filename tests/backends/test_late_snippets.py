"""A merged search equals the eager merge of every partition's own answer.

`PartitionedStore.search` over several partitions asks each reference partition for its
hits without snippets (`AnswersLate.search_answer`) and finishes only the hits the merge
keeps; it asks SQLite partitions all at once (`SearchesPartitions.search_partitions`,
one prepared request reused across databases). The oracle is the merge of every
partition's whole `search` result, one partition at a time (`merge_partition_results`),
on generated multi-agent corpora and requests, and on corpora where every partition
matches more rows than the limit, so that the partitions asked after the first leave out
the rows ranked below the bound the earlier answers set (`rank_bound_of`).
"""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.errors import EngineError
from engine.model import SearchRequest, SessionWindow
from engine.query.user_query import clamp_limit
from engine.search.merge import merge_partition_results
from engine.store.opening import create_partitioned
from engine.store.registry import partition_kind
from tests.parity.strategies import (
    AppendEvent,
    PutWindow,
    corpus_and_requests,
    corpus_of,
    load_corpus,
)


@pytest.mark.parametrize("backend", ["reference", "sqlite", "postgres"])
@settings(max_examples=40, deadline=None)
@given(drawn=corpus_and_requests())
def test_a_merged_search_gives_the_eager_merge(backend, drawn):
    corpus, requests = drawn
    with tempfile.TemporaryDirectory() as folder:
        store = create_partitioned(Path(folder) / "store", partition_kind(backend))
        try:
            load_corpus(store, corpus)
            store.reconcile()
            for request in requests:
                for merged_request in (request, replace(request, session_keys=())):
                    try:
                        scoped, targets = store.search_targets(merged_request)
                    except EngineError:
                        continue
                    if scoped:
                        continue
                    eager = merge_partition_results(
                        [store.partitions()[agent_id].search(part) for agent_id, part in targets],
                        clamp_limit(merged_request.limit), order=merged_request.order)
                    assert store.search(merged_request) == eager
        finally:
            store.close()


#: Words that many rows share, so that every partition matches more rows than a
#: partition's limit (25) and their ranks tie often (same frequency, same length).
_WORDS = ["alpha", "beta", "gamma", "alpha alpha", "alpha beta", "alpha beta", "alpha beta",
          "beta gamma", "gamma alpha", "filler"]
_AGENTS = ["main", "ops", "work"]


@st.composite
def _crowded_partitions(draw: st.DrawFn) -> list[list[object]]:
    """Transactions writing 20–26 messages into each of two windows of every agent (so
    that a partition often matches more than 25 rows); message ids repeat across
    windows (`m0`, `m1`, ...), timestamps repeat too. Often every agent gets the same
    texts: the partitions' statistics are then equal and scores tie across partitions,
    where only the timestamp and the message id order the merge."""
    shared = draw(st.booleans())
    texts: list[list[str]] = []
    transactions: list[list[object]] = []
    for agent in _AGENTS:
        for window_number in range(2):
            session_id = f"{agent}-w{window_number}"
            operations: list[object] = [
                PutWindow(SessionWindow(session_id, f"agent:{agent}:chat{window_number}"))]
            if not (shared and len(texts) == 2):
                texts.append([" ".join(draw(st.lists(st.sampled_from(_WORDS), min_size=1,
                                                     max_size=4)))
                              for _ in range(draw(st.integers(20, 26)))])
            window_texts = texts[window_number] if shared else texts[-1]
            parent = None
            for number, text in enumerate(window_texts):
                event = {"type": "message", "id": f"m{number}", "parentId": parent,
                         "timestamp": draw(st.sampled_from([1000, 2000, 3000])),
                         "message": {"role": "user", "content": text}}
                operations.append(AppendEvent(session_id, event, 0.0))
                parent = f"m{number}"
            transactions.append(operations)
    return transactions


@settings(max_examples=80, deadline=None)
@given(transactions=_crowded_partitions(),
       query=st.sampled_from(["alpha", "beta", "alpha beta", "alpha beta", "beta alpha",
                              "gamma alpha", "beta gamma"]),
       limit=st.integers(1, 6))
def test_a_merge_that_leaves_out_rows_below_the_bound_gives_the_eager_merge(
        transactions, query, limit):
    # The partitions often match more rows than their limit here, so each one after the
    # first is asked with a rank bound (`rank_bound_of`) and leaves rows out.
    with tempfile.TemporaryDirectory() as folder:
        store = create_partitioned(Path(folder) / "store", partition_kind("reference"))
        try:
            load_corpus(store, corpus_of(transactions))
            store.reconcile()
            request = SearchRequest(query, limit=limit, session_keys=())
            _scoped, targets = store.search_targets(request)
            eager = merge_partition_results(
                [store.partitions()[agent_id].search(part) for agent_id, part in targets],
                limit)
            assert store.search(request) == eager
        finally:
            store.close()
