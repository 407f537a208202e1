"""The JSON-RPC server answers every line and stays alive (issue 17 item 4).

Hypothesis drives the server's own line handler (`engine.rpc.server.handle_line`, what
`serve` runs for each line) with hostile input: arbitrary bytes, text holding lone
surrogates, JSON nested far deeper than Python's recursion limit, envelopes with wrong
types, and `sessions.search`, `sessions_search` and `ui.search` params drawn from arbitrary
JSON. Every line that is not a notification gets exactly one conforming answer (a batch:
one array of conforming responses), whose encoded form is valid UTF-8; then a real `serve` process is fed a batch of such lines and
must answer each and exit 0.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.ingest import import_sources
from engine.rpc.errors import INTERNAL_ERROR
from engine.rpc.framing import encode_message
from engine.rpc.server import handle_line
from engine.store.registry import open_backend

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "engine" / "demo_corpus"
CODES = {-32700, -32600, -32601, -32602, -32603, -32000, -32001}

json_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text()
json_values = st.recursive(json_scalars, lambda children: st.lists(children, max_size=4)
                           | st.dictionaries(st.text(max_size=8), children, max_size=4),
                           max_leaves=20)
lone_surrogate_text = st.text(alphabet=st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
                              | st.characters(max_codepoint=0x7F), max_size=12)


@st.composite
def deep_nesting(draw: st.DrawFn) -> str:
    depth = draw(st.integers(min_value=900, max_value=20_000))
    opener, closer = draw(st.sampled_from([("[", "]"), ('{"a":', "}")]))
    return opener * depth + "1" + closer * depth


@st.composite
def envelopes(draw: st.DrawFn) -> str:
    message: dict[str, Any] = {"jsonrpc": draw(st.sampled_from(["2.0", "1.0", 2]))}
    if draw(st.booleans()):
        message["id"] = draw(st.integers() | lone_surrogate_text | json_values)
    message["method"] = draw(st.sampled_from(["sessions.search", "nope"]) | json_values)
    params = draw(st.fixed_dictionaries({}, optional={
        "query": st.text() | lone_surrogate_text | json_values,
        "agentId": st.sampled_from(["main", "..", ""]) | lone_surrogate_text | json_values,
        "sessionKeys": st.lists(st.text(max_size=20), max_size=3) | json_values,
        "limit": st.integers() | json_values,
        "role": st.sampled_from(["user", "system"]) | json_values,
        "order": st.sampled_from(["recent", "random"]) | json_values,
        "match": st.sampled_from(["prefix", "fuzzy"]) | json_values,
    }) | json_values)
    message["params"] = params
    # lone surrogates go through as JSON escapes, the way a client would write them
    return json.dumps(message)


@st.composite
def tool_envelopes(draw: st.DrawFn) -> str:
    """`sessions_search` (the agent tool) requests with hostile requesters and arguments."""
    requester = draw(st.fixed_dictionaries({}, optional={
        "sessionKey": st.sampled_from(["agent:main:main", "main", "current", "", "global"])
        | lone_surrogate_text | json_values,
        "sandboxed": st.booleans() | json_values,
        "agentId": st.sampled_from(["main", ".."]) | json_values,
        "colour": json_values,
    }) | json_values)
    arguments = draw(st.fixed_dictionaries({}, optional={
        "query": st.text() | lone_surrogate_text | st.just("x" * 5000) | json_values,
        "sessionKey": st.sampled_from(["current", "main", "agent:work:main",
                                       "agent:main:dashboard:incognito-x",
                                       "0b6f1c9e-3a52-4c1e-9d7a-2f5b8e4c1a90"])
        | lone_surrogate_text | json_values,
        "limit": st.integers() | st.floats() | json_values,
        "extra": json_values,
    }) | json_values)
    params = draw(st.just({"requester": requester, "arguments": arguments}) | json_values)
    message = {"jsonrpc": "2.0", "id": draw(st.integers(0, 99)), "method": "sessions_search",
               "params": params}
    return json.dumps(message)


@st.composite
def ui_envelopes(draw: st.DrawFn) -> str:
    """`ui.search` (the command palette) requests with hostile queries and limits."""
    params = draw(st.fixed_dictionaries({}, optional={
        "query": st.text() | lone_surrogate_text | st.just("x" * 5000)
        | st.sampled_from(["per session communi", "---", "a", "agent:main:ui"]) | json_values,
        "limit": st.integers() | st.floats() | json_values,
        "scope": json_values,
    }) | json_values)
    message = {"jsonrpc": "2.0", "id": draw(st.integers(0, 99)), "method": "ui.search",
               "params": params}
    return json.dumps(message)


hostile_lines = (st.binary(max_size=64) | lone_surrogate_text.map(lambda text: text.encode(
    "utf-8", "surrogatepass")) | deep_nesting().map(str.encode) | envelopes().map(str.encode)
    | tool_envelopes().map(str.encode) | ui_envelopes().map(str.encode)
    | json_values.map(lambda value: json.dumps(value).encode()))


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    path = tmp_path_factory.mktemp("fuzz") / "store"
    backend = open_backend(path, backend="reference", create=True)
    try:
        import_sources(backend, [DEMO])
        backend.reconcile()
    finally:
        backend.close()
    yield path


#: What `decoded` gives for a line that is not JSON.
NOT_JSON = object()


def decoded(line: bytes) -> Any:
    """The JSON value of a line, or `NOT_JSON`."""
    try:
        return json.loads(line.decode("utf-8"))
    except (ValueError, RecursionError):
        return NOT_JSON


def is_notification_message(message: Any) -> bool:
    return isinstance(message, dict) and "id" not in message and message.get(
        "jsonrpc") == "2.0" and isinstance(message.get("method"), str)


def is_notification(line: bytes) -> bool:
    """Whether the line gets no answer: a notification, or a batch of them only."""
    message = decoded(line)
    if isinstance(message, list):
        return bool(message) and all(map(is_notification_message, message))
    return is_notification_message(message)


def check_answer(line: bytes, answer: dict[str, Any] | list[Any] | None) -> None:
    if is_notification(line):
        assert answer is None
        return
    message = decoded(line)
    if isinstance(message, list) and message:  # a batch: one response per request member
        assert isinstance(answer, list)
        assert len(answer) == sum(not is_notification_message(item) for item in message)
        for response in answer:
            check_response(response)
        encode_message(answer).decode("utf-8")
        return
    assert isinstance(answer, dict)
    check_response(answer)
    encode_message(answer).decode("utf-8")  # the line the server writes is valid UTF-8


def check_response(answer: dict[str, Any]) -> None:
    """One response conforms to the envelope."""
    assert answer is not None and answer["jsonrpc"] == "2.0" and "id" in answer
    # the id answered is one the protocol allows: a string, an integer (not a boolean) or null
    assert answer["id"] is None or (isinstance(answer["id"], (str, int))
                                    and not isinstance(answer["id"], bool)), answer["id"]
    assert ("result" in answer) != ("error" in answer)
    if "error" in answer:
        assert answer["error"]["code"] in CODES and isinstance(answer["error"]["message"], str)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(line=hostile_lines)
def test_every_hostile_line_gets_one_conforming_answer(store: Path, line: bytes) -> None:
    answer_line(store, line)


def answer_line(store: Path, line: bytes) -> dict[str, Any] | list[Any] | None:
    """The server's answer to `line` on a freshly opened store, checked to conform."""
    backend = open_backend(store)
    try:
        answer = handle_line(backend, line)
    finally:
        backend.close()
    check_answer(line, answer)
    return answer


def seeded_batch(generator: random.Random, count: int) -> list[bytes]:
    """Hostile lines of every family above, drawn from a fixed seed (the same each run)."""
    values: list[Any] = [None, True, 7, -1, 2**70, 1.5, "", "cafe", [], {}, [[[]]], {"a": {}}]
    lines: list[bytes] = []
    for _ in range(count):
        family = generator.randrange(5)
        if family == 0:
            lines.append(bytes(generator.randrange(256) for _ in range(generator.randrange(1, 40))))
        elif family == 1:
            lines.append(chr(0xD800 + generator.randrange(0x800)).encode("utf-8", "surrogatepass"))
        elif family == 2:
            depth = generator.randrange(900, 20_000)
            lines.append(("[" * depth + "]" * depth).encode())
        else:
            message: dict[str, Any] = {"jsonrpc": "2.0", "method": generator.choice(
                ["sessions.search", "nope", 5])}
            if family == 3:
                message["id"] = generator.choice([1, "x", "\udc80", None, [1]])
            message["params"] = {"agentId": generator.choice(["main", "..", 3]),
                                 "query": generator.choice(values + ["\ud800", "café"]),
                                 "limit": generator.choice(values)}
            lines.append(json.dumps(message).encode())
    return lines


def test_a_serve_process_answers_a_batch_of_hostile_lines_and_exits_cleanly(store: Path) -> None:
    batch = [line for line in seeded_batch(random.Random(1717), 80)
             if b"\n" not in line and b"\r" not in line and line.strip()]
    batch += [b"[" * 100_000 + b"]" * 100_000,
              b'{"jsonrpc": "2.0", "id": "\\udc80", "method": "nope"}',
              b"\xff\xfe\xfd",
              (b'{"jsonrpc": "2.0", "id": 9, "method": "sessions.search", '
               b'"params": {"agentId": "main", "query": "cafe"}}')]
    completed = subprocess.run(
        [sys.executable, "-m", "engine", "serve", "--quiet", "--store", str(store)],
        cwd=ROOT, input=b"".join(line + b"\n" for line in batch), capture_output=True,
        timeout=300, check=False)
    assert completed.returncode == 0, completed.stderr.decode("utf-8", "replace")[-2000:]
    answers = [json.loads(line.decode("utf-8")) for line in completed.stdout.splitlines()]
    expected = [line for line in batch if not is_notification(line)]
    assert len(answers) == len(expected)
    assert answers[-1]["id"] == 9 and answers[-1]["result"]["hits"]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(line=tool_envelopes().map(str.encode))
def test_hostile_tool_requests_get_a_result_or_a_deliberate_error(store: Path,
                                                                  line: bytes) -> None:
    """The agent tool never meets a bug on hostile input: every answer is a result or an
    error the engine chose (invalid params, a store error), never INTERNAL_ERROR."""
    answer = answer_line(store, line)
    assert isinstance(answer, dict)
    assert answer.get("error", {}).get("code") != INTERNAL_ERROR, answer


def resident_kib(pid: int) -> int:
    """The resident memory of process `pid` (Linux's VmRSS), in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def ask(server: subprocess.Popen, line: bytes) -> dict[str, Any]:
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write(line + b"\n")
    server.stdin.flush()
    return json.loads(server.stdout.readline())


#: How much a server may grow while it is sent ten 10 MB lines (KiB): far less than one
#: of them, so no line was held whole, and none kept.
MEMORY_ALLOWANCE_KIB = 8 * 1024


def test_huge_lines_are_refused_unread_and_memory_stays_flat(store: Path) -> None:
    """Ten 10 MB lines, each answered with one invalid-request line naming its length,
    the server's resident memory about what it was, and a 2,000-term query (the longest
    the 4096-character limit allows) answered like any other."""
    server = subprocess.Popen(
        [sys.executable, "-m", "engine", "serve", "--quiet", "--store", str(store)],
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        search = (b'{"jsonrpc": "2.0", "id": 1, "method": "sessions.search", '
                  b'"params": {"agentId": "main", "query": "cafe"}}')
        assert ask(server, search)["result"]["hits"]
        before = resident_kib(server.pid)
        huge = b'{"jsonrpc": "2.0", "id": 2, "method": "sessions.search", "params": {"query": "' \
            + b"a" * 10_000_000 + b'"}}'
        for _ in range(10):
            answer = ask(server, huge)
            assert answer["id"] is None and answer["error"]["code"] == -32600
            assert answer["error"]["message"].startswith(
                f"request line too long: {len(huge) + 1} bytes")
        grown = resident_kib(server.pid) - before
        assert grown < MEMORY_ALLOWANCE_KIB, f"grew {grown} KiB"
        many = " ".join(["a"] * 2000)  # 2,000 terms in 3,999 characters ("a plan ...")
        answer = ask(server, json.dumps({"jsonrpc": "2.0", "id": 3, "method": "sessions.search",
                                         "params": {"agentId": "main", "query": many}}).encode())
        assert answer["result"]["hits"], answer
        assert ask(server, search)["id"] == 1  # and the server goes on
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(timeout=120)
    assert server.returncode == 0
