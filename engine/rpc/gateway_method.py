"""The `gateway.sessions.search` method: OpenClaw's Gateway `sessions.search` over JSON-RPC.

Owns: running `engine.agent_tools.gateway_search.gateway_search` on the served backend and
mapping its refusals to error codes. Must not touch: the Gateway's rules (the tools
module owns them) or the envelope (`engine.rpc.server`).

Why a method of its own: the engine's `sessions.search` is the store-level kernel search
(roles, order, prefix mode, a merge across agents, the kernel's `{hits, ...}` result),
which the conformance suite and the benchmark drive; this one answers exactly as the
Gateway a client of OpenClaw 2026.9.6 reaches: one agent per call, `main` when none is
named, the protocol schema's refusals, `{results, indexing?, truncated?}`.

Errors: the Gateway's `INVALID_REQUEST` refusals are `-32602` with its message (`invalid
sessions.search params: at /limit: must be <= 25`, `sessions.search supports one agent
per call`, ...); a search that fails (`UNAVAILABLE`) is `-32000`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine.agent_tools.gateway_search import INVALID_REQUEST, GatewayRefusal, gateway_search
from engine.rpc.errors import ENGINE_ERROR, INVALID_PARAMS, RpcError
from engine.rpc.refreshing import refreshed

if TYPE_CHECKING:
    from engine.rpc.methods import RpcContext

GATEWAY_SEARCH_METHOD = "gateway.sessions.search"


def gateway_sessions_search(context: RpcContext, params: Any) -> dict[str, Any]:
    """Handler of `gateway.sessions.search`."""
    backend = refreshed(context.backend)
    try:
        return gateway_search(backend, params, context.tool_config)
    except GatewayRefusal as refusal:
        code = INVALID_PARAMS if refusal.code == INVALID_REQUEST else ENGINE_ERROR
        raise RpcError(code, str(refusal)) from None
