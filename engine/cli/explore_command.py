"""`session-search explore`: a local web page over a store that shows why every hit is a hit.

Owns: the command's arguments (`explore --store DIR [--backend NAME] [--compare-with DIR]
[--config FILE] [--host HOST] [--port N] [--open]`), the line it prints (the page's
address, on standard output, once the server listens) and the line it prints when it
stops (standard error). Must not touch: the page, its endpoints or serving
(`engine.explorer`), or the store (opened read-only by the explorer: nothing is written).

A store that cannot be opened, a configuration file that cannot be used, a port that is
taken, or a missing `explore` extra is refused before the server starts, with one error
line and exit status 2 (1 for a store that cannot be read). Ctrl-C (or SIGTERM) stops the
server and the command ends with status 0. `docs/explore.md` is the user's guide.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from engine.cli.commands import add_command, add_store_argument, warn
from engine.errors import UsageError
from engine.store.registry import BACKEND_NAMES


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `explore` command."""
    parser = add_command(
        subparsers, "explore",
        description="Serve a web page on this machine that shows a store at work: a text's "
        "tokens per profile, a query's plan, the hits with their scope and flags, why a hit "
        "ranks where it does (bm25, tie-breaks, the excerpt window), the index's postings, "
        "the history around a hit, and the same request on both backends with a button that "
        "saves it as a conformance case. Every panel is also a JSON endpoint "
        "(docs/explore.md). Read-only; nothing is loaded from the network. Ctrl-C stops it.",
        examples=["session-search explore --store demo",
                  "session-search explore --store demo --port 0 --open"],
    )
    add_store_argument(parser)
    parser.add_argument("--backend", choices=BACKEND_NAMES, default=None,
                        help="the backend the store must have")
    parser.add_argument("--compare-with", metavar="DIR", default=None,
                        help="a store of the other backend for Compare (default: a copy of "
                             "--store made in a temporary folder on the first Compare)")
    parser.add_argument("--config", metavar="FILE",
                        help="tool configuration for the Hits panel's tool calls: OpenClaw's "
                             "openclaw.json shape, JSON or TOML")
    parser.add_argument("--host", default="127.0.0.1",
                        help="the address to listen on (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int, default=8765, metavar="N",
                        help="the port (default 8765; 0: a free one)")
    parser.add_argument("--open", action="store_true", help="open the page in a browser")
    parser.add_argument("--json", action="store_true",
                        help="print the address line as JSON ({\"url\": ...})")
    parser.set_defaults(run=run_explore)


def run_explore(args: argparse.Namespace) -> int:
    """`session-search explore`."""
    from engine.explorer import require_extra

    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port must be from 0 to 65535 (got {args.port})")
    require_extra()
    from engine import ToolConfig, load_tool_config
    from engine.explorer.app import LOCAL_HOSTS, ExplorerContext, build_app
    from engine.explorer.explored_store import ExploredStore
    from engine.explorer.server import serve

    config = load_tool_config(args.config) if args.config else ToolConfig()
    document = config_document(args.config) if args.config else None
    explored = ExploredStore(args.store, backend=args.backend, compare_with=args.compare_with,
                             warn=warn)
    try:
        app = build_app(ExplorerContext(explored, config, document),
                        allowed_hosts=[*LOCAL_HOSTS, args.host])

        def announce(url: str) -> None:
            if args.json:
                print(json.dumps({"url": url, "store": args.store, "backend": explored.backend}),
                      flush=True)
            else:
                print(f"session-search: exploring {args.store} (backend {explored.backend}) "
                      f"at {url} ; Ctrl-C stops", flush=True)

        serve(app, host=args.host, port=args.port, open_browser=args.open, announce=announce)
    finally:
        explored.close()
    print("session-search: explorer stopped", file=sys.stderr)
    return 0


def config_document(path: str) -> dict[str, Any]:
    """The configuration file's content (already checked by `load_tool_config`), which a
    saved tool case carries as its `config`."""
    text = Path(path).read_text(encoding="utf-8")
    if path.endswith(".toml"):
        import tomllib

        return tomllib.loads(text)
    value = json.loads(text)
    return value if isinstance(value, dict) else {}
