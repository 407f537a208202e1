"""`session-search mcp` spoken to by the official MCP SDK's client, as an agent runtime
speaks to it: a real `python -m engine mcp` subprocess over stdio, no mocks.

What a client sees: the two tools with their schemas and the seed's words; a search
whose answer is byte for byte `session-search call`'s; the history around a hit opened
with the hit's sessionKey, messageId and sessionId, as `serve` answers it; the tools'
refusals as MCP tool errors (`isError`) in the engine's words; visibility from an
OpenClaw configuration file and a requester; a live OpenClaw state folder whose
transcript grows while the server runs; and the refusals before serving (no store, no
SDK) as one error line.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError

from tests.ingest.test_live_state import append_lines, digests, sessions_of
from tests.ingest.test_openclaw_state import build_state, message
from tests.mcp.conftest import CHECKOUT, mcp_session, run_session

CAFE_HIT = {"sessionKey": "agent:main:ui-search", "messageId": "cafe-communication",
            "sessionId": "ui-search"}


def engine_command(*argv: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m engine ARGV`, finished (without a default store from the environment)."""
    environment = {name: value for name, value in os.environ.items()
                   if name != "SESSION_SEARCH_STORE"}
    return subprocess.run([sys.executable, "-m", "engine", *argv], cwd=CHECKOUT, input=stdin,
                          capture_output=True, text=True, timeout=120, check=False,
                          env=environment)


async def call(session: ClientSession, tool: str, arguments: dict) -> tuple[bool, str]:
    """A tool call's `isError` and its one text block."""
    result = await session.call_tool(tool, arguments)
    assert [block.type for block in result.content] == ["text"]
    return result.is_error, result.content[0].text


def no_traceback(stderr: Path) -> str:
    text = stderr.read_text(encoding="utf-8")
    assert "Traceback" not in text, text
    return text


def test_the_tools_are_listed_with_their_schemas(demo_store: Path, tmp_path: Path) -> None:
    async def scenario() -> list:
        # the store from the environment, as every command takes it without --store
        async with mcp_session(stderr=tmp_path / "err",
                               environment={"SESSION_SEARCH_STORE": str(demo_store)}) as session:
            return (await session.list_tools()).tools

    tools = {tool.name: tool for tool in run_session(scenario)}
    assert list(tools) == ["sessions_search", "sessions_history"]
    search, history = tools["sessions_search"].input_schema, tools["sessions_history"].input_schema
    assert search["type"] == "object" and search["required"] == ["query"]
    assert search["properties"]["query"] == {
        "type": "string", "pattern": "\\S", "maxLength": 4096,
        "description": "Required non-empty keywords to match in past user and assistant text."}
    assert {name: search["properties"]["limit"][name] for name in ("type", "minimum", "maximum")} \
        == {"type": "integer", "minimum": 1, "maximum": 25}
    assert set(history["properties"]) == {"sessionKey", "limit", "offset", "messageId",
                                          "sessionId", "includeTools"}
    assert history["required"] == ["sessionKey"]
    described = tools["sessions_search"].description
    assert described.startswith("Search visible past sessions for matching user and assistant text.")
    assert ("Pass the returned sessionKey, messageId, and sessionId together to "
            "sessions_history") in described
    assert "A timeout does not mean that no matching conversation exists." in described
    assert tools["sessions_history"].description.startswith(
        "Read sanitized visible-session history.")
    assert all(tool.annotations.read_only_hint for tool in tools.values())
    assert no_traceback(tmp_path / "err").startswith(
        f"session-search: MCP server for store {demo_store} on standard input/output")


def test_a_search_and_the_history_around_its_hit(demo_store: Path, tmp_path: Path) -> None:
    arguments = {"query": "cafe", "limit": 2}

    async def scenario() -> tuple:
        async with mcp_session("--store", str(demo_store), stderr=tmp_path / "err") as session:
            searched = await call(session, "sessions_search", arguments)
            hit = json.loads(searched[1])["results"][0]
            opened = await call(session, "sessions_history", {
                "sessionKey": hit["sessionKey"], "messageId": hit["messageId"],
                "sessionId": hit["sessionId"], "limit": 3})
            return searched, hit, opened

    (search_error, search_text), hit, (history_error, history_text) = run_session(scenario)
    assert (search_error, history_error) == (False, False)
    printed = engine_command("call", "sessions_search", "--store", str(demo_store),
                             "--requester", "agent:main:main", json.dumps(arguments))
    assert printed.returncode == 0, printed.stderr
    assert search_text + "\n" == printed.stdout  # byte for byte the `call` command's answer
    assert {name: hit[name] for name in CAFE_HIT} == CAFE_HIT
    request = {"jsonrpc": "2.0", "id": 1, "method": "sessions_history", "params": {
        **CAFE_HIT, "limit": 3, "requesterSessionKey": "agent:main:main"}}
    served = engine_command("serve", "--quiet", "--store", str(demo_store),
                            stdin=json.dumps(request) + "\n")
    expected = json.loads(served.stdout)["result"]
    assert history_text == json.dumps(expected, ensure_ascii=False, indent=2)
    history = json.loads(history_text)
    assert history["sessionKey"] == "agent:main:ui-search"
    assert "cafe-communication" in [row.get("__openclaw", {}).get("id")
                                    for row in history["messages"]]
    no_traceback(tmp_path / "err")


def test_the_tools_refusals_are_tool_errors_in_the_engines_words(
        demo_store: Path, tmp_path: Path) -> None:
    async def scenario() -> tuple:
        async with mcp_session("--store", str(demo_store), stderr=tmp_path / "err") as session:
            answers = [
                await call(session, "sessions_search", {"query": "   "}),
                await call(session, "sessions_search", {"query": "x" * 4097}),
                await call(session, "sessions_search", {"query": "x", "limit": 26}),
                await call(session, "sessions_search", {}),
                await call(session, "sessions_history", {"sessionKey": "agent:main:no-such"}),
                await call(session, "sessions_history", {**CAFE_HIT, "offset": 2}),
                await call(session, "sessions_history", {"sessionKey": "main", "colour": 1}),
            ]
            with pytest.raises(MCPError) as unknown:
                await session.call_tool("sessions_list", {})
            after = await call(session, "sessions_search", {"query": "cafe", "limit": 1})
            return answers, unknown.value, after

    answers, unknown, after = run_session(scenario)
    assert answers == [
        (True, ("query must not be empty; retry with non-empty keywords to match in past "
               "session text")),
        (True, "query must not exceed 4096 characters"),
        (True, "limit must be a positive integer"),
        (True, ("query must not be empty; retry with non-empty keywords to match in past "
               "session text")),
        (True, json.dumps({"status": "error", "error": "No session found: agent:main:no-such"},
                          indent=2)),
        (True, "offset and messageId cannot be used together"),
        (True, "unknown params: colour"),
    ]
    assert unknown.message == "Unknown tool: sessions_list"
    assert after[0] is False and json.loads(after[1])["results"][0]["messageId"] == \
        "cafe-communication"  # the server serves on after every refusal
    no_traceback(tmp_path / "err")


def test_visibility_comes_from_the_configuration_and_the_requester(
        demo_store: Path, tmp_path: Path) -> None:
    own_only = tmp_path / "openclaw.toml"
    own_only.write_text('[tools.sessions]\nvisibility = "self"\n', encoding="utf-8")
    one_agent = tmp_path / "openclaw.json"
    one_agent.write_text(json.dumps({"tools": {"sessions": {"visibility": "agent"}}}),
                         encoding="utf-8")

    async def scenario() -> tuple:
        async with mcp_session("--store", str(demo_store), "--config", str(own_only),
                               "--requester", "agent:main:multilingual",
                               stderr=tmp_path / "err-self") as session:
            own = await call(session, "sessions_search", {"query": "cafe"})
            other = await call(session, "sessions_history", {"sessionKey": "agent:main:ui-search"})
        async with mcp_session("--store", str(demo_store), "--config", str(one_agent),
                               "--requester", "agent:work:main",
                               stderr=tmp_path / "err-agent") as session:
            forbidden = await call(session, "sessions_search",
                                   {"query": "cafe", "sessionKey": "agent:main:ui-search"})
        return own, other, forbidden

    own, other, forbidden = run_session(scenario)
    assert own[0] is False
    assert {hit["sessionKey"] for hit in json.loads(own[1])["results"]} == \
        {"agent:main:multilingual"}
    assert other[0] is True and json.loads(other[1])["status"] == "forbidden"
    assert forbidden == (True, json.dumps({
        "status": "forbidden",
        "error": "Session search visibility is restricted. Set tools.sessions.visibility=all "
                 "to allow cross-agent access; use tools.agentToAgent to restrict permitted "
                 "agent pairs."}, indent=2))
    printed = engine_command("call", "sessions_search", "--store", str(demo_store), "--config",
                             str(own_only), "--requester", "agent:main:multilingual",
                             json.dumps({"query": "cafe"}))
    assert own[1] + "\n" == printed.stdout
    no_traceback(tmp_path / "err-self")


def test_a_live_state_folder_is_followed_call_by_call(tmp_path: Path) -> None:
    state = build_state(tmp_path / "state")
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    environment = {"TMPDIR": str(temporary)}

    async def scenario() -> tuple:
        async with mcp_session("--openclaw-state", str(state), stderr=tmp_path / "err",
                               environment=environment) as session:
            before = await call(session, "sessions_search", {"query": "zanzibar"})
            stores_while_serving = sorted(path.name for path in temporary.iterdir())
            append_lines(sessions_of(state) / "uuid-2.jsonl",
                         [message("c0ffee01", "c0ffee00", "user", "zanzibar follow-up")])
            after = await call(session, "sessions_search", {"query": "zanzibar"})
            hit = json.loads(after[1])["results"][0]
            opened = await call(session, "sessions_history", {
                "sessionKey": hit["sessionKey"], "messageId": hit["messageId"],
                "sessionId": hit["sessionId"]})
            unchanged = digests(state)
        return before, stores_while_serving, after, hit, opened, unchanged

    before, stores_while_serving, after, hit, opened, unchanged = run_session(scenario)
    assert before == (False, json.dumps({"results": []}, indent=2))
    assert after[0] is False
    assert {name: hit[name] for name in ("sessionKey", "sessionId", "messageId", "role")} == {
        "sessionKey": "agent:main:cron:daily", "sessionId": "uuid-2", "messageId": "c0ffee01",
        "role": "user"}
    assert opened[0] is False
    texts = [row["content"][0]["text"] for row in json.loads(opened[1])["messages"]]
    assert texts == ["digest", "zanzibar follow-up"]
    assert unchanged == digests(state)  # the state is only read
    assert len(stores_while_serving) == 1 and stores_while_serving[0].startswith(
        "session-search-mcp-")
    assert list(temporary.iterdir()) == []  # the temporary store is gone with the server
    # The import's notes, each said once (not at every call), then the ready line.
    *notes, ready = no_traceback(tmp_path / "err").splitlines()
    assert ready == (
        f"session-search: MCP server for OpenClaw state {state}, imported before each call "
        "into a temporary store on standard input/output, as agent:main:main (tools: "
        "sessions_search, sessions_history); the client ends its input to stop")
    assert (f"session-search: warning: {sessions_of(state) / 'stray.jsonl'}: no sessions.json "
            'entry names it; imported under "unknown"') in notes
    assert len(set(notes)) == len(notes)
    assert all(note.startswith("session-search: warning: ") for note in notes)


def test_sigterm_stops_the_server_and_removes_its_temporary_store(tmp_path: Path) -> None:
    state = build_state(tmp_path / "state")
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    server = subprocess.Popen(
        [sys.executable, "-m", "engine", "mcp", "--openclaw-state", str(state)], cwd=CHECKOUT,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "TMPDIR": str(temporary)})
    try:
        line = server.stderr.readline()
        while line.startswith("session-search: warning: "):  # the import's notes
            line = server.stderr.readline()
        assert line.startswith("session-search: MCP server for OpenClaw state"), line
        assert len(list(temporary.iterdir())) == 1
        server.send_signal(signal.SIGTERM)
        out, err = server.communicate(timeout=120)
    finally:
        if server.poll() is None:
            server.kill()
            server.communicate()
    assert (server.returncode, out) == (0, "")
    assert "Traceback" not in err, err
    assert list(temporary.iterdir()) == []


def test_what_cannot_be_served_is_refused_before_serving(tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    refused = engine_command("mcp", "--store", str(missing))
    assert (refused.returncode, refused.stdout, refused.stderr) == (
        2, "", f"session-search: error: {missing}: no session-search store here\n")
    (tmp_path / "empty").mkdir()
    refused = engine_command("mcp", "--openclaw-state", str(tmp_path / "empty"))
    assert (refused.returncode, refused.stdout, refused.stderr) == (
        2, "", (f"session-search: error: {tmp_path / 'empty'}: not an OpenClaw state directory "
               "(no agents/<agentId>/sessions/ nor agents/<agentId>/agent/openclaw-agent.sqlite)\n"))
    refused = engine_command("mcp")
    assert (refused.returncode, refused.stderr) == (
        2, ("session-search: error: nothing to serve: give --store DIR (or set "
           "SESSION_SEARCH_STORE) or --openclaw-state PATH\n"))


def test_without_the_sdk_the_command_says_how_to_install_it(demo_store: Path) -> None:
    program = ("import sys\n"
               "sys.modules['mcp'] = sys.modules['anyio'] = None  # as if never installed\n"
               "from engine.cli import main\n"
               f"raise SystemExit(main(['mcp', '--store', {str(demo_store)!r}]))\n")
    completed = subprocess.run([sys.executable, "-c", program], cwd=CHECKOUT, input="",
                               capture_output=True, text=True, timeout=120, check=False)
    assert (completed.returncode, completed.stdout, completed.stderr) == (
        2, "", ("session-search: error: the mcp command needs the MCP Python SDK (the `mcp` "
               "package), which is not installed; install it with: pip install "
               "'session-search[mcp]' (from a checkout: pip install -e '.[mcp]')\n"))
