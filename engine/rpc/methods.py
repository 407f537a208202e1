"""The method table: which JSON-RPC methods the server answers, and how a method is written.

Owns: the `Method` value, the context a handler receives, and `METHODS`, the table the
server uses by default. Must not touch: framing or the request/response envelope
(`engine.rpc.server`), or what a method computes (each handler's own module).

A method is a name, a handler `(context, params) -> result` and a one-line summary. The
handler receives the request's `params` exactly as decoded (an object, an array, or `{}`
when the request had none) and returns a JSON value, the response's `result`. To answer
with an error it raises `RpcError(code, message)`; an `InputError` from the engine
becomes `INVALID_PARAMS` and any other `EngineError` becomes `ENGINE_ERROR` (the server
maps them, so handlers need not).

Adding a method (`sessions_search`, `ui.search`, ...): write its
handler in its own module under `engine.rpc`, add one `Method` to `METHODS` below, and
describe its params, result and errors in `docs/protocol.md`. Nothing else changes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from engine import SearchBackend
from engine.agent_tools.budgets import ReaderGate, TimeBudgets
from engine.agent_tools.tool_config import ToolConfig
from engine.rpc.gateway_method import GATEWAY_SEARCH_METHOD, gateway_sessions_search
from engine.rpc.history_method import CHAT_HISTORY_METHOD, chat_history
from engine.rpc.search_method import SEARCH_METHOD, sessions_search
from engine.rpc.sessions_history_method import SESSIONS_HISTORY_METHOD, sessions_history_call
from engine.rpc.tool_method import TOOL_METHOD, sessions_search_tool
from engine.rpc.ui_method import UI_SEARCH_METHOD, ui_search_method


@dataclass(frozen=True, slots=True)
class RpcContext:
    """What every handler may use: the open backend the server serves, the session
    tools' configuration (`serve --config`), their time budgets, and the one reader gate
    every tool call of this server is admitted through."""

    backend: SearchBackend
    tool_config: ToolConfig = ToolConfig()
    budgets: TimeBudgets = TimeBudgets()
    reader_gate: ReaderGate = field(default_factory=ReaderGate)


Handler = Callable[[RpcContext, Any], Any]


@dataclass(frozen=True, slots=True)
class Method:
    """One JSON-RPC method: its name, its handler and what it does (for listings)."""

    name: str
    handler: Handler
    summary: str


def method_table(*methods: Method) -> dict[str, Method]:
    """The table of `methods` by name (a `ValueError` when a name repeats).

    >>> sorted(method_table(Method("a", lambda context, params: 1, "one")))
    ['a']
    """
    table: dict[str, Method] = {}
    for method in methods:
        if method.name in table:
            raise ValueError(f"method {method.name!r} is defined twice")
        table[method.name] = method
    return table


#: The methods `session-search serve` answers.
METHODS: Mapping[str, Method] = method_table(
    Method(SEARCH_METHOD, sessions_search,
           "the store-level search of behaviour.md §5; the result is the kernel result"),
    Method(TOOL_METHOD, sessions_search_tool,
           "the sessions_search agent tool for one requester (visibility, bounds, budgets)"),
    Method(CHAT_HISTORY_METHOD, chat_history,
           "the Gateway's history read of behaviour.md §9: tail, offset, anchor, cursor"),
    Method(SESSIONS_HISTORY_METHOD, sessions_history_call,
           "the sessions_history agent tool: a history page sanitised and capped at 80 KiB"),
    Method(UI_SEARCH_METHOD, ui_search_method,
           "the Control UI's command palette search: titles, then messages, in its scope"),
    Method(GATEWAY_SEARCH_METHOD, gateway_sessions_search,
           "OpenClaw's Gateway sessions.search: one agent per call, its schema's refusals"),
)
