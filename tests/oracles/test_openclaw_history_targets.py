"""Which session `sessions_history` reads for a name, against the real OpenClaw 2026.9.6.

Issue 34 found `global` of agent `main` readable by a requester of agent `work` under
`visibility: agent` with agent-to-agent disabled: the name was checked as the requester's
own session and read from `main`'s partition. OpenClaw resolves an unscoped name (`global`,
`unknown`, `main`) in the requester's own agent and reads that agent's database, where
another agent's `global` does not exist: an empty page. These requests pin that and its
neighbours (`current`, a key shown as given, a missing agent-scoped key) on three agents
and three tool settings, through the JSON-RPC `sessions_history` method a client calls,
on both backends. Answers must be identical once the listed history divergences (message
metadata) are taken out.

The agents are configured with a default marker, and once more (a fresh adapter) under
`agents.ownership: explicit` without one: OpenClaw 2026.9.6 then refuses some unscoped
names ("Multiple agents are configured, but session agent resolution has no explicit
owner"), for requesters that changed between runs; the engine answers them as with a
default agent. That difference is the listed `openclaw-history-no-default-owner`
(`OWNERSHIP_DIVERGENCES`), which must fire, and nothing else may differ.
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
from tests.parity.known_divergences import HISTORY_DIVERGENCES, OWNERSHIP_DIVERGENCES

MESSAGES = [
    FlatMessage("agent:main:main", "m1", "a1", "user", 1000, "main main saffron"),
    FlatMessage("agent:work:chat", "w1", "b1", "user", 2000, "work chat saffron"),
    FlatMessage("agent:work:main", "w2", "b2", "assistant", 2100, "work main saffron"),
    FlatMessage("agent:ops:anything", "o1", "c1", "user", 2500, "ops saffron"),
    # A key written with capitals: OpenClaw stores it lower-cased, and reads a given key
    # in that form, so every spelling opens it (issue 27, item 6).
    FlatMessage("agent:work:Mixed:Case", "w3", "b3", "user", 2200, "mixed case saffron"),
    # Windows of one key interleaved in time: the window holding the newest message is
    # current (issue 27, item 7), so the tail is x1's and x2 is a retained window.
    FlatMessage("agent:main:mix", "x1", "x1a", "user", 5000, "mix one"),
    FlatMessage("agent:main:mix", "x2", "x2a", "user", 5100, "mix two"),
    FlatMessage("agent:main:mix", "x1", "x1b", "assistant", 5200, "mix three"),
    FlatMessage("global", "g1", "d1", "user", 3000, "global secret saffron"),
    FlatMessage("unknown", "u1", "e1", "user", 4000, "unknown secret saffron"),
]
AGENTS = {"list": [{"id": "main", "default": True}, {"id": "work"}, {"id": "ops"}]}
#: The same agents under explicit ownership with no default marker: OpenClaw then cannot
#: tell who owns an unscoped session the requester's agent does not hold, and refuses.
AGENTS_NO_DEFAULT = {"ownership": "explicit",
                     "list": [{"id": "main"}, {"id": "work"}, {"id": "ops"}]}
TOOL_SETTINGS = {
    "agent, agent-to-agent disabled": {"sessions": {"visibility": "agent"},
                                       "agentToAgent": {"enabled": False}},
    "all": {"sessions": {"visibility": "all"}},
    "self": {"sessions": {"visibility": "self"}},
}
REQUESTERS = ("agent:main:main", "agent:work:chat", "agent:ops:anything")
NAMES = ("global", "unknown", " global ", "main", "current", "agent:main:main", "agent:work:main",
         "agent:work:nope", "agent:main:global", "agent:work:Mixed:Case", "agent:work:mixed:case",
         "AGENT:WORK:MIXED:CASE", "Global", "MAIN", "agent:Work:Chat", "Agent:Main:Main",
         "agent:main:mix", "x1", "x2")


def requests() -> Iterator[tuple[str, dict[str, Any]]]:
    for requester in REQUESTERS:
        for name in NAMES:
            yield requester, {"sessionKey": name}
        yield requester, {"sessionKey": "global", "offset": 0, "limit": 5}
        yield requester, {"sessionKey": "unknown", "messageId": "e1"}
        yield requester, {"sessionKey": "agent:main:mix", "sessionId": "x2"}
        yield requester, {"sessionKey": "agent:main:mix", "offset": 0, "limit": 1}


@pytest.fixture(scope="module")
def loaded(openclaw_installation, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple]:
    folder = tmp_path_factory.mktemp("openclaw-history-targets")
    flat = write_flat_file(MESSAGES, folder / "messages.jsonl")
    with running_adapter(openclaw_installation, folder / "state") as adapter:
        loaded = adapter.call("corpus.load", {"path": str(flat), "unscopedAgentId": "main"})
        assert loaded["appended"] == len(MESSAGES), loaded
        with imported_stores(folder, flat) as stores:
            yield adapter, stores


def their_answer(adapter: Any, requester: str, params: dict[str, Any]) -> dict[str, Any]:
    try:
        return adapter.call("sessions_history", {"requesterSessionKey": requester,
                                                 "arguments": params})
    except RpcError as error:
        return {"error": error.message}


def our_answer(store: Any, config: dict[str, Any], requester: str,
               params: dict[str, Any]) -> dict[str, Any]:
    line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "sessions_history",
                       "params": {**params, "requesterSessionKey": requester}})
    answer = handle_line(RpcContext(store, tool_config=tool_config_from_json(config)), line)
    assert answer is not None
    return answer["result"] if "result" in answer else {"error": answer["error"]["message"]}


def test_history_reads_the_session_openclaw_reads(loaded, pytestconfig: pytest.Config) -> None:
    adapter, stores = loaded
    differences, counted = [], {"requests": 0, "pages": 0, "empty pages": 0, "forbidden": 0,
                                "errors": 0}
    for label, tools in TOOL_SETTINGS.items():
        config = {"agents": AGENTS, "tools": tools}
        adapter.call("config.write", {"config": config})
        for requester, params in requests():
            theirs = their_answer(adapter, requester, params)
            counted["requests"] += 1
            counted["forbidden" if theirs.get("status") == "forbidden" else
                    "errors" if "error" in theirs else
                    "empty pages" if theirs.get("messages") == [] else "pages"] += 1
            for backend, store in stores.items():
                ours, expected = our_answer(store, config, requester, params), theirs
                for entry in HISTORY_DIVERGENCES:
                    if entry.recognises(params) and entry.present(ours, expected):
                        ours, expected = entry.normalise(ours, expected)
                if ours != expected:
                    differences.append(f"{label} {backend} {requester} {json.dumps(params)}: "
                                       f"ours {json.dumps(ours)[:300]} theirs "
                                       f"{json.dumps(expected)[:300]}")
    oracle_summary(pytestconfig).append(f"sessions_history targets: {counted}")
    assert not differences, f"{len(differences)} differences:\n" + "\n".join(differences[:10])
    for outcome, count in counted.items():
        assert count > 0, outcome


def test_without_a_default_owner_unscoped_names_are_refused_as_openclaw_refuses(
        openclaw_installation, tmp_path_factory: pytest.TempPathFactory,
        pytestconfig: pytest.Config) -> None:
    """A fresh adapter (the roster is fixed at its first tool call) under explicit
    ownership without a default marker."""
    folder = tmp_path_factory.mktemp("openclaw-history-no-default")
    flat = write_flat_file(MESSAGES, folder / "messages.jsonl")
    config = {"agents": AGENTS_NO_DEFAULT, "tools": TOOL_SETTINGS["all"]}
    differences, refused, fired = [], 0, 0
    with running_adapter(openclaw_installation, folder / "state") as adapter:
        adapter.call("corpus.load", {"path": str(flat), "unscopedAgentId": "main"})
        adapter.call("config.write", {"config": config})
        with imported_stores(folder, flat) as stores:
            for requester, params in requests():
                theirs = their_answer(adapter, requester, params)
                refused += "no explicit owner" in theirs.get("error", "")
                for backend, store in stores.items():
                    ours, expected = our_answer(store, config, requester, params), theirs
                    for entry in (*HISTORY_DIVERGENCES, *OWNERSHIP_DIVERGENCES):
                        if entry.recognises(params) and entry.present(ours, expected):
                            fired += entry in OWNERSHIP_DIVERGENCES
                            ours, expected = entry.normalise(ours, expected)
                    if ours != expected:
                        differences.append(f"{backend} {requester} {json.dumps(params)}: ours "
                                           f"{json.dumps(ours)[:300]} theirs "
                                           f"{json.dumps(expected)[:300]}")
    oracle_summary(pytestconfig).append(
        f"sessions_history without a default owner: {refused} refusals of OpenClaw's")
    assert not differences, f"{len(differences)} differences:\n" + "\n".join(differences[:10])
    assert refused >= 3 and fired >= 6  # the listed entry fired, on both backends
