"""The `sessions_history` agent tool: a Gateway page, sanitised and capped for a model.

Owns: `sessions_history` (behaviour.md §9.1 and §9.5, upstream `sessions-history-tool`),
its output object, the display form of the session key, and the visibility seam
(`HistoryAccess`). Must not touch: the Gateway read itself (`pages.read_history`), the
row checker (the visibility rules of behaviour.md §11 are `engine.agent_tools`'s; this module
only asks a `HistoryAccess` when the caller passes one).

The call, step by step:

1. The session: a `HistoryAccess` names it (`resolve_target`), or, without one, the
   key itself (`main` read as `agent:main:main`, its display alias). One resolution
   gives both the session that is checked and the session that is read, so a check
   can never pass for one session while the read opens another.
2. With a `HistoryAccess`, a denied key answers `{"status": "forbidden" | "error",
   "error": ...}` before anything is read. Without one, every key is visible: the
   caller decides (the engine's own command line and tests, which own their store).
3. A session the store does not hold: an unscoped name (`global`, `unknown`, `main`,
   the main alias) answers an empty page, as OpenClaw's Gateway reads an agent database
   without that session; an agent-scoped key answers `{"status": "error", "error":
   "No session found: <key>"}` (OpenClaw's words). The Gateway's request errors
   (`sessionId does not belong to sessionKey`, ...) are raised, as upstream's tool
   throws them.
4. The Gateway page (`read_history` with `limit`, `offset` or `messageId` and
   `sessionId`, its default 6 MiB budget); tool messages left out unless
   `includeTools`; every message through `sanitize.sanitize_message`.
5. The 80 KiB cap (`byte_caps`): around the anchor for an anchored read, else the
   oldest dropped; then the hard cap (the last item, or its placeholder).
6. The answer, members in this order: `sessionKey` (display form: `main` for
   `agent:main:main`), `messages`, `truncated` (messages dropped, text cut, or the hard
   cap), `droppedMessages`, `contentTruncated`, `contentRedacted` (always false: the seed
   preserves transcript text), `bytes` (of the `messages` array), then the pagination:
   anchored reads give `totalMessages` only; offset reads give `offset`, `nextOffset`
   (when `hasMore`; recomputed from the oldest message kept, `max(offset + 1,
   min(gatewayNext, T - oldestSeq + 1))`), `hasMore` and `totalMessages`; a tail read
   (no `offset`) gives none.

The display form of the key: with a `HistoryAccess`, the argument as the requester gave
it (`current` resolved to the requester's key), as OpenClaw shows it; without one, the
stored key with `agent:main:main` shown as `main`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from engine.errors import UnknownSession
from engine.history.byte_caps import (
    TOOL_MAX_BYTES,
    cap_items_around,
    cap_newest,
    hard_cap,
    message_seq,
)
from engine.history.pages import HistoryPage, read_history
from engine.history.request import (
    FOREIGN_SESSION_ID,
    HistoryRequest,
    HistoryRequestError,
    ToolHistoryRequest,
)
from engine.history.sanitize import sanitize_message, without_tool_messages
from engine.history.source import HistorySource
from engine.model import DEFAULT_AGENT_ID, agent_id_of, canonical_session_key

#: The display alias of the default agent's main session.
MAIN_ALIAS = "main"
MAIN_SESSION_KEY = f"agent:{DEFAULT_AGENT_ID}:main"

FORBIDDEN = "forbidden"
ERROR = "error"


@dataclass(frozen=True, slots=True)
class AccessDenial:
    """Why a caller may not read a session: `status` `forbidden` or `error`, and the
    message the tool answers with."""

    status: str
    error: str


@dataclass(frozen=True, slots=True)
class HistoryTarget:
    """The session one history call reads: `display` is the key the answer shows, `key`
    the stored key; `held` is false for a session the store cannot hold (another agent's
    `global`: the store keeps unscoped keys in the default agent's partition), which
    reads as absent; `unscoped` says the caller named it without an agent (`global`,
    `main`, ...), whose absence is an empty page rather than an error."""

    display: str
    key: str
    held: bool = True
    unscoped: bool = False


class HistoryAccess(Protocol):
    """The visibility seam: which session a caller's argument names, and whether the
    caller may read it.

    The row checker of behaviour.md §11 (the requester's visibility, sandboxing and the
    agent-to-agent policy, shared with `sessions_search`) implements this; history only
    asks it, and reads exactly the target it answers.
    """

    def resolve_target(self, session_key: str) -> HistoryTarget | AccessDenial:
        """The session `session_key` names for this caller, or why it may not read it."""
        ...


def display_session_key(session_key: str) -> str:
    """The key as the tool shows it: `main` for the default agent's main session.

    >>> display_session_key("agent:main:main"), display_session_key("agent:work:main")
    ('main', 'agent:work:main')
    """
    return MAIN_ALIAS if session_key == MAIN_SESSION_KEY else session_key


def stored_session_key(session_key: str) -> str:
    """The stored key a tool argument names (`main` is `agent:main:main`).

    >>> stored_session_key("main"), stored_session_key("agent:work:recall")
    ('agent:main:main', 'agent:work:recall')
    """
    return MAIN_SESSION_KEY if session_key == MAIN_ALIAS else session_key


def trusted_target(session_key: str) -> HistoryTarget:
    """The target of a caller without a `HistoryAccess`: the key itself (`main` is
    `agent:main:main`), shown in its display form.

    A key (`agent:...`) is read and shown in OpenClaw's stored form, as OpenClaw's tool
    shows it (`agent:work:Mixed` is `agent:work:mixed`).

    >>> trusted_target("main")
    HistoryTarget(display='main', key='agent:main:main', held=True, unscoped=True)
    >>> trusted_target("agent:Work:Mixed").display
    'agent:work:mixed'
    """
    if session_key.lower().startswith("agent:"):
        session_key = canonical_session_key(session_key)
    stored = stored_session_key(session_key)
    return HistoryTarget(display_session_key(stored), stored,
                         unscoped=session_key == MAIN_ALIAS or agent_id_of(stored) is None)


def absent_page(request: HistoryRequest) -> HistoryPage:
    """The page of a session the store does not hold, read by an unscoped name: no
    messages; an offset read still says its offset and that nothing follows; an anchored
    read with a `sessionId` names a window the key does not have."""
    if request.session_id is not None:
        raise HistoryRequestError(FOREIGN_SESSION_ID)
    if request.offset is not None and request.message_id is None:
        return HistoryPage(request.session_key, "", (), total_messages=0,
                           offset=request.offset, has_more=False)
    return HistoryPage(request.session_key, "", ())


def sessions_history(source: HistorySource, request: ToolHistoryRequest,
                     access: HistoryAccess | None = None) -> dict[str, Any]:
    """The tool's answer (the steps of the module docstring)."""
    if access is None:
        target = trusted_target(request.session_key)
    else:
        resolved = access.resolve_target(request.session_key)
        if isinstance(resolved, AccessDenial):
            return {"status": resolved.status, "error": resolved.error}
        target = resolved
    gateway_request = HistoryRequest(target.key, message_id=request.message_id,
                                     session_id=request.session_id, limit=request.limit,
                                     offset=request.offset)
    page = None
    if target.held:
        try:
            page = read_history(source, gateway_request)
        except UnknownSession:
            pass
    if page is None:
        if not target.unscoped:
            return {"status": ERROR, "error": f"No session found: {target.display}"}
        page = absent_page(gateway_request)
    selected = list(page.messages) if request.include_tools else without_tool_messages(
        page.messages)
    sanitized = [sanitize_message(message) for message in selected]
    content_truncated = any(entry.truncated for entry in sanitized)
    items = [entry.message for entry in sanitized]
    if request.message_id is not None:
        capped, total = cap_items_around(items, request.message_id, TOOL_MAX_BYTES)
    else:
        capped, total = cap_newest(items, TOOL_MAX_BYTES)
    dropped = len(capped) < len(selected)
    hardened = hard_cap(capped, total, TOOL_MAX_BYTES)
    answer: dict[str, Any] = {
        "sessionKey": target.display,
        "messages": list(hardened.items),
        "truncated": dropped or content_truncated or hardened.capped,
        "droppedMessages": dropped or hardened.capped,
        "contentTruncated": content_truncated,
        "contentRedacted": False,
        "bytes": hardened.bytes,
    }
    answer.update(pagination(page, request, list(hardened.items)))
    return answer


def pagination(page: HistoryPage, request: ToolHistoryRequest,
               messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The tool's pagination members (upstream `resolveSessionsHistoryPaginationMetadata`)."""
    if request.message_id is not None:
        return {} if page.total_messages is None else {"totalMessages": page.total_messages}
    if page.offset is None:
        return {}
    total = page.total_messages
    if total is None:
        return {"offset": page.offset}
    oldest = next((seq for seq in map(message_seq, messages) if seq is not None), None)
    following = page.next_offset
    if oldest is not None:
        following = max(page.offset + 1, min(following if following is not None else total,
                                              total - oldest + 1))
    has_more = following < total if following is not None else page.has_more
    value: dict[str, Any] = {"offset": page.offset}
    if has_more and following is not None:
        value["nextOffset"] = following
    if has_more is not None:
        value["hasMore"] = has_more
    value["totalMessages"] = total
    return value
