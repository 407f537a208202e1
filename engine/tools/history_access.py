"""Visibility for `sessions_history`: the row checker behind history's `HistoryAccess` seam.

Owns: `RequesterHistoryAccess`, which answers history's question (may this requester
read that session's history?) with the same rules `sessions_search` applies to an
explicit target (`engine.access.targets`), and OpenClaw's messages with the verb
"history". Must not touch: reading history (`engine.history`), which must not depend on
visibility rules (history sits below `access`), so the rules come in through this seam.

Refusals: an incognito session, `Session not visible from session tools: <key>`; a
denial of the row checker, its message (`Session history visibility is restricted to the
current session (tools.sessions.visibility=self).`, ...), status `forbidden`.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.access.roster import RosterEntry, roster
from engine.access.session_keys import is_incognito, key_agent
from engine.access.targets import target_access
from engine.access.tool_config import ToolConfig
from engine.access.visibility import Requester, RequesterContext, denial_message
from engine.access.visibility import resolve_requester
from engine.backends.protocol import TranscriptReader
from engine.history.tool import AccessDenial


@dataclass(frozen=True, slots=True)
class RequesterHistoryAccess:
    """A requester's history access over one store's roster."""

    context: RequesterContext
    sessions: dict[str, RosterEntry]

    @classmethod
    def of(cls, reader: TranscriptReader, requester: Requester,
           config: ToolConfig = ToolConfig()) -> RequesterHistoryAccess:
        """The access of `requester` over the sessions `reader` holds."""
        return cls(resolve_requester(requester, config), roster(reader))

    def history_denial(self, session_key: str) -> AccessDenial | None:
        """None when the requester may read `session_key`'s history, else why not."""
        entry = self.sessions.get(session_key)
        if is_incognito(session_key) or (entry is not None and entry.incognito):
            return AccessDenial("forbidden", f"Session not visible from session tools: {session_key}")
        target_agent = key_agent(session_key) or self.context.agent_id
        decision = target_access(self.context, session_key, target_agent, entry)
        if decision.allowed:
            return None
        return AccessDenial("forbidden", denial_message(decision, "history", session_key))
