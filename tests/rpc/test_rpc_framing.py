"""The line framing (UTF-8, one object a line) and the method table of `engine.rpc`."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from engine.backends.reference.backend import ReferenceBackend
from engine.directory import MemoryDirectory
from engine.model import SearchRequest, SessionWindow
from engine.rpc.errors import INVALID_PARAMS, PARSE_ERROR, RpcError
from engine.rpc.framing import decode_message, encode_message
from engine.rpc.methods import METHODS, Method, RpcContext, method_table
from engine.rpc.server import serve
from engine.store.registry import open_backend


def test_lines_round_trip_including_a_lone_surrogate() -> None:
    message = {"jsonrpc": "2.0", "id": "é", "result": {"snippet": "caf\u00e9 \ud800 ok"}}
    line = encode_message(message)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    line.decode("utf-8")  # valid UTF-8: the surrogate is written as its escape
    assert b"\\ud800" in line and "café".encode() in line
    assert decode_message(line) == message


def test_a_binary_stream_gets_utf8_and_a_bad_line_a_parse_error() -> None:
    backend = ReferenceBackend.create_in(MemoryDirectory())
    with backend.transaction() as transaction:
        transaction.put_window(SessionWindow("s1", "global"))
        transaction.append_event("s1", {"type": "message", "id": "m1", "parentId": None,
                                        "message": {"role": "user", "content": "x\ud800 naïve"}})
    request = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "sessions.search",
                          "params": {"sessionKeys": [], "query": "naive"}}).encode()
    output = io.BytesIO()
    assert serve(backend, [b"\xfe\xff\n", b"  \n", request + b"\n"], output) == 2
    expected = backend.search(SearchRequest("naive", session_keys=())).to_json()
    backend.close()
    parse_error, answer = [json.loads(line) for line in output.getvalue().decode().splitlines()]
    assert parse_error["error"]["code"] == PARSE_ERROR
    assert parse_error["error"]["message"].startswith("parse error: the line is not UTF-8")
    assert answer["result"] == expected and "naïve" in expected["hits"][0]["snippet"]


def test_the_serve_command_reads_and_writes_utf8_whatever_the_locale(tmp_path: Path) -> None:
    store = tmp_path / "store"
    writer = open_backend(store, create=True)
    with writer.transaction() as transaction:
        transaction.put_window(SessionWindow("s1", "agent:main:main"))
        transaction.append_event("s1", {"type": "message", "id": "m1", "parentId": None,
                                        "message": {"role": "user", "content": "Σοφία café"}})
    writer.close()
    request = {"jsonrpc": "2.0", "id": 1, "method": "sessions.search",
               "params": {"sessionKeys": [], "query": "σοφία"}}
    completed = subprocess.run(
        [sys.executable, "-m", "engine", "serve", "--store", str(store)],
        input=json.dumps(request, ensure_ascii=False).encode("utf-8") + b"\n",
        capture_output=True, timeout=60, check=True,
        env={"LC_ALL": "C", "PYTHONIOENCODING": "ascii", "PATH": "/usr/bin:/bin"},
        cwd=Path(__file__).resolve().parents[2],
    )
    [answer] = [json.loads(line) for line in completed.stdout.decode("utf-8").splitlines()]
    assert answer["result"]["hits"][0]["snippet"] == "Σοφία café"


def test_a_method_plugs_in_by_adding_one_entry() -> None:
    def echo(context: RpcContext, params: Any) -> Any:
        if not isinstance(params, dict):
            raise RpcError(INVALID_PARAMS, "params must be an object")
        return {"backend": context.backend.name, "params": params}

    methods = method_table(*METHODS.values(), Method("debug.echo", echo, "echo the params"))
    backend = ReferenceBackend.create_in(MemoryDirectory())
    lines = [json.dumps({"jsonrpc": "2.0", "id": 1, "method": "debug.echo", "params": {"a": 1}}),
             json.dumps({"jsonrpc": "2.0", "id": 2, "method": "debug.echo", "params": [1]}),
             json.dumps({"jsonrpc": "2.0", "id": 3, "method": "sessions.search",
                         "params": {"sessionKeys": [], "query": "x"}})]
    output = io.StringIO()
    serve(backend, lines, output, methods)
    backend.close()
    first, second, third = [json.loads(line) for line in output.getvalue().splitlines()]
    assert first["result"] == {"backend": "reference", "params": {"a": 1}}
    assert second["error"] == {"code": INVALID_PARAMS, "message": "params must be an object"}
    assert third["result"]["hits"] == []
    assert sorted(METHODS) == ["chat.history", "gateway.sessions.search", "sessions.search",
                               "sessions_history", "sessions_search",
                               "ui.search"]  # the default table is unchanged


def test_a_whole_millisecond_time_is_an_integer_in_every_json_form_of_a_hit() -> None:
    """Issue 26, one shape: `search --json` wrote `"timestamp": 5` and the RPC result
    `5.0`; every JSON form of a hit now writes a whole-millisecond time as an integer
    (`engine.model.json_number`), and a fraction as it is."""
    backend = ReferenceBackend.create_in(MemoryDirectory())
    with backend.transaction() as transaction:
        transaction.put_window(SessionWindow("w", "agent:main:main"))
        for number, stamp in enumerate((5, 7.5)):
            transaction.append_event("w", {
                "type": "message", "id": f"m{number}",
                "parentId": f"m{number - 1}" if number else None, "timestamp": stamp,
                "message": {"role": "user", "content": "saffron"}})
    lines = [json.dumps({"jsonrpc": "2.0", "id": 1, "method": method,
                         "params": {"query": "saffron", "sessionKeys": ["agent:main:main"]}})
             for method in ("sessions.search", "gateway.sessions.search")]
    output = io.StringIO()
    serve(backend, lines, output, METHODS)
    backend.close()
    kernel, gateway = output.getvalue().splitlines()
    for text, member in ((kernel, "hits"), (gateway, "results")):
        times = sorted(hit["timestamp"] for hit in json.loads(text)["result"][member])
        assert times == [5, 7.5] and '"timestamp": 5,' in text and '"timestamp": 5.0' not in text
