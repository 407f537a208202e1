"""`session-search call`: run an agent tool once, as a given requester, and print its answer.

Owns: the command's arguments (`call TOOL --store DIR [--config FILE] --requester KEY
[--sandboxed] [--agent-id ID] ARGS_JSON`) and how the answer and the failures are printed.
Must not touch: what the tool does (`engine.agent_tools`) or who may see what (`engine.agent_tools`).

The answer is printed as the tool's JSON, with or without `--json` (accepted, as every
command accepts it), whatever it says: a refusal
(`{"status": "forbidden", ...}`) is an answer of the tool, so the exit status is 0. An
argument the tool refuses (an empty query, a limit of 26), ARGS_JSON that is not a JSON
object, or a configuration file that cannot be used exits 2 with one line; a spent time
budget exits 1 with the timeout's message.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace

from engine.agent_tools.tool_config import ToolConfig
from engine.agent_tools.visibility import ScopedGrant
from engine.cli.commands import add_command, add_json_arguments, add_store_argument, warn
from engine.cli.json_output import print_json
from engine.errors import UsageError, json_syntax_error
from engine.store.registry import open_store

TOOLS = ("sessions_search",)


def with_link_base(config: ToolConfig, base: str | None) -> ToolConfig:
    """`config` with the Control UI address `base` (at most 200 characters, as OpenClaw
    allows), or unchanged when `base` is None.

    >>> with_link_base(ToolConfig(), "http://h:1/ui").session_link_base
    'http://h:1/ui'
    """
    if base is None:
        return config
    base = base.strip().rstrip("/")
    if not base or len(base) > 200:
        raise UsageError("--session-link-base must be a URL of 1 to 200 characters")
    return replace(config, session_link_base=base)


def parse_grants(values: list[str]) -> tuple[ScopedGrant, ...]:
    """`--grant KEY=SESSION_ID` values as grants (the last `=` separates: keys hold `:`).

    >>> parse_grants(["agent:main:main=w1"])
    (ScopedGrant(session_key='agent:main:main', expected_session_id='w1'),)
    """
    grants = []
    for value in values:
        key, separator, session_id = value.rpartition("=")
        if not separator or not key.strip() or not session_id.strip():
            raise UsageError(f"--grant {value!r}: expected KEY=SESSION_ID")
        grants.append(ScopedGrant(key.strip(), session_id.strip()))
    return tuple(grants)


def add_requester_options(parser: argparse.ArgumentParser) -> None:
    """`--grant`, `--session-link-base`, `--sandboxed` and `--agent-id`: the requester's
    context beside its key, for the commands that run the agent tools (`call`, `mcp`)."""
    parser.add_argument("--grant", action="append", default=[], metavar="KEY=SESSION_ID",
                        help="a scoped grant: the requester may read KEY while its current "
                        "window is SESSION_ID (repeatable)")
    parser.add_argument("--session-link-base", metavar="URL",
                        help="the Control UI's address: answers then carry a sessionLinkRule")
    parser.add_argument("--sandboxed", action="store_true",
                        help="the requester runs sandboxed (spawned-session visibility applies)")
    parser.add_argument("--agent-id", metavar="ID",
                        help="the requester's agent when its key names none (e.g. main)")


def run_call(args: argparse.Namespace) -> int:
    """`session-search call`."""
    from engine.agent_tools.sessions_search import sessions_search
    from engine.agent_tools.tool_config import load_tool_config
    from engine.agent_tools.visibility import Requester

    try:
        arguments = json.loads(args.arguments)
    except json.JSONDecodeError as error:
        where = json_syntax_error(error, document="\n" in args.arguments.strip())
        raise UsageError(f"ARGS_JSON is not JSON ({where}); expected an object such as "
                         '\'{"query": "cafe"}\'') from None
    if not isinstance(arguments, dict):
        raise UsageError('ARGS_JSON must be a JSON object such as \'{"query": "cafe"}\'')
    if not args.requester.strip():
        raise UsageError("--requester must name a session key")
    config = with_link_base(load_tool_config(args.config) if args.config else ToolConfig(),
                            args.session_link_base)
    backend = open_store(args.store, "call", warn=warn)
    try:
        answer = sessions_search(backend, Requester(args.requester, args.sandboxed,
                                                    args.agent_id, parse_grants(args.grant)),
                                 arguments, config=config)
    finally:
        backend.close()
    print_json(answer)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    call = add_command(
        subparsers, "call",
        description="Run an agent tool once as the requester session --requester and print "
        "the tool's JSON answer. sessions_search searches the sessions that requester may "
        "see under the configuration (--config, an OpenClaw openclaw.json or a TOML file "
        "of the same shape; default: visibility all, agent-to-agent on). A refusal "
        "(forbidden, error) is printed as the tool's answer with exit status 0.",
        examples=[
            ("session-search call sessions_search --store demo --requester agent:main:main "
            "'{\"query\": \"cafe\"}'"),
            ("session-search call sessions_search --store demo --config openclaw.json "
            "--requester agent:main:main '{\"query\": \"cafe\", \"limit\": 3}'"),
        ],
    )
    call.add_argument("tool", choices=TOOLS, help="the tool to run")
    add_store_argument(call)
    call.add_argument("--config", metavar="FILE",
                      help="tool configuration: OpenClaw's openclaw.json shape, JSON or TOML")
    call.add_argument("--requester", required=True, metavar="KEY",
                      help="the session key the tool is called from")
    add_requester_options(call)
    add_json_arguments(call, help="print JSON (the tool's answer is JSON either way)")
    call.add_argument("arguments", metavar="ARGS_JSON",
                      help='the tool\'s arguments as a JSON object, e.g. \'{"query": "cafe"}\'')
    call.set_defaults(run=run_call)
