"""The SQLite FTS5 backend: conformance cases, the upstream baseline query, storage rules.

Every case of `tests/conformance/cases/` runs here; the other tests pin what only this
backend has: the schema and pragmas, the two-stage query against the single-statement
baseline of behaviour.md §5.4 (the upstream test's oracle), read-only opening, rollback,
reconcile of transcripts that predate the index, and error mapping.
"""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path

import pytest

from engine.backends.registry import backend_class
from engine.backends.sqlite_fts5 import DATABASE_NAME, SqliteBackend, glob_literal, search_database
from engine.errors import (
    CorruptFile,
    InputError,
    QueryError,
    StoreError,
    UnknownSession,
    UsageError,
)
from engine.model import SearchRequest, SessionWindow
from tests.conformance.suite import load_cases, run_case


def message(message_id: str, parent: str | None, role: str, text: str, timestamp: float) -> dict:
    return {
        "type": "message",
        "id": message_id,
        "parentId": parent,
        "timestamp": timestamp,
        "message": {"role": role, "content": text},
    }


@pytest.fixture
def store(tmp_path: Path) -> SqliteBackend:
    backend = SqliteBackend.create(tmp_path / "store")
    yield backend
    backend.close()


def add_session(backend: SqliteBackend, session_id: str, key: str, texts: list[str], **window) -> None:
    with backend.transaction() as transaction:
        transaction.put_window(SessionWindow(session_id, key, **window))
        parent = None
        for index, text in enumerate(texts):
            role = "user" if index % 2 == 0 else "assistant"
            message_id = f"{session_id}-{index:03d}"
            transaction.append_event(session_id, message(message_id, parent, role, text, index // 4))
            parent = message_id


# ---- conformance ------------------------------------------------------------------


@pytest.mark.parametrize("case", load_cases(), ids=lambda case: case["name"])
def test_conformance_case(case: dict, tmp_path: Path) -> None:
    run_case(lambda: SqliteBackend.create(tmp_path / "store"), case)


# ---- the baseline query of §5.4 -----------------------------------------------------

BASELINE_SQL = """
SELECT w.session_key, f.session_id, f.message_id, f.role, f.timestamp,
       snippet(session_transcript_fts, 0, '', '', ' … ', 48),
       bm25(session_transcript_fts) AS rank
FROM session_transcript_fts AS f
JOIN session_windows AS w ON w.session_id = f.session_id
WHERE session_transcript_fts MATCH :fts
  AND (w.session_key GLOB :pattern OR w.session_key IN ('global', 'unknown'))
  AND f.session_id NOT IN (SELECT session_id FROM session_transcript_index_state WHERE needs_rebuild != 0)
  AND (:session_id IS NULL OR f.session_id = :session_id)
  AND (:role IS NULL OR f.role = :role)
ORDER BY {order}
LIMIT :limit + 1
"""


def baseline(backend: SqliteBackend, fts: str, *, limit: int, order: str = "relevance",
             session_id: str | None = None, role: str | None = None) -> list[tuple]:
    """The upstream test's oracle: one statement, snippet() on every candidate row."""
    order_sql = ("f.timestamp DESC, f.rowid DESC" if order == "recent"
                 else "rank ASC, f.timestamp DESC, f.message_id ASC")
    connection = sqlite3.connect(backend.path)
    try:
        rows = connection.execute(
            BASELINE_SQL.format(order=order_sql),
            {"fts": fts, "pattern": "agent:main:*", "session_id": session_id, "role": role,
             "limit": limit},
        ).fetchall()
    finally:
        connection.close()
    return [(row[0], row[1], row[2], row[3], float(row[4]), row[5], -row[6]) for row in rows]


@pytest.fixture
def payload_store(store: SqliteBackend) -> SqliteBackend:
    """80 rows per session of 'needle common payload' (§12.2), one dirty session."""
    for name in ("alpha", "beta"):
        add_session(store, name, f"agent:main:{name}", ["needle common payload"] * 80)
    add_session(store, "dirty", "agent:main:dirty", ["needle common payload"])
    with store.transaction() as transaction:  # a side append: parent is not the leaf
        transaction.append_event("dirty", message("dirty-x", None, "user", "needle", 99))
    return store


@pytest.mark.parametrize(
    ("request_fields", "fts"),
    [
        ({"limit": 3}, '"needle"'),
        ({"limit": 25, "order": "recent"}, '"needle"'),
        ({"session_id": "beta", "role": "assistant"}, '"needle"'),
        ({"query": "need", "match": "prefix"}, '"need"*'),
    ],
)
def test_results_equal_the_baseline_query(payload_store: SqliteBackend, request_fields: dict,
                                          fts: str) -> None:
    fields = {"query": "needle", "agent_id": "main", **request_fields}
    request = SearchRequest(**fields)
    result = payload_store.search(request)
    limit = fields.get("limit", 10)
    expected = baseline(payload_store, fts, limit=limit, order=fields.get("order", "relevance"),
                        session_id=fields.get("session_id"), role=fields.get("role"))
    got = [(hit.session_key, hit.session_id, hit.message_id, hit.role, hit.timestamp,
            hit.snippet, hit.score) for hit in result.hits]
    assert got == expected[:limit]
    assert result.truncated == (len(expected) > limit)
    assert result.indexing is True
    assert all(hit.session_id != "dirty" for hit in result.hits)


def test_snippet_runs_only_for_the_limit_plus_one_candidates(payload_store: SqliteBackend) -> None:
    statements: list[str] = []
    payload_store._connection.set_trace_callback(statements.append)
    payload_store.search(SearchRequest("needle", agent_id="main", limit=3))
    payload_store._connection.set_trace_callback(None)
    with_snippet = [sql for sql in statements if "snippet(" in sql]
    assert len(with_snippet) == 1
    assert "candidates" not in with_snippet[0]
    rowid_list = json.loads(with_snippet[0].rsplit("json_each('", 1)[1].split("')", 1)[0])
    assert len(rowid_list) == 4


# ---- storage rules ------------------------------------------------------------------


def test_schema_pragmas_and_registry(store: SqliteBackend) -> None:
    (fts_sql,) = store._connection.execute(
        "SELECT sql FROM sqlite_master WHERE name = 'session_transcript_fts'").fetchone()
    assert "tokenize = 'unicode61 remove_diacritics 2'" in fts_sql
    assert "message_id UNINDEXED" in fts_sql
    assert store._connection.execute("PRAGMA journal_mode").fetchone() == ("delete",)
    assert store._connection.execute("PRAGMA synchronous").fetchone() == (2,)  # FULL
    assert backend_class("sqlite") is SqliteBackend
    assert SqliteBackend.claims(store.directory)
    assert not SqliteBackend.claims(store.directory / "elsewhere")


def test_a_failed_transaction_leaves_nothing(store: SqliteBackend) -> None:
    with pytest.raises(RuntimeError), store.transaction() as transaction:
        transaction.put_window(SessionWindow("s1", "agent:main:main"))
        transaction.append_event("s1", message("m1", None, "user", "vanishing words", 1))
        raise RuntimeError("abort")
    assert store.stats()["windows"] == 0
    assert store.search(SearchRequest("vanishing", agent_id="main")).hits == ()


def test_read_only_reopen_searches_a_closed_database(tmp_path: Path) -> None:
    writer = SqliteBackend.create(tmp_path / "store")
    add_session(writer, "s1", "agent:main:main", ["closed database words"])
    writer.close()
    reader = SqliteBackend.open(tmp_path / "store")
    try:
        result = reader.search(SearchRequest("closed", agent_id="main"))
        assert [hit.message_id for hit in result.hits] == ["s1-000"]
        with pytest.raises(UsageError, match="read-only"), reader.transaction():
            pass
        with pytest.raises(UsageError):
            reader.reconcile()
    finally:
        reader.close()


def test_create_and_open_errors(tmp_path: Path) -> None:
    SqliteBackend.create(tmp_path / "store").close()
    with pytest.raises(StoreError, match="already exists"):
        SqliteBackend.create(tmp_path / "store")
    with pytest.raises(StoreError, match="missing"):
        SqliteBackend.open(tmp_path / "nothing")
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / DATABASE_NAME).write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(CorruptFile, match="not a session-search sqlite store"):
        SqliteBackend.open(tmp_path / "junk")


def test_bad_writes_name_the_problem(store: SqliteBackend) -> None:
    missing = pytest.raises(UnknownSession, match="unknown session id 'nope'")
    with missing, store.transaction() as transaction:
        transaction.append_event("nope", message("m1", None, "user", "x", 1))
    no_id = pytest.raises(InputError, match='non-blank string "id"')
    with no_id, store.transaction() as transaction:
        transaction.put_window(SessionWindow("s1", "agent:main:main"))
        transaction.append_event("s1", {"type": "message", "message": {"role": "user"}})
    bad_reason = pytest.raises(InputError, match="unknown window reason")
    with bad_reason, store.transaction() as transaction:
        transaction.put_window(SessionWindow("s1", "agent:main:main", reason="reboot"))


@pytest.mark.parametrize(
    ("fields", "message_text"),
    [
        ({"query": "x", "order": "oldest"}, "order must be one of: relevance, recent (got 'oldest')"),
        ({"query": "x", "role": "toolResult"}, "role must be one of: user, assistant (got 'toolResult')"),
        ({"query": "x", "match": "fuzzy"}, "match must be one of: exact, prefix (got 'fuzzy')"),
        ({"query": "\t\n"}, "query must not be empty"),
    ],
)
def test_bad_requests_raise_query_errors(store: SqliteBackend, fields: dict, message_text: str) -> None:
    with pytest.raises(QueryError) as raised:
        store.search(SearchRequest(agent_id="main", **fields))
    assert str(raised.value) == message_text


def test_transcripts_that_predate_the_index_are_backfilled(store: SqliteBackend) -> None:
    with store.transaction() as transaction:
        transaction.put_window(SessionWindow("old", "agent:main:old"))
    # A doctor-style import: events land without going through the forward indexer.
    store._connection.executemany(
        "INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES (?, ?, ?, 0)",
        [("old", 0, json.dumps(message("o1", None, "user", "imported archive words", 5))),
         ("old", 1, json.dumps(message("o2", "o1", "assistant", "more archive words", 6)))],
    )
    assert store.index_status() is True
    before = store.search(SearchRequest("archive", agent_id="main"))
    assert (before.hits, before.indexing) == ((), True)
    assert store.reconcile() == 1
    after = store.search(SearchRequest("archive", agent_id="main", order="recent"))
    assert [hit.message_id for hit in after.hits] == ["o2", "o1"]
    assert after.indexing is False
    assert store.index_status() is False


def test_reconcile_sweeps_orphaned_index_rows(store: SqliteBackend) -> None:
    store._connection.execute(
        "INSERT INTO session_transcript_fts_rows (id, session_id, message_id) VALUES (77, 'ghost', 'g1')")
    store._connection.execute(
        "INSERT INTO session_transcript_fts (rowid, text, session_id, message_id, role, timestamp) "
        "VALUES (77, 'ghost words', 'ghost', 'g1', 'user', 1)")
    assert store.reconcile() == 0
    (count,) = store._connection.execute(
        "SELECT count(*) FROM session_transcript_fts WHERE session_transcript_fts MATCH 'ghost'").fetchone()
    assert count == 0


def test_unsafe_text_and_queries_never_break_sql(store: SqliteBackend) -> None:
    add_session(store, "s1", "agent:main:main", ["lone \ud800 surrogate text", "nul\x00separated words"])
    hit = store.search(SearchRequest("surrogate", agent_id="main")).hits[0]
    assert hit.snippet == "lone \ufffd surrogate text"  # the documented divergence
    assert [h.message_id for h in store.search(SearchRequest("nul\x00separated", agent_id="main")).hits] == ["s1-001"]
    for query in ['"', "NEAR(a b)", "col:x", "*star", "a AND", "^x", "'; DROP TABLE x; --"]:
        assert store.search(SearchRequest(query, agent_id="main")).hits == ()


def test_stats_count_what_was_written(store: SqliteBackend) -> None:
    add_session(store, "s1", "agent:main:main", ["one", "two"])
    add_session(store, "s2", "agent:work:main", ["three"])
    add_session(store, "s3", "global", ["four"])
    stats = store.stats()
    assert {key: stats[key] for key in ("agents", "sessions", "windows", "events", "messages_indexed")} == {
        "agents": 2, "sessions": 3, "windows": 3, "events": 4, "messages_indexed": 4}
    assert stats["bytes"] > 0


def test_glob_literal_escapes_only_metacharacters() -> None:
    assert glob_literal("work_team") == "work_team"
    assert glob_literal("a*?[b]") == "a[*][?][[]b]"


# ---- differential: the SQLite backend against the reference backend -----------------

DIFFERENTIAL_WORDS = [
    "alpha", "Beta", "gamma", "alphabet", "per", "session", "Café", "cafe", "ΟΣ", "ος", "会议",
    "明天会议讨论", "テスト", "회의를", "🤯", "x1", "42", "OR", "e-mail", "end.", "note:", "ǖber",
    "cat", "concatenate",
]
DIFFERENTIAL_SEPARATORS = [" ", " ", " ", ", ", ". ", ": ", " - ", "\n", " 😀 "]
DIFFERENTIAL_KEYS = ["agent:main:a", "agent:main:b", "agent:work_team:x", "global", "agent:workxteam:y"]


def random_corpus(rng: random.Random) -> tuple[list[tuple[str, str, bool]], list[tuple[str, dict]]]:
    """Windows (some archived) and chained messages, with occasional side appends (dirty)."""
    windows = [(f"w{index}", rng.choice(DIFFERENTIAL_KEYS), rng.random() < 0.15)
               for index in range(rng.randint(1, 5))]
    events = []
    for session_id, _key, _archived in windows:
        parent = None
        for index in range(rng.randint(0, 12)):
            text = "".join(rng.choice(DIFFERENTIAL_WORDS) + rng.choice(DIFFERENTIAL_SEPARATORS)
                           for _ in range(rng.randint(1, 70)))
            message_id = f"{session_id}-m{index}"
            role = rng.choice(["user", "assistant", "toolResult"])
            events.append((session_id, message(message_id, parent if rng.random() > 0.05 else None,
                                               role, text, rng.randint(0, 5))))
            parent = message_id
    return windows, events


def random_request(rng: random.Random) -> SearchRequest:
    terms = [rng.choice(DIFFERENTIAL_WORDS) for _ in range(rng.randint(1, 3))]
    terms = [term if rng.random() < 0.6 else term[: max(1, len(term) // 2)] for term in terms]
    return SearchRequest(
        " ".join(terms),
        agent_id=rng.choice(["main", "work_team", None]),
        limit=rng.choice([None, 1, 3, 25]),
        match=rng.choice(["exact", "prefix"]),
        order=rng.choice(["relevance", "recent"]),
        session_keys=rng.choice([None, (), ("agent:main:a", "global")]),
        role=rng.choice([None, "user", "assistant"]),
    )


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_sqlite_and_reference_backends_return_identical_results(seed: int, tmp_path: Path) -> None:
    reference_module = pytest.importorskip("engine.backends.reference")
    rng = random.Random(seed)
    for trial in range(8):
        backends = [SqliteBackend.create(tmp_path / f"sqlite-{trial}"),
                    reference_module.ReferenceBackend.create(tmp_path / f"reference-{trial}")]
        try:
            windows, events = random_corpus(rng)
            for backend in backends:
                with backend.transaction() as transaction:
                    for session_id, key, archived in windows:
                        transaction.put_window(SessionWindow(session_id, key, archived=archived))
                for session_id, event in events:
                    with backend.transaction() as transaction:
                        transaction.append_event(session_id, event, created_at=0.0)
            for phase in ("before reconcile", "after reconcile"):
                if phase == "after reconcile":
                    assert backends[0].reconcile() == backends[1].reconcile()
                for _ in range(15):
                    request = random_request(rng)
                    sqlite_result, reference_result = (backend.search(request) for backend in backends)
                    assert sqlite_result == reference_result, (seed, trial, phase, request)
        finally:
            for backend in backends:
                backend.close()


def test_windows_and_events_read_back_as_written(store: SqliteBackend) -> None:
    first = SessionWindow("w1", "agent:main:main", current=False, title="Première", kind="chat",
                          group="ops", created_at=12.5, extra={"chatType": "direct", "n": [1, 2]})
    second = SessionWindow("w2", "agent:main:main", previous_session_id="w1", reason="reset",
                           archived=True, incognito=True, spawned_by="agent:main:other")
    third = SessionWindow("w3", "global")
    event = message("m1", None, "user", "lone \ud800 kept in the event", 7)
    with store.transaction() as transaction:
        for window in (first, third, second):
            transaction.put_window(window)
        transaction.append_event("w1", event, created_at=99.0)
    assert store.windows() == [first, third, second]
    assert [window.extra for window in store.windows()] == [first.extra, {}, {}]
    assert store.windows_of("agent:main:main") == [first, second]
    assert store.session_keys() == ["agent:main:main", "global"]
    (stored,) = store.events("w1")
    assert (stored.seq, stored.event, stored.created_at) == (0, event, 99.0)
    assert store.event_count("w1") == 1 and store.event_count("w2") == 0
    with pytest.raises(UnknownSession):
        store.events("nope")


def test_the_importer_loads_a_corpus_into_a_sqlite_store(store: SqliteBackend) -> None:
    ingest = pytest.importorskip("engine.ingest")
    demo = Path(__file__).resolve().parents[2] / "engine" / "demo_corpus"
    if not demo.is_dir():
        pytest.skip("engine/demo_corpus is not in this checkout")
    report = ingest.import_sources(store, [demo])
    assert report.windows == store.stats()["windows"] > 0
    assert report.events == store.stats()["events"]


def test_a_missing_database_returns_empty_results_without_creating_it(tmp_path: Path) -> None:
    result = search_database(tmp_path / "absent", SearchRequest("anything", agent_id="main"))
    assert result.to_json() == {"hits": [], "indexing": False, "truncated": False}
    assert not (tmp_path / "absent").exists()
    with pytest.raises(QueryError, match="query must not be empty"):
        search_database(tmp_path / "absent", SearchRequest("  ", agent_id="main"))


def test_a_lagging_watermark_hides_the_window_until_reconcile(store: SqliteBackend) -> None:
    add_session(store, "s1", "agent:main:main", ["watermark words", "more watermark words"])
    store._connection.execute("UPDATE session_transcript_index_state SET indexed_seq = 0")
    result = store.search(SearchRequest("watermark", agent_id="main"))
    assert (result.hits, result.indexing) == ((), True)
    assert store.reconcile() == 1
    result = store.search(SearchRequest("watermark", agent_id="main"))
    assert ([hit.message_id for hit in result.hits], result.indexing) == (["s1-000", "s1-001"], False)
