"""`session-search serve`: JSON-RPC 2.0 `sessions.search` over stdin/stdout."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from engine.backends.reference.backend import ReferenceBackend
from engine.directory import MemoryDirectory
from engine.model import SearchRequest, SessionWindow
from engine.rpc.server import serve
from engine.store.registry import open_backend


@pytest.fixture
def backend():
    opened = ReferenceBackend.create_in(MemoryDirectory())
    with opened.transaction() as transaction:
        transaction.put_window(SessionWindow("s1", "agent:main:main"))
        transaction.append_event("s1", {"type": "message", "id": "m1", "parentId": None, "timestamp": 5,
                                        "message": {"role": "user", "content": "saffron risotto"}})
    yield opened
    opened.close()


def exchange(backend, *lines: str) -> list[dict]:
    output = io.StringIO()
    serve(backend, io.StringIO("".join(line + "\n" for line in lines)), output)
    return [json.loads(line) for line in output.getvalue().splitlines()]


def request(request_id, params, method="sessions.search") -> str:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})


def test_search_result_is_the_kernel_result(backend):
    [response] = exchange(backend, request(1, {"agentId": "main", "query": "saffron", "limit": 5}))
    expected = backend.search(SearchRequest("saffron", agent_id="main", limit=5)).to_json()
    assert response == {"jsonrpc": "2.0", "id": 1, "result": expected}
    assert [hit["messageId"] for hit in expected["hits"]] == ["m1"]


def test_errors_have_stable_codes_and_the_server_keeps_serving(backend):
    responses = exchange(
        backend,
        "{not json",
        "[]",  # an empty batch (batches: tests/rpc/test_batches.py)
        json.dumps({"id": 2, "method": "sessions.search"}),
        request(3, {"agentId": "main", "query": "x"}, method="sessions.list"),
        request(4, {"agentId": "main", "query": 7}),
        request(5, {"agentId": "main", "query": "x", "limit": "3"}),
        request(6, {"agentId": "main", "query": "x", "colour": "red"}),
        request(7, {"agentId": "main", "query": "   "}),
        request(8, {"query": "saffron"}),
        request(9, {"sessionKeys": [], "query": "saffron", "role": "tool"}),
        request("last", {"sessionKeys": [], "query": "saffron"}),
    )
    codes = [(item["id"], item.get("error", {}).get("code")) for item in responses]
    assert codes == [
        (None, -32700), (None, -32600), (2, -32600), (3, -32601), (4, -32602), (5, -32602),
        (6, -32602), (7, -32602), (8, -32602), (9, -32602), ("last", None),
    ]
    assert responses[7]["error"]["message"] == "query must not be empty"
    assert responses[2]["jsonrpc"] == "2.0"
    assert [hit["messageId"] for hit in responses[-1]["result"]["hits"]] == ["m1"]


@pytest.mark.parametrize("bad_id", [True, False, 1.5, [1], {"a": 1}])
def test_a_request_with_an_id_of_another_type_is_answered_with_a_null_id(backend, bad_id):
    line = json.dumps({"jsonrpc": "2.0", "id": bad_id, "method": "sessions.search",
                       "params": {"agentId": "main", "query": "saffron"}})
    (answer,) = exchange(backend, line)
    assert (answer["id"], answer["error"]["code"]) == (None, -32600)


def test_notifications_get_no_answer(backend):
    notification = json.dumps({"jsonrpc": "2.0", "method": "sessions.search",
                               "params": {"agentId": "main", "query": "saffron"}})
    assert exchange(backend, notification, "", request(1, {"agentId": "main", "query": "none"}))[0]["id"] == 1


def test_serve_command_over_real_pipes(tmp_path: Path):
    store = tmp_path / "store"
    writer = open_backend(store, create=True)
    with writer.transaction() as transaction:
        transaction.put_window(SessionWindow("s1", "agent:main:main"))
        transaction.append_event("s1", {"type": "message", "id": "m1", "parentId": None, "timestamp": 5,
                                        "message": {"role": "assistant", "content": "café au lait"}})
    writer.close()
    lines = request(1, {"agentId": "main", "query": "CAFE"}) + "\nnonsense\n"
    completed = subprocess.run(
        [sys.executable, "-m", "engine", "serve", "--store", str(store)],
        input=lines, capture_output=True, text=True, timeout=60, check=True,
    )
    first, second = [json.loads(line) for line in completed.stdout.splitlines()]
    assert first["result"]["hits"][0]["snippet"] == "café au lait"
    assert second["error"]["code"] == -32700


def test_serve_answers_each_line_before_the_input_ends(tmp_path: Path):
    store = tmp_path / "store"
    open_backend(store, create=True).close()
    server = subprocess.Popen(
        [sys.executable, "-m", "engine", "serve", "--store", str(store)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        server.stdin.write(request(1, {"sessionKeys": [], "query": "anything"}) + "\n")
        server.stdin.flush()
        assert json.loads(server.stdout.readline())["result"]["hits"] == []
        server.stdin.write('{"jsonrpc": "2.0", "id": 2, "method": "nope"}\n')
        server.stdin.flush()
        assert json.loads(server.stdout.readline())["error"]["code"] == -32601
    finally:
        server.stdin.close()
        assert server.wait(timeout=60) == 0
