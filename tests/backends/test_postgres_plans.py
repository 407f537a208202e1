"""The plan PostgreSQL chooses for the backend's search (issue 30, "Must show"): on a
100,000-message partition, a selective word scoped to one agent starts from the full-text
index and uses the literal agent range, asserted on the plan's shape, never on time.

The partition is made by the backend (its schema, as every store has it), then filled
by SQL: 100,000 messages over 2,000 windows of 42 agents' keys (`work_team` and
`workxteam` among them), so that the agent range is selective too. A word that only 3
messages hold is searched in agent `work_team`'s namespace with the backend's own
statement (`engine.backends.postgres.search.search_statement`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.backends.postgres.backend import PostgresBackend
from engine.backends.postgres.search import Shape, search_statement

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

AGENT_OF = ("CASE WHEN g % 50 = 0 THEN 'work_team' WHEN g % 50 = 1 THEN 'workxteam' "
            "ELSE 'a' || (g % 40) END")


def fill(backend: PostgresBackend) -> None:
    schema = backend.partition.schema
    connection = backend.reading_connection()
    with connection.transaction():
        connection.execute(
            f'INSERT INTO "{schema}".session_windows (session_id, session_key, reason, current, '
            "kind, incognito, archived, extra) SELECT 's' || g, 'agent:' || "
            f"{AGENT_OF} || ':s' || g, 'initial', true, 'chat', false, false, '{{}}' "
            "FROM generate_series(1, 2000) AS g")
        connection.execute(
            f'INSERT INTO "{schema}".session_transcript_index_state (session_id, last_seq, '
            f'indexed_seq) SELECT session_id, 49, 49 FROM "{schema}".session_windows')
        connection.execute(
            f'INSERT INTO "{schema}".session_transcript_messages (session_id, session_key, '
            "message_id, role, timestamp, seq, text) SELECT w.session_id, w.session_key, "
            "'m' || g, 'user', g, g / 2000, 'message ' || g || ' about ' || "
            "(ARRAY['deploy', 'release', 'saffron', 'ballast'])[1 + g % 4] || ' and ' || "
            "CASE WHEN g IN (50, 100, 150) THEN 'quokka' ELSE md5(g::text) END "
            f'FROM generate_series(1, 100000) AS g JOIN "{schema}".session_windows AS w '
            "ON w.session_id = 's' || (1 + g % 2000)")
    # Statistics from every row, not a sample: ANALYZE samples 300 rows per unit of the
    # target, and a sampled histogram of the keys once put the agent's 2% range at one
    # row (the planner then read the key's btree alone). A target of 1000 reads all
    # 100,000 rows, so the plan under test is the same on every run.
    connection.execute(f'ALTER TABLE "{schema}".session_transcript_messages '
                       "ALTER COLUMN session_key SET STATISTICS 1000")
    connection.execute(f'ANALYZE "{schema}".session_transcript_messages')
    connection.execute(f'ANALYZE "{schema}".session_windows')
    connection.execute(f'ANALYZE "{schema}".session_transcript_index_state')


def plan_nodes(plan: dict) -> list[dict]:
    """Every node of a JSON plan, depth first."""
    nodes = [plan]
    for child in plan.get("Plans", []):
        nodes.extend(plan_nodes(child))
    return nodes


def test_a_selective_word_in_one_agent_starts_from_the_full_text_index(
        postgres_stores: str, tmp_path: Path) -> None:
    backend = PostgresBackend.create(tmp_path / "partition")
    try:
        fill(backend)
        shape = Shape(backend.partition.schema, "agent", False, False, "relevance", True, 0)
        values = {"limit": 26, "session_id": None, "role": None, "query": "'quokka'",
                  "agent": "work_team"}
        connection = backend.reading_connection()
        plan = connection.execute("EXPLAIN (FORMAT JSON) " + search_statement(shape),
                                  values).fetchone()[0][0]["Plan"]
        found = {agent: [row[3] for row in connection.execute(
            search_statement(shape), {**values, "agent": agent}).fetchall() if row[3]]
            for agent in ("work_team", "workxteam")}
    finally:
        backend.close()
    nodes = plan_nodes(plan)
    text = json.dumps(plan)
    scans = [node for node in nodes if node.get("Relation Name") == "session_transcript_messages"
             or node.get("Index Name", "").startswith("session_transcript_")]
    first = [node for node in nodes if node["Node Type"] == "Bitmap Index Scan"
             and node.get("Index Name") == "session_transcript_lexemes"]
    assert first, f"the search does not start from the full-text index: {text}"
    # ... combined with the agent range's btree in a BitmapAnd (both are estimable)
    assert any(node["Node Type"] == "BitmapAnd" and any(
        child.get("Index Name") == "session_transcript_lexemes" for child in plan_nodes(node))
        and any(child.get("Index Name") == "session_transcript_key" for child in plan_nodes(node))
        for node in nodes), text
    assert not any(node["Node Type"] == "Seq Scan"
                   and node.get("Relation Name") == "session_transcript_messages"
                   for node in nodes), text
    # the agent range, inlined from agent_namespace: literal bounds on the key
    assert "agent_namespace" not in text
    assert "session_key >= 'agent:work_team:'" in text.replace('\\"', "").replace("::text", "")
    assert "session_key < 'agent:work_team;'" in text.replace('\\"', "").replace("::text", "")
    assert scans
    # what it finds: message g lies in window s(1 + g % 2000), so the three quokka
    # messages (g = 50, 100, 150) are in windows s51, s101, s151, all of workxteam
    # (window number % 50 == 1); `_` is literal, so work_team finds none of them
    assert found == {"work_team": [], "workxteam": ["s151", "s101", "s51"]}  # newest first
