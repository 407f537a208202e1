"""Per-agent statistics: a store scores as OpenClaw's separate agent databases do.

The expected answers are built here with plain `sqlite3`: one upstream FTS5 table per
agent (`tests.parity.test_reference_vs_upstream_sql`'s schema and baseline query, filled
from the partition's own projection), each asked for 25 rows as the Gateway asks each
store, and the answers merged the Gateway's way, written here in its own words: score
descending, timestamp descending, `messageId.localeCompare` (PyICU's root collator),
de-duplicated, cut to the limit. Both backends' partitioned stores must give exactly
those hits, in that order, with those snippets and scores; and the scores must differ
from what one table holding every agent gives, so the test shows the statistics are the
partition's.

The corpus: `saffron` is common in agent `alpha` (4 of its 6 rows) and rare in agent
`beta` (1 of its 6 rows), so its idf is small in `alpha` and large in `beta`; a
`global` window (in `main`'s partition) holds it once among two rows.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import icu
import pytest

from engine.model import SearchHit as Hit
from engine.model import SearchRequest, SearchResult, SessionWindow
from engine.store.partitioned import PartitionedStore
from engine.store.registry import open_backend
from tests.parity.strategies import AppendEvent, PutWindow, corpus_of, load_corpus
from tests.parity.test_reference_vs_upstream_sql import (
    bounded_snippet,
    clamped_limit,
    upstream_answer,
    upstream_table,
)

COLLATOR = icu.Collator.createInstance(icu.Locale.getRoot())
SCORE_RELATIVE_TOLERANCE = 1e-9
#: What the Gateway asks of each store when it merges several.
STORE_LIMIT = 25


def message(message_id: str, parent: str | None, text: str, timestamp: float) -> dict:
    return {"type": "message", "id": message_id, "parentId": parent, "timestamp": timestamp,
            "message": {"role": "user", "content": text}}


def window_of(session_id: str, key: str, texts: list[str], clock: float) -> list:
    operations: list = [PutWindow(SessionWindow(session_id, key))]
    parent = None
    for number, text in enumerate(texts):
        message_id = f"{session_id}{number}"
        operations.append(AppendEvent(session_id, message(message_id, parent, text, clock + number),
                                      clock + number))
        parent = message_id
    return operations


CORPUS = corpus_of([
    window_of("a", "agent:alpha:main", [
        "saffron rice tonight", "saffron again please", "more saffron for the stew",
        "saffron saffron everywhere", "plain bread", "a quiet evening walk"], 100.0),
    window_of("b", "agent:beta:main", [
        "one saffron thread", "the market opens early", "bring the red umbrella",
        "train delayed again", "coffee at nine", "meeting notes follow"], 200.0),
    window_of("g", "global", ["saffron in the global notes", "nothing else here"], 300.0),
])


def store_hits(connection: sqlite3.Connection, request: SearchRequest) -> tuple[list[Hit], bool]:
    """One agent database's answer to `request` (its limit as given): hits and truncated."""
    baseline = upstream_answer(connection, request)
    assert not isinstance(baseline, str)
    hits = [Hit(row.session_key, row.session_id, row.message_id, row.role, row.timestamp,
                bounded_snippet(row.snippet), -row.rank if row.rank else 0.0)
            for row in baseline.limited[:baseline.limit]]
    return hits, len(baseline.limited) > baseline.limit


def gateway_merge(answers: list[tuple[list[Hit], bool]], limit: int) -> tuple[list[Hit], bool]:
    """The Gateway's merge of several stores' answers (behaviour.md §6 step 5)."""
    every = sorted((hit for hits, _ in answers for hit in hits),
                   key=lambda hit: (-hit.score, -hit.timestamp, COLLATOR.getSortKey(hit.message_id)))
    unique: list[Hit] = []
    seen: set[tuple[str, str, str]] = set()
    for hit in every:
        identity = (hit.session_key, hit.session_id, hit.message_id)
        if identity not in seen:
            seen.add(identity)
            unique.append(hit)
    return unique[:limit], any(truncated for _, truncated in answers) or len(unique) > limit


@contextmanager
def loaded(tmp_path: Path, backend_name: str) -> Iterator[PartitionedStore]:
    store = open_backend(tmp_path / backend_name, backend=backend_name, create=True)
    try:
        load_corpus(store, CORPUS)
        yield store
    finally:
        store.close()


def agent_tables(store: PartitionedStore) -> dict[str, sqlite3.Connection]:
    """One upstream table per agent, filled from that agent's partition."""
    return {agent_id: upstream_table(partition) for agent_id, partition in store.partitions().items()}


def expected_answer(tables: dict[str, sqlite3.Connection], request: SearchRequest) -> tuple[list[Hit], bool]:
    """What OpenClaw answers: one database for an agent, else every database merged."""
    if request.session_keys is None:
        table = tables.get(request.agent_id or "main")
        return ([], False) if table is None else store_hits(table, request)
    answers = [store_hits(table, SearchRequest(request.query, limit=STORE_LIMIT,
                                               session_keys=request.session_keys))
               for table in tables.values()]
    return gateway_merge(answers, clamped_limit(request.limit))


def assert_same(result: SearchResult, expected: tuple[list[Hit], bool]) -> None:
    hits, truncated = expected
    assert [hit.message_id for hit in result.hits] == [hit.message_id for hit in hits]
    for mine, theirs in zip(result.hits, hits, strict=True):
        assert (mine.session_key, mine.session_id, mine.timestamp, mine.snippet) == (
            theirs.session_key, theirs.session_id, theirs.timestamp, theirs.snippet)
        assert math.isclose(mine.score, theirs.score, rel_tol=SCORE_RELATIVE_TOLERANCE)
    assert result.truncated == truncated


REQUESTS = [
    SearchRequest("saffron", session_keys=()),
    SearchRequest("saffron", session_keys=(), limit=3),
    SearchRequest("saffron", session_keys=("agent:beta:main", "agent:alpha:main", "global")),
    SearchRequest("saffron", agent_id="alpha"),
    SearchRequest("saffron", agent_id="beta"),
    SearchRequest("saffron"),  # the default agent main: the global window
    SearchRequest("the", session_keys=()),
    SearchRequest("again", session_keys=(), limit=1),
]


@pytest.mark.parametrize("backend_name", ["reference", "sqlite"])
def test_scores_are_those_of_one_fts5_table_per_agent_merged_by_the_gateway(
        tmp_path: Path, backend_name: str) -> None:
    with loaded(tmp_path, backend_name) as store:
        tables = agent_tables(store)
        assert sorted(tables) == ["alpha", "beta", "main"]
        for request in REQUESTS:
            assert_same(store.search(request), expected_answer(tables, request))


def test_one_table_for_every_agent_would_score_otherwise(tmp_path: Path) -> None:
    """The same word scores differently per agent, and neither as a shared table would."""
    with loaded(tmp_path, "reference") as store:
        request = SearchRequest("saffron", session_keys=(), limit=25)
        merged = {hit.message_id: hit.score for hit in store.search(request).hits}
        shared = upstream_table(store)  # one table holding every agent's rows
        together, _ = store_hits(shared, request)
    alpha, beta = merged["a0"], merged["b0"]
    assert beta > 3 * alpha  # rare in beta: a much larger idf than in alpha
    for hit in together:
        assert not math.isclose(hit.score, merged[hit.message_id], rel_tol=1e-6), hit
    # the Gateway's order puts beta's single hit first; one shared table would not
    assert next(iter(merged)) == "b0" and together[0].message_id != "b0"


def test_explain_names_the_partition_whose_statistics_scored_each_hit(tmp_path: Path) -> None:
    with loaded(tmp_path, "reference") as store:
        tables = agent_tables(store)
        rows = {agent_id: table.execute("SELECT count(*) FROM session_transcript_fts").fetchone()[0]
                for agent_id, table in tables.items()}
        request = SearchRequest("saffron", session_keys=(), limit=25)
        explanation = store.explain(request)
        assert [item.hit for item in explanation.hits] == list(store.search(request).hits)
        partitions = {item.hit.message_id: item.partition for item in explanation.hits}
        assert partitions == {"a0": "alpha", "a1": "alpha", "a2": "alpha", "a3": "alpha",
                              "b0": "beta", "g0": "main"}
        for item in explanation.hits:
            assert item.bm25.total_rows == rows[item.partition]
            assert item.to_json()["partition"] == item.partition
        assert rows == {"alpha": 6, "beta": 6, "main": 2}
        scoped = store.explain(SearchRequest("saffron", agent_id="beta"))
        assert [(item.partition, item.hit.message_id) for item in scoped.hits] == [("beta", "b0")]
        report = explanation.to_json()
        assert [hit["partition"] for hit in report["hits"]] == [
            item.partition for item in explanation.hits]
        assert report["phrases"] == [{"terms": ["saffron"], "prefix": False}]
