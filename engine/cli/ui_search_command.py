"""`session-search ui-search`: search a store as the Control UI's command palette does.

Owns: the command's arguments (`ui-search --store DIR [--config FILE] [--limit N] QUERY
[--json]`) and the readable, grouped listing of the answer. Must not touch: what the
search does (`engine.agent_tools.ui_search`), its scope (`engine.agent_tools.palette_scope`) or the
answer's JSON shape (`--json` prints `ui_search`'s answer as it is).

The listing: a line saying what was found, then the Sessions group (sessions whose title
or key or sessionId matched) and the Messages group (other sessions whose transcript
matched, one excerpt each), each a table, then the answer's notices, one a line, with
the palette's text. In a pipe every row is one line with every field in its column; on a
terminal the session's title, key and group share a cell, and the excerpt keeps the rest
of the width with its matched words coloured (`engine.cli.highlight`, in prefix mode).
A query shorter than 2 characters is not an error: it says so and exits 0.
"""

from __future__ import annotations

import argparse
from typing import Any

from engine.cli.commands import add_command, add_store_argument, warn
from engine.cli.json_output import print_json
from engine.cli.output import (
    Cell,
    Column,
    Marked,
    Output,
    format_score,
    format_time,
    one_line,
    open_output,
)
from engine.errors import UsageError
from engine.inspection.text_matches import text_matches
from engine.model import SearchRequest

PLAIN_SESSION_COLUMNS = (Column("match"), Column("sessionKey"), Column("sessionId"),
                         Column("kind"), Column("group"), Column("title"))
TERMINAL_SESSION_COLUMNS = (Column("title\nsession key"), Column("group\nmatch"))
PLAIN_MESSAGE_COLUMNS = (Column("score", align="right"), Column("timestamp"),
                         Column("sessionKey"), Column("messageId"), Column("role"),
                         Column("title"), Column("excerpt"))
TERMINAL_MESSAGE_COLUMNS = (Column("score", align="right"),
                            Column("title\nsession key\nmessage id"), Column("excerpt"))


def _text(value: Any) -> str:
    """A cell for a field that may be missing (`-`), on one line."""
    return "-" if value is None or value == "" else one_line(str(value))


def summary_line(answer: dict[str, Any]) -> str:
    """What the answer found, in one line.

    >>> summary_line({"query": "deploy", "searched": True, "sessions": [{}], "messages": []})
    'ui-search "deploy": 1 session by title or identifier, 0 sessions by message'
    >>> summary_line({"query": "d", "searched": False, "sessions": [], "messages": []})
    'ui-search "d": type at least 2 characters to search'
    """
    if not answer["searched"]:
        return f'ui-search "{one_line(answer["query"])}": type at least 2 characters to search'
    sessions, messages = len(answer["sessions"]), len(answer["messages"])
    return (f'ui-search "{one_line(answer["query"])}": {sessions} session'
            f'{"" if sessions == 1 else "s"} by title or identifier, {messages} session'
            f'{"" if messages == 1 else "s"} by message')


def session_cells(entry: dict[str, Any], output: Output) -> list[Cell]:
    """One row of the Sessions table, in the layout of `output`."""
    if output.terminal:
        return [f"{_text(entry['title'])}\n{entry['sessionKey']}",
                f"{_text(entry['group'])}\n{entry['match']}"]
    return [entry["match"], entry["sessionKey"], entry["sessionId"], entry["kind"],
            _text(entry["group"]), _text(entry["title"])]


def message_cells(entry: dict[str, Any], request: SearchRequest, output: Output) -> list[Cell]:
    """One row of the Messages table, in the layout of `output`."""
    hit = entry["hit"]
    text = one_line(hit["excerpt"])  # the palette's JSON carries no spans: find them
    excerpt: Cell = Marked(text, text_matches(text, request.query, match=request.match)) \
        if output.marks_shown else text
    if output.terminal:
        return [format_score(hit["score"]),
                f"{_text(entry['title'])}\n{entry['sessionKey']}\n{hit['messageId']}", excerpt]
    return [format_score(hit["score"]), format_time(hit["timestamp"]), entry["sessionKey"],
            hit["messageId"], hit["role"], _text(entry["title"]), excerpt]


def print_answer(output: Output, answer: dict[str, Any]) -> None:
    """The grouped listing of the module docstring."""
    output.line(summary_line(answer))
    if answer["sessions"]:
        output.line("")
        output.line("Sessions")
        columns = TERMINAL_SESSION_COLUMNS if output.terminal else PLAIN_SESSION_COLUMNS
        output.table(columns, [session_cells(entry, output) for entry in answer["sessions"]])
    if answer["messages"]:
        output.line("")
        output.line("Messages")
        request = SearchRequest(answer["query"], match="prefix")
        columns = TERMINAL_MESSAGE_COLUMNS if output.terminal else PLAIN_MESSAGE_COLUMNS
        output.table(columns, [message_cells(entry, request, output)
                               for entry in answer["messages"]])
    if answer["notices"]:
        output.line("")
    for notice in answer["notices"]:
        output.line(notice)


def run_ui_search(args: argparse.Namespace) -> int:
    """`session-search ui-search`."""
    from engine.agent_tools.tool_config import ToolConfig, load_tool_config
    from engine.agent_tools.ui_search import MAX_LIMIT, ui_search
    from engine.store.registry import open_store

    if not 1 <= args.limit <= MAX_LIMIT:
        raise UsageError(f"--limit must be between 1 and {MAX_LIMIT} (got {args.limit})")
    config = load_tool_config(args.config) if args.config else ToolConfig()
    backend = open_store(args.store, "ui-search", warn=warn)
    try:
        answer = ui_search(backend, " ".join(args.query), config, args.limit)
    finally:
        backend.close()
    if args.json:
        print_json(answer)
    else:
        print_answer(open_output(colour=args.color), answer)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    command = add_command(
        subparsers, "ui-search",
        description="Search the store at DIR as the Control UI's command palette does: "
        "session titles first (punctuation and whitespace separate words, the last word "
        "may be unfinished; a session key or sessionId matches literally), then the "
        "messages of the other sessions (every word whole but the last, a prefix), one "
        "excerpt per session. The palette's scope: the configured agents' chats (--config, "
        "OpenClaw's openclaw.json shape; without agents listed, every agent's) and "
        "agent-created conversations in a custom sidebar group; never subagent runs, cron, "
        "system or dock sessions, global or unknown, incognito or archived ones. QUERY "
        "needs at least 2 characters. The rules are docs/rules.md.",
        examples=[
            "session-search ui-search --store demo per session communi",
            "session-search ui-search --store demo --config openclaw.json --json deploy",
        ],
    )
    add_store_argument(command)
    command.add_argument("--config", metavar="FILE",
                         help="OpenClaw's openclaw.json shape (JSON or TOML): the agents")
    command.add_argument("--limit", type=int, default=25,
                         help="at most this many sessions per group, 1..25 (default 25)")
    command.add_argument("--json", action="store_true", help="print the answer as JSON")
    command.add_argument("query", nargs="+", metavar="QUERY",
                         help="what the palette's search box holds (words joined by spaces)")
    command.set_defaults(run=run_ui_search)
