"""The requester and the row checker: may this requester read that session?

Owns: `Requester` (who asks: a session key, sandboxed or not), `RequesterContext` (the
requester resolved against a `ToolConfig`: its effective key, agent, main session key,
effective visibility and whether it is restricted to the sessions it spawned), the
agent-to-agent policy, `SessionRow` (the metadata a decision reads), the decision itself
and its denial messages. Must not touch: stores (rows come from `engine.agent_tools.roster`)
or what a tool does with a decision.

The rules (behaviour.md §11, in OpenClaw 2026.9.6's order, `session-visibility-*.mjs`):

1. An incognito key is denied, always.
2. The row's agent is its `agent_id` when the roster knows it, else the key's agent, else
   (an unscoped key) the requester's agent. A row owned by the requester (its
   `ownerSessionKey`, `spawnedBy` or `parentSessionKey` is the requester's key; under
   `tree`, also any same-agent row when the requester is its agent's main session) that
   is not the requester's own session is allowed under `tree` and `all` when it is of the
   same agent, or is a subagent or ACP child: ownership beats agent ids.
3. Another agent's row: denied unless visibility is `all`, then the agent-to-agent
   policy decides (`enabled`, then `allow`: both agents must match a pattern; a blank
   pattern denies; no patterns allow all; the same agent is always allowed).
4. The same agent's row: `self` allows only the requester's own session, `tree` only it
   and the rows it owns, `agent` and `all` every row.

The messages are OpenClaw 2026.9.6's, whose wording for a cross-agent refusal ("… Set
tools.sessions.visibility=all to allow cross-agent access; use tools.agentToAgent to
restrict permitted agent pairs.") is newer than the one behaviour.md §11 quotes the start
of; the measured program wins where the spec gives only a prefix.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.agent_tools.session_keys import is_acp, is_incognito, is_subagent, key_agent
from engine.agent_tools.tool_config import ToolConfig


@dataclass(frozen=True, slots=True)
class ScopedGrant:
    """A host's narrow grant: the requester may read `session_key` while that session's
    current window is still `expected_session_id` (OpenClaw's scoped session access)."""

    session_key: str
    expected_session_id: str


@dataclass(frozen=True, slots=True)
class Requester:
    """Who calls a session tool: its session key, and whether it runs sandboxed.

    `agent_id` overrides the agent of a key that names none (OpenClaw's `agentId`
    option for a requester whose key is an alias such as `main`); `grants` are scoped
    grants a host gave this requester, which allow an explicit target that visibility
    alone would refuse, for as long as the target is the window the grant names.
    """

    session_key: str
    sandboxed: bool = False
    agent_id: str | None = None
    grants: tuple[ScopedGrant, ...] = ()

@dataclass(frozen=True, slots=True)
class AgentToAgentPolicy:
    """`tools.agentToAgent`: whether cross-agent access is on, and which agents may."""

    enabled: bool = True
    allow: tuple[str, ...] = ()

    def matches(self, agent_id: str) -> bool:
        """Whether an agent matches the allow list (an empty list matches every agent).

        >>> policy = AgentToAgentPolicy(allow=("work*", "ops"))
        >>> policy.matches("WorkTeam"), policy.matches("ops"), policy.matches("Ops")
        (True, True, False)
        >>> AgentToAgentPolicy(allow=(" ",)).matches("main")
        False
        """
        if not self.allow:
            return True
        return any(pattern_matches(pattern, agent_id) for pattern in self.allow)

    def allows(self, requester_agent: str, target_agent: str) -> bool:
        """Whether `requester_agent` may read `target_agent`'s sessions.

        >>> AgentToAgentPolicy(enabled=False).allows("main", "main")
        True
        >>> AgentToAgentPolicy(enabled=False).allows("main", "work")
        False
        """
        if requester_agent == target_agent:
            return True
        return self.enabled and self.matches(requester_agent) and self.matches(target_agent)


def pattern_matches(pattern: str, agent_id: str) -> bool:
    """One allow pattern: blank denies, `*` allows all, a name without `*` must be equal,
    a glob compares case-insensitively with `*` standing for any run of characters.

    >>> pattern_matches("a*c", "ABBC"), pattern_matches("a*c", "abcd"), pattern_matches("x", "X")
    (True, False, False)
    """
    raw = pattern.strip()
    if not raw:
        return False
    if raw == "*":
        return True
    if "*" not in raw:
        return raw == agent_id
    parts = raw.lower().split("*")
    lower = agent_id.lower()
    first, last, interior = parts[0], parts[-1], [part for part in parts[1:-1] if part]
    if not lower.startswith(first):
        return False
    position = len(first)
    end = len(lower) - len(last)
    if last and (not lower.endswith(last) or end < position):
        return False
    for part in interior:
        found = lower.find(part, position)
        if found == -1 or found + len(part) > end:
            return False
        position = found + len(part)
    return True


@dataclass(frozen=True, slots=True)
class RequesterContext:
    """A requester resolved against the configuration (OpenClaw's session-tool context).

    `key` is the effective requester key (`main` stands for the main alias); `agent_id`
    the requester's agent; `main_session_key` its agent's main session (None for a
    requester restricted to what it spawned); `restricted_to_spawned` is the sandbox
    clamp's listing restriction.
    """

    key: str
    agent_id: str
    visibility: str
    policy: AgentToAgentPolicy
    main_session_key: str | None
    restricted_to_spawned: bool
    config: ToolConfig
    grants: tuple[ScopedGrant, ...] = ()


def resolve_requester(requester: Requester, config: ToolConfig) -> RequesterContext:
    """The context a tool call runs in.

    >>> context = resolve_requester(Requester("agent:work:main"), ToolConfig())
    >>> context.agent_id, context.visibility, context.main_session_key
    ('work', 'all', 'agent:work:main')
    >>> sandboxed = resolve_requester(Requester("agent:work:task", sandboxed=True), ToolConfig())
    >>> sandboxed.visibility, sandboxed.restricted_to_spawned, sandboxed.main_session_key
    ('tree', True, None)
    """
    alias = config.main_alias
    raw = requester.session_key.strip()
    internal = alias if raw == "main" else (raw or None)
    key = internal if internal is not None else alias
    restricted = (requester.sandboxed and config.sandbox_visibility == "spawned"
                  and internal is not None and not is_subagent(internal))
    visibility = config.visibility
    if requester.sandboxed and config.sandbox_visibility == "spawned" and visibility != "tree":
        visibility = "tree"
    agent_id = key_agent(key) or (requester.agent_id or config.default_agent).strip().lower()
    main_session_key = None
    if not restricted:
        main_session_key = ("global" if config.session_scope == "global"
                            else f"agent:{agent_id}:{config.main_key}")
    return RequesterContext(
        key=key, agent_id=agent_id, visibility=visibility,
        policy=AgentToAgentPolicy(config.agent_to_agent_enabled, config.agent_to_agent_allow),
        main_session_key=main_session_key, restricted_to_spawned=restricted, config=config,
        grants=requester.grants,
    )


@dataclass(frozen=True, slots=True)
class SessionRow:
    """What a decision reads of a session: its key, its agent when known, and who owns it."""

    key: str
    agent_id: str | None = None
    owner_session_key: str | None = None
    parent_session_key: str | None = None
    spawned_by: str | None = None

    def owned_by(self, requester_key: str) -> bool:
        """Whether the requester owns, spawned or is the parent of this session."""
        return requester_key in (self.owner_session_key, self.spawned_by,
                                 self.parent_session_key)


@dataclass(frozen=True, slots=True)
class Decision:
    """Allowed, or denied for a reason (OpenClaw's reason codes)."""

    allowed: bool
    reason: str | None = None


ALLOWED = Decision(True)

#: reason code -> message, with `{action}` ("Session search", ...) and `{verb}` ("search").
DENIAL_MESSAGES = {
    "incognito_session": "Session not visible from session tools: {key}",
    "target_agent_ownership_unavailable":
        "{action} denied because target agent ownership is unavailable.",
    "cross_agent_visibility_restricted":
        "{action} visibility is restricted. Set tools.sessions.visibility=all to allow "
        "cross-agent access; use tools.agentToAgent to restrict permitted agent pairs.",
    "agent_to_agent_disabled":
        "Agent-to-agent {verb} is disabled. Set tools.agentToAgent.enabled=true to allow "
        "cross-agent access.",
    "agent_to_agent_not_allowed": "Agent-to-agent {verb} denied by tools.agentToAgent.allow.",
    "self_visibility_restricted":
        "{action} visibility is restricted to the current session "
        "(tools.sessions.visibility=self).",
    "tree_visibility_restricted":
        "{action} visibility is restricted to the current session tree "
        "(tools.sessions.visibility=tree).",
}


def denial_message(decision: Decision, verb: str, key: str) -> str:
    """The message a tool answers a denial with, for the action `verb` ("search").

    >>> denial_message(Decision(False, "self_visibility_restricted"), "search", "x")
    'Session search visibility is restricted to the current session (tools.sessions.visibility=self).'
    """
    template = DENIAL_MESSAGES[decision.reason or ""]
    return template.format(action=f"Session {verb}", verb=verb, key=key)


def check_row(context: RequesterContext, row: SessionRow, *,
              default_agent: str | None = None) -> Decision:
    """The row checker (the module docstring's rules). `default_agent` is the agent an
    unscoped key belongs to when the row does not say (the requester's, by default)."""
    if is_incognito(row.key):
        return Decision(False, "incognito_session")
    default_agent = context.agent_id if default_agent is None else default_agent
    is_requester = row.key in (context.key, "current")
    target_agent = (row.agent_id or "").strip().lower() or key_agent(row.key) or default_agent
    owned = row.owned_by(context.key) or (
        context.visibility == "tree" and target_agent == context.agent_id
        and context.key == context.main_session_key)
    cross_agent = target_agent != context.agent_id
    if (not is_requester and owned and context.visibility in ("tree", "all")
            and (not cross_agent or is_acp(row.key) or is_subagent(row.key))):
        return ALLOWED
    if cross_agent:
        if context.visibility != "all":
            return Decision(False, "cross_agent_visibility_restricted")
        if not context.policy.enabled:
            return Decision(False, "agent_to_agent_disabled")
        if not context.policy.allows(context.agent_id, target_agent):
            return Decision(False, "agent_to_agent_not_allowed")
        return ALLOWED
    if context.visibility == "self" and not is_requester:
        return Decision(False, "self_visibility_restricted")
    if context.visibility == "tree" and not is_requester and not owned:
        return Decision(False, "tree_visibility_restricted")
    return ALLOWED
