"""The Index panel: a term's postings per partition, a message's stored tokens, the segments.

Owns: the panel's three endpoints' parameters and data, each read under the explored
store's lock from the inspection wing (`engine.inspection.index_facts`): `postings`
(`term`, optional `agent`, `prefix`), `message` (`sessionId`, `messageId`) and `facts`
(generations, counts, segments of every partition). Must not touch: the index (read only,
through the wing) or HTTP (the application).
"""

from __future__ import annotations

from typing import Any

from engine.explorer.explored_store import ExploredStore
from engine.explorer.parameters import Parameter
from engine.inspection.index_facts import (
    MAX_TERM_TEXT,
    index_facts,
    message_tokens,
    term_postings,
)

POSTINGS_PARAMETERS = {
    "term": Parameter(required=True, max_length=MAX_TERM_TEXT),
    "agent": Parameter(max_length=256),
    "prefix": Parameter("flag"),
}
MESSAGE_PARAMETERS = {
    "sessionId": Parameter(required=True, max_length=1024),
    "messageId": Parameter(required=True, max_length=1024),
}


def postings(explored: ExploredStore, values: dict[str, Any]) -> dict[str, Any]:
    """The postings of `term`'s terms in each partition (or `agent`'s)."""
    return explored.read(lambda store: term_postings(
        store, values["term"], agent_id=values.get("agent"),
        prefix=bool(values.get("prefix", False))))


def message(explored: ExploredStore, values: dict[str, Any]) -> dict[str, Any]:
    """One message's index row and the tokens its text made."""
    return explored.read(lambda store: message_tokens(store, values["sessionId"],
                                                      values["messageId"]))


def facts(explored: ExploredStore, values: dict[str, Any]) -> dict[str, Any]:
    """The store's backend, path, and each partition's generations, counts and segments."""
    return explored.read(lambda store: {
        "store": explored.path, "backend": explored.backend,
        "compareBackend": explored.twin_backend,
        "sessionKeys": store.session_keys()[:1000], **index_facts(store)})
