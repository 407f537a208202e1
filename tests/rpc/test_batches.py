"""JSON-RPC batches are answered as JSON-RPC 2.0 says (issue 32, item 3).

A real `session-search serve` process on the demo store is fed request lines, among them
batches (a line holding a JSON array), and its answer lines are read back: an array of
requests gets one line holding the array of their responses, in their order; its
notifications get none; a member that is no request gets its own Invalid Request; an
empty array is one Invalid Request response (not an array); a batch of notifications
only gets no line at all. The lines before and after a batch are answered as ever.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from engine.rpc.errors import INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "engine" / "demo_corpus"


def search(request_id: Any, query: str) -> dict[str, Any]:
    request = {"jsonrpc": "2.0", "method": "sessions.search",
               "params": {"agentId": "main", "query": query}}
    return request if request_id is None else {**request, "id": request_id}


def served(store: Path, *lines: Any) -> list[Any]:
    """The answer lines of one `serve` process fed `lines` (JSON values or raw text)."""
    text = "".join((line if isinstance(line, str) else json.dumps(line)) + "\n"
                   for line in lines)
    completed = subprocess.run(
        [sys.executable, "-m", "engine", "serve", "--quiet", "--store", str(store)],
        cwd=ROOT, input=text, capture_output=True, text=True, timeout=120, check=False)
    assert (completed.returncode, completed.stderr) == (0, "")
    return [json.loads(line) for line in completed.stdout.splitlines()]


def invalid_request(message: str = "a request must be a JSON object") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": None,
            "error": {"code": INVALID_REQUEST, "message": message}}


def test_a_batch_gets_an_array_of_its_responses_in_order(tmp_path: Path) -> None:
    store = imported(tmp_path)
    batch = [search(1, "cafe"), search(None, "cafe"), 7,
             {"jsonrpc": "2.0", "id": "x", "method": "nope"}, search(2, "zzzq")]
    before, answer, after = served(store, search("first", "cafe"), batch, search(3, "cafe"))
    assert before["id"] == "first" and after["id"] == 3
    assert isinstance(answer, list) and [response.get("id") for response in answer] == [
        1, None, "x", 2]
    assert [hit["messageId"] for hit in answer[0]["result"]["hits"]] == [
        "cafe-communication", "french"]
    assert answer[0]["result"] == before["result"]  # a member answers as its line would
    assert answer[1] == invalid_request()
    assert answer[2]["error"] == {"code": METHOD_NOT_FOUND, "message": "unknown method 'nope'"}
    assert answer[3]["result"]["hits"] == []


def test_an_empty_batch_is_one_invalid_request(tmp_path: Path) -> None:
    assert served(imported(tmp_path), []) == [invalid_request(
        "an empty batch (an array with no request) is not a request")]


def test_a_batch_of_non_requests_gets_one_error_each(tmp_path: Path) -> None:
    assert served(imported(tmp_path), [1, 2, 3]) == [[invalid_request()] * 3]


def test_a_batch_of_notifications_only_gets_nothing(tmp_path: Path) -> None:
    store = imported(tmp_path)
    answers = served(store, [search(None, "cafe"), search(None, "zzzq")], search(5, "cafe"))
    assert [answer["id"] for answer in answers] == [5]  # only the line after it is answered


def test_a_batch_that_is_not_json_is_one_parse_error(tmp_path: Path) -> None:
    line = '[{"jsonrpc": "2.0", "id": 1, "method": "sessions.search"}, {"jsonrpc": "2.0"'
    (answer,) = served(imported(tmp_path), line)
    assert answer["id"] is None and answer["error"]["code"] == PARSE_ERROR


def imported(tmp_path: Path) -> Path:
    store = tmp_path / "store"
    completed = subprocess.run(
        [sys.executable, "-m", "engine", "import", "--quiet", "--store", str(store),
         str(DEMO)], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert (completed.returncode, completed.stderr) == (0, "")
    return store
