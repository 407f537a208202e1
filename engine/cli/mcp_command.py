"""`session-search mcp`: serve the agent tools to an MCP client over standard input/output.

Owns: the command's arguments (`mcp --store DIR | --openclaw-state PATH [--store DIR]
[--config FILE] [--requester KEY] [--grant KEY=SESSION_ID] [--session-link-base URL]
[--sandboxed] [--agent-id ID] [--quiet]`; without either, the store is
`$SESSION_SEARCH_STORE`), the requester and configuration they make (read as
`call` reads them), and the ready line on standard error. Must not touch: the protocol,
the tools or the live import (`engine.mcp_server`).

Standard output belongs to the protocol: the command prints nothing there itself. A
store or configuration that cannot be used, or a missing `mcp` SDK, is refused before
the server starts, with one error line and exit status 2 (1 for a store that cannot be
read), as every command; once serving, the server ends with status 0 when the client
closes its input. `docs/mcp.md` is the user's guide.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from engine.cli.commands import STORE_VARIABLE, add_command, add_json_arguments, warn
from engine.cli.tool_commands import add_requester_options
from engine.errors import UsageError

#: The requester when none is named: the default agent's main session.
DEFAULT_REQUESTER = "agent:main:main"


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `mcp` command."""
    mcp = add_command(
        subparsers, "mcp",
        description="Serve sessions_search and sessions_history to an MCP client (Claude "
        "Desktop, an IDE, any agent runtime) over standard input and output, with the "
        "official MCP Python SDK. The tools answer as `session-search call` does, as the "
        "requester session --requester (default agent:main:main) under the configuration "
        "--config (OpenClaw's openclaw.json shape, JSON or TOML; default: visibility all, "
        "agent-to-agent on). With --openclaw-state PATH the state folder is imported as "
        "`import --openclaw-state` does, again before every tool call, into --store DIR "
        "when given (kept between runs), else into a temporary store removed at exit. "
        "docs/mcp.md shows the client configuration.",
        examples=[
            "session-search mcp --store demo",
            ("session-search mcp --openclaw-state ~/.openclaw --config "
             "~/.openclaw/openclaw.json --requester agent:main:main"),
        ])
    mcp.add_argument("--store", metavar="DIR", default=None,
                     help=f"the store to serve (default: ${STORE_VARIABLE}); with "
                          "--openclaw-state, the store the state is imported into (default: "
                          "a temporary store)")
    mcp.add_argument("--openclaw-state", metavar="PATH", default=None,
                     help="an OpenClaw state folder to serve, imported again before each "
                          "tool call (never written)")
    mcp.add_argument("--config", metavar="FILE",
                     help="tool configuration: OpenClaw's openclaw.json shape, JSON or TOML")
    mcp.add_argument("--requester", default=DEFAULT_REQUESTER, metavar="KEY",
                     help=f"the session key the tools are called from (default "
                          f"{DEFAULT_REQUESTER})")
    add_requester_options(mcp)
    mcp.add_argument("--quiet", "-q", action="store_true",
                     help="no ready line on standard error")
    add_json_arguments(mcp, help="every answer is MCP's JSON already; accepted for scripts "
                                 "that pass --json to every command")
    mcp.set_defaults(run=run_mcp)


def run_mcp(args: argparse.Namespace) -> int:
    """`session-search mcp`."""
    from engine import Requester, ToolConfig, load_tool_config
    from engine.cli.tool_commands import parse_grants, with_link_base
    from engine.mcp_server.answers import ToolContext
    from engine.mcp_server.server import require_sdk, serve_stdio
    from engine.mcp_server.sources import LiveState, StoreFolder, StoreSource

    if args.store is None and args.openclaw_state is None:
        args.store = os.environ.get(STORE_VARIABLE) or None
        if args.store is None:
            raise UsageError(f"nothing to serve: give --store DIR (or set {STORE_VARIABLE}) "
                             "or --openclaw-state PATH")
    if not args.requester.strip():
        raise UsageError("--requester must name a session key")
    require_sdk()
    config = with_link_base(load_tool_config(args.config) if args.config else ToolConfig(),
                            args.session_link_base)
    requester = Requester(args.requester.strip(), args.sandboxed, args.agent_id,
                          parse_grants(args.grant))
    store = Path(args.store) if args.store is not None else None

    def open_source() -> StoreSource:
        if args.openclaw_state is not None:
            return LiveState(Path(args.openclaw_state), store, warn)
        assert store is not None
        return StoreFolder(store, warn)

    def ready(source: StoreSource) -> None:
        if not args.quiet:
            print(ready_line(source.description, requester.session_key), file=sys.stderr, flush=True)

    serve_stdio(open_source, ToolContext(requester, config), ready)
    return 0


def ready_line(served: str, requester: str) -> str:
    """What `mcp` says on standard error once it serves `served` (a source's
    `description`).

    >>> ready_line("store demo", "agent:main:main")
    'session-search: MCP server for store demo on standard input/output, as agent:main:main (tools: sessions_search, sessions_history); the client ends its input to stop'
    """
    return (f"session-search: MCP server for {served} on standard input/output, as "
            f"{requester} (tools: sessions_search, sessions_history); the client ends "
            "its input to stop")
