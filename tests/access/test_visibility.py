"""The row checker (engine/agent_tools/visibility.py): each rule, each denial message, the
requester's context and the agent-to-agent allow patterns.

The rules are behaviour.md §11 in OpenClaw 2026.9.6's order; the messages are that
release's (`renderSessionVisibilityDenial`) for the action "search". The allow-pattern
matcher is checked against an independent regular-expression reading of the same glob.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.agent_tools.tool_config import ToolConfig
from engine.agent_tools.visibility import (
    DENIAL_MESSAGES,
    AgentToAgentPolicy,
    Decision,
    Requester,
    RequesterContext,
    SessionRow,
    check_row,
    denial_message,
    pattern_matches,
    resolve_requester,
)

MAIN = "agent:main:main"
WORKER = "agent:main:worker"


def context(key: str = WORKER, *, sandboxed: bool = False, agent_id: str | None = None,
            **settings: object) -> RequesterContext:
    return resolve_requester(Requester(key, sandboxed=sandboxed, agent_id=agent_id),
                             ToolConfig(**settings))  # type: ignore[arg-type]


def reason(requester: RequesterContext, row: SessionRow) -> str | None:
    """None when allowed, else the denial's reason code."""
    decision = check_row(requester, row)
    assert decision.allowed == (decision.reason is None)
    return decision.reason


# ----- the messages ---------------------------------------------------------------------


@pytest.mark.parametrize(("code", "message"), [
    ("incognito_session", "Session not visible from session tools: agent:main:x"),
    ("target_agent_ownership_unavailable",
     "Session search denied because target agent ownership is unavailable."),
    ("cross_agent_visibility_restricted",
     "Session search visibility is restricted. Set tools.sessions.visibility=all to allow "
     "cross-agent access; use tools.agentToAgent to restrict permitted agent pairs."),
    ("agent_to_agent_disabled",
     "Agent-to-agent search is disabled. Set tools.agentToAgent.enabled=true to allow "
     "cross-agent access."),
    ("agent_to_agent_not_allowed", "Agent-to-agent search denied by tools.agentToAgent.allow."),
    ("self_visibility_restricted",
     "Session search visibility is restricted to the current session "
     "(tools.sessions.visibility=self)."),
    ("tree_visibility_restricted",
     "Session search visibility is restricted to the current session tree "
     "(tools.sessions.visibility=tree)."),
])
def test_each_denial_has_openclaws_message(code: str, message: str) -> None:
    assert denial_message(Decision(False, code), "search", "agent:main:x") == message


def test_every_reason_code_has_a_message_and_the_spec_prefixes_hold() -> None:
    assert len(DENIAL_MESSAGES) == 7
    history = denial_message(Decision(False, "cross_agent_visibility_restricted"), "history", "k")
    assert history.startswith("Session history visibility is restricted. Set "
                              "tools.sessions.visibility=all")  # behaviour.md §11's start
    assert denial_message(Decision(False, "agent_to_agent_disabled"), "history", "k").startswith(
        "Agent-to-agent history is disabled")


# ----- rule 1: incognito ------------------------------------------------------------------


@pytest.mark.parametrize("visibility", ["self", "tree", "agent", "all"])
def test_an_incognito_key_is_denied_even_to_itself_and_its_owner(visibility: str) -> None:
    key = "agent:main:dashboard:incognito-private"
    assert reason(context(key, visibility=visibility), SessionRow(key)) == "incognito_session"
    owned = SessionRow("agent:main:subagent:incognito-x", spawned_by=WORKER)
    assert reason(context(visibility=visibility), owned) == "incognito_session"


# ----- rules 2 to 4 -----------------------------------------------------------------------


@pytest.mark.parametrize("visibility", ["self", "tree", "agent", "all"])
def test_the_requester_sees_its_own_session_and_current(visibility: str) -> None:
    requester = context(visibility=visibility)
    assert reason(requester, SessionRow(WORKER)) is None
    assert reason(requester, SessionRow("current")) is None


@pytest.mark.parametrize("field", ["owner_session_key", "spawned_by", "parent_session_key"])
@pytest.mark.parametrize(("visibility", "expected"), [
    ("self", "self_visibility_restricted"), ("tree", None), ("agent", None), ("all", None),
])
def test_a_same_agent_row_owned_by_the_requester(field: str, visibility: str,
                                                  expected: str | None) -> None:
    row = SessionRow("agent:main:child", **{field: WORKER})
    assert reason(context(visibility=visibility), row) == expected


@pytest.mark.parametrize(("visibility", "expected"), [
    ("self", "self_visibility_restricted"), ("tree", "tree_visibility_restricted"),
    ("agent", None), ("all", None),
])
def test_a_same_agent_row_not_owned(visibility: str, expected: str | None) -> None:
    row = SessionRow("agent:main:stranger", spawned_by="agent:main:someone-else")
    assert reason(context(visibility=visibility), row) == expected


def test_under_tree_the_agents_main_session_owns_every_row_of_its_agent() -> None:
    row = SessionRow("agent:main:stranger")
    assert reason(context(MAIN, visibility="tree"), row) is None
    assert reason(context(MAIN, visibility="self"), row) == "self_visibility_restricted"
    # ... but not another agent's rows
    assert reason(context(MAIN, visibility="tree"), SessionRow("agent:work:x")) == (
        "cross_agent_visibility_restricted")


@pytest.mark.parametrize("key", ["agent:work:subagent:run-1", "agent:work:acp:claude:1"])
@pytest.mark.parametrize("settings", [
    {"visibility": "tree"}, {"visibility": "all", "agent_to_agent_enabled": False},
    {"visibility": "all", "agent_to_agent_allow": ("nobody",)},
])
def test_owned_subagent_and_acp_children_of_another_agent_beat_agent_ids(
        key: str, settings: dict[str, object]) -> None:
    assert reason(context(**settings), SessionRow(key, spawned_by=WORKER)) is None
    assert reason(context(**settings), SessionRow(key, parent_session_key=WORKER)) is None


@pytest.mark.parametrize(("settings", "expected"), [
    ({"visibility": "self"}, "cross_agent_visibility_restricted"),
    ({"visibility": "tree"}, "cross_agent_visibility_restricted"),
    ({"visibility": "agent"}, "cross_agent_visibility_restricted"),
    ({"visibility": "all", "agent_to_agent_enabled": False}, "agent_to_agent_disabled"),
    ({"visibility": "all", "agent_to_agent_allow": ("main",)}, "agent_to_agent_not_allowed"),
    ({"visibility": "all", "agent_to_agent_allow": ("main", "work")}, None),
    ({"visibility": "all", "agent_to_agent_allow": ("*",)}, None),
    ({"visibility": "all"}, None),
])
def test_another_agents_row(settings: dict[str, object], expected: str | None) -> None:
    for row in (SessionRow("agent:work:main"), SessionRow("agent:work:plain", spawned_by=WORKER),
                SessionRow("global", agent_id="work")):
        assert reason(context(**settings), row) == expected


def test_the_cross_agent_restriction_is_told_before_the_agent_to_agent_policy() -> None:
    requester = context(visibility="agent", agent_to_agent_enabled=False)
    assert reason(requester, SessionRow("agent:work:x")) == "cross_agent_visibility_restricted"


def test_the_rows_agent_comes_from_the_row_then_the_key_then_the_requester() -> None:
    requester = context(visibility="agent")
    assert reason(requester, SessionRow("agent:main:x", agent_id="work")) == (
        "cross_agent_visibility_restricted")
    assert reason(requester, SessionRow("agent:work:x", agent_id="MAIN")) is None
    assert reason(requester, SessionRow("global")) is None  # unscoped: the requester's agent
    assert check_row(requester, SessionRow("global"), default_agent="work").reason == (
        "cross_agent_visibility_restricted")
    assert reason(requester, SessionRow("agent:Main:x")) is None  # agent ids compare lowered


# ----- the requester's context ------------------------------------------------------------


def test_the_sandbox_clamps_to_tree_and_to_what_the_requester_spawned() -> None:
    for visibility in ("self", "agent", "all", "tree"):
        clamped = context(MAIN, sandboxed=True, visibility=visibility)
        assert (clamped.visibility, clamped.restricted_to_spawned) == ("tree", True)
        assert clamped.main_session_key is None
    opened = context(MAIN, sandboxed=True, visibility="agent", sandbox_visibility="all")
    assert (opened.visibility, opened.restricted_to_spawned) == ("agent", False)
    child = context("agent:main:subagent:run", sandboxed=True)  # a subagent lists freely
    assert (child.visibility, child.restricted_to_spawned) == ("tree", False)


def test_a_sandboxed_main_session_does_not_own_its_agent() -> None:
    clamped = context(MAIN, sandboxed=True, visibility="all")
    assert reason(clamped, SessionRow("agent:main:stranger")) == "tree_visibility_restricted"
    assert reason(clamped, SessionRow("agent:main:child", spawned_by=MAIN)) is None


def test_the_requester_key_agent_and_main_session() -> None:
    plain = context(MAIN)
    assert (plain.key, plain.agent_id, plain.main_session_key, plain.visibility) == (
        MAIN, "main", MAIN, "all")
    alias = context("main", agent_id="work")
    assert (alias.key, alias.agent_id, alias.main_session_key) == ("main", "work", "agent:work:main")
    assert context(" ").key == "main"  # no key: the main alias
    scoped = context("main", session_scope="global")
    assert (scoped.key, scoped.main_session_key) == ("global", "global")
    assert context("global", default_agent="ops").agent_id == "ops"
    assert context("agent:Work:main").agent_id == "work"
    custom = context("agent:ops:home", main_key="home")
    assert custom.main_session_key == "agent:ops:home"


def test_agent_to_agent_policy() -> None:
    policy = AgentToAgentPolicy(allow=("work*", "ops"))
    assert policy.allows("workers", "ops") and policy.allows("ops", "WORK-2")
    assert not policy.allows("main", "ops")  # both agents must match
    assert policy.allows("main", "main")  # the same agent always may
    assert not AgentToAgentPolicy(allow=("",)).allows("a", "b")  # a blank entry denies
    assert AgentToAgentPolicy(allow=()).allows("a", "b")  # no list: every agent
    assert not AgentToAgentPolicy(enabled=False, allow=("*",)).allows("a", "b")
    assert AgentToAgentPolicy(allow=(" ", "b", "a")).allows("a", "b")


@pytest.mark.parametrize(("pattern", "agent", "expected"), [
    ("*", "anything", True), ("", "x", False), ("   ", "x", False),
    ("work", "work", True), ("work", "Work", False), (" work ", "work", True),
    ("work*", "WORK_team", True), ("*team", "work_TEAM", True), ("*", "", True),
    ("a*b*c", "axxbyyc", True), ("a*b*c", "acb", False), ("ab*ba", "aba", False),
    ("ab*ba", "abba", True), ("a**b", "ab", True), ("*x*", "yxy", True), ("*x*", "yyy", False),
    ("a*", "", False), ("*_*", "my_agent", True), ("w.rk*", "work", False),
])
def test_allow_patterns(pattern: str, agent: str, expected: bool) -> None:
    assert pattern_matches(pattern, agent) is expected


def glob_by_regex(pattern: str, agent: str) -> bool:
    """The same glob read independently: `*` is any run, case-insensitive, whole name."""
    raw = pattern.strip()
    if not raw:
        return False
    if "*" not in raw:
        return raw == agent
    expression = ".*".join(re.escape(part) for part in raw.lower().split("*"))
    return re.fullmatch(expression, agent.lower(), flags=re.DOTALL) is not None


ALPHABET = st.sampled_from("abAB_-*. ")


@given(st.text(ALPHABET, max_size=8), st.text(ALPHABET.filter(lambda c: c != "*"), max_size=8))
def test_allow_patterns_agree_with_a_regular_expression(pattern: str, agent: str) -> None:
    assert pattern_matches(pattern, agent) == glob_by_regex(pattern, agent)
