"""One MCP tool call answered: run the agent tool as the server's requester, and say
whether its answer is an error.

Owns: which engine function each tool name runs (`engine.sessions_search`,
`engine.sessions_history` under `engine.RequesterHistoryAccess`, as `session-search
call` and `serve` run them), the text of an answer, and which answers are tool errors.
Must not touch: the tools' rules, visibility or wording (`engine.agent_tools`), where the
store comes from (`engine.mcp_server.sources`), or the SDK (`engine.mcp_server.server`),
so that a call is answered, and tested, without it.

The answer's text is the tool's JSON exactly as `session-search call` prints it (two
spaces of indent, keys in the tool's order, non-ASCII kept, a lone surrogate written as
its `\\uXXXX` escape), without the final newline: OpenClaw hands a model its tools'
answers as that text (`JSON.stringify(answer, null, 2)`).

Errors (the MCP result's `isError`): an argument the tool refuses (an empty or
over-long query, a limit of 26, `offset` with `messageId`, an unknown argument: the
tool's `InputError`, with the product's wording), a spent time budget (`sessions_search
timed out: ...`, with the advice to retry with a sessionKey), any other refusal of the
engine (a store that cannot be read): the text is the error's message alone. An answer
the tool gives as a refusal (`{"status": "forbidden" | "error", "error": ...}`: a
session the requester may not see, a key the store does not hold) is the tool's JSON
as usual, marked as an error, so that a client shows it as one. Anything else is a bug
of the engine: its traceback goes to standard error, and the call is answered as an
error naming the exception (the server goes on).
"""

from __future__ import annotations

import json
import re
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from engine import (
    Refreshable,
    Requester,
    RequesterHistoryAccess,
    SearchBackend,
    ToolConfig,
    ToolHistoryRequest,
    TranscriptReader,
    require_capability,
    sessions_history,
    sessions_search,
)
from engine.agent_tools.budgets import ReaderGate, TimeBudgets
from engine.errors import EngineError
from engine.mcp_server.tools import SESSIONS_HISTORY, SESSIONS_SEARCH, TOOLS_BY_NAME

#: The `status` of an answer by which the tool refuses (behaviour.md §3.3).
REFUSAL_STATUSES = frozenset({"forbidden", "error"})

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True, slots=True)
class ToolContext:
    """What every call of one server shares: who calls (`--requester`), the tools'
    configuration (`--config`), their time budgets and the one reader gate."""

    requester: Requester
    config: ToolConfig = field(default_factory=ToolConfig)
    budgets: TimeBudgets = field(default_factory=TimeBudgets)
    gate: ReaderGate = field(default_factory=ReaderGate)


@dataclass(frozen=True, slots=True)
class ToolAnswer:
    """A call's answer: its text and whether it is an error."""

    text: str
    is_error: bool = False


class UnknownTool(LookupError):
    """A call names no tool of this server (a protocol error, not a tool's answer)."""


def answer_text(answer: Any) -> str:
    """The tool's JSON as `session-search call` prints it, without the final newline.

    >>> print(answer_text({"results": [], "note": "é" + chr(0xD800)}))
    {
      "results": [],
      "note": "é\\ud800"
    }
    """
    text = json.dumps(answer, ensure_ascii=False, indent=2)
    return _LONE_SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def is_refusal(answer: Any) -> bool:
    """Whether a tool's answer is its refusal, `{"status": "forbidden" | "error", ...}`.

    >>> is_refusal({"status": "error", "error": "No session found: agent:main:x"})
    True
    >>> is_refusal({"results": []})
    False
    """
    return isinstance(answer, dict) and answer.get("status") in REFUSAL_STATUSES


def run_tool(store: SearchBackend, name: str, arguments: Any, context: ToolContext) -> Any:
    """The answer of tool `name` to `arguments` (refusals raise the engine's errors;
    `UnknownTool` for a name the server does not list)."""
    if name == SESSIONS_SEARCH.name:
        return sessions_search(store, context.requester, arguments, config=context.config,
                               budgets=context.budgets, gate=context.gate)
    if name == SESSIONS_HISTORY.name:
        reader = require_capability(store, TranscriptReader, name)
        if isinstance(reader, Refreshable):
            reader.refresh()
        request = ToolHistoryRequest.from_json(arguments)
        access = RequesterHistoryAccess.of(reader, context.requester, context.config)
        return sessions_history(reader, request, access)
    raise UnknownTool(name)


def answer_call(current_store: Callable[[], SearchBackend], name: str, arguments: Any,
                context: ToolContext) -> ToolAnswer:
    """The MCP answer to one call (the module docstring says which are errors);
    `current_store()` gives the store, brought up to date with its source (a failure to
    is the call's error). `UnknownTool` for a name the server does not list."""
    if name not in TOOLS_BY_NAME:
        raise UnknownTool(name)
    try:
        answer = run_tool(current_store(), name, arguments, context)
    except EngineError as error:
        return ToolAnswer(str(error), is_error=True)
    except Exception as error:  # noqa: BLE001 - a bug: reported, and the server serves on
        traceback.print_exc(file=sys.stderr)
        return ToolAnswer(f"internal error of session-search: {type(error).__name__}: {error}",
                          is_error=True)
    return ToolAnswer(answer_text(answer), is_error=is_refusal(answer))
