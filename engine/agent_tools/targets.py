"""May the requester read one session it names? The access check of an explicit target.

Owns: `target_access`, the check a session tool makes before it reads one session the
caller named (`sessions_search` with `sessionKey`, `sessions_history`), as OpenClaw
2026.9.6's `resolveSessionToolAccess` makes it. Must not touch: how the key was resolved
(the tool resolves `current`, `main`, sessionIds), listing (`engine.agent_tools.roster`) or
the messages (`engine.agent_tools.visibility.denial_message`, which the tool calls with its
own verb).

Which session an argument names (`named_session`), one rule for `sessions_search` and
`sessions_history` alike, so that the session a tool checks is the session it reads:
`current` is the requester's own key; `main` is the configured main alias; an
agent-scoped key names its own agent's session; an unscoped key (`global`, `unknown`,
the main alias) names the session of that name **in the requester's own agent**, as
OpenClaw's tools resolve it ("keeps an unscoped current session in the requester agent
store", behaviour.md §12.1). The store keeps `global` and `unknown` in the default
agent's partition only (`engine.model.owner_agent_id`), so another agent's `global` is a
session the store does not hold (`NamedSession.held` is false): it is never read from
`main`'s partition under the requester's own-agent permission.

The check: the row checker on the bare key with the target's agent and no ownership
metadata (an explicit target's row carries none); if that refuses but ownership would
allow it, the store decides: the target is the requester's own session, or the roster
records the requester as its spawner or parent (the Gateway's `sessions.resolve
{spawnedBy}` lookup). An unscoped key of another agent is checked as
`agent:<agent>:<key>`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from engine.agent_tools.roster import RosterEntry
from engine.agent_tools.session_keys import is_agent_scoped, key_agent
from engine.agent_tools.visibility import Decision, RequesterContext, SessionRow, check_row
from engine.model import RESERVED_SESSION_KEYS, canonical_session_key, owner_agent_id


def kernel_key(key: str, agent_id: str) -> str:
    """The key the store is asked for: an unscoped alias becomes the agent's key.

    >>> kernel_key("main", "work"), kernel_key("global", "main"), kernel_key("agent:a:b", "a")
    ('agent:work:main', 'global', 'agent:a:b')
    """
    if is_agent_scoped(key) or key in RESERVED_SESSION_KEYS:
        return key
    return f"agent:{agent_id}:{key}"


def held_by(key: str, agent_id: str) -> bool:
    """Whether the partition of `agent_id` can hold `key`: an unscoped key (`global`,
    `unknown`) lives in one partition only (`engine.model.owner_agent_id`), so a call of
    another agent would find it elsewhere, where OpenClaw's agent database has none.

    >>> held_by("global", "main"), held_by("global", "work"), held_by("agent:a:b", "a")
    (True, False, True)
    """
    return is_agent_scoped(key) or owner_agent_id(key) == agent_id


@dataclass(frozen=True, slots=True)
class NamedSession:
    """The session a tool argument names for one requester: `given` is the argument as
    the tool shows it (`current` and `main` resolved), `key` the key the store holds it
    under, `agent_id` the agent whose partition it belongs to."""

    given: str
    key: str
    agent_id: str

    @property
    def held(self) -> bool:
        """Whether the store can hold this session at all (another agent's `global` it
        cannot: the store keeps unscoped keys in the default agent's partition)."""
        return held_by(self.key, self.agent_id)


def named_session(context: RequesterContext, given: str) -> NamedSession:
    """The session `given` (a trimmed argument, `current` already replaced by the
    requester's key) names for the requester of `context` (the module docstring's rule).

    >>> from engine.agent_tools.tool_config import ToolConfig
    >>> from engine.agent_tools.visibility import Requester, resolve_requester
    >>> work = resolve_requester(Requester("agent:work:chat"), ToolConfig())
    >>> named_session(work, "global"), named_session(work, "main").key
    (NamedSession(given='global', key='global', agent_id='work'), 'agent:work:main')
    >>> named_session(work, "global").held, named_session(work, "agent:main:x").agent_id
    (False, 'main')
    """
    if given == "main":
        given = context.config.main_alias
    agent_id = key_agent(given) or context.agent_id
    return NamedSession(given, kernel_key(given, agent_id), agent_id)


def target_access(context: RequesterContext, key: str, target_agent: str,
                  entry: RosterEntry | None) -> Decision:
    """The decision for reading `key` of `target_agent` (the module docstring's rule);
    `entry` is the roster's entry for it, None when the store holds no such session."""
    authorization_key = (f"agent:{target_agent}:{key}"
                         if target_agent != context.agent_id and not is_agent_scoped(key)
                         else key)
    initial = check_row(context, SessionRow(authorization_key, target_agent),
                        default_agent=target_agent)
    if initial.allowed:
        return initial
    as_owned = check_row(context, SessionRow(authorization_key, target_agent,
                                             spawned_by=context.key),
                         default_agent=target_agent)
    if not as_owned.allowed:
        return initial
    own = key == context.key and target_agent == context.agent_id
    spawned = entry is not None and entry.child_of(context.key)
    return as_owned if own or spawned else initial


def resolve_reference(context: RequesterContext, given: str,
                      entry_of_key: Callable[[str], RosterEntry | None],
                      entries: Callable[[], Iterable[RosterEntry]]) -> str | None:
    """The key a tool argument that does not read as a key names (OpenClaw's
    `sessions.resolve`, asked first with `key` then with `sessionId`), or None.

    The key lookup reads the argument in OpenClaw's stored form
    (`engine.model.canonical_session_key`) and names it as `named_session` does, in the
    argument's own agent or else the requester's: `MAIN` is the requester's main session,
    `Global` the requester agent's `global`, `Agent:Work:X` the key `agent:work:x`; it
    names a session when the store holds one under that key (`entry_of_key`). Else the
    session whose current window has that id (a retained window's id names nothing: the
    Gateway resolves a sessionId through the session entry, which names the current
    window only). A requester restricted to what it spawned resolves only its own
    children (the Gateway's lookup then carries `spawnedBy`); `entries()` lists the store's
    sessions, read only when the key lookup found none.
    """
    restricted = context.restricted_to_spawned

    def reachable(entry: RosterEntry | None) -> bool:
        return entry is not None and (not restricted or entry.child_of(context.key))

    named = named_session(context, canonical_session_key(given))
    if named.held and reachable(entry_of_key(named.key)):
        return named.key
    for entry in entries():
        if entry.session_id == given and reachable(entry):
            return entry.key
    return None
