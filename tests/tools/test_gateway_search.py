"""The Gateway's `sessions.search` handler (`engine.agent_tools.gateway_search`), on both backends,
through the JSON-RPC method a client calls: issue 27's reproducers, pinned to OpenClaw
2026.9.6's answers (the oracle test compares every case with the real handler).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from engine.agent_tools.tool_config import ToolConfig
from engine.rpc.methods import RpcContext
from engine.rpc.server import handle_line
from tests.tools.stores import StoreMaker, session


def call(store: Any, params: Any, config: ToolConfig = ToolConfig()) -> dict[str, Any]:
    answer = handle_line(RpcContext(store, tool_config=config), json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "gateway.sessions.search", "params": params}))
    assert answer is not None
    return answer.get("result", answer.get("error"))


@pytest.fixture
def store(make_store: StoreMaker) -> Any:
    return make_store([session("agent:main:tail-blank", "saffron main"),
                       session("agent:main:main", "saffron main main"),
                       session("agent:ops:chat", "saffron ops"),
                       session("global", "saffron global")])


def keys(answer: dict[str, Any]) -> list[str]:
    return [hit["sessionKey"] for hit in answer["results"]]


def test_keys_of_two_agents_are_refused(store: Any) -> None:
    assert call(store, {"query": "saffron",
                        "sessionKeys": ["agent:main:tail-blank", "agent:ops:chat"]}) == {
        "code": -32602, "message": "sessions.search supports one agent per call"}


def test_without_an_agent_or_keys_the_default_agent_is_searched(store: Any) -> None:
    assert sorted(keys(call(store, {"query": "saffron"}))) == [
        "agent:main:main", "agent:main:tail-blank", "global"]


@pytest.mark.parametrize(("limit", "message"), [
    (0, "at /limit: must be >= 1"), (30, "at /limit: must be <= 25"),
    ("3", "at /limit: must be integer")])
def test_a_limit_out_of_range_is_refused_by_the_schema(store: Any, limit: Any,
                                                        message: str) -> None:
    assert call(store, {"query": "saffron", "limit": limit}) == {
        "code": -32602, "message": f"invalid sessions.search params: {message}"}


def test_another_agents_global_is_not_searched(store: Any) -> None:
    assert call(store, {"query": "saffron", "agentId": "ops", "sessionKeys": ["global"]}) == {
        "results": []}
    assert keys(call(store, {"query": "saffron", "sessionKeys": ["global"]})) == ["global"]


def test_a_configured_agent_needs_keys_and_unscoped_keys_need_an_owner(store: Any) -> None:
    configured = ToolConfig(agents=("main", "ops"))
    assert call(store, {"query": "saffron", "agentId": "ops"}, configured)["message"] == (
        "agentId requires sessionKeys")
    assert call(store, {"query": "saffron"}, configured)["message"] == (
        'Multiple agents are configured, but session key "main" has no explicit owner. '
        "Pass agentId or use an agent-prefixed session key.")
    assert keys(call(store, {"query": "saffron", "agentId": "ops",
                             "sessionKeys": ["agent:ops:chat"]}, configured)) == [
        "agent:ops:chat"]
