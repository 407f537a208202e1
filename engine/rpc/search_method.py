"""The `sessions.search` method: the store-level search over JSON-RPC.

Owns: the method's params rules beyond `SearchRequest.from_json` (params must be an
object; without `sessionKeys` an `agentId` is required, as in the kernel) and running
the search on the served backend. Must not touch: the request's JSON shape
(`engine.model.SearchRequest`), the query policy, or the envelope (`engine.rpc.server`).

Params: the JSON form of a `SearchRequest`, `{agentId?, query, limit?, sessionKeys?,
sessionId?, role?, match?, order?}`. Result: the kernel result, `SearchResult.to_json()`.
A backend that reads a snapshot (`Refreshable`) is refreshed first, so each call sees
every commit made before it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine.model import InvalidRequest, SearchRequest
from engine.rpc.errors import INVALID_PARAMS, RpcError
from engine.rpc.refreshing import refreshed

if TYPE_CHECKING:
    from engine.rpc.methods import RpcContext

SEARCH_METHOD = "sessions.search"


def search_request_from_params(params: Any) -> SearchRequest:
    """The request `params` describe, or `RpcError(INVALID_PARAMS)` saying what is wrong.

    >>> search_request_from_params({"agentId": "main", "query": "cafe"}).agent_id
    'main'
    >>> search_request_from_params({"query": "cafe"})
    Traceback (most recent call last):
    ...
    engine.rpc.errors.RpcError: agentId is required when sessionKeys is omitted (JSON-RPC error -32602, invalid params)
    """
    if not isinstance(params, dict):
        raise RpcError(INVALID_PARAMS, "params must be an object")
    try:
        request = SearchRequest.from_json(params)
    except InvalidRequest as error:
        raise RpcError(INVALID_PARAMS, error.message) from None
    if request.session_keys is None and request.agent_id is None:
        raise RpcError(INVALID_PARAMS, "agentId is required when sessionKeys is omitted")
    return request


def sessions_search(context: RpcContext, params: Any) -> dict[str, Any]:
    """Handler of `sessions.search`: check the params, refresh if needed, search."""
    request = search_request_from_params(params)
    return refreshed(context.backend).search(request).to_json()
