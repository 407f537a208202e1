"""`session-search history`: reopen a conversation around a message, or read its tail.

Owns: the command's arguments and its readable transcript view. Must not touch: the
history rules (`engine.history`: which rows, which window, the byte budgets, cursors)
or storage (the store is opened through `engine.store.registry.open_store`, so every
backend reads alike).

`history --store DIR SESSION_KEY [--message-id ID] [--session-id ID] [--limit N]
[--offset N] [--cursor C] [--max-bytes N] [--include-tools] [--json]` runs the Gateway
read of `engine.history.pages.read_history` (`chat.history`): the newest rows of the
current view, `--offset` rows back, the window around `--message-id` (in the retained
window `--session-id` when given), or the page a `--cursor` continues. Tool messages
are left out unless `--include-tools`. Parameter errors are the product's wording
(`offset and messageId cannot be used together`, ...), one line, exit status 2.

Output: `--json` prints the page (`HistoryPage.to_json()`, after the tool-message
filter); `--jsonl` prints its messages one a line (JSON Lines), and the lines that say
what the page is and how to go on as notes on standard error. Readable: one table row per message: its display ordinal, its time (ISO-8601,
UTC), its role and its text on one line (text blocks joined; other blocks shown as
`[type]`); resets, compactions and displayed custom messages are drawn as separator
rows (`──── session reset ────`). Then one line says what the page is (which rows of
how many, the current view or a retained window's closed interval) and how to go on
(`--offset`, or the `--cursor` to pass back).
"""

from __future__ import annotations

import argparse
from typing import Any

from engine import HistoryPage
from engine.cli.commands import add_command, add_json_arguments, add_store_argument, note, warn
from engine.cli.json_output import print_json, print_json_lines
from engine.cli.output import Cell, Column, Output, format_time, one_line, open_output
from engine.inspection import history_rows as kinds
from engine.inspection.history_rows import CURRENT, message_seq, without_tool_messages
from engine.store.registry import open_store

#: What a separator row says for each boundary kind.
SEPARATOR_TITLES = {kinds.RESET: "session reset", kinds.COMPACTION: "compaction",
                    kinds.CUSTOM_MESSAGE: "notice"}
SEPARATOR = "────"
#: The content blocks whose text is shown as it is.
TEXT_BLOCKS = ("text", "input_text", "output_text")

COLUMNS = (Column("#", align="right"), Column("time"), Column("role"), Column("message"))


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `history` command."""
    parser = add_command(
        subparsers, "history",
        description="Show the history of SESSION_KEY in the store at DIR, as an agent's "
        "sessions_history reopens it: without --message-id the newest rows of the current "
        "view (kept pre-reset rows, the reset, everything after it), with --message-id "
        "the rows around that message (with --session-id, in that retained window: the "
        "conversation as it was before its reset). Resets and compactions are drawn as "
        "separators. The rules are docs/rules.md.",
        examples=["session-search history --store demo agent:work:recall",
                  "session-search history --store demo agent:work:recall --message-id old --limit 1",
                  "session-search history --store demo agent:work:recall --session-id archived-session --message-id archived-answer",
                  "session-search history --store demo agent:main:logical-reset --limit 3 --offset 3",
                  "session-search history --store demo agent:main:logical-reset --json --max-bytes 2048",
                  "session-search history --store demo agent:main:logical-reset --jsonl | jq -c .role"],
    )
    add_store_argument(parser)
    add_json_arguments(parser, records="the rows (messages)")
    parser.add_argument("session_key", metavar="SESSION_KEY", help="the session to read")
    parser.add_argument("--message-id", metavar="ID", help="read the rows around this message")
    parser.add_argument("--session-id", metavar="ID",
                        help="the window that holds --message-id (a retained one)")
    parser.add_argument("--limit", type=int, metavar="N", help="rows per page, 1..1000 (default 200)")
    parser.add_argument("--offset", type=int, metavar="N",
                        help="rows back from the newest (not with --message-id)")
    parser.add_argument("--cursor", metavar="C", help="continue from a cursor a page printed")
    parser.add_argument("--max-bytes", type=int, metavar="N",
                        help="byte budget of the page, at least 1024 (default and ceiling 6 MiB)")
    parser.add_argument("--include-tools", action="store_true", help="show tool messages too")
    parser.set_defaults(run=run_history)


def run_history(args: argparse.Namespace) -> int:
    """`session-search history`."""
    from engine import HistoryRequest, read_history

    request = HistoryRequest(args.session_key, message_id=args.message_id,
                             session_id=args.session_id, limit=args.limit, offset=args.offset,
                             cursor=args.cursor, max_bytes=args.max_bytes)
    backend = open_store(args.store, "history", warn=warn)
    try:
        page = read_history(backend, request)
    finally:
        backend.close()
    document = page.to_json()
    if not args.include_tools:
        document["messages"] = without_tool_messages(document["messages"])
    if args.json:
        print_json(document)
    elif args.jsonl:  # one row a line; what the page is and how to go on: notes
        print_json_lines(document["messages"])
        for notice in page_notices(page, request.message_id):
            note(notice)
    else:
        print_page(open_output(colour=args.color), page, document["messages"], request.message_id)
    return 0


def print_page(output: Output, page: HistoryPage, messages: list[dict[str, Any]],
               message_id: str | None) -> None:
    """The readable view of a page: a table of its `messages`, then what the page is."""
    if messages:
        output.table(COLUMNS, [message_row(message) for message in messages])
    for line in page_notices(page, message_id):
        output.line(line)


def message_row(message: dict[str, Any]) -> list[Cell]:
    """One table row: ordinal, time, role, text (a separator for a boundary)."""
    metadata = message.get("__openclaw") if isinstance(message.get("__openclaw"), dict) else {}
    seq = metadata.get("seq")
    time = message.get("timestamp")
    shown_time = format_time(time) if isinstance(time, (int, float)) else "-"
    kind = metadata.get("kind")
    if kind in SEPARATOR_TITLES:
        title = SEPARATOR_TITLES[kind]
        detail = message_text(message) if kind != kinds.RESET else ""
        if kind == kinds.RESET and metadata.get("firstKeptEntryId"):
            detail = f"kept from {metadata['firstKeptEntryId']}"
        text = f"{SEPARATOR} {title}{': ' + detail if detail else ''} {SEPARATOR}"
        return [str(seq or ""), shown_time, title.split()[-1], one_line(text)]
    role = message.get("role") if isinstance(message.get("role"), str) else "?"
    return [str(seq or ""), shown_time, role, one_line(message_text(message))]


def message_text(message: dict[str, Any]) -> str:
    """The text a message shows: its string content, else its text blocks joined with
    the other blocks named (`[toolCall]`, `[image]`).

    >>> message_text({"content": [{"type": "text", "text": "a"}, {"type": "image"}]})
    'a [image]'
    >>> message_text({"content": "plain", "text": "ignored"})
    'plain'
    """
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts = []
    if isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") in TEXT_BLOCKS and isinstance(block.get("text"), str):
                parts.append(block["text"])
            else:
                parts.append(f"[{block.get('type', 'block')}]")
    if not parts and isinstance(message.get("text"), str):
        parts.append(message["text"])
    return " ".join(parts)


def page_notices(page: HistoryPage, message_id: str | None) -> list[str]:
    """What the page is and how to go on, one line each.

    >>> from engine import HistoryPage
    >>> page_notices(HistoryPage("k", "s", ()), "m9")
    ["no message 'm9' in the history of window s (missing, or not on its active branch)"]
    >>> page_notices(HistoryPage("k", "s", ({"__openclaw": {"seq": 2}},), "current", 3,
    ...                          next_offset=2, has_more=True), None)
    ['row 2 of 3 in the current view of window s', 'older rows: --offset 2']
    """
    if page.window_reset:
        return [("the window moved since the cursor was made (a new window or a new "
                "reset): read the tail again")]
    if message_id is not None and page.scope is None:
        return [(f"no message {message_id!r} in the history of window {page.session_id} "
                "(missing, or not on its active branch)")]
    seqs = [seq for seq in (message_seq(message) for message in page.messages)
            if seq is not None]
    window = f"{'retained ' if page.retained else ''}window {page.session_id}"
    where = (f"the {'' if page.retained else 'current '}view of {window}"
             if page.scope == CURRENT else f"the closed interval (before its reset) of {window}")
    notices = []
    if page.total_messages is not None:
        if not seqs:
            notices.append(f"no rows shown ({page.total_messages} in {where})")
        else:
            span = f"row {seqs[0]}" if seqs[0] == seqs[-1] else f"rows {seqs[0]}-{seqs[-1]}"
            notices.append(f"{span} of {page.total_messages} in {where}")
    if page.next_offset is not None:
        notices.append(f"older rows: --offset {page.next_offset}")
    elif page.older_cursor is not None:
        notices.append(f"older rows: --cursor {page.older_cursor}")
    if page.newer_cursor is not None:
        notices.append(f"newer rows: --cursor {page.newer_cursor}")
    return notices
