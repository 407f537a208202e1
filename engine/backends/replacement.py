"""Replacing a window's transcript: the synchronous-versus-deferred rule of behaviour.md §8.2.

Owns: how big a replacement is (its events, and the bytes of their JSON texts) and the
decision every backend takes with it: rebuild the window's index in the transaction that
replaces it, or mark the window dirty and leave the rebuild to reconcile. Must not touch:
storage, rows or the index (each backend's transaction applies the decision: the
reference backend through the log's `replace` record, the SQLite backend in its rows),
what is searchable (`engine.transcript.projection`).

The rule: a rebuild runs at once when the new transcript has at most
`EngineConfig.sync_rebuild_max_events` events (upstream `SYNC_REBUILD_MAX_ROWS = 4000`)
and at most `EngineConfig.sync_rebuild_max_bytes` bytes (`SYNC_REBUILD_MAX_BYTES =
4 MiB`). Otherwise the window's index state gets `needs_rebuild`: its old rows stay but
are hidden from search (windows needing a rebuild are excluded, §5.3), `indexing` is
true (§8.4), and reconcile rebuilds the window from its new active path.

Bytes are measured as upstream measures a transcript row (`event_utf8_bytes`, the
UTF-8 size of the JSON text `JSON.stringify` writes): per event, the UTF-8 bytes of its
compact JSON text (no spaces, non-ASCII characters as themselves, a lone surrogate
written as its six-byte escape, as `JSON.stringify` does), summed. Numbers are spelled
as Python spells them (`1.0`, where JavaScript writes `1`), a difference of a byte or
two per number that no limit this size notices. Both backends call `rebuild_is_deferred`
with the same events and config, so they decide alike.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from engine.config import EngineConfig

_SURROGATE = re.compile("[\ud800-\udfff]")


def event_json_bytes(event: dict[str, Any]) -> int:
    """The UTF-8 bytes of an event's compact JSON text.

    >>> event_json_bytes({"type": "message", "text": "café"})
    33
    >>> event_json_bytes({"t": "\\ud800"})  # {"t":"\\ud800"}: the escape is 6 bytes
    14
    """
    text = json.dumps(event, ensure_ascii=False, separators=(",", ":"))
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError:  # lone surrogates: JSON.stringify escapes them
        return len(_SURROGATE.sub("\\\\u0000", text).encode("utf-8"))


def transcript_bytes(events: Iterable[dict[str, Any]], limit: int | None = None) -> int:
    """The bytes of a transcript (`event_json_bytes` summed); with `limit`, the sum stops
    as soon as it exceeds `limit` (the decision needs no more).

    >>> transcript_bytes([{"a": 1}, {"b": "xyz"}])
    18
    >>> transcript_bytes([{"a": 1}] * 1000, limit=20)
    21
    """
    total = 0
    for event in events:
        total += event_json_bytes(event)
        if limit is not None and total > limit:
            break
    return total


def rebuild_is_deferred(events: list[dict[str, Any]], config: EngineConfig) -> bool:
    """Whether the replacement `events` is too large to reindex in its transaction.

    >>> small = EngineConfig(sync_rebuild_max_events=2, sync_rebuild_max_bytes=100)
    >>> rebuild_is_deferred([{"a": 1}, {"a": 2}], small)
    False
    >>> rebuild_is_deferred([{"a": 1}] * 3, small), rebuild_is_deferred([{"a": "x" * 99}], small)
    (True, True)
    """
    if len(events) > config.sync_rebuild_max_events:
        return True
    limit = config.sync_rebuild_max_bytes
    return transcript_bytes(events, limit) > limit
