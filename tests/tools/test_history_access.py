"""`sessions_history` under the same visibility as `sessions_search` (behaviour.md §12.4:
"`self`, sandbox and cross-agent restrictions → forbidden for both tools"), on both
backends, through the JSON-RPC method a client calls.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from engine.agent_tools.tool_config import ToolConfig
from engine.rpc.methods import RpcContext
from engine.rpc.server import handle_line
from tests.tools.stores import StoreMaker, session

MAIN = "agent:main:main"


def history(store: Any, config: ToolConfig, target: str, requester: str | None) -> dict[str, Any]:
    params: dict[str, Any] = {"sessionKey": target}
    if requester is not None:
        params["requesterSessionKey"] = requester
    answer = handle_line(RpcContext(store, tool_config=config), json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "sessions_history", "params": params}))
    assert answer is not None and "result" in answer, answer
    return answer["result"]


@pytest.mark.parametrize(("config", "target", "error"), [
    (ToolConfig(visibility="self"), "agent:main:other",
     "Session history visibility is restricted to the current session "
     "(tools.sessions.visibility=self)."),
    (ToolConfig(visibility="tree"), "agent:main:other", None),  # the main session's tree
    (ToolConfig(visibility="agent"), "agent:work:main",
     "Session history visibility is restricted. Set tools.sessions.visibility=all to allow "
     "cross-agent access; use tools.agentToAgent to restrict permitted agent pairs."),
    (ToolConfig(agent_to_agent_enabled=False), "agent:work:main",
     "Agent-to-agent history is disabled. Set tools.agentToAgent.enabled=true to allow "
     "cross-agent access."),
    (ToolConfig(), "agent:work:main", None),
    (ToolConfig(), "agent:main:dashboard:incognito-x",
     "Session not visible from session tools: agent:main:dashboard:incognito-x"),
])
def test_history_obeys_the_search_tools_visibility(
        make_store: StoreMaker, config: ToolConfig, target: str, error: str | None) -> None:
    store = make_store([session(MAIN, "mine"), session("agent:main:other", "other text"),
                        session("agent:work:main", "work text"),
                        session("agent:main:dashboard:incognito-x", "secret")])
    answer = history(store, config, target, MAIN)
    if error is None:
        assert [message["content"] for message in answer["messages"]] != []
    else:
        assert answer == {"status": "forbidden", "error": error}


def test_tree_reads_the_requesters_own_and_spawned_sessions_only(make_store: StoreMaker) -> None:
    store = make_store([session(MAIN, "mine"), session("agent:main:child", "child text",
                                                       spawned_by="agent:main:task"),
                        session("agent:main:task", "task"), session("agent:main:other", "x")])
    config = ToolConfig(visibility="tree")
    assert "messages" in history(store, config, "agent:main:task", "agent:main:task")
    assert "messages" in history(store, config, "agent:main:child", "agent:main:task")
    assert history(store, config, "agent:main:other", "agent:main:task")["status"] == "forbidden"


def test_without_a_requester_every_session_is_read(make_store: StoreMaker) -> None:
    store = make_store([session(MAIN, "mine"), session("agent:work:main", "work text")])
    answer = history(store, ToolConfig(visibility="self"), "agent:work:main", None)
    assert [message["content"] for message in answer["messages"]] == ["work text"]


# Issue 34, item 1: an unscoped key names the requester's own agent's session. The store
# keeps `global` and `unknown` in `main`'s partition, so for any other agent they are
# sessions the store does not hold: an empty page, never `main`'s messages.
AGENT_ONLY_NO_A2A = ToolConfig(visibility="agent", agent_to_agent_enabled=False)


@pytest.mark.parametrize("requester", ["agent:work:chat", "agent:ops:anything"])
@pytest.mark.parametrize("target", ["global", "unknown", " global "])
@pytest.mark.parametrize("config", [AGENT_ONLY_NO_A2A, ToolConfig()])
def test_another_agents_unscoped_key_is_its_own_absent_session(
        make_store: StoreMaker, requester: str, target: str, config: ToolConfig) -> None:
    store = make_store([session(MAIN, "mine"), session("global", "main's global secret"),
                        session("unknown", "main's unknown secret"),
                        session("agent:work:chat", "work chat")])
    answer = history(store, config, target, requester)
    assert answer["sessionKey"] == target.strip()
    assert answer["messages"] == [] and answer["bytes"] == 2


@pytest.mark.parametrize("target", ["global", "unknown"])
def test_the_default_agents_requester_reads_its_unscoped_sessions(
        make_store: StoreMaker, target: str) -> None:
    store = make_store([session(MAIN, "mine"), session(target, f"{target} text")])
    answer = history(store, AGENT_ONLY_NO_A2A, target, MAIN)
    assert [message["content"] for message in answer["messages"]] == [f"{target} text"]
    # the default agent's own unscoped session, held or not: never an error
    other = "unknown" if target == "global" else "global"
    assert history(store, AGENT_ONLY_NO_A2A, other, MAIN)["messages"] == []


def test_main_current_and_scoped_names_resolve_for_the_requester(make_store: StoreMaker) -> None:
    store = make_store([session(MAIN, "mine"), session("agent:work:main", "work main"),
                        session("agent:work:chat", "work chat")])
    config = ToolConfig()
    main = history(store, config, "main", "agent:work:chat")
    assert (main["sessionKey"], [m["content"] for m in main["messages"]]) == ("main", ["work main"])
    current = history(store, config, "current", "agent:work:chat")
    assert current["sessionKey"] == "agent:work:chat"
    assert [m["content"] for m in current["messages"]] == ["work chat"]
    explicit = history(store, config, MAIN, "agent:main:main")
    assert explicit["sessionKey"] == MAIN  # shown as given, as OpenClaw shows it
    assert history(store, config, "agent:work:nope", "agent:work:chat") == {
        "status": "error", "error": "No session found: agent:work:nope"}
