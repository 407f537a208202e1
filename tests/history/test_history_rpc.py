"""`chat.history` and `sessions_history` over JSON-RPC: a real `serve` process per backend.

The answers must be what the Python API returns on the same store, errors must be
`-32602` with the product's wording, and both methods must be in the ready line.
"""

from __future__ import annotations

import pytest

from engine.agent_tools.sessions_history import sessions_history
from engine.history.pages import read_history
from engine.history.request import HistoryRequest, ToolHistoryRequest
from engine.rpc.client import RpcClient
from engine.rpc.errors import INVALID_PARAMS, RpcError
from tests.history.transcripts import BACKENDS, Transcript, new_store, write

KEY = "agent:work:recall"


@pytest.fixture(scope="module", params=BACKENDS)
def served(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    if request.param == "postgres":
        request.getfixturevalue("pg_dsn")  # the server, or the skip (a failure under CI)
    tmp_path = tmp_path_factory.mktemp("served")
    before = Transcript("before", KEY, {"current": False})
    before.messages("old", 3)
    after = Transcript("after", KEY, {"previous_session_id": "before", "reason": "reset"})
    after.messages("a", 4)
    after.reset("r1", first_kept="a2")
    after.messages("b", 3)
    store = new_store(tmp_path, request.param)
    write(store, before, after)
    store.close()
    folder = tmp_path / request.param
    with RpcClient.serve_store(str(folder)) as client:
        yield client, folder


CALLS = [
    ("chat.history", {"sessionKey": KEY, "limit": 2}),
    ("chat.history", {"sessionKey": KEY, "offset": 2, "limit": 2}),
    ("chat.history", {"sessionKey": KEY, "messageId": "a0"}),
    ("chat.history", {"sessionKey": KEY, "messageId": "old1", "sessionId": "before"}),
    ("chat.history", {"sessionKey": KEY, "messageId": "nope"}),
    ("chat.history", {"sessionKey": KEY, "maxBytes": 1024}),
    ("sessions_history", {"sessionKey": KEY, "limit": 1}),
    ("sessions_history", {"sessionKey": KEY, "offset": 0, "limit": 3}),
    ("sessions_history", {"sessionKey": KEY, "messageId": "old2", "sessionId": "before",
                          "includeTools": True, "requesterSessionKey": "agent:work:main"}),
]


def test_answers_match_the_python_api(served) -> None:
    client, folder = served
    from engine.store.registry import open_backend

    store = open_backend(folder)
    try:
        for method, params in CALLS:
            answer = client.call(method, params)
            if method == "chat.history":
                expected = read_history(store, HistoryRequest.from_json(params)).to_json()
            else:
                tool_params = {k: v for k, v in params.items() if k != "requesterSessionKey"}
                expected = sessions_history(store, ToolHistoryRequest.from_json(tool_params))
            assert answer == expected, (method, params)
    finally:
        store.close()


def test_cursor_round_trip_over_the_wire(served) -> None:
    client, _ = served
    tail = client.call("chat.history", {"sessionKey": KEY, "limit": 2})
    older = client.call("chat.history", {"sessionKey": KEY, "limit": 2,
                                         "cursor": tail["olderCursor"]})
    shown = [message["__openclaw"]["id"] for message in older["messages"] + tail["messages"]]
    assert shown == ["r1", "b0", "b1", "b2"]
    assert older["hasMore"] is True


@pytest.mark.parametrize(("method", "params", "message"), [
    ("chat.history", {"sessionKey": KEY, "offset": 0, "messageId": "a0"},
     "offset and messageId cannot be used together"),
    ("chat.history", {"sessionKey": KEY, "cursor": "x", "offset": 1},
     "cursor cannot be used with offset or messageId"),
    ("chat.history", {"sessionKey": KEY, "sessionId": "before"}, "sessionId requires messageId"),
    ("chat.history", {"sessionKey": KEY, "sessionId": "elsewhere", "messageId": "a0"},
     "sessionId does not belong to sessionKey"),
    ("chat.history", {"sessionKey": KEY, "limit": 0}, "limit must be an integer from 1 to 1000"),
    ("chat.history", {"sessionKey": KEY, "maxBytes": 10}, "maxBytes must be an integer of at least 1024"),
    ("chat.history", {"sessionKey": KEY, "includeTools": True}, "unknown params: includeTools"),
    ("chat.history", {"limit": 1}, "sessionKey is required"),
    ("chat.history", {"sessionKey": "agent:work:nothing"}, "unknown session key 'agent:work:nothing'"),
    ("sessions_history", {"sessionKey": KEY, "offset": 0, "messageId": "a0"},
     "offset and messageId cannot be used together"),
    ("sessions_history", {"sessionKey": KEY, "sessionId": "before"}, "sessionId requires messageId"),
    ("sessions_history", {"sessionKey": KEY, "sessionId": "x", "messageId": "a0"},
     "sessionId does not belong to sessionKey"),
    ("sessions_history", {"sessionKey": KEY, "includeTools": "yes"},
     "includeTools has the wrong type (expected true, false or null, got a string)"),
    ("sessions_history", {"sessionKey": KEY, "requesterSessionKey": 3},
     "requesterSessionKey must be a string"),
])
def test_errors_are_invalid_params_with_the_products_wording(served, method, params, message) -> None:
    client, _ = served
    with pytest.raises(RpcError) as raised:
        client.call(method, params)
    assert (raised.value.code, raised.value.message) == (INVALID_PARAMS, message)


def test_unknown_key_is_an_error_answer_of_the_tool(served) -> None:
    client, _ = served
    assert client.call("sessions_history", {"sessionKey": "agent:work:nothing"}) == {
        "status": "error", "error": "No session found: agent:work:nothing"}
