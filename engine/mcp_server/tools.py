"""What the MCP server lists: the two agent tools' names, descriptions and input schemas.

Owns: the text a model reads before it calls a tool (each tool's description, each
argument's description) and the JSON Schema of its arguments, as plain values. Must
not touch: what a call does or which arguments it accepts (`engine.agent_tools` checks
them, with the product's wording), or the SDK (`engine.mcp_server.server` turns these
values into its types), so that the values are read and tested without it.

The words are the seed's (`/work/shared/spec/seed-session-search.txt`) and OpenClaw's
tool descriptions (behaviour.md §3.4 and §9.1): what a hit holds, how to reopen it with
`sessions_history`, that a timeout does not mean no match exists, the bounds. The
schemas say what the tools accept; the server does not check arguments against them
(the tools do, so a refusal carries the product's message, not a schema validator's).

>>> [tool.name for tool in TOOLS]
['sessions_search', 'sessions_history']
>>> SESSIONS_SEARCH.input_schema["required"], SESSIONS_HISTORY.input_schema["required"]
(['query'], ['sessionKey'])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.agent_tools.sessions_search import DEFAULT_LIMIT, MAX_LIMIT, MAX_QUERY_UNITS

#: The most messages one `sessions_history` page holds (`CHAT_HISTORY_MAX_ENTRIES`,
#: behaviour.md §9.1; the tool refuses more with its own message).
MAX_HISTORY_LIMIT = 1000


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    """One tool as `tools/list` shows it: its name, a title for people, the description a
    model reads, and the JSON Schema of its arguments."""

    name: str
    title: str
    description: str
    input_schema: dict[str, Any]


SESSIONS_SEARCH = ToolDefinition(
    name="sessions_search",
    title="Search past sessions",
    description=(
        "Search visible past sessions for matching user and assistant text. Each result "
        "includes a sessionKey, timestamp, role, and a short matching excerpt (snippet), "
        "with its score, sessionId and messageId. Pass the returned sessionKey, messageId, "
        "and sessionId together to sessions_history to reopen the matched context, "
        "including retained history from before a session reset. Query words are literal "
        "text: exact words and phrases, no prefixes; punctuation does not become query "
        "syntax. Queries must contain text and cannot exceed 4,096 UTF-16 code units. A "
        f"search returns at most {MAX_LIMIT} hits (default {DEFAULT_LIMIT}), each excerpt "
        "at most 300 UTF-16 code units, within a 32 KiB result budget; more matches than "
        "the limit is normal, refine the query to narrow them. indexing: true means search "
        "completeness could not be confirmed: the matches are usable but may be "
        "incomplete; retry shortly. If it times out, retry sessions_search with a "
        "sessionKey to search one session or more specific query keywords. A timeout does "
        "not mean that no matching conversation exists."),
    input_schema={
        "type": "object",
        "properties": {
            "query": {
                "type": "string", "pattern": "\\S", "maxLength": MAX_QUERY_UNITS,
                "description": "Required non-empty keywords to match in past user and "
                               "assistant text."},
            "sessionKey": {
                "type": "string",
                "description": "Search only this session: a sessionKey from a result, "
                               "`current` (the calling session) or `main`. Omit it to "
                               "search every session you may see."},
            "limit": {
                "type": "integer", "minimum": 1, "maximum": MAX_LIMIT,
                "description": f"How many hits to return, 1 to {MAX_LIMIT} (default "
                               f"{DEFAULT_LIMIT})."},
        },
        "required": ["query"],
        "additionalProperties": False,
    },
)

SESSIONS_HISTORY = ToolDefinition(
    name="sessions_history",
    title="Read a session's history",
    description=(
        "Read sanitized visible-session history. Before reply/debug/resume. Supports "
        "limit, offset, search-result sessionId/messageId anchors, and tool messages. "
        "Without messageId, history returns the newest reset-relative tail. To reopen a "
        "sessions_search result, pass its sessionKey, messageId and sessionId together: "
        "the page then holds the messages around that message, including retained "
        "history from before a session reset. Anchored reads use limit to bound the "
        "surrounding messages; omit offset when using an anchor. Answers are capped at "
        "80 KiB: large transcript windows may return fewer messages (truncated, "
        "droppedMessages say so)."),
    input_schema={
        "type": "object",
        "properties": {
            "sessionKey": {
                "type": "string", "minLength": 1,
                "description": "The session to read: a sessionKey from sessions_search, "
                               "`current` or `main`."},
            "limit": {
                "type": "integer", "minimum": 1, "maximum": MAX_HISTORY_LIMIT,
                "description": "How many messages to return; with messageId, how many "
                               "around it."},
            "offset": {
                "type": "integer", "minimum": 0,
                "description": "Messages to skip back from the newest, to page through "
                               "the tail (nextOffset gives the next page). Cannot be used "
                               "with messageId: omit it when using an anchor."},
            "messageId": {
                "type": "string",
                "description": "Open the history around this message: a sessions_search "
                               "result's messageId."},
            "sessionId": {
                "type": "string",
                "description": "The transcript window that holds messageId: the "
                               "sessions_search result's sessionId. Requires messageId; "
                               "omit for the latest tail."},
            "includeTools": {
                "type": "boolean",
                "description": "Also return tool calls and tool results (default false)."},
        },
        "required": ["sessionKey"],
        "additionalProperties": False,
    },
)

#: The tools, in the order `tools/list` gives them.
TOOLS: tuple[ToolDefinition, ...] = (SESSIONS_SEARCH, SESSIONS_HISTORY)

TOOLS_BY_NAME: dict[str, ToolDefinition] = {tool.name: tool for tool in TOOLS}
