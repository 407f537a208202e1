"""The Gateway's own `sessions.search` handler, against the real OpenClaw 2026.9.6 (issue 27).

The oracle tests of the search kernel merge agents in the adapter; what a Gateway client
reaches is `sessionReadHandlers["sessions.search"]`, which refuses keys of two agents,
falls back to agent `main` when none is named and refuses out-of-range limits by its
schema. The adapter's `gateway.sessions.search` calls that handler in-process; the engine
answers the same requests through its JSON-RPC `gateway.sessions.search`
(`engine.agent_tools.gateway_search`), on both backends, with agents unconfigured and with
three agents configured. Answers must be identical: results (hits, order, excerpts,
scores), flags, and each refusal's message.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from engine.agent_tools.tool_config import tool_config_from_json
from engine.rpc.errors import RpcError
from engine.rpc.methods import RpcContext
from engine.rpc.server import handle_line
from tests.oracles.chat_corpus import FlatMessage, write_flat_file
from tests.oracles.oracle_run import imported_stores, oracle_summary, running_adapter

MESSAGES = [
    FlatMessage("agent:main:tail-blank", "m1", "a1", "user", 1000, "saffron rice from main"),
    FlatMessage("agent:main:main", "m2", "a2", "assistant", 1100, "saffron and more saffron"),
    FlatMessage("agent:main:notes", "m3", "a3", "user", 1200, "notes about cumin"),
    FlatMessage("agent:ops:chat", "o1", "c1", "user", 2500, "saffron for ops"),
    FlatMessage("agent:work:chat", "w1", "b1", "user", 2600, "saffron at work, cumin too"),
    FlatMessage("global", "g1", "d1", "user", 3000, "saffron in global"),
    FlatMessage("unknown", "u1", "e1", "assistant", 3100, "cumin in unknown"),
    # a key written with capitals, stored lower-cased by OpenClaw (issue 27, item 6)
    FlatMessage("agent:work:Telegram:Group:42", "w2", "b2", "user", 2700, "paprika at work"),
    *(FlatMessage("agent:main:bulk", "m9", f"bulk{number:02d}", "user", 4000 + number,
                  f"saffron bulk line {number}") for number in range(30)),
]
CONFIGURED = {"agents": {"ownership": "explicit",
                         "list": [{"id": "main"}, {"id": "work"}, {"id": "ops"}]}}
REQUESTS: list[dict[str, Any]] = [
    # issue 27, items 1 to 3
    {"query": "saffron", "sessionKeys": ["agent:main:tail-blank", "agent:ops:chat"]},
    {"query": "saffron"},
    {"query": "saffron", "limit": 0}, {"query": "saffron", "limit": 30},
    # the schema
    {"query": "saffron", "limit": 25}, {"query": "saffron", "limit": 1},
    {"query": "saffron", "limit": 2.5}, {"query": "saffron", "limit": "3"},
    {"query": "saffron", "limit": None}, {"query": "saffron", "limit": True},
    {"query": "saffron", "sessionKeys": []}, {"query": "saffron", "sessionKeys": [""]},
    {"query": "saffron", "sessionKeys": [5]}, {"query": "saffron", "sessionKeys": "x"},
    {"query": "saffron", "sessionKeys": ["agent:main:main"] * 201},
    {"query": "saffron", "agentId": ""}, {"query": "saffron", "agentId": 5},
    {"query": ""}, {"query": "   "}, {"query": 5}, {"query": None}, {},
    {"query": "x" * 4097}, {"query": "x" * 4096},
    {"query": "saffron", "role": "user"}, {"query": "saffron", "order": "recent"},
    {"query": 5, "limit": 0, "role": "x"}, {"query": "saffron", "limit": 0, "role": "x"},
    # the scope
    {"query": "saffron", "agentId": "ops"}, {"query": "saffron", "agentId": " Ops "},
    {"query": "saffron", "agentId": "NOPE!"}, {"query": "saffron", "agentId": "---"},
    {"query": "saffron", "agentId": "a" * 70},
    {"query": "saffron", "agentId": "ops", "sessionKeys": ["agent:ops:chat"]},
    {"query": "saffron", "agentId": "ops", "sessionKeys": ["agent:main:main"]},
    {"query": "saffron", "agentId": "ops", "sessionKeys": ["main"]},
    {"query": "saffron", "agentId": "ops", "sessionKeys": ["global"]},
    {"query": "saffron", "agentId": "main", "sessionKeys": ["global"]},
    {"query": "saffron", "agentId": "work", "sessionKeys": ["global", "agent:work:chat"]},
    {"query": "saffron", "sessionKeys": ["global"]},
    {"query": "cumin", "sessionKeys": ["unknown", "global"]},
    {"query": "saffron", "sessionKeys": ["agent:work:chat", "global"]},
    {"query": "saffron", "sessionKeys": ["main"]},
    {"query": "saffron", "sessionKeys": ["agent:main:main", "main", "notes"]},
    {"query": "saffron", "sessionKeys": ["current"]},
    {"query": "saffron", "sessionKeys": ["agent:ops:chat", "agent:ops:nope"]},
    {"query": "saffron", "agentId": "zzz", "sessionKeys": ["agent:zzz:x"]},
    # keys in other cases than stored (issue 27, item 6)
    {"query": "paprika", "sessionKeys": ["agent:work:Telegram:Group:42"]},
    {"query": "paprika", "sessionKeys": ["agent:work:telegram:group:42"]},
    {"query": "paprika", "sessionKeys": ["AGENT:WORK:TELEGRAM:GROUP:42"]},
    {"query": "paprika", "agentId": "Work", "sessionKeys": ["Telegram:Group:42"]},
    {"query": "saffron", "sessionKeys": ["GLOBAL", "Agent:Work:Chat"]},
    {"query": "saffron", "sessionKeys": ["MAIN"]}, {"query": "paprika"},
    {"query": "cumin"}, {"query": "saffron bulk", "limit": 3},
    {"query": "saffron", "agentId": "main", "sessionKeys": ["agent:main:bulk"], "limit": 4},
]


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, dict[str, Any]]]:
    folder = tmp_path_factory.mktemp("openclaw-gateway-search")
    flat = write_flat_file(MESSAGES, folder / "messages.jsonl")
    with imported_stores(folder, flat) as opened:
        yield flat, opened


def our_answer(store: Any, config: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
    line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "gateway.sessions.search",
                       "params": params})
    answer = handle_line(RpcContext(store, tool_config=tool_config_from_json(config)), line)
    assert answer is not None
    return answer["result"] if "result" in answer else {"error": answer["error"]["message"]}


@pytest.mark.parametrize("configured", [False, True], ids=["unconfigured", "configured"])
def test_the_gateway_handler_answers_as_openclaws(
        openclaw_installation, tmp_path, stores, configured: bool,
        pytestconfig: pytest.Config) -> None:
    flat, opened = stores
    config = CONFIGURED if configured else {}
    differences = []
    counted = {"requests": 0, "refusals": 0, "with results": 0}
    with running_adapter(openclaw_installation, tmp_path / "state") as adapter:
        adapter.call("corpus.load", {"path": str(flat), "unscopedAgentId": "main"})
        if configured:
            adapter.call("config.write", {"config": CONFIGURED})
        for params in REQUESTS:
            try:
                theirs = adapter.call("gateway.sessions.search", params)
            except RpcError as error:
                theirs = {"error": error.message}
            counted["requests"] += 1
            if "error" in theirs:
                counted["refusals"] += 1
            elif theirs["results"]:
                counted["with results"] += 1
            for backend, store in opened.items():
                ours = our_answer(store, config, params)
                if ours != theirs:
                    differences.append(f"{backend} {json.dumps(params)[:160]}: ours "
                                       f"{json.dumps(ours)[:300]} theirs {json.dumps(theirs)[:300]}")
    label = "configured" if configured else "unconfigured"
    oracle_summary(pytestconfig).append(f"gateway sessions.search ({label}): {counted}")
    assert not differences, f"{len(differences)} differences:\n" + "\n".join(differences[:10])
    assert counted["refusals"] > 5 and counted["with results"] >= 4
