"""`sqlite-kernel`: upstream's bare search statement on the SQLite backend's own databases.

Owns: the comparator measured beside the `sqlite` backend — the search statement of
behaviour.md §5.4 exactly as upstream states it, run on the database files the backend
wrote for the benchmark, and the bare upstream write path (`bare_write`) for ingest.
Must not touch: the backend (`engine.backends.sqlite`, whose statements are measured
against this one and are not reused here; only its GLOB escaping is), timing, statistics.

The statement is upstream's clauses and nothing else, in the two stages production runs
(a materialised CTE of `limit + 1` candidate rowids, then `snippet()` for those rows):
`session_transcript_fts` joined to `session_windows`; `MATCH` the query's FTS5 string
(`engine.query.user_query`, the same string upstream's `toFtsQuery` makes, with `*` in
prefix mode); the §5.3 scope; `f.session_id = ?` and `f.role = ?` when given; windows with
`needs_rebuild != 0` excluded; ordered `bm25 ASC, timestamp DESC, message_id ASC` or
`timestamp DESC, rowid DESC`; `LIMIT limit + 1`. It computes neither `indexing` nor the
archived count, excludes no other window, and has no CJK retry (a query with CJK terms is
`NotApplicable`: upstream 2026.9.6 has no retry, behaviour.md §7.1 is seed-only).

The timed call (`KernelSearch.run`) executes the statement on each database the request
reaches and fetches the rows; building hits (and merging several agents' databases with
the Gateway's rule, `engine.search.merge`) happens in `result`, after the clock. Which
databases: one agent's partition folder (`<folder>/openclaw-agent.sqlite`) has one; a store
laid out as upstream (`agents/<agentId>/agent/openclaw-agent.sqlite`) has one per agent, and a
request reaches its agent's database (`session_keys=None`), its keys' agents'
(`session_keys`), or every one (`()`).
"""

from __future__ import annotations

import json
import sqlite3
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import msgpack

from engine.backends.sqlite.backend import DATABASE_NAME
from engine.backends.sqlite.search import glob_literal
from engine.bench.bare_write import bare_import
from engine.bench.signals import NotApplicable
from engine.model import DEFAULT_AGENT_ID, SearchRequest, SearchResult, owner_agent_id
from engine.query.cjk import partition_terms
from engine.query.user_query import (
    clamp_limit,
    fts5_match_expression,
    split_terms,
    validate_request,
)
from engine.search.hits import search_hit
from engine.search.merge import merge_partition_results

KERNEL_NAME = "sqlite-kernel"
COMPARED_BACKEND = "sqlite"
SINGLE_DATABASE = DATABASE_NAME
AGENT_DATABASE = Path("agent") / "openclaw-agent.sqlite"


@lru_cache(maxsize=64)
def kernel_statement(scope: str, session_id: bool, role: bool, order: str) -> str:
    """Upstream's search statement for one request shape (`scope`: agent, keys or all).

    >>> "needs_rebuild != 0" in kernel_statement("agent", False, False, "relevance")
    True
    """
    conditions = ["session_transcript_fts MATCH :match"]
    if scope == "agent":
        conditions.append("(w.session_key GLOB :pattern OR w.session_key IN ('global', 'unknown'))")
    elif scope == "keys":
        conditions.append("w.session_key IN (SELECT value FROM json_each(:keys))")
    if session_id:
        conditions.append("f.session_id = :session_id")
    if role:
        conditions.append("f.role = :role")
    conditions.append("f.session_id NOT IN (SELECT session_id FROM session_transcript_index_state "
                      "WHERE needs_rebuild != 0)")
    if order == "recent":
        inner, outer = "f.timestamp DESC, f.rowid DESC", "c.timestamp DESC, c.row_id DESC"
    else:
        inner = "bm25_rank ASC, f.timestamp DESC, f.message_id ASC"
        outer = "c.bm25_rank ASC, c.timestamp DESC, c.message_id ASC"
    return (
        "WITH candidates AS MATERIALIZED (SELECT f.rowid AS row_id,"
        " bm25(session_transcript_fts) AS bm25_rank, w.session_key AS session_key,"
        " f.timestamp AS timestamp, f.message_id AS message_id"
        " FROM session_transcript_fts AS f JOIN session_windows AS w ON w.session_id = f.session_id"
        f" WHERE {' AND '.join(conditions)} ORDER BY {inner} LIMIT :limit)"
        " SELECT c.session_key, f.session_id, f.message_id, f.role, f.timestamp,"
        " snippet(session_transcript_fts, 0, '', '', ' … ', 48), c.bm25_rank"
        " FROM candidates AS c CROSS JOIN session_transcript_fts AS f ON f.rowid = c.row_id"
        f" WHERE session_transcript_fts MATCH :match ORDER BY {outer}"
    )


def kernel_match(request: SearchRequest) -> str:
    """The MATCH string upstream binds for `request` (the query checked as every backend
    checks it); NotApplicable when it has CJK terms, which only the seed's retry finds."""
    terms = split_terms(validate_request(request))
    if partition_terms(terms)[1]:
        raise NotApplicable(f"{KERNEL_NAME}: the upstream kernel has no CJK retry "
                            "(behaviour.md §7.1 is seed-only)")
    return fts5_match_expression(terms, prefix=request.match == "prefix")


@dataclass(frozen=True, slots=True)
class KernelSearch:
    """One request's statement on each database it reaches, ready to run."""

    statements: tuple[tuple[sqlite3.Connection, str, dict[str, Any]], ...]
    limit: int
    order: str = "relevance"

    def run(self) -> list[list[tuple]]:
        """The timed call: execute and fetch, per database."""
        return [connection.execute(sql, values).fetchall()
                for connection, sql, values in self.statements]

    def result(self, rows: list[list[tuple]]) -> SearchResult:
        """The rows as upstream's kernel returns them (§5.2), merged across databases."""
        results = [self._one(database_rows) for database_rows in rows]
        if len(results) == 1:
            return results[0]
        return merge_partition_results(results, self.limit, order=self.order)

    def _one(self, rows: list[tuple]) -> SearchResult:
        hits = [
            search_hit(session_key=key, session_id=session_id, message_id=message_id, role=role,
                       timestamp=timestamp, excerpt=snippet, rank=rank)
            for key, session_id, message_id, role, timestamp, snippet, rank in rows
            if all(isinstance(value, str) for value in (key, session_id, message_id, snippet))
            and role in ("user", "assistant")
        ]
        return SearchResult(hits=tuple(hits[: self.limit]), truncated=len(rows) > self.limit)


class KernelStore:
    """Read-only connections to the databases of one prepared SQLite store."""

    def __init__(self, databases: dict[str | None, Path]) -> None:
        self.paths = dict(databases)
        self.connections: dict[str | None, sqlite3.Connection] = {}
        for agent_id, path in databases.items():
            connection = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True,
                                         isolation_level=None, cached_statements=128)
            connection.execute("PRAGMA query_only = ON")
            connection.execute("PRAGMA trusted_schema = OFF")
            self.connections[agent_id] = connection

    def prepare_search(self, request: SearchRequest) -> KernelSearch:
        """The statement and values for `request` on each database it reaches."""
        limit = clamp_limit(request.limit)
        values: dict[str, Any] = {
            "match": kernel_match(request),
            "limit": limit + 1, "session_id": request.session_id, "role": request.role,
        }
        agent_id = request.agent_id if request.agent_id is not None else DEFAULT_AGENT_ID
        if request.session_keys is None:
            scope = "agent"
            values["pattern"] = "agent:" + glob_literal(agent_id) + ":*"
            agents: set[str | None] | None = {agent_id}
        elif request.session_keys:
            scope = "keys"
            values["keys"] = json.dumps(list(request.session_keys))
            agents = {owner_agent_id(key) for key in request.session_keys}
        else:
            scope, agents = "all", None
        sql = kernel_statement(scope, request.session_id is not None, request.role is not None,
                               request.order)
        reached = [connection for database_agent, connection in self.connections.items()
                   if database_agent is None or agents is None or database_agent in agents]
        return KernelSearch(tuple((connection, sql, values) for connection in reached), limit,
                            request.order)

    def search_command(self, request: SearchRequest, *,
                       with_libraries: bool = False) -> list[str]:
        """The bare search script's command line (`engine.bench.bare_search_script`) for
        `request` across every database: a fresh process that answers it with upstream's
        statement and nothing else, the yardstick of a fresh `search` command
        (`with_libraries`: after importing the engine's libraries). Only a search across
        all agents in relevance order, as the command the reopen workload runs, is
        offered (NotApplicable otherwise)."""
        if request.session_keys != () or request.order != "relevance" or request.role \
                or request.session_id is not None:
            raise NotApplicable(f"{KERNEL_NAME}: the bare script searches every agent by score")
        return [
            sys.executable, "-S", str(Path(__file__).with_name("bare_search_script.py")),
            *(["--with-libraries", library_folder()] if with_libraries else []),
            kernel_statement("all", False, False, "relevance"), kernel_match(request),
            str(clamp_limit(request.limit)),
            *(path.resolve().as_uri() + "?mode=ro" for path in self.paths.values()),
        ]

    def close(self) -> None:
        """Close every connection."""
        for connection in self.connections.values():
            connection.close()


def library_folder() -> str:
    """The folder that holds the installed `msgpack` package: what the bare search
    script, run without `.pth` files (`-S`), puts on its import path to import the
    engine's libraries."""
    return str(Path(msgpack.__path__[0]).parent)  # as imported: no symlink followed


def store_databases(store_directory: Path) -> dict[str | None, Path]:
    """The database files of a SQLite store: its one file, or one per agent."""
    single = store_directory / SINGLE_DATABASE
    if single.is_file():
        return {None: single}
    agents = store_directory / "agents"
    found: dict[str | None, Path] = {}
    if agents.is_dir():
        for folder in sorted(agents.iterdir()):
            if (folder / AGENT_DATABASE).is_file():
                found[folder.name] = folder / AGENT_DATABASE
    return found


class SqliteKernel:
    """The `sqlite-kernel` comparator (see the module docstring)."""

    name = KERNEL_NAME
    compared_backend = COMPARED_BACKEND

    def open(self, store_directory: Path) -> KernelStore:
        """The kernel over the store the `sqlite` backend prepared at `store_directory`."""
        databases = store_databases(store_directory)
        if not databases:
            raise NotApplicable(f"{KERNEL_NAME}: no SQLite database in {store_directory}")
        return KernelStore(databases)

    def bare_import(self, corpus: Path, directory: Path) -> dict[str, int]:
        """The bare upstream write path into `directory/openclaw-agent.sqlite`."""
        return bare_import(corpus, directory / AGENT_DATABASE.name)
