"""The SQLite search: behaviour.md §5 as statements over the upstream tables.

Owns: the SQL of a search (scope, exclusions, the two-stage query, the CJK retry of §7.1),
its parameters, and turning its rows into a `SearchResult`. Must not touch: the query
policy (`engine.query.user_query`, `engine.query.cjk`), hit assembly and its bounds
(`engine.search.hits`), writing, the layout (`schema`). Those are shared with the
reference backend so that the two agree by construction; this module only turns them
into SQL.

A search, for a checked request (`engine.query.checked_request`: its trimmed query and
clamped limit, checked where it entered the engine and not again here), runs in one
read transaction (one snapshot), as two statements:

1. **Status**: `indexing` (a window needs reconcile) and the archived windows in scope
   (`archived_transcripts_excluded`). On a database this backend made both come from
   indexed state — the reconcile queue the schema's triggers keep, and the partial index
   of archived windows — so no statement walks the windows. On a database OpenClaw wrote,
   the queue is the needs-reconcile predicate over its windows (upstream evaluates the
   same per search) and the archived windows are its cold archives.
2. **Hits**, one statement in two stages (§5.4, as production runs it): a materialised CTE
   of the `limit + 1` candidate rowids, in order, then `snippet()` for those rows only.
   * from `session_transcript_fts` (`f`) joined to `session_windows` (`w`);
   * scope (§5.3): `session_keys=None` → `w.session_key GLOB 'agent:<id>:*'` (the id's `*`,
     `?`, `[` written as character classes, so `_` and every other character is literal)
     or `w.session_key IN ('global', 'unknown')`; a non-empty tuple → `IN (SELECT value
     FROM json_each(?))` (one bound JSON array: 33,000 keys need no 33,000 parameters);
     `()` → every window. Plus `f.session_id = ?` and `f.role = ?` when given;
     `agent_id=None` means the default agent `main`;
   * excluded: the windows needing reconcile and the archived ones (one `NOT IN`);
   * `MATCH fts5_match_expression(terms)`, ordered `bm25 ASC, timestamp DESC, message_id
     ASC` (then `session_id ASC, rowid ASC`, our deterministic tie-breaks where the
     baseline leaves the order open), or `timestamp DESC, rowid DESC` for `recent`;
   * the outer query reads each candidate's FTS row by rowid under the same MATCH (so
     `snippet(…, 0, '', '', ' … ', 48)` has its phrase positions) and keeps the order.
3. **CJK retry** (§7.1): only when step 2 returned no row and `cjk.retry_plan` applies.
   Each CJK term is `f.text LIKE ? ESCAPE '\\'`; the word terms, if any, stay a MATCH (then
   `bm25()` and `snippet()` come from it); without word terms the score is 0 and the
   excerpt is `cjk.substring_excerpt`. Same scope, exclusions, order and `limit + 1`.

Every statement's text depends only on the request's shape (scope kind, filters given,
order, number of CJK needles) and is built once, so SQLite prepares it once per
connection. Hits go through `engine.search.hits.search_hit`, as the reference's do:
timestamp finite else 0, score `-bm25` finite else 0, snippet bounded to 500 UTF-16 units.

Known divergences from the reference engine:
* message text containing lone surrogates cannot be stored as UTF-8, so the FTS `text`
  column holds U+FFFD in their place (the tokens are the same: FTS5 reads a surrogate as
  U+FFFD, a separator); excerpts show U+FFFD where the reference shows the surrogate;
* `recent` order breaks timestamp ties by FTS rowid (insertion order, renewed when a
  reconcile rebuilds a window), as upstream does.

Cost: the CJK retry without word terms scans the FTS `text` column of the scope.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from engine.backends.sqlite.schema import OWN, Layout, needs_reconcile_sql
from engine.backends.sqlite.storable import storable_text
from engine.model import (
    DEFAULT_AGENT_ID,
    NO_HITS,
    SEARCHABLE_ROLES,
    SearchHit,
    SearchRequest,
    SearchResult,
)
from engine.query.checked_request import CheckedRequest
from engine.query.cjk import (
    like_pattern,
    partition_terms,
    retry_prefix,
    substring_excerpt,
    substring_needles,
    substring_spans,
)
from engine.query.user_query import fts5_match_expression, split_terms
from engine.search.hits import search_hit

SNIPPET_SQL = "snippet(session_transcript_fts, 0, '', '', ' … ', 48)"
#: The marks FTS5's highlighter puts around what matched in a marked snippet: the
#: engine takes them out and keeps where they were (`SearchHit.matched`).
MATCH_OPEN, MATCH_CLOSE = "\x02", "\x03"
#: The snippet with its matches marked, and whether the row's own text holds a mark
#: character (then the marks cannot be told apart, and the plain snippet is read again).
MARKED_SNIPPET_SQL = ("snippet(session_transcript_fts, 0, char(2), char(3), ' … ', 48),"
                      " c.bm25_rank, f.rowid,"
                      " instr(f.text, char(2)) + instr(f.text, char(3)) > 0")
PLAIN_SNIPPET_SQL = (f"SELECT {SNIPPET_SQL} FROM session_transcript_fts"
                     " WHERE session_transcript_fts MATCH :match AND rowid = :row")
GLOB_SPECIALS = {"*": "[*]", "?": "[?]", "[": "[[]"}

Scope = Literal["agent", "keys", "all"]


def glob_literal(text: str) -> str:
    """`text` as a GLOB pattern matching only itself (`*`, `?`, `[` as classes).

    >>> glob_literal("a*b?[c]_d")
    'a[*]b[?][[]c]_d'
    """
    return "".join(GLOB_SPECIALS.get(character, character) for character in text)


@dataclass(frozen=True, slots=True)
class Shape:
    """What a search's SQL text depends on (never on the values it binds)."""

    layout: Layout
    scope: Scope
    session_id: bool
    role: bool
    order: str
    needles: int = 0


def request_shape(layout: Layout, request: SearchRequest, needles: int = 0) -> Shape:
    """The shape of `request`'s statements."""
    if request.session_keys is None:
        scope: Scope = "agent"
    elif request.session_keys:
        scope = "keys"
    else:
        scope = "all"
    return Shape(layout, scope, request.session_id is not None, request.role is not None,
                 request.order, needles)


def parameters(request: SearchRequest, limit: int) -> dict[str, Any]:
    """The values a search binds (named, so every statement takes the ones it names)."""
    values: dict[str, Any] = {"limit": limit + 1, "session_id": request.session_id,
                              "role": request.role}
    if request.session_keys is None:
        agent_id = request.agent_id if request.agent_id is not None else DEFAULT_AGENT_ID
        values["pattern"] = "agent:" + glob_literal(agent_id) + ":*"
    elif request.session_keys:
        values["keys"] = json.dumps(list(request.session_keys))
    return values


# --------------------------------------------------------------------------------------
# Statements
# --------------------------------------------------------------------------------------


def scope_sql(scope: Scope) -> str:
    """The §5.3 window scope over alias `w`.

    >>> scope_sql("agent")
    "(w.session_key GLOB :pattern OR w.session_key IN ('global', 'unknown'))"
    """
    if scope == "agent":
        return "(w.session_key GLOB :pattern OR w.session_key IN ('global', 'unknown'))"
    if scope == "keys":
        return "w.session_key IN (SELECT value FROM json_each(:keys))"
    return "1"


def excluded_windows_sql(layout: Layout) -> str:
    """The windows no hit may come from: the dirty ones (§5.3, `needs_rebuild != 0`, as
    upstream's kernel), and the archived ones. A window that only lags, or has no state,
    still needs reconcile (`indexing`), but its rows are not hidden.

    >>> excluded_windows_sql("openclaw").startswith(
    ...     "SELECT session_id FROM session_transcript_index_state WHERE needs_rebuild != 0")
    True
    """
    dirty = "SELECT session_id FROM session_transcript_index_state WHERE needs_rebuild != 0"
    if layout == OWN:
        return (f"{dirty} UNION ALL "
                "SELECT session_id FROM session_search_windows WHERE archived != 0")
    return f"{dirty} UNION ALL SELECT session_id FROM session_transcript_cold_archives"


@lru_cache(maxsize=256)
def status_statement(layout: Layout, scope: Scope, session_id: bool) -> str:
    """`indexing` and the number of archived windows in scope, in one row."""
    session_sql = " AND w.session_id = :session_id" if session_id else ""
    if layout == OWN:
        indexing = "EXISTS (SELECT 1 FROM session_search_reconcile_queue)"
        archived = ("SELECT count(*) FROM session_search_windows AS archive"
                    " JOIN session_windows AS w ON w.session_id = archive.session_id"
                    f" WHERE archive.archived != 0 AND {scope_sql(scope)}{session_sql}")
    else:
        indexing = ("EXISTS (SELECT 1 FROM session_windows AS pending WHERE "
                    + needs_reconcile_sql("pending.session_id") + ")")
        archived = ("SELECT count(*) FROM session_transcript_cold_archives AS archive"
                    " JOIN session_windows AS w ON w.session_id = archive.session_id"
                    f" WHERE {scope_sql(scope)}{session_sql}")
    return f"SELECT {indexing}, ({archived})"


def _filters_sql(shape: Shape) -> str:
    parts = [scope_sql(shape.scope), f"f.session_id NOT IN ({excluded_windows_sql(shape.layout)})"]
    if shape.session_id:
        parts.append("f.session_id = :session_id")
    if shape.role:
        parts.append("f.role = :role")
    return " AND ".join(parts)


def _likes_sql(needles: int) -> list[str]:
    return [f"f.text LIKE :needle{number} ESCAPE '\\'" for number in range(needles)]


def _order_sql(order: str, *, ranked: bool, alias: str = "f") -> str:
    if order == "recent":
        return f"{alias}.timestamp DESC, {alias}.rowid DESC"
    rank = "bm25_rank ASC, " if ranked else ""
    return (rank + f"{alias}.timestamp DESC, {alias}.message_id ASC, {alias}.session_id ASC, "
            f"{alias}.rowid ASC")


@lru_cache(maxsize=256)
def hits_statement(shape: Shape) -> str:
    """The two-stage word search (with the CJK retry's LIKEs when `shape.needles`)."""
    conditions = " AND ".join(["session_transcript_fts MATCH :match", *_likes_sql(shape.needles),
                               _filters_sql(shape)])
    outer_order = _order_sql(shape.order, ranked=True, alias="c").replace("c.rowid", "c.row_id")
    return (
        "WITH candidates AS MATERIALIZED ("
        " SELECT f.rowid AS row_id, bm25(session_transcript_fts) AS bm25_rank,"
        " w.session_key AS session_key, f.timestamp AS timestamp,"
        " f.message_id AS message_id, f.session_id AS session_id"
        " FROM session_transcript_fts AS f JOIN session_windows AS w ON w.session_id = f.session_id"
        f" WHERE {conditions} ORDER BY {_order_sql(shape.order, ranked=True)} LIMIT :limit)"
        " SELECT c.session_key, f.session_id, f.message_id, f.role, f.timestamp,"
        f" {MARKED_SNIPPET_SQL}"
        " FROM candidates AS c CROSS JOIN session_transcript_fts AS f ON f.rowid = c.row_id"
        f" WHERE session_transcript_fts MATCH :match ORDER BY {outer_order}"
    )


@lru_cache(maxsize=256)
def substring_statement(shape: Shape) -> str:
    """The CJK retry without word terms: LIKE only (score 0, excerpt made in Python)."""
    conditions = " AND ".join([*_likes_sql(shape.needles), _filters_sql(shape)])
    return (
        "SELECT w.session_key, f.session_id, f.message_id, f.role, f.timestamp, f.text, 0.0"
        " FROM session_transcript_fts AS f JOIN session_windows AS w ON w.session_id = f.session_id"
        f" WHERE {conditions} ORDER BY {_order_sql(shape.order, ranked=False)} LIMIT :limit"
    )


# --------------------------------------------------------------------------------------
# Running a search
# --------------------------------------------------------------------------------------


#: A fixed file's status answers kept at most (`run_search`'s `fixed_status`).
KEPT_STATUSES = 256


@dataclass(frozen=True, slots=True)
class PreparedSearch:
    """What a search derives from its request alone, the same for every partition it
    asks: the checked query, the limit, the FTS5 terms and MATCH expression, the bound
    values (the MATCH expression among them; copied before use), the statements' shape,
    the word search's statement and the status statement's key."""

    query: str
    limit: int
    terms: tuple[str, ...]
    values: tuple[tuple[str, Any], ...]
    shape: Shape
    hits_sql: str
    status_key: tuple[Any, ...]


def prepared_search(layout: Layout, request: CheckedRequest) -> PreparedSearch:
    """`PreparedSearch` of `request`, kept for the last requests seen (a merged search
    asks every partition the same request; `_prepared` is the clear version).

    >>> from engine.query.checked_request import check_request
    >>> first = prepared_search("openclaw", check_request(SearchRequest("cafe", session_keys=())))
    >>> first is prepared_search("openclaw", check_request(SearchRequest("cafe",
    ...                                                                  session_keys=())))
    True
    >>> dict(first.values)["match"], first.limit
    ('"cafe"', 10)
    """
    global _last_prepared
    last = _last_prepared
    if last is not None and last[0] is request and last[1] == layout:
        return last[2]  # the next partition of the same merged search
    if not _keepable(request):
        return _prepared(layout, request)
    prepared = _kept_prepared(layout, request)
    # Holding the request object itself: while it is held, no other object has its id.
    _last_prepared = (request, layout, prepared)
    return prepared


#: The last kept request (the object itself), its layout and its `PreparedSearch`: the
#: partitions of one merged search are asked with the same request object.
_last_prepared: tuple[CheckedRequest, Layout, PreparedSearch] | None = None


def _keepable(request: SearchRequest) -> bool:
    """Whether requests equal to `request` are prepared alike: Python calls `1`, `1.0`
    and `True` equal, while validation refuses all but the integer, so a request is kept
    only when its limit is an int (or absent) and its keys a tuple of strings.

    >>> _keepable(SearchRequest("q", limit=3)), _keepable(SearchRequest("q", limit=True))
    (True, False)
    """
    keys = request.session_keys
    return (type(request.limit) is int or request.limit is None) and (
        keys is None or (type(keys) is tuple and all(type(key) is str for key in keys)))


def _prepared(layout: Layout, request: CheckedRequest) -> PreparedSearch:
    query, limit = request.trimmed_query, request.page_limit
    # A lone surrogate cannot be bound as UTF-8; FTS5 reads one as U+FFFD (a separator),
    # and so does the unicode61 profile, so the replacement keeps the query's meaning.
    terms = tuple(storable_text(term) for term in split_terms(query))
    values = parameters(request, limit)
    shape = request_shape(layout, request)
    status_key = (status_statement(layout, shape.scope, shape.session_id),
                  values.get("pattern"), values.get("keys"), values["session_id"])
    values["match"] = fts5_match_expression(terms, prefix=request.match == "prefix")
    return PreparedSearch(query, limit, terms, tuple(values.items()), shape, hits_statement(shape),
                          status_key)


_kept_prepared = lru_cache(maxsize=256)(_prepared)


def run_search(connection: sqlite3.Connection, layout: Layout, request: CheckedRequest, *,
               fixed_status: dict[tuple[Any, ...], tuple[int, int]] | None = None,
               ) -> SearchResult:
    """The store-level search of behaviour.md §5 on one database (see the module docstring).

    Its statements must read one snapshot. Without `fixed_status` they run in a
    transaction of their own (unless the connection is in one already). The caller
    passes `fixed_status` when nothing can change the database between the statements
    and while the dict is kept: the connection of a file opened `immutable` (no writer
    has it; `connection.ReadConnection` empties the dict when it reopens), or the writer's
    own connection, the only one that writes, used under the store's lock (the caller
    empties the dict when that connection has changed a row). The search then needs no
    transaction (it would add two statements and no consistency) and keeps its status
    answer (`indexing`, archived windows in scope) in the dict, by scope.

    Raises `sqlite3.Error` and `UnicodeEncodeError` as SQLite does; the caller maps them.
    """
    prepared = prepared_search(layout, request)
    values = dict(prepared.values)
    # One snapshot for every statement; inside the writer's open transaction, that one.
    own_snapshot = not connection.in_transaction and fixed_status is None
    if own_snapshot:
        connection.execute("BEGIN")
    try:
        status = None if fixed_status is None else fixed_status.get(prepared.status_key)
        if status is None:
            status = connection.execute(prepared.status_key[0], values).fetchone()
            if fixed_status is not None:
                if len(fixed_status) >= KEPT_STATUSES:
                    fixed_status.clear()
                fixed_status[prepared.status_key] = status
        indexing, archived = status
        rows = connection.execute(prepared.hits_sql, values).fetchall()
        if not rows and not prepared.query.isascii():  # ASCII text has no CJK term to retry
            rows = _retry_rows(connection, layout, request, prepared.terms, values)
        else:
            rows = [_unmarked(connection, row, values) for row in rows]
    finally:
        if own_snapshot and connection.in_transaction:
            connection.execute("COMMIT")
    if not rows and not indexing and not archived:
        return NO_HITS
    hits = [hit for hit in (_hit_from_row(row) for row in rows) if hit is not None]
    return SearchResult(
        hits=tuple(hits[:prepared.limit]),
        truncated=len(rows) > prepared.limit,
        indexing=bool(indexing),
        archived_transcripts_excluded=archived,
    )


def _retry_rows(connection: sqlite3.Connection, layout: Layout, request: CheckedRequest,
                terms: Sequence[str], values: dict[str, Any]) -> list[tuple]:
    word_terms, cjk_terms = partition_terms(terms)
    if not cjk_terms:
        return []
    needles = substring_needles(cjk_terms)
    shape = request_shape(layout, request, len(needles))
    values.update({f"needle{number}": like_pattern(needle) for number, needle in enumerate(needles)})
    if word_terms:
        values["match"] = fts5_match_expression(word_terms, prefix=retry_prefix(terms, request.match))
        return [_unmarked(connection, row, values)
                for row in connection.execute(hits_statement(shape), values).fetchall()]
    rows = connection.execute(substring_statement(shape), values).fetchall()
    excerpts = [substring_excerpt(row[5], needles) if isinstance(row[5], str) else row[5]
                for row in rows]
    return [(*row[:5], excerpt, row[6],
             substring_spans(excerpt, needles) if isinstance(excerpt, str) else ())
            for row, excerpt in zip(rows, excerpts, strict=True)]


def _unmarked(connection: sqlite3.Connection, row: Sequence[Any],
              values: dict[str, Any]) -> tuple[Any, ...]:
    """A row of the marked word search as (key, id, message, role, time, snippet, rank,
    matched): the marks taken out of the snippet, their places kept. A row whose own text
    holds a mark character gets its plain snippet read again, and no matched spans."""
    *head, marked, rank, row_id, ambiguous = row
    if not isinstance(marked, str):
        return (*head, marked, rank, ())
    if ambiguous:
        plain = connection.execute(PLAIN_SNIPPET_SQL, {"match": values["match"],
                                                       "row": row_id}).fetchone()
        return (*head, plain[0] if plain is not None else marked, rank, ())
    text, matched = unmarked_snippet(marked)
    return (*head, text, rank, matched)


def unmarked_snippet(marked: str) -> tuple[str, tuple[tuple[int, int], ...]]:
    """A marked snippet's text and the spans its marks enclosed.

    >>> unmarked_snippet(" … per \x02session\x03 notes, \x02café\x03")
    (' … per session notes, café', ((7, 14), (22, 26)))
    """
    if MATCH_OPEN not in marked:
        return marked, ()
    pieces: list[str] = []
    spans: list[tuple[int, int]] = []
    length = 0
    opened = 0
    for index, piece in enumerate(marked.split(MATCH_OPEN)):
        if index:
            opened = length
        inner, closed, rest = piece.partition(MATCH_CLOSE)
        pieces.append(inner)
        length += len(inner)
        if closed:
            spans.append((opened, length))
            pieces.append(rest)
            length += len(rest)
    return "".join(pieces), tuple(spans)


def _hit_from_row(row: Sequence[Any]) -> SearchHit | None:
    """A hit from (session_key, session_id, message_id, role, timestamp, snippet, rank,
    matched)."""
    session_key, session_id, message_id, role, timestamp, snippet, rank, matched = row
    if not (isinstance(session_key, str) and isinstance(session_id, str)
            and isinstance(message_id, str) and isinstance(snippet, str)):
        return None
    if role not in SEARCHABLE_ROLES:
        return None
    return search_hit(session_key=session_key, session_id=session_id, message_id=message_id,
                      role=role, timestamp=timestamp, excerpt=snippet, rank=rank,
                      matched=matched)
