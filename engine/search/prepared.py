"""What a search derives from its request alone: the plans and the limit, made once.

Owns: `prepared_request`, the checked request's word plan, its CJK retry plan and its
clamped limit, and keeping them for the requests seen last. Must not touch: what the
plans are (`engine.query.user_query.plan_query`, `engine.query.cjk.retry_plan` decide
that; this module only calls them), the index, the scope.

Why keep them: a search across agents asks every partition the same request, and each
partition's kernel would otherwise check the query, split it, analyze every term and
work out the retry plan again (most of the time of a search that finds nothing). They
depend only on the request's `query`, `match`, `order`, `role` and `limit` and on the
analyzer, so requests equal in those share them. A request is kept only when those
fields have the exact types validation accepts (Python calls `1`, `1.0` and `True`
equal, and validation refuses all but the integer), so a kept answer is one the request
itself would have got; a request that fails validation raises every time (nothing is
kept for it). The SQLite backend keeps its statements' values the same way
(`engine.backends.sqlite.search.prepared_search`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from engine.analysis.token import Analyzer
from engine.model import SearchRequest
from engine.query.ast import QueryPlan
from engine.query.cjk import retry_plan
from engine.query.user_query import clamp_limit, plan_query, validate_request

#: Distinct (analyzer, request fields) kept.
KEPT_REQUESTS = 256


@dataclass(frozen=True, slots=True)
class PreparedRequest:
    """A checked request's word plan, its CJK retry plan (None: the query has no CJK
    term) and its limit, clamped to 1..25."""

    plan: QueryPlan
    retry: QueryPlan | None
    limit: int


def prepared_request(request: SearchRequest, analyzer: Analyzer) -> PreparedRequest:
    """`PreparedRequest` of `request` (raises as `validate_request` does), kept for the
    last `KEPT_REQUESTS` distinct requests (`_prepare` is the clear version).

    >>> from engine.analysis.profiles import SEARCH_PROFILE
    >>> analyzer = SEARCH_PROFILE.analyzer()
    >>> first = prepared_request(SearchRequest("Café au", limit=30), analyzer)
    >>> first is prepared_request(SearchRequest("Café au", limit=30, agent_id="ops"), analyzer)
    True
    >>> [phrase.terms for phrase in first.plan.phrases], first.retry, first.limit
    ([('cafe',), ('au',)], None, 25)
    """
    limit, role = request.limit, request.role
    if (type(request.query) is str and type(request.match) is str
            and type(request.order) is str and (limit is None or type(limit) is int)
            and (role is None or type(role) is str)):
        return _kept(analyzer, request.query, request.match, request.order, role, limit)
    return _prepare(request, analyzer)


def _prepare(request: SearchRequest, analyzer: Analyzer) -> PreparedRequest:
    validate_request(request)
    return PreparedRequest(plan_query(request.query, analyzer, match=request.match),
                           retry_plan(request.query, analyzer, match=request.match),
                           clamp_limit(request.limit))


@lru_cache(maxsize=KEPT_REQUESTS)
def _kept(analyzer: Analyzer, query: str, match: str, order: str, role: str | None,
          limit: int | None) -> PreparedRequest:
    return _prepare(SearchRequest(query, limit=limit, role=role, match=match, order=order),
                    analyzer)
