"""What a search derives from its checked request alone: the plans, made once.

Owns: `prepared_request`, a checked request's word plan, its CJK retry plan and its
clamped limit, and keeping them for the requests seen last. Must not touch: what the
plans are (`engine.query.user_query.plan_terms`, `engine.query.cjk.retry_plan` decide
that; this module only calls them), the check itself (`engine.query.checked_request`:
the request is checked once, where it entered the engine), the index, the scope.

Why keep them: a search across agents asks every partition the same request, and each
partition's kernel would otherwise split the query, analyze every term and work out the
retry plan again (most of the time of a search that finds nothing). They depend only on
the checked query, `match` and the clamped limit and on the analyzer, so requests equal
in those share them. The SQLite backend keeps its statements' values the same way
(`engine.backends.sqlite.search.prepared_search`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

from engine.analysis.token import Analyzer
from engine.query.ast import QueryPlan
from engine.query.checked_request import CheckedRequest
from engine.query.cjk import retry_plan
from engine.query.user_query import plan_terms

#: Distinct (analyzer, request fields) kept.
KEPT_REQUESTS = 256


class PreparedRequest(NamedTuple):
    """A checked request's word plan, its CJK retry plan (None: the query has no CJK
    term) and its limit, clamped to 1..25. A `NamedTuple`: its class is made at every
    searching process's start-up, cheaper than a frozen dataclass's."""

    plan: QueryPlan
    retry: QueryPlan | None
    limit: int


def prepared_request(request: CheckedRequest, analyzer: Analyzer) -> PreparedRequest:
    """`PreparedRequest` of a checked request, kept for the last `KEPT_REQUESTS` distinct
    (analyzer, query, match, limit) (`prepare` is the clear version).

    >>> from engine.analysis.profiles import SEARCH_PROFILE
    >>> from engine.model import SearchRequest
    >>> from engine.query.checked_request import check_request
    >>> analyzer = SEARCH_PROFILE.analyzer()
    >>> first = prepared_request(check_request(SearchRequest("Café au", limit=30)), analyzer)
    >>> first is prepared_request(check_request(SearchRequest(" Café au", limit=30,
    ...                                                       agent_id="ops")), analyzer)
    True
    >>> [phrase.terms for phrase in first.plan.phrases], first.retry, first.limit
    ([('cafe',), ('au',)], None, 25)
    """
    return _kept(analyzer, request.trimmed_query, request.match, request.page_limit)


def prepare(query: str, match: str, limit: int, analyzer: Analyzer) -> PreparedRequest:
    """The plans of a checked query (trimmed, not empty, a known `match`) and its limit."""
    return PreparedRequest(plan_terms(query, analyzer, match=match),
                           retry_plan(query, analyzer, match=match), limit)


@lru_cache(maxsize=KEPT_REQUESTS)
def _kept(analyzer: Analyzer, query: str, match: str, limit: int) -> PreparedRequest:
    return prepare(query, match, limit, analyzer)
