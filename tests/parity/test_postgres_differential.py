"""Differential test: the reference engine's `postgres` expectation mode against the postgres
backend on the real server (issue 30, item 4).

Both are partitioned stores (one partition per agent) fed the same random multilingual
corpora and requests as the reference-versus-SQLite differential (`tests.parity.
strategies`: several agents, window chains, rewinds, resets, side appends, archived
windows, deletions, unindexable content, CJK, emoji, lone surrogates, NUL, long
messages). For every request they must agree exactly: the hits, their order, every field
of every hit (the excerpt and its matched spans included), `truncated`, `indexing`,
`archivedTranscriptsExcluded`; the scores are the same float4 `ts_rank` values (compared
exactly: both are the single-precision value). A request one refuses the other refuses
with the same error class and message. Each corpus is compared as loaded, after
reconcile, and, for half of them, after more appends and a second reconcile.
"""

from __future__ import annotations

import os
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.config import EngineConfig
from engine.errors import EngineError
from engine.model import SearchRequest, SearchResult, SessionWindow
from engine.store.partitioned import PartitionedStore
from engine.store.registry import open_backend
from tests.conftest import drop_schemas
from tests.parity.strategies import (
    PARITY_SETTINGS,
    AppendEvent,
    Corpus,
    PutWindow,
    corpora,
    corpus_of,
    load_corpus,
    requests,
    tally_outcome,
)
from tests.parity.test_backend_differential import follow_up_appends, grown_corpus, scope_kind

pytestmark = pytest.mark.postgres

SCRATCH_ROOT = "/dev/shm" if os.path.isdir("/dev/shm") else None
NO_BACKGROUND = EngineConfig(background_reconcile=False)


@contextmanager
def expectation_and_server(connection: object, prefix: str
                           ) -> Iterator[tuple[PartitionedStore, PartitionedStore]]:
    """A reference store answering as PostgreSQL would and a postgres store, fresh."""
    with tempfile.TemporaryDirectory(dir=SCRATCH_ROOT) as folder:
        reference = open_backend(Path(folder) / "reference", backend="reference", create=True,
                                 config=NO_BACKGROUND, expectation="postgres")
        postgres = open_backend(Path(folder) / "postgres", backend="postgres", create=True,
                                config=NO_BACKGROUND)
        try:
            yield reference, postgres
        finally:
            reference.close()
            postgres.close()
            drop_schemas(connection, prefix)


def outcome(store: PartitionedStore, request: SearchRequest) -> SearchResult | tuple[str, str]:
    try:
        return store.search(request)
    except EngineError as error:
        return type(error).__name__, str(error)


def differences(server: SearchResult | tuple, expected: SearchResult | tuple) -> list[str]:
    """Every way the prediction differs from the server's answer (exact, scores too)."""
    if not isinstance(server, SearchResult) or not isinstance(expected, SearchResult):
        return [] if server == expected else [(f"outcome: server {server!r} vs reference "
                                              f"{expected!r}")]
    problems = [f"{name}: server {getattr(server, name)!r} vs reference "
                f"{getattr(expected, name)!r}"
                for name in ("truncated", "indexing", "archived_transcripts_excluded")
                if getattr(server, name) != getattr(expected, name)]
    if len(server.hits) != len(expected.hits):
        problems.append(f"hits: server {[hit.message_id for hit in server.hits]} vs reference "
                        f"{[hit.message_id for hit in expected.hits]}")
    for position, (got, want) in enumerate(zip(server.hits, expected.hits)):
        for name in ("session_key", "session_id", "message_id", "role", "timestamp", "snippet",
                     "matched", "score"):
            if getattr(got, name) != getattr(want, name):
                problems.append(f"hit {position} {name}: server {getattr(got, name)!r} vs "
                                f"reference {getattr(want, name)!r}")
    return problems


def compare(reference: PartitionedStore, postgres: PartitionedStore,
            request_list: list[SearchRequest], tally: Counter[str], stage: str) -> None:
    for request in request_list:
        server = outcome(postgres, request)
        problems = differences(server, outcome(reference, request))
        assert problems == [], f"{request!r} ({stage}):\n" + "\n".join(problems)
        tally_outcome(tally, server)
        tally["scope: " + scope_kind(request)] += 1


def check_corpus(connection: object, prefix: str, corpus: Corpus,
                 request_list: list[SearchRequest], late: list, tally: Counter[str]) -> None:
    """Load, compare, reconcile, compare, append more, compare, reconcile, compare."""
    with expectation_and_server(connection, prefix) as (reference, postgres):
        load_corpus(reference, corpus)
        load_corpus(postgres, corpus)
        compare(reference, postgres, request_list, tally, "loaded")
        assert reference.reconcile() == postgres.reconcile()
        compare(reference, postgres, request_list, tally, "reconciled")
        if late:
            extra = corpus_of(late)
            grown = grown_corpus(corpus, extra)
            load_corpus(reference, extra)
            load_corpus(postgres, extra)
            compare(reference, postgres, request_list, tally, "appended")
            assert reference.reconcile() == postgres.reconcile()
            compare(reference, postgres, request_list, tally, "reconciled again")
            del grown


@st.composite
def cases(draw: st.DrawFn) -> tuple[Corpus, list[SearchRequest], list]:
    corpus = draw(corpora())
    request_list = draw(st.lists(requests(corpus), min_size=1, max_size=8))
    late = draw(follow_up_appends(corpus)) if draw(st.booleans()) else []
    return corpus, request_list, late


def test_the_reference_predicts_postgres_on_random_corpora(postgres_stores: str,
                                                           pg_connection: object,
                                                           record_property) -> None:
    prefix = os.environ["SESSION_SEARCH_PG_SCHEMA_PREFIX"]
    tally: Counter[str] = Counter()

    def run(case: tuple[Corpus, list[SearchRequest], list]) -> None:
        corpus, request_list, late = case
        check_corpus(pg_connection, prefix, corpus, request_list, late, tally)

    PARITY_SETTINGS(given(cases())(run))()
    record_property("tally", dict(tally))
    print("postgres differential tally:", dict(sorted(tally.items())))
    assert tally["hits"] > 0 and tally["scope: every agent"] > 0 and tally["indexing"] > 0, tally


def message(message_id: str, parent: str | None, text: str, timestamp: float = 5) -> dict:
    return {"type": "message", "id": message_id, "parentId": parent, "timestamp": timestamp,
            "message": {"role": "user", "content": text}}


def test_the_pitfalls_of_postgres_query_functions_are_avoided(postgres_stores: str,
                                                              pg_connection: object) -> None:
    """An empty term matches nothing (`deploy - fix`); `per-session` finds `per session`;
    the prefix is on the final token only; `_` in an agent id is literal; «quoted» words
    are searchable; both sides agree on each."""
    prefix = os.environ["SESSION_SEARCH_PG_SCHEMA_PREFIX"]
    corpus = corpus_of([[
        PutWindow(SessionWindow("w", "agent:work_team:main")),
        AppendEvent("w", message("m1", None, "deploy the fix"), 1.0),
        AppendEvent("w", message("m2", "m1", "per session notes"), 2.0),
        AppendEvent("w", message("m3", "m2", "«Bonjour» dit-il, per sessions"), 3.0),
        PutWindow(SessionWindow("x", "agent:workxteam:main")),
        AppendEvent("x", message("n1", None, "deploy the fix elsewhere"), 4.0),
    ]])
    expected = {
        ("deploy - fix", "exact"): [],
        ("deploy fix", "exact"): ["m1"],
        ("per-session", "exact"): ["m2"],
        ("per-session", "prefix"): ["m2", "m3"],
        ("per-sess", "prefix"): ["m2", "m3"],
        ("pe-session", "prefix"): [],
        ("bonjour", "exact"): ["m3"],
    }
    with expectation_and_server(pg_connection, prefix) as (reference, postgres):
        load_corpus(reference, corpus)
        load_corpus(postgres, corpus)
        for (query, match), message_ids in expected.items():
            request = SearchRequest(query, agent_id="work_team", match=match)
            server = postgres.search(request)
            assert sorted(hit.message_id for hit in server.hits) == message_ids, (query, match)
            assert differences(server, reference.search(request)) == []
