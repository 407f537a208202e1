"""Visibility for `sessions_history`: the row checker behind history's `HistoryAccess` seam.

Owns: `RequesterHistoryAccess`, which answers history's question (which session does
this argument name for this requester, and may the requester read it?) with the same
rules `sessions_search` applies to an explicit target (`engine.agent_tools.targets`:
`named_session` picks the session, `target_access` decides), and OpenClaw's messages
with the verb "history". The answer is the target history then reads, so the session
checked is the session read: `global` named by an agent other than the default one is
that agent's own `global`, which the store does not hold, never the default agent's. Must not touch: reading history (`engine.history`), which must not depend on
visibility rules (history sits below `access`), so the rules come in through this seam.

Refusals: an incognito session, `Session not visible from session tools: <key>`; a
denial of the row checker, its message (`Session history visibility is restricted to the
current session (tools.sessions.visibility=self).`, ...), status `forbidden`.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.agent_tools.roster import entry_in, incognito_session, roster
from engine.agent_tools.session_keys import is_agent_scoped, names_a_session_id
from engine.agent_tools.sessions_history import AccessDenial, HistoryTarget
from engine.agent_tools.targets import named_session, resolve_reference, target_access
from engine.agent_tools.tool_config import ToolConfig
from engine.agent_tools.visibility import (
    Requester,
    RequesterContext,
    denial_message,
    resolve_requester,
)
from engine.backends.protocol import TranscriptReader
from engine.model import canonical_session_key, js_trim


@dataclass(frozen=True, slots=True)
class RequesterHistoryAccess:
    """A requester's history access to the sessions of one store (each check reads the
    named session's windows only, not the store's whole roster)."""

    context: RequesterContext
    reader: TranscriptReader

    @classmethod
    def of(cls, reader: TranscriptReader, requester: Requester,
           config: ToolConfig = ToolConfig()) -> RequesterHistoryAccess:
        """The access of `requester` to the sessions `reader` holds."""
        return cls(resolve_requester(requester, config), reader)

    def resolve_target(self, session_key: str) -> HistoryTarget | AccessDenial:
        """The session `session_key` names for the requester, or why it may not read it."""
        raw = js_trim(session_key)
        given = self.context.key if raw == "current" else raw
        if names_a_session_id(given):  # OpenClaw's `sessions.resolve`, as sessions_search
            found = resolve_reference(self.context, given,
                                      lambda key: entry_in(self.reader, key),
                                      lambda: roster(self.reader).values())
            if found is None:
                if self.context.restricted_to_spawned:
                    return AccessDenial("forbidden", "Session not visible from this sandboxed "
                                                     f"agent session: {given}")
                return AccessDenial("error", f"Session not found: {given} (use the full "
                                             "sessionKey from sessions_list)")
            given = found
        else:  # a key, read in OpenClaw's stored form (`agent:Main:X` is `agent:main:x`)
            given = canonical_session_key(given)
        named = named_session(self.context, given)
        entry = entry_in(self.reader, named.key) if named.held else None
        if incognito_session(named.given, entry) or incognito_session(named.key, entry):
            return AccessDenial("forbidden", f"Session not visible from session tools: {raw}")
        decision = target_access(self.context, named.given, named.agent_id, entry)
        if not decision.allowed:
            return AccessDenial("forbidden", denial_message(decision, "history", named.given))
        named_main = raw == "main"  # shown as given, whatever the configured alias is
        return HistoryTarget("main" if named_main else named.given, named.key,
                             held=named.held,
                             unscoped=named_main or not is_agent_scoped(named.given))
