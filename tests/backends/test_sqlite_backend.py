"""The SQLite FTS5 backend: conformance cases, the upstream baseline query, storage rules.

Every case of `engine/conformance/cases/` runs here; the other tests pin what only this
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

from engine.backends.sqlite import schema, search
from engine.backends.sqlite.backend import DATABASE_NAME, SqliteBackend, search_database
from engine.backends.sqlite.search import glob_literal
from engine.errors import (
    CorruptFile,
    InputError,
    QueryError,
    StoreError,
    UnknownSession,
    UsageError,
)
from engine.model import SearchRequest, SessionWindow
from engine.store.registry import backend_class
from tests.conformance.suite import CASES, assert_case_passes, case_id, in_process_target


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


@pytest.fixture(scope="module")
def conformance_target():
    with in_process_target("sqlite") as target:
        yield target


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_conformance_case(case, conformance_target) -> None:
    assert_case_passes(conformance_target, case)


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
    statement = with_snippet[0]
    # Stage 1, the materialised CTE, picks limit + 1 = 4 rowids without snippet() ...
    candidates, outer = statement.split(" LIMIT 4) ", 1)
    assert candidates.startswith("WITH candidates AS MATERIALIZED (") and "snippet(" not in candidates
    # ... and stage 2 runs snippet() on the FTS rows of those rowids only: the plan loops
    # over the candidates and reads each FTS row by rowid (FTS5 plan "=": rowid equality).
    assert "snippet(" in outer and "FROM candidates AS c CROSS JOIN session_transcript_fts" in outer
    plan = [row[3] for row in payload_store._connection.execute(
        "EXPLAIN QUERY PLAN " + statement)]
    outer_steps = plan[plan.index("SCAN c"):]
    assert outer_steps[1].startswith("SCAN f VIRTUAL TABLE INDEX 0:=M")


# ---- storage rules ------------------------------------------------------------------


def test_schema_pragmas_and_registry(store: SqliteBackend) -> None:
    (fts_sql,) = store._connection.execute(
        "SELECT sql FROM sqlite_master WHERE name = 'session_transcript_fts'").fetchone()
    assert "tokenize = 'unicode61 remove_diacritics 2'" in fts_sql
    assert "message_id UNINDEXED" in fts_sql
    pragmas = {name: store._connection.execute(f"PRAGMA {name}").fetchone()[0]
               for name in ("journal_mode", "synchronous", "foreign_keys", "auto_vacuum",
                            "busy_timeout", "journal_size_limit", "wal_autocheckpoint")}
    assert pragmas == {"journal_mode": "wal", "synchronous": 2, "foreign_keys": 1,  # FULL
                       "auto_vacuum": 2, "busy_timeout": 5000,  # INCREMENTAL
                       "journal_size_limit": 64 * 2**20, "wal_autocheckpoint": 1000}
    shadow_tables = {f"session_transcript_fts_{part}" for part in ("config", "content", "data", "docsize", "idx")}
    tables = {row[0] for row in store._connection.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table'")} - shadow_tables
    assert tables == {  # behaviour.md §2.2, then our own (session_search_*)
        "session_nodes", "session_windows", "transcript_events", "transcript_event_identities",
        "session_transcript_active_events", "session_transcript_index_state",
        "session_transcript_fts", "session_transcript_fts_rows",
        "session_transcript_cold_archives", "session_transcript_archives",
        "session_search_store", "session_search_windows", "session_search_reconcile_queue",
    }
    assert backend_class("sqlite") is SqliteBackend
    assert SqliteBackend.claims(store.directory)
    assert not SqliteBackend.claims(store.directory / "elsewhere")


def test_the_indexes_beyond_upstreams_are_ours_and_each_is_read(store: SqliteBackend) -> None:
    """The footprint rule of `schema`: a new database has upstream's indexes and exactly
    `OWN_INDEXES` besides; each partial index of ours is in the plan of the statement it
    is kept for (the exclusions of every search, the archived count of its status)."""
    upstream = sqlite3.connect(":memory:")
    upstream.executescript(schema.UPSTREAM_TABLES)
    indexes = "SELECT name FROM sqlite_master WHERE type = 'index'"
    upstreams = {row[0] for row in upstream.execute(indexes)}
    ours = {row[0] for row in store._connection.execute(indexes)}
    assert upstreams <= ours and ours - upstreams == schema.OWN_INDEXES
    plans = {
        "session_search_dirty_windows": search.excluded_windows_sql(schema.OWN),
        "session_search_windows_archived": search.status_statement(schema.OWN, "all", False),
    }
    for index, sql in plans.items():
        plan = " | ".join(row[3] for row in store._connection.execute("EXPLAIN QUERY PLAN " + sql))
        assert f"USING INDEX {index}" in plan, (index, plan)


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
    reference_module = pytest.importorskip("engine.backends.reference.backend")
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


def test_a_lagging_watermark_says_indexing_and_keeps_its_rows_until_reconcile(
        store: SqliteBackend) -> None:
    """§5.3 hides only dirty windows: a lagging one's rows stay searchable (as upstream's
    kernel keeps them), and `indexing` is true until reconcile catches it up."""
    add_session(store, "s1", "agent:main:main", ["watermark words", "more watermark words"])
    store._connection.execute("UPDATE session_transcript_index_state SET indexed_seq = 0")
    result = store.search(SearchRequest("watermark", agent_id="main"))
    assert ([hit.message_id for hit in result.hits], result.indexing) == (["s1-000", "s1-001"], True)
    assert store.reconcile() == 1
    result = store.search(SearchRequest("watermark", agent_id="main"))
    assert ([hit.message_id for hit in result.hits], result.indexing) == (["s1-000", "s1-001"], False)


# ---- the reconcile queue: indexed state, kept by triggers ------------------------------


def queued_and_expected(store: SqliteBackend) -> tuple[set[str], set[str]]:
    """The queue the triggers keep, and `lifecycle.needs_reconcile` over every window."""
    from engine.index.lifecycle import WindowIndexState, needs_reconcile

    connection = store._connection
    queued = {row[0] for row in connection.execute("SELECT session_id FROM session_search_reconcile_queue")}
    expected = set()
    for session_id, indexed_seq, leaf, needs_rebuild, last_seq in connection.execute(
            "SELECT w.session_id, s.indexed_seq, s.leaf_event_id, s.needs_rebuild, "
            "(SELECT coalesce(max(seq), -1) FROM transcript_events AS e WHERE e.session_id = w.session_id) "
            "FROM session_windows AS w LEFT JOIN session_transcript_index_state AS s "
            "ON s.session_id = w.session_id"):
        state = None if indexed_seq is None else WindowIndexState(indexed_seq, leaf, bool(needs_rebuild))
        if needs_reconcile(state, last_seq):
            expected.add(session_id)
    return queued, expected


@pytest.mark.parametrize("seed", [4, 5, 6])
def test_the_reconcile_queue_is_the_needs_reconcile_predicate(seed: int, tmp_path: Path) -> None:
    rng = random.Random(seed)
    store = SqliteBackend.create(tmp_path / "store")
    try:
        windows, events = random_corpus(rng)
        with store.transaction() as transaction:
            for session_id, key, archived in windows:
                transaction.put_window(SessionWindow(session_id, key, archived=archived))
        for session_id, event in events:
            with store.transaction() as transaction:
                transaction.append_event(session_id, event, created_at=0.0)
            queued, expected = queued_and_expected(store)
            assert queued == expected
        connection = store._connection
        session_ids = [session_id for session_id, _, _ in windows]
        tamperings = [  # what another writer (an upstream doctor import, a bug) may do
            "DELETE FROM session_transcript_index_state WHERE session_id = ?",
            "UPDATE session_transcript_index_state SET indexed_seq = indexed_seq - 1 WHERE session_id = ?",
            "UPDATE session_transcript_index_state SET needs_rebuild = 1 - needs_rebuild WHERE session_id = ?",
            ("DELETE FROM transcript_events WHERE session_id = ? AND seq = "
            "(SELECT max(seq) FROM transcript_events WHERE session_id = ?1)"),
            ("INSERT INTO transcript_events (session_id, seq, event_json, created_at) SELECT ?1, "
            "coalesce(max(seq), -1) + 1, '{}', 0 FROM transcript_events WHERE session_id = ?1"),
        ]
        for _ in range(12):
            sql = rng.choice(tamperings)
            connection.execute(sql, (rng.choice(session_ids),))
            queued, expected = queued_and_expected(store)
            assert queued == expected, sql
        assert store.index_status() == bool(expected)
        store.reconcile()
        assert queued_and_expected(store) == (set(), set())
        with store.transaction() as transaction:
            transaction.delete_session(windows[0][1])
        assert queued_and_expected(store) == (set(), set())
    finally:
        store.close()


def test_deleting_a_session_removes_every_row_of_its_windows(store: SqliteBackend) -> None:
    add_session(store, "s1", "agent:main:main", ["doomed words", "more doomed words"])
    add_session(store, "s2", "agent:main:other", ["kept words"])
    with store.transaction() as transaction:
        assert transaction.delete_session("agent:main:main") == 1
    connection = store._connection
    for table in ("session_nodes", "session_windows", "session_search_windows",
                  "transcript_events", "transcript_event_identities",
                  "session_transcript_active_events", "session_transcript_index_state",
                  "session_transcript_fts_rows", "session_transcript_fts"):
        column = "session_key" if table == "session_nodes" else "session_id"
        value = "agent:main:main" if table == "session_nodes" else "s1"
        (count,) = connection.execute(f"SELECT count(*) FROM {table} WHERE {column} = ?", (value,)).fetchone()
        assert count == 0, table
    assert [hit.message_id for hit in store.search(SearchRequest("words", agent_id="main")).hits] == ["s2-000"]


def test_rows_are_written_as_upstream_writes_them(store: SqliteBackend) -> None:
    with store.transaction() as transaction:
        transaction.put_window(SessionWindow("s1", "agent:main:main", created_at=1700000000000.5))
        transaction.append_event("s1", {"type": "session", "id": "s1"}, created_at=10.0)
        transaction.append_event("s1", message("m1", None, "user", "hello", 11), created_at=11.0)
        transaction.append_event("s1", message("m2", "m1", "assistant", "world", 12), created_at=12.5)
    connection = store._connection
    assert connection.execute("SELECT session_key, current_session_id FROM session_nodes").fetchall() == [
        ("agent:main:main", "s1")]
    assert connection.execute("SELECT created_at FROM session_windows").fetchall() == [(1700000000000,)]
    assert connection.execute(
        "SELECT event_id, seq, event_type, parent_id FROM transcript_event_identities ORDER BY seq"
    ).fetchall() == [("s1", 0, "session", None), ("m1", 1, "message", None), ("m2", 2, "message", "m1")]
    assert connection.execute(
        "SELECT active_position, event_seq, message_position, context_eligible "
        "FROM session_transcript_active_events ORDER BY active_position").fetchall() == [
        (0, 1, 0, 1), (1, 2, 1, 1)]
    assert connection.execute(
        "SELECT indexed_seq, leaf_event_id, needs_rebuild, active_event_count, active_message_count "
        "FROM session_transcript_index_state").fetchall() == [(2, "m2", 0, 2, 2)]
    assert connection.execute(
        "SELECT r.id, r.message_id, f.rowid, f.text FROM session_transcript_fts_rows AS r "
        "JOIN session_transcript_fts AS f ON f.rowid = r.id ORDER BY r.id").fetchall() == [
        (1, "m1", 1, "hello"), (2, "m2", 2, "world")]
    assert [event.created_at for event in store.events("s1")] == [10.0, 11.0, 12.5]
    # A rebuild writes the same active path and state.
    connection.execute("UPDATE session_transcript_index_state SET needs_rebuild = 1")
    assert store.reconcile() == 1
    assert connection.execute(
        "SELECT active_position, event_seq, message_position FROM session_transcript_active_events "
        "ORDER BY active_position").fetchall() == [(0, 1, 0), (1, 2, 1)]
    assert connection.execute(
        "SELECT indexed_seq, leaf_event_id, needs_rebuild, active_event_count, active_message_count "
        "FROM session_transcript_index_state").fetchall() == [(2, "m2", 0, 2, 2)]


def test_a_later_event_with_an_id_takes_its_identity(store: SqliteBackend) -> None:
    """Identities are inserted first and rewritten in order only when an id was held
    (`writes.write_identities`): in one batch, and across transactions, the last event
    with an id holds it."""
    with store.transaction() as transaction:
        transaction.put_window(SessionWindow("s1", "agent:main:main"))
        transaction.append_event("s1", message("m1", None, "user", "first", 1))
        transaction.append_event("s1", message("m2", "m1", "assistant", "second", 2))
        transaction.append_event("s1", {"type": "custom", "id": "m1", "parentId": "m2"})
    identities = "SELECT event_id, seq, event_type FROM transcript_event_identities ORDER BY event_id"
    assert store._connection.execute(identities).fetchall() == [
        ("m1", 2, "custom"), ("m2", 1, "message")]
    with store.transaction() as transaction:
        transaction.append_event("s1", message("m2", "m1", "user", "third", 3))
        transaction.append_event("s1", message("m3", "m2", "assistant", "fourth", 4))
    assert store._connection.execute(identities).fetchall() == [
        ("m1", 2, "custom"), ("m2", 3, "message"), ("m3", 4, "message")]


def test_a_database_at_any_file_path(tmp_path: Path) -> None:
    path = tmp_path / "state" / "agents" / "work" / "agent" / "openclaw-agent.sqlite"
    writer = SqliteBackend.create_file(path)
    add_session(writer, "s1", "agent:work:main", ["partition words"])
    reads_inside = []
    with writer.transaction() as transaction:
        transaction.append_event("s1", message("late", "s1-000", "assistant", "partition late", 5))
        reads_inside.append(writer.event_count("s1"))  # a read in the transaction sees it
    assert reads_inside == [2]
    writer.close()
    assert sorted(file.name for file in path.parent.iterdir()) == ["openclaw-agent.sqlite"]
    reader = SqliteBackend.open_file(path)
    try:
        result = reader.search(SearchRequest("partition", agent_id="work"))
        assert [hit.message_id for hit in result.hits] == ["late", "s1-000"]  # newer first on a tie
        assert reader.stats()["windows"] == 1
    finally:
        reader.close()
    assert sorted(file.name for file in path.parent.iterdir()) == ["openclaw-agent.sqlite"]
    with pytest.raises(StoreError, match="already exists"):
        SqliteBackend.create_file(path)
    with pytest.raises(StoreError, match="no sqlite database"):
        SqliteBackend.open_file(tmp_path / "absent.sqlite")


def test_a_reader_opened_before_a_writer_sees_its_commits(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    first = SqliteBackend.create_file(path)
    add_session(first, "s1", "agent:main:main", ["first words"])
    first.close()
    reader = SqliteBackend.open_file(path)  # no -wal: opened immutable
    writer = SqliteBackend.open_file(path, writer=True)
    try:
        assert [hit.message_id for hit in reader.search(SearchRequest("words", agent_id="main")).hits] == ["s1-000"]
        add_session(writer, "s2", "agent:main:two", ["second words"])
        # The writer's -wal appeared: the reader reopened in WAL mode and sees the commit.
        result = reader.search(SearchRequest("words", agent_id="main"))
        assert sorted(hit.message_id for hit in result.hits) == ["s1-000", "s2-000"]
    finally:
        writer.close()
        reader.close()


@pytest.mark.parametrize("fields", [
    {}, {"session_keys": ()}, {"session_keys": ("agent:main:a", "global")}, {"order": "recent"},
    {"session_id": "w1", "role": "user"}, {"query": "会议 alpha"}, {"query": "会议"},
])
def test_no_search_statement_walks_the_windows(tmp_path: Path, fields: dict) -> None:
    """`indexing`, the exclusions and the archived count come from indexed state: with many
    windows, some dirty and some archived, no statement of a search scans `session_windows`
    (each reaches it by primary key from an FTS row or an archived window)."""
    store = SqliteBackend.create(tmp_path / "store")
    try:
        for number in range(40):
            add_session(store, f"w{number}", f"agent:main:k{number}", ["alpha 会议讨论 words"],
                        archived=number % 10 == 0)
        with store.transaction() as transaction:  # a side append: w1 needs reconcile
            transaction.append_event("w1", message("side", None, "user", "alpha", 9))
        statements: list[str] = []
        store._connection.set_trace_callback(statements.append)
        result = store.search(SearchRequest(**{"query": "alpha", "agent_id": "main", **fields}))
        store._connection.set_trace_callback(None)
        assert result.indexing is True
        searched = [sql for sql in statements if sql.startswith(("SELECT", "WITH"))]
        assert searched
        for sql in searched:
            plan = [row[3] for row in store._connection.execute("EXPLAIN QUERY PLAN " + sql)]
            walks = [step for step in plan if step.startswith("SCAN") and
                     ("session_windows" in step or step.split()[1] in ("w", "pending"))]
            assert walks == [], (sql, plan)
    finally:
        store.close()
