"""The MCP server over standard input and output, on the official `mcp` Python SDK.

Owns: the SDK's low-level `Server` with its two handlers (`tools/list`: the tools of
`engine.mcp_server.tools`; `tools/call`: one call answered by
`engine.mcp_server.answers`), the stdio transport, the worker thread every call runs in,
and the message when the SDK is not installed. Must not touch: what a tool answers or
which answers are errors (`answers`), the tools' words and schemas (`tools`), or where
the store comes from (`sources`).

Why the low-level server: it lists exactly the schemas of `tools` and hands a call's
arguments over unchecked, so a refusal carries the engine's wording (FastMCP-style
servers derive schemas from Python signatures and check arguments themselves).

Threads: the SDK runs on an event loop; every call, and the opening and closing of the
store, runs in ONE worker thread, in the order the calls came (a SQLite store's
connections belong to the thread that opened them, and the live import must not run
twice at once). The loop stays free meanwhile (pings, cancellations, the next request).

Stopping: the server ends when its input ends (the client closes it) or on SIGTERM,
closing the store (and removing a temporary one). A call the SDK names no tool for is a
protocol error (`Unknown tool: NAME`, invalid params), as the MCP specification says.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from engine import __version__
from engine.errors import UsageError
from engine.mcp_server.answers import ToolAnswer, ToolContext, UnknownTool, answer_call
from engine.mcp_server.sources import StoreSource
from engine.mcp_server.tools import TOOLS

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server

SERVER_NAME = "session-search"

#: What a user reads when the SDK is missing.
SDK_MISSING = ("the mcp command needs the MCP Python SDK (the `mcp` package), which is not "
               "installed; install it with: pip install 'session-search[mcp]' (from a "
               "checkout: pip install -e '.[mcp]')")

INSTRUCTIONS = ("Exact-word search over past agent sessions (sessions_search), and their "
                "history around a hit (sessions_history: pass the hit's sessionKey, "
                "messageId and sessionId).")


def require_sdk() -> None:
    """Refuse, saying how to install it, when the `mcp` SDK cannot be imported."""
    try:
        import anyio  # noqa: F401 - only whether it imports (the SDK's own dependency)
        import mcp.server.lowlevel
        import mcp.server.stdio  # noqa: F401
    except ImportError as error:
        if (error.name or "mcp").split(".")[0] not in ("mcp", "anyio"):
            raise  # the SDK is there but broken: its own error says why
        raise UsageError(SDK_MISSING) from None


def build_server(call: Callable[[str, dict[str, Any]], Any]) -> Server:
    """The SDK server listing `TOOLS`; `call(name, arguments)` is awaited for a
    `ToolAnswer` (raising `UnknownTool` for a name it does not know)."""
    from mcp import types
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPError

    listed = [types.Tool(name=tool.name, title=tool.title, description=tool.description,
                         input_schema=tool.input_schema,
                         annotations=types.ToolAnnotations(
                             title=tool.title, read_only_hint=True, open_world_hint=False))
              for tool in TOOLS]

    async def list_tools(context: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(context: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            answer: ToolAnswer = await call(params.name, params.arguments or {})
        except UnknownTool:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}") from None
        return types.CallToolResult(content=[types.TextContent(type="text", text=answer.text)],
                                    is_error=answer.is_error)

    return Server(SERVER_NAME, version=__version__, instructions=INSTRUCTIONS,
                  on_list_tools=list_tools, on_call_tool=call_tool)


def serve_stdio(open_source: Callable[[], StoreSource], context: ToolContext,
                ready: Callable[[StoreSource], None] | None = None) -> None:
    """Open the source (in the worker thread), tell `ready`, and serve MCP on standard
    input and output until the input ends or SIGTERM; then close the source."""
    require_sdk()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="session-search-mcp") as worker:
        asyncio.run(_serve(worker, open_source, context, ready))


async def _serve(worker: ThreadPoolExecutor, open_source: Callable[[], StoreSource],
                 context: ToolContext, ready: Callable[[StoreSource], None] | None) -> None:
    """Open, serve until the input ends or SIGTERM, close (the source's calls all in
    `worker`). SIGTERM is listened for from the start: one that comes while the source
    opens stops the server as soon as it is open, and the source is still closed."""
    import anyio

    loop = asyncio.get_running_loop()
    with anyio.open_signal_receiver(signal.SIGTERM) as terminations:
        source = await loop.run_in_executor(worker, open_source)
        try:
            def answer(name: str, arguments: dict[str, Any]) -> ToolAnswer:
                return answer_call(source.current_store, name, arguments, context)

            server = build_server(
                lambda name, arguments: loop.run_in_executor(worker, answer, name, arguments))
            if ready is not None:
                ready(source)
            await _serve_until_stopped(server, terminations)
        finally:
            await loop.run_in_executor(worker, source.close)


async def _serve_until_stopped(server: Server, terminations: AsyncIterator[int]) -> None:
    """Run `server` on standard input and output until its input ends or a signal
    comes from `terminations`."""
    import anyio
    from mcp.server.stdio import stdio_server

    async with anyio.create_task_group() as group:
        async def stop_at_termination() -> None:
            async for _ in terminations:
                group.cancel_scope.cancel()
                return

        group.start_soon(stop_at_termination)
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
        group.cancel_scope.cancel()  # the input ended: stop listening
