"""The `sessions_history` method: the agent tool over JSON-RPC.

Owns: running `engine.agent_tools.sessions_history.sessions_history` for one request, and the
**visibility seam**: `requester_access`, which turns the optional
`requesterSessionKey` param into the `HistoryAccess` the tool asks. Must not touch: the
tool's rules (`engine.agent_tools.sessions_history`), the params' rules (`ToolHistoryRequest`), or the
visibility rules themselves (behaviour.md §11; the row checker shared with
`sessions_search` is `engine.agent_tools`'s).

Params: `{sessionKey, limit?, offset?, messageId?, sessionId?, includeTools?,
requesterSessionKey?}`. Result: the tool's answer, `{sessionKey, messages, truncated,
droppedMessages, contentTruncated, contentRedacted, bytes, ...}`, or `{status, error}`
for a key the requester may not read or that the store does not hold.

The seam: `requester_access` gives, for a request naming `requesterSessionKey`, the row
checker `sessions_search` uses for an explicit target (`engine.agent_tools.history_access`)
under the server's tool configuration; a request without a requester reads any session
(a trusted local caller, as `session-search history` is).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine import HistoryRequestError, ToolHistoryRequest
from engine.agent_tools.history_access import RequesterHistoryAccess
from engine.agent_tools.sessions_history import HistoryAccess, sessions_history
from engine.agent_tools.visibility import Requester
from engine.rpc.history_method import transcript_reader

if TYPE_CHECKING:
    from engine.rpc.methods import RpcContext

SESSIONS_HISTORY_METHOD = "sessions_history"
REQUESTER_PARAM = "requesterSessionKey"


def requester_access(context: RpcContext, requester_session_key: str | None) -> HistoryAccess | None:
    """The visibility checker for this requester, or None when the request names none."""
    if requester_session_key is None:
        return None
    if not requester_session_key.strip():
        raise HistoryRequestError(f"{REQUESTER_PARAM} must be a non-empty string")
    return RequesterHistoryAccess.of(transcript_reader(context, SESSIONS_HISTORY_METHOD),
                                     Requester(requester_session_key), context.tool_config)


def sessions_history_call(context: RpcContext, params: Any) -> dict[str, Any]:
    """Handler of `sessions_history`."""
    if isinstance(params, dict) and REQUESTER_PARAM in params:
        params = dict(params)
        requester = params.pop(REQUESTER_PARAM)
        if requester is not None and not isinstance(requester, str):
            raise HistoryRequestError(f"{REQUESTER_PARAM} must be a string")
    else:
        requester = None
    request = ToolHistoryRequest.from_json(params)
    reader = transcript_reader(context, SESSIONS_HISTORY_METHOD)
    return sessions_history(reader, request, requester_access(context, requester))

