"""The PostgreSQL search: behaviour.md §5 as one statement over a partition's schema.

Owns: the SQL of a search (scope, exclusions, the full-text match and rank, the order, the
CJK retry's substrings), its parameters, and turning its rows into a `SearchResult`. Must
not touch: the query policy and its compilation (`engine.search.postgres_mode`, from
`engine.query.pg_tsquery`), the excerpt and hit assembly (`postgres_excerpt`,
`engine.search.hits`), the layout (`schema`), writing. Those are shared with the reference
engine's `postgres` expectation mode, so the two agree by construction where they can,
and the differential test (`tests/parity/test_postgres_differential.py`) checks the rest.

One statement, one snapshot: a `status` CTE (`indexing`: one probe of the "needs
reconcile" partial index; the archived windows in scope, through their partial index)
joined to a `hits` CTE::

    SELECT ... FROM S.session_transcript_messages AS m
    WHERE m.lexemes @@ $query::tsquery                        (the compiled query, as text)
      AND S.agent_namespace(m.session_key, $agent)           (or = ANY($keys), or nothing)
      AND m.session_id NOT IN (dirty windows UNION ALL archived windows)
      [AND m.session_id = $session_id] [AND m.role = $role]
      [AND m.text ILIKE $pattern AND lower_ascii(m.text) LIKE $folded ...]   (the retry)
    ORDER BY ts_rank(m.lexemes, $query, 1) DESC, m.timestamp DESC NULLS LAST,
             m.message_id, m.session_id, m.id          (recent: m.timestamp DESC, m.id DESC)
    LIMIT $limit + 1

The scope's agent predicate is `agent_namespace`, a SQL function the planner inlines into
the literal half-open range `[ 'agent:<id>:', 'agent:<id>;' )` on the `COLLATE "C"` key
(behaviour.md §7.4): it is estimable, uses the key's btree and combines with the GIN index
in a BitmapAnd when the agent is selective. A retry's substring is `ILIKE` (the trigram
index serves it; it folds more than SQLite's `LIKE`, so it only narrows) and then the exact
comparison: the text with ASCII letters lowered `LIKE` the needle so lowered (SQLite's LIKE
folds ASCII only). A query whose compiled form matches nothing (an empty term) runs only
the status part.

Known divergence from the other backends: the ranking is PostgreSQL's (`ts_rank`, no
corpus statistics), as the seed allows ("its native ranking is engine-local"); the
reference's `postgres` mode predicts it exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

import psycopg

from engine.backends.postgres.connection import is_storable
from engine.backends.postgres.writes import Statements
from engine.model import DEFAULT_AGENT_ID, SearchHit, SearchResult
from engine.query.checked_request import CheckedRequest
from engine.query.cjk import like_pattern
from engine.query.pg_tsquery import PgQuery
from engine.search.hits import search_hit
from engine.search.merge import NO_ANSWER, PartitionAnswer
from engine.search.postgres_mode import postgres_excerpt, postgres_queries

ASCII_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
ASCII_LOWER = "abcdefghijklmnopqrstuvwxyz"


@dataclass(frozen=True, slots=True)
class Shape:
    """What a search statement's text depends on (never on the values it binds)."""

    schema: str
    scope: str  # "agent", "keys" or "all"
    session_id: bool
    role: bool
    order: str
    ranked: bool
    needles: int


def scope_sql(shape: Shape) -> str:
    """The §5.3 key scope over alias `alias`.key (`m` for messages, `w` for windows)."""
    if shape.scope == "agent":
        return f'"{shape.schema}".agent_namespace({{alias}}.session_key, %(agent)s)'
    if shape.scope == "keys":
        return "{alias}.session_key = ANY(%(keys)s::text[])"
    return "true"


def _order_sql(shape: Shape) -> str:
    if shape.order == "recent":
        return "m.timestamp DESC NULLS LAST, m.id DESC"
    rank = "rank DESC, " if shape.ranked else ""
    return rank + "m.timestamp DESC NULLS LAST, m.message_id, m.session_id, m.id"


def _status_sql(shape: Shape) -> str:
    sql = Statements(shape.schema)
    windows, states = sql.table("session_windows"), sql.table("session_transcript_index_state")
    session_filter = " AND w.session_id = %(session_id)s" if shape.session_id else ""
    return (
        f"SELECT EXISTS (SELECT 1 FROM {states} WHERE last_seq > CASE WHEN indexed_seq IS NULL"
        " OR needs_rebuild THEN -1 ELSE indexed_seq END) AS indexing, "
        f"(SELECT count(*) FROM {windows} AS w WHERE w.archived AND "
        f"{scope_sql(shape).format(alias='w')}{session_filter}) AS archived")


@lru_cache(maxsize=256)
def search_statement(shape: Shape) -> str:
    """The status and hits of one search, in one statement."""
    sql = Statements(shape.schema)
    windows, states = sql.table("session_windows"), sql.table("session_transcript_index_state")
    status = _status_sql(shape)
    conditions = [scope_sql(shape).format(alias="m"),
                  (f"m.session_id NOT IN (SELECT session_id FROM {states} WHERE needs_rebuild "
                  f"UNION ALL SELECT session_id FROM {windows} WHERE archived)")]
    if shape.ranked:
        conditions.insert(0, "m.lexemes @@ %(query)s::tsquery")
    if shape.session_id:
        conditions.append("m.session_id = %(session_id)s")
    if shape.role:
        conditions.append("m.role = %(role)s")
    for number in range(shape.needles):
        conditions.append(f"m.text ILIKE %(needle{number})s AND translate(m.text, "
                          f"'{ASCII_UPPER}', '{ASCII_LOWER}') LIKE %(folded{number})s")
    rank = ("ts_rank(m.lexemes, %(query)s::tsquery, 1)::float8" if shape.ranked
            else "0.0::float8")
    hits = (f"SELECT m.id, m.session_key, m.session_id, m.message_id, m.role, m.timestamp, "
            f"m.text, {rank} AS rank FROM {sql.table('session_transcript_messages')} AS m "
            f"WHERE {' AND '.join(conditions)} ORDER BY {_order_sql(shape)} "
            "LIMIT %(limit)s")
    return (f"WITH status AS ({status}), hits AS ({hits}) SELECT status.indexing, "
            "status.archived, m.session_key, m.session_id, m.message_id, m.role, m.timestamp, "
            "m.text, m.rank FROM status LEFT JOIN hits AS m ON true "
            f"ORDER BY {_order_sql(shape)}")


@lru_cache(maxsize=256)
def status_statement(shape: Shape) -> str:
    """The status part alone (a query that matches nothing)."""
    return _status_sql(shape)


def _parameters(request: CheckedRequest, query: PgQuery, limit: int) -> dict[str, Any]:
    session_id = request.session_id
    values: dict[str, Any] = {"limit": limit + 1, "role": request.role, "query": query.text(),
                              # an id no stored window can have: NULL, which matches none
                              "session_id": session_id if session_id is None
                              or is_storable(session_id) else None}
    if request.session_keys is None:
        agent = request.agent_id if request.agent_id is not None else DEFAULT_AGENT_ID
        # An id PostgreSQL text cannot hold names no stored key: NULL bounds match none
        # (`global` and `unknown` still do).
        values["agent"] = agent if is_storable(agent) else None
    elif request.session_keys:
        values["keys"] = [key for key in request.session_keys
                          if isinstance(key, str) and is_storable(key)]
    for number, needle in enumerate(query.substrings):
        values[f"needle{number}"] = like_pattern(needle)
        values[f"folded{number}"] = like_pattern(needle.translate(
            str.maketrans(ASCII_UPPER, ASCII_LOWER)))
    return values


def _shape(schema: str, request: CheckedRequest, query: PgQuery) -> Shape:
    if request.session_keys is None:
        scope = "agent"
    elif request.session_keys:
        scope = "keys"
    else:
        scope = "all"
    return Shape(schema, scope, request.session_id is not None, request.role is not None,
                 request.order, bool(query.phrases), len(query.substrings))


def _run(connection: psycopg.Connection, schema: str, request: CheckedRequest,
         query: PgQuery) -> tuple[bool, int, list[tuple]]:
    """`indexing`, the archived windows in scope, and the hit rows of one statement."""
    shape = _shape(schema, request, query)
    values = _parameters(request, query, request.page_limit)
    if query.matches_nothing:
        indexing, archived = connection.execute(status_statement(shape), values).fetchone()
        return bool(indexing), int(archived), []
    rows = connection.execute(search_statement(shape), values).fetchall()
    indexing, archived = rows[0][0], rows[0][1]
    return bool(indexing), int(archived), [row[2:] for row in rows if row[3] is not None]


def search_answer(connection: psycopg.Connection, schema: str,
                  request: CheckedRequest) -> PartitionAnswer:
    """The store-level search of behaviour.md §5 on one partition (module docstring), its
    hits without excerpts and the `finish` that cuts them for the hits a merge keeps
    (`engine.search.merge.PartitionAnswer`)."""
    queries = postgres_queries(request.trimmed_query, request.match)
    query = queries.words
    indexing, archived, rows = _run(connection, schema, request, query)
    if not rows and queries.retry is not None:
        query = queries.retry
        indexing, archived, rows = _run(connection, schema, request, query)
    limit = request.page_limit
    if not rows and not indexing and not archived:
        return NO_ANSWER
    kept = rows[:limit]
    result = SearchResult(hits=tuple(_hit(row, ("", ())) for row in kept),
                          truncated=len(rows) > limit, indexing=indexing,
                          archived_transcripts_excluded=archived)
    if not kept:
        return PartitionAnswer(result)
    return PartitionAnswer(result, lambda positions: [
        _hit(kept[position], postgres_excerpt(kept[position][5], query))
        for position in positions])


def run_search(connection: psycopg.Connection, schema: str,
               request: CheckedRequest) -> SearchResult:
    """`search_answer` with every hit's excerpt."""
    answer = search_answer(connection, schema, request)
    if answer.finish is None:
        return answer.result
    return replace(answer.result,
                   hits=tuple(answer.finish(range(len(answer.result.hits)))))


def _hit(row: tuple, excerpt: tuple[str, tuple[tuple[int, int], ...]]) -> SearchHit:
    """The hit of a row (key, id, message, role, time, text, rank) with its excerpt."""
    session_key, session_id, message_id, role, timestamp, _text, rank = row
    return search_hit(session_key=session_key, session_id=session_id, message_id=message_id,
                      role=role, timestamp=timestamp, excerpt=excerpt[0], rank=-rank,
                      matched=excerpt[1])
