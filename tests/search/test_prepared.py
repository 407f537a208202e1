"""The plans a search derives from its checked request, made once (engine.search.prepared),
and the check itself, made once where a request enters (engine.query.checked_request)."""

from __future__ import annotations

import pytest

from engine.analysis.profiles import SEARCH_PROFILE
from engine.errors import QueryError
from engine.model import SearchRequest
from engine.query.checked_request import CheckedRequest, check_request
from engine.query.cjk import retry_plan
from engine.query.user_query import plan_query
from engine.search.prepared import prepared_request

ANALYZER = SEARCH_PROFILE.analyzer()


@pytest.mark.parametrize("request_", [
    SearchRequest("Déjà vu", limit=3),
    SearchRequest("deploym", match="prefix", order="recent", role="assistant"),
    SearchRequest("会议 notes", limit=None),
    SearchRequest("per-session", limit=True),
])
def test_a_prepared_request_holds_what_the_query_policy_makes(request_: SearchRequest) -> None:
    prepared = prepared_request(check_request(request_), ANALYZER)
    assert prepared.plan == plan_query(request_.query, ANALYZER, match=request_.match)
    assert prepared.retry == retry_plan(request_.query, ANALYZER, match=request_.match)
    assert prepared.limit == (10 if request_.limit is None else min(25, int(request_.limit)))


def test_the_partitions_of_one_search_share_one_preparation() -> None:
    first = prepared_request(check_request(SearchRequest("shared words", limit=7)), ANALYZER)
    for other in (SearchRequest("shared words", limit=7, agent_id="ops"),
                  SearchRequest("shared words", limit=7, session_keys=("global",)),
                  SearchRequest("shared words", limit=7, session_id="w1"),
                  SearchRequest(" shared words ", limit=7, role="user")):  # plans alike
        assert prepared_request(check_request(other), ANALYZER) is first
    assert prepared_request(check_request(SearchRequest("shared words", limit=8)),
                            ANALYZER) is not first
    assert prepared_request(check_request(SearchRequest("shared words", limit=7,
                                                        match="prefix")), ANALYZER) is not first


@pytest.mark.parametrize(("request_", "message"), [
    (SearchRequest("   "), "query"),
    (SearchRequest("fine", match="fuzzy"), "match must be one of"),
    (SearchRequest("fine", order="oldest"), "order must be one of"),
    (SearchRequest("fine", role="tool"), "role must be one of"),
])
def test_a_refused_request_is_refused_every_time(request_: SearchRequest, message: str) -> None:
    for _attempt in range(2):  # nothing is kept for it: the second call checks again
        with pytest.raises(QueryError, match=message):
            check_request(request_)


def test_a_request_is_checked_once_and_narrowed_without_a_second_check() -> None:
    checked = check_request(SearchRequest("  déjà vu ", limit=99, session_keys=()))
    assert (checked.trimmed_query, checked.page_limit) == ("déjà vu", 25)
    assert check_request(checked) is checked
    part = checked.narrowed(("agent:ops:x",), 25)
    assert isinstance(part, CheckedRequest)
    assert (part.session_keys, part.limit, part.page_limit) == (("agent:ops:x",), 25, 25)
    assert (checked.query, checked.limit) == ("  déjà vu ", 99)  # as given
