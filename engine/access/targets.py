"""May the requester read one session it names? The access check of an explicit target.

Owns: `target_access`, the check a session tool makes before it reads one session the
caller named (`sessions_search` with `sessionKey`, `sessions_history`), as OpenClaw
2026.9.6's `resolveSessionToolAccess` makes it. Must not touch: how the key was resolved
(the tool resolves `current`, `main`, sessionIds), listing (`engine.access.roster`) or
the messages (`engine.access.visibility.denial_message`, which the tool calls with its
own verb).

The check: the row checker on the bare key with the target's agent and no ownership
metadata (an explicit target's row carries none); if that refuses but ownership would
allow it, the store decides: the target is the requester's own session, or the roster
records the requester as its spawner or parent (the Gateway's `sessions.resolve
{spawnedBy}` lookup). An unscoped key of another agent is checked as
`agent:<agent>:<key>`.
"""

from __future__ import annotations

from engine.access.roster import RosterEntry
from engine.access.session_keys import is_agent_scoped
from engine.access.visibility import Decision, RequesterContext, SessionRow, check_row


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
