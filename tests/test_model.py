"""`SearchRequest.to_json` / `from_json`: the request's wire form round-trips, and a wrong
field is an `InvalidRequest` that names it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.model import (
    MATCH_MODES,
    ORDERS,
    SEARCHABLE_ROLES,
    InvalidRequest,
    SearchRequest,
)

text = st.text(max_size=12)
requests = st.builds(
    SearchRequest,
    query=text,
    agent_id=st.none() | text,
    limit=st.none() | st.integers(-5, 100),
    session_keys=st.none() | st.lists(text, max_size=4).map(tuple),
    session_id=st.none() | text,
    role=st.none() | st.sampled_from(SEARCHABLE_ROLES),
    match=st.sampled_from(MATCH_MODES),
    order=st.sampled_from(ORDERS),
)


@given(requests)
def test_a_request_round_trips_through_its_json(request: SearchRequest) -> None:
    wire = json.loads(json.dumps(request.to_json()))
    assert SearchRequest.from_json(wire) == request


def test_the_wire_form_keeps_absent_and_empty_session_keys_apart() -> None:
    assert "sessionKeys" not in SearchRequest("x", agent_id="main").to_json()
    assert SearchRequest("x", session_keys=()).to_json() == {
        "query": "x", "sessionKeys": [], "match": "exact", "order": "relevance"}
    every_field = SearchRequest("x", "a", 3, ("k",), "s", "user", "prefix", "recent")
    assert list(every_field.to_json()) == ["agentId", "query", "limit", "sessionKeys",
                                           "sessionId", "role", "match", "order"]


def test_nulls_mean_the_defaults() -> None:
    assert SearchRequest.from_json({"query": "x", "agentId": None, "limit": None,
                                    "match": None, "order": None}) == SearchRequest("x")


@pytest.mark.parametrize(("value", "field", "message"), [
    ({"query": 7}, "query",
     "query has the wrong type (expected a string, got a number)"),
    ({"query": None}, "query", "query has the wrong type (expected a string, got null)"),
    ({"query": "x", "limit": "3"}, "limit",
     "limit has the wrong type (expected an integer or null, got a string)"),
    ({"query": "x", "limit": True}, "limit",
     "limit has the wrong type (expected an integer or null, got a boolean)"),
    ({"query": "x", "limit": 2.5}, "limit",
     "limit has the wrong type (expected an integer or null, got a number)"),
    ({"query": "x", "sessionKeys": "global"}, "sessionKeys",
     "sessionKeys has the wrong type (expected an array of strings or null, got a string)"),
    ({"query": "x", "sessionKeys": ["a", 1]}, "sessionKeys",
     "sessionKeys must be an array of strings"),
    ({"query": "x", "agentId": ["main"]}, "agentId",
     "agentId has the wrong type (expected a string or null, got an array)"),
    ({"query": "x", "sessionId": {}}, "sessionId",
     "sessionId has the wrong type (expected a string or null, got an object)"),
    ({"query": "x", "role": "tool"}, "role", "role must be one of: user, assistant"),
    ({"query": "x", "match": "fuzzy"}, "match", "match must be one of: exact, prefix"),
    ({"query": "x", "order": 1}, "order",
     "order has the wrong type (expected a string or null, got a number)"),
    ({"agentId": "main"}, "query", "query is required"),
    ({"query": "x", "colour": "red", "size": 1}, "colour", "unknown params: colour, size"),
    (["query"], None, "a search request must be a JSON object"),
])
def test_a_wrong_field_is_named(value: Any, field: str | None, message: str) -> None:
    with pytest.raises(InvalidRequest) as raised:
        SearchRequest.from_json(value)
    assert (raised.value.field, str(raised.value)) == (field, message)
