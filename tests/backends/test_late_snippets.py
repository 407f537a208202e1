"""A merged search equals the eager merge of every partition's own answer.

`PartitionedStore.search` over several partitions asks each reference partition for its
hits without snippets (`AnswersLate.search_answer`) and finishes only the hits the merge
keeps; it asks SQLite partitions all at once (`SearchesPartitions.search_partitions`,
one prepared request reused across databases). The oracle is the merge of every
partition's whole `search` result, one partition at a time (`merge_partition_results`),
on generated multi-agent corpora and requests.
"""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings

from engine.backends.partitioned import create_partitioned
from engine.backends.registry import partition_kind
from engine.errors import EngineError
from engine.query.user_query import clamp_limit
from engine.search.merge import merge_partition_results
from tests.parity.strategies import corpus_and_requests, load_corpus


@pytest.mark.parametrize("backend", ["reference", "sqlite"])
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
