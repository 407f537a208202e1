"""The History panel: the conversation around a hit, with the anchors and cursors of the tool.

Owns: the panel's data: a `chat.history` page (`engine.read_history`, the read the agent
tools' history and `session-search history` make) for the parameters given (a key, an
anchor `messageId` and its window `sessionId`, `limit`, `offset`, a `cursor` the page
gave), each row with its kind (a message, or a boundary drawn as such: a reset, a
compaction, a displayed notice) and whether it is the anchor; what the page is (the
current view of its window, or a retained window's closed interval, the conversation as
it was before its reset), how to page on (`olderCursor`, `newerCursor`, `nextOffset`),
and the windows of the key (current and retained). Must not touch: which rows a page
holds, cursors or byte caps (`engine.history`), or HTTP (the application).
"""

from __future__ import annotations

from typing import Any

from engine import HistoryPage, read_history
from engine.explorer.explored_store import ExploredStore
from engine.explorer.parameters import history_request
from engine.inspection import history_rows as kinds
from engine.inspection.history_rows import CURRENT, message_seq, without_tool_messages
from engine.store.partitioned import PartitionedStore

#: A boundary row's kind, as the panel names it.
BOUNDARY_KINDS = {kinds.RESET: "reset", kinds.COMPACTION: "compaction",
                  kinds.CUSTOM_MESSAGE: "notice"}


def history(explored: ExploredStore, values: dict[str, Any]) -> dict[str, Any]:
    """The History panel's data (module docstring)."""
    request = history_request(values)
    def work(store: PartitionedStore) -> tuple[HistoryPage, list[dict[str, Any]]]:
        page = read_history(store, request)
        return page, [{"sessionId": window.session_id, "current": window.current,
                       "reason": window.reason, "archived": window.archived}
                      for window in store.windows_of(page.session_key)]

    page, windows = explored.read(work)
    document = page.to_json()
    if not values.get("includeTools"):
        document["messages"] = without_tool_messages(document["messages"])
    rows = [row(message, request.message_id) for message in document["messages"]]
    return {"request": request.to_json(), "page": document, "rows": rows,
            "view": view_line(page, request.message_id), "windows": windows,
            "scope": page.scope, "retained": page.retained}


def row(message: dict[str, Any], anchor: str | None) -> dict[str, Any]:
    """One row as the panel draws it: its seq, kind, id, whether it is the anchor.

    >>> row({"role": "user", "__openclaw": {"id": "m1", "seq": 3}}, "m1")
    {'seq': 3, 'kind': 'message', 'id': 'm1', 'anchor': True}
    >>> row({"role": "system", "__openclaw": {"kind": "reset", "id": "r", "seq": 4}}, None)["kind"]
    'reset'
    """
    metadata = message.get("__openclaw")
    metadata = metadata if isinstance(metadata, dict) else {}
    identifier = metadata.get("id")
    return {"seq": message_seq(message), "kind": BOUNDARY_KINDS.get(metadata.get("kind"),
                                                                    "message"),
            "id": identifier, "anchor": anchor is not None and identifier == anchor}


def view_line(page: Any, anchor: str | None) -> str:
    """What the page is, in one sentence."""
    if page.window_reset:
        return ("the window moved since the cursor was made (a new window or a new reset): "
                "read the tail again")
    if anchor is not None and page.scope is None:
        return (f"no message {anchor!r} in the history of window {page.session_id} "
                "(missing, or not on its active branch)")
    if page.scope == CURRENT:
        which = "retained window" if page.retained else "window"
        return (f"the current view of {which} {page.session_id}: what a reader sees now "
                "(after a reset: the rows it kept, the reset, and everything after it)")
    return (f"the closed interval of {'retained ' if page.retained else ''}window "
            f"{page.session_id}: the conversation as it was before its reset (no row "
            "joins a closed interval)")
