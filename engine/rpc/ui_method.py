"""The `ui.search` method: the Control UI's command palette search over JSON-RPC.

Owns: the method's params (`{"query": str, "limit"?: int}`) and their messages. Must not
touch: what the search does or answers (`engine.agent_tools.ui_search`), or the envelope.

Params: `query` (string, required: what the palette's search box holds; fewer than 2
characters after trimming is answered with `searched: false` and no matches, not an
error) and `limit` (integer 1..25, default 25). Result: `ui_search`'s answer. The server's
tool configuration (`serve --config FILE`) gives the configured agents; its time budgets
and reader gate bound the transcript stage, whose failure is part of the answer
(`transcriptSearchUnavailable` and its notice), not an error. Errors: params of the wrong
shape, a query over 4,096 UTF-16 units or a bad limit are `INVALID_PARAMS`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine.agent_tools.ui_search import DEFAULT_LIMIT, ui_search
from engine.rpc.errors import INVALID_PARAMS, RpcError

if TYPE_CHECKING:
    from engine.rpc.methods import RpcContext

UI_SEARCH_METHOD = "ui.search"
PARAM_NAMES = ("query", "limit")


def read_params(params: Any) -> tuple[str, Any]:
    """The query and limit `params` give, or `RpcError(INVALID_PARAMS)` saying what is wrong.

    >>> read_params({"query": "deploy"})
    ('deploy', 25)
    >>> read_params({"query": "x", "scope": {}})
    Traceback (most recent call last):
    ...
    engine.rpc.errors.RpcError: params has an unknown member 'scope' (expected: query, limit) (JSON-RPC error -32602, invalid params)
    """
    if not isinstance(params, dict):
        raise RpcError(INVALID_PARAMS, "params must be an object with a query")
    for name in params:
        if name not in PARAM_NAMES:
            raise RpcError(INVALID_PARAMS, f"params has an unknown member {name!r} "
                           "(expected: query, limit)")
    query = params.get("query")
    if not isinstance(query, str):
        raise RpcError(INVALID_PARAMS, "query must be a string")
    limit = params.get("limit")
    return query, DEFAULT_LIMIT if limit is None else limit


def ui_search_method(context: RpcContext, params: Any) -> dict[str, Any]:
    """Handler of `ui.search` (an `InputError` of the search becomes INVALID_PARAMS)."""
    query, limit = read_params(params)
    return ui_search(context.backend, query, context.tool_config, limit,
                     budgets=context.budgets, gate=context.reader_gate)
