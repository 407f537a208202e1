"""The roster (engine/agent_tools/roster.py) read from real stores, and key shapes
(engine/agent_tools/session_keys.py).

A session's metadata is its current window's; the visible candidates are listed as the
Gateway lists them (agent-scoped keys, `global` only from the requester's own agent,
`unknown` never, the spawned-by restriction for a sandboxed caller), checked row by row,
never incognito, in ICU order.
"""

from __future__ import annotations

import pytest

from engine.agent_tools.roster import RosterEntry, roster, visible_candidates
from engine.agent_tools.session_keys import (
    is_acp,
    is_agent_scoped,
    is_incognito,
    is_subagent,
    key_agent,
    key_rest,
    looks_like_session_key,
    names_a_session_id,
)
from engine.agent_tools.tool_config import ToolConfig
from engine.agent_tools.visibility import Requester, SessionRow, resolve_requester
from engine.model import SessionWindow
from tests.tools.stores import Session, StoreMaker, session

MAIN = "agent:main:main"


def candidate_keys(store: object, key: str, sandboxed: bool = False, **settings: object) -> list[str]:
    context = resolve_requester(Requester(key, sandboxed=sandboxed),
                                ToolConfig(**settings))  # type: ignore[arg-type]
    return [candidate.key for candidate in visible_candidates(context, roster(store))]  # type: ignore[arg-type]


def test_a_sessions_metadata_is_its_current_windows(make_store: StoreMaker) -> None:
    old = SessionWindow("old", "agent:main:child", current=False, archived=True,
                        spawned_by="agent:main:someone", incognito=False)
    store = make_store([
        Session("agent:main:child", spawned_by=MAIN, parent_session_key="agent:main:p",
                owner_session_key="agent:main:o", session_id="new", extra_windows=(old,)),
        session("agent:main:cold", archived=True),
        session("agent:main:flagged", incognito=True),
        session("global"),
    ])
    sessions = roster(store)
    assert sessions["agent:main:child"] == RosterEntry(
        key="agent:main:child", agent_id="main", session_id="new", owner_session_key="agent:main:o",
        parent_session_key="agent:main:p", spawned_by=MAIN, archived=False, incognito=False)
    assert sessions["agent:main:child"].row() == SessionRow(
        "agent:main:child", "main", "agent:main:o", "agent:main:p", MAIN)
    assert sessions["agent:main:cold"].archived and sessions["agent:main:flagged"].incognito
    assert sessions["global"].agent_id == "main"  # kept in main's partition


def test_candidates_are_in_icu_order_and_never_incognito(make_store: StoreMaker) -> None:
    store = make_store([session(key) for key in (
        "agent:main:B", "agent:main:a", "agent:main:_x", MAIN, "agent:main:dashboard:incognito-1",
        "agent:main:Ä")] + [session("agent:main:hidden", incognito=True)])
    # Keys are stored lower-cased, as OpenClaw stores them. ICU: punctuation first, then
    # letters accent-insensitively (a < ä < b < main; by code point ä would come last)
    assert candidate_keys(store, MAIN) == [
        "agent:main:_x", "agent:main:a", "agent:main:ä", "agent:main:b", MAIN]


def test_unscoped_keys_come_only_from_the_requesters_own_agent(make_store: StoreMaker) -> None:
    store = make_store([session(MAIN), session("agent:work:main"), session("global"),
                        session("unknown")])
    assert candidate_keys(store, MAIN) == [MAIN, "agent:work:main", "global"]
    assert candidate_keys(store, "agent:work:main") == [MAIN, "agent:work:main"]


def test_the_requesters_own_session_is_a_candidate_even_if_the_store_has_none(
        make_store: StoreMaker) -> None:
    store = make_store([session("agent:main:other")])
    assert candidate_keys(store, "agent:main:new", visibility="self") == ["agent:main:new"]
    assert candidate_keys(store, "agent:main:dashboard:incognito-me", visibility="self") == []


def test_a_sandboxed_requester_lists_only_what_it_spawned(make_store: StoreMaker) -> None:
    store = make_store([
        session(MAIN), session("agent:main:a", spawned_by=MAIN),
        session("agent:main:b", owner_session_key=MAIN), session("agent:main:c", parent_session_key=MAIN),
        session("agent:work:d", spawned_by=MAIN), session("global", spawned_by=MAIN),
        session("agent:work:subagent:e", spawned_by=MAIN),
    ])
    # spawned or parented by the requester (the Gateway's spawnedBy filter matches both)
    assert candidate_keys(store, MAIN, sandboxed=True) == [
        "agent:main:a", "agent:main:c", MAIN, "agent:work:subagent:e"]
    assert candidate_keys(store, MAIN, sandboxed=True, sandbox_visibility="all") == [
        "agent:main:a", "agent:main:b", "agent:main:c", MAIN, "agent:work:d",
        "agent:work:subagent:e", "global"]


@pytest.mark.parametrize(("visibility", "expected"), [
    ("self", ["agent:main:worker"]),
    ("tree", ["agent:main:child", "agent:main:worker"]),
    ("agent", ["agent:main:child", "agent:main:other", "agent:main:worker"]),
    ("all", ["agent:main:child", "agent:main:other", "agent:main:worker", "agent:work:x"]),
])
def test_each_visibility_lists_its_rows(make_store: StoreMaker, visibility: str,
                                        expected: list[str]) -> None:
    store = make_store([session("agent:main:worker"),
                        session("agent:main:child", spawned_by="agent:main:worker"),
                        session("agent:main:other"), session("agent:work:x")])
    assert candidate_keys(store, "agent:main:worker", visibility=visibility) == expected


# ----- key shapes -----------------------------------------------------------------------


@pytest.mark.parametrize(("key", "agent", "rest"), [
    ("agent:main:main", "main", "main"), ("agent:Work_Team:x:y", "work_team", "x:y"),
    ("agent: :x", None, None), ("agent:x::y", None, None), ("agent:x:", None, None),
    ("agent::x", None, None), ("global", None, None), ("main", None, None),
])
def test_agent_and_rest_of_a_key(key: str, agent: str | None, rest: str | None) -> None:
    assert (key_agent(key), key_rest(key), is_agent_scoped(key)) == (agent, rest, agent is not None)


@pytest.mark.parametrize(("key", "incognito"), [
    ("agent:main:dashboard:incognito-a", True), ("agent:main:subagent:incognito-a", True),
    ("agent:main:internal-session-effects:incognito-a", True),
    ("AGENT:Main:Dashboard:Incognito-A", True), (" agent:main:dashboard:incognito-a ", True),
    ("agent:main:dashboard:incognito-", False), ("agent:main:dashboard:incognito-a:b", False),
    ("agent:main:other:incognito-a", False), ("agent:main:dashboard:private", False),
    ("dashboard:incognito-a", False),
])
def test_incognito_keys(key: str, incognito: bool) -> None:
    assert is_incognito(key) is incognito


def test_children_and_session_ids() -> None:
    assert is_subagent("agent:main:subagent:1") and is_subagent("subagent:x")
    assert not is_subagent("agent:main:acp:1") and is_acp("agent:main:ACP:1")
    for key in ("main", "global", "unknown", "current", "agent:x:y", "cron:daily", "hook:1",
                "node-1", "node:1", "acp:x", "telegram:group:1", "slack:channel:2"):
        assert looks_like_session_key(key) and not names_a_session_id(key), key
    for value in ("notes", "session-main", "0B6F1C9E-3A52-4C1E-9D7A-2F5B8E4C1A90", " "):
        assert names_a_session_id(value), value
