"""Properties of `sessions_history` under visibility, on the search tool's generated worlds.

The worlds of `test_sessions_search_properties` (sessions of three agents plus `global`
and `unknown`, random ownership metadata, incognito and archived sessions, requesters of
every agent, sandboxed or not, under random visibility and agent-to-agent settings) are
asked for the history of every key they hold and of every unscoped name (`global`,
`unknown`, `main`, `current`). Each world is given a `global` and an `unknown` session when
it drew none (the default agent's partition holds them), so that every example asks
another agent's requester for them. Properties, on both backends:

* soundness: every message an answer holds belongs to a session the row checker lets
  the requester read (the same `allowed` the search property uses: roster metadata,
  incognito, the sandbox clamp), judged by the partition the message really lives in,
  so `main`'s `global` read under another agent's own-agent permission fails it;
* agreement with search: a session whose history is refused is never one whose messages
  `sessions_search` returns for the same requester and target;
* the reference and SQLite stores answer identically.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings

from engine.agent_tools.history_access import RequesterHistoryAccess
from engine.agent_tools.roster import roster
from engine.agent_tools.sessions_history import sessions_history
from engine.agent_tools.sessions_search import sessions_search
from engine.agent_tools.visibility import resolve_requester
from engine.history.request import ToolHistoryRequest
from tests.tools.stores import BACKENDS, Message, Session, build_store, scratch_folder
from tests.tools.test_sessions_search_properties import QUERY_WORD, World, allowed, worlds

UNSCOPED_NAMES = ("global", "unknown", "main", "current")


def targets(world: World) -> list[str]:
    return list(dict.fromkeys([described.key for described in world.sessions]
                              + list(UNSCOPED_NAMES)))


def with_unscoped_sessions(world: World) -> World:
    """The world with a `global` and an `unknown` session added where it has none."""
    held = {described.key for described in world.sessions}
    added = tuple(Session(key, (Message(f"{QUERY_WORD} {key} words", message_id=f"{key}-only"),))
                  for key in ("global", "unknown") if key not in held)
    return replace(world, sessions=world.sessions + added)


def check_world(world: World) -> None:
    owner_of_message = {message.message_id: described.key for described in world.sessions
                        for message in described.messages}
    answers: dict[str, list[dict[str, Any]]] = {}
    with scratch_folder() as folder:
        for backend in BACKENDS:
            store = build_store(Path(folder) / backend, backend, world.sessions)
            try:
                context = resolve_requester(world.requester, world.config)
                sessions = roster(store)
                access = RequesterHistoryAccess.of(store, world.requester, world.config)
                found = []
                for target in targets(world):
                    answer = sessions_history(store, ToolHistoryRequest(target), access)
                    found.append(answer)
                    read_from = {owner_of_message[message["__openclaw"]["id"]]
                                 for message in answer.get("messages", [])}
                    for key in read_from:
                        assert allowed(context, sessions, key), (target, key, answer)
                    if answer.get("status") == "forbidden":
                        searched = sessions_search(store, world.requester,
                                                   {"query": QUERY_WORD, "sessionKey": target},
                                                   config=world.config)
                        assert searched.get("status") == "forbidden" or not searched.get(
                            "results"), (target, searched)
            finally:
                store.close()
            answers[backend] = found
    assert answers["reference"] == answers["sqlite"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(worlds())
def test_history_reads_only_what_the_requester_may_see(world: World) -> None:
    check_world(with_unscoped_sessions(world))
