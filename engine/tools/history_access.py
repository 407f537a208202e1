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

from engine.access.roster import entry_in, incognito_session
from engine.access.session_keys import key_agent
from engine.access.targets import target_access
from engine.access.tool_config import ToolConfig
from engine.access.visibility import Requester, RequesterContext, denial_message, resolve_requester
from engine.backends.protocol import TranscriptReader
from engine.history.tool import AccessDenial


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

    def history_denial(self, session_key: str) -> AccessDenial | None:
        """None when the requester may read `session_key`'s history, else why not."""
        entry = entry_in(self.reader, session_key)
        if incognito_session(session_key, entry):
            return AccessDenial("forbidden", f"Session not visible from session tools: {session_key}")
        target_agent = key_agent(session_key) or self.context.agent_id
        decision = target_access(self.context, session_key, target_agent, entry)
        if decision.allowed:
            return None
        return AccessDenial("forbidden", denial_message(decision, "history", session_key))
