"""The `sessions_search` method: the agent tool over JSON-RPC, one requester per request.

Owns: the method's params (`{"requester": {...}, "arguments": {...}}`), reading the
requester context from them, and mapping the tool's failures to error codes. Must not
touch: what the tool does (`engine.agent_tools.sessions_search`) or the envelope.

Params:
* `requester`: `{"sessionKey": str, "sandboxed"?: bool, "agentId"?: str, "grants"?:
  [{"sessionKey": str, "sessionId": str}]}`, the session the agent calls from (required:
  visibility depends on who asks) and the scoped grants a host gave it;
* `arguments`: the tool's own arguments, `{"query", "sessionKey"?, "limit"?}`.
Result: the tool's answer, `{"results", "indexing"?, "warning"?, "truncated"?, ...}` or
`{"status": "forbidden" | "error", "error"}` (a refusal is an answer, as in the product).
Errors: an argument the tool refuses (its product wording) or malformed params are
`INVALID_PARAMS`; a spent time budget is `TIMED_OUT`; a granted session that changed
window since its grant (`Session "<key>" changed after access was granted.`) is
`ENGINE_ERROR`. The server's tool configuration
(`serve --config FILE`) applies to every request.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine.agent_tools.budgets import SearchTimedOut
from engine.agent_tools.sessions_search import sessions_search
from engine.agent_tools.visibility import Requester, ScopedGrant
from engine.rpc.errors import INVALID_PARAMS, TIMED_OUT, RpcError

if TYPE_CHECKING:
    from engine.rpc.methods import RpcContext

TOOL_METHOD = "sessions_search"
REQUESTER_FIELDS = ("sessionKey", "sandboxed", "agentId", "grants")


def requester_from_params(value: Any) -> Requester:
    """The requester a request names, or `RpcError(INVALID_PARAMS)` saying what is wrong.

    >>> requester_from_params({"sessionKey": "agent:main:main", "sandboxed": True})
    Requester(session_key='agent:main:main', sandboxed=True, agent_id=None, grants=())
    >>> requester_from_params({"sessionKey": 3})
    Traceback (most recent call last):
    ...
    engine.rpc.errors.RpcError: requester.sessionKey must be a non-empty string (JSON-RPC error -32602, invalid params)
    """
    if not isinstance(value, dict):
        raise RpcError(INVALID_PARAMS, "requester must be an object with a sessionKey")
    for name in value:
        if name not in REQUESTER_FIELDS:
            raise RpcError(INVALID_PARAMS, f"requester has an unknown member {name!r} "
                           "(expected: sessionKey, sandboxed, agentId, grants)")
    key = value.get("sessionKey")
    if not isinstance(key, str) or not key.strip():
        raise RpcError(INVALID_PARAMS, "requester.sessionKey must be a non-empty string")
    sandboxed = value.get("sandboxed", False)
    if not isinstance(sandboxed, bool):
        raise RpcError(INVALID_PARAMS, "requester.sandboxed must be true or false")
    agent_id = value.get("agentId")
    if agent_id is not None and (not isinstance(agent_id, str) or not agent_id.strip()):
        raise RpcError(INVALID_PARAMS, "requester.agentId must be a non-empty string")
    return Requester(key, sandboxed, agent_id, grants_from_params(value.get("grants", [])))


def grants_from_params(value: Any) -> tuple[ScopedGrant, ...]:
    """`requester.grants`: `[{"sessionKey": str, "sessionId": str}, ...]`.

    >>> grants_from_params([{"sessionKey": "agent:main:main", "sessionId": "w1"}])
    (ScopedGrant(session_key='agent:main:main', expected_session_id='w1'),)
    """
    problem = "requester.grants must be a list of {\"sessionKey\": str, \"sessionId\": str}"
    if not isinstance(value, list):
        raise RpcError(INVALID_PARAMS, problem)
    grants = []
    for item in value:
        if (not isinstance(item, dict) or set(item) != {"sessionKey", "sessionId"}
                or not all(isinstance(item[name], str) and item[name].strip() for name in item)):
            raise RpcError(INVALID_PARAMS, problem)
        grants.append(ScopedGrant(item["sessionKey"].strip(), item["sessionId"].strip()))
    return tuple(grants)


def sessions_search_tool(context: RpcContext, params: Any) -> dict[str, Any]:
    """Handler of `sessions_search`."""
    if not isinstance(params, dict):
        raise RpcError(INVALID_PARAMS, "params must be an object with requester and arguments")
    for name in params:
        if name not in ("requester", "arguments"):
            raise RpcError(INVALID_PARAMS, f"params has an unknown member {name!r} "
                           "(expected: requester, arguments)")
    requester = requester_from_params(params.get("requester"))
    try:
        return sessions_search(context.backend, requester, params.get("arguments", {}),
                               config=context.tool_config, budgets=context.budgets,
                               gate=context.reader_gate)
    except SearchTimedOut as error:
        raise RpcError(TIMED_OUT, str(error)) from None
