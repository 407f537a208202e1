"""The `sessions.jsonl` record: one session window and its session's metadata, as JSON.

Owns: the mapping between a window record (camelCase JSON, documented in
`corpora/README.md`) and `engine.model.SessionWindow`, with a clear reason for every
wrong field. Must not touch: files (the caller gives one parsed object and its place) or
the store.

Fields (only the first two are required):

| JSON field         | type                     | default     | `SessionWindow` field   |
|--------------------|--------------------------|-------------|-------------------------|
| `sessionId`        | string                   | required    | `session_id`            |
| `sessionKey`       | string                   | required    | `session_key`           |
| `previousSessionId`| string or null           | null        | `previous_session_id`   |
| `reason`           | one of the 8 reasons     | `"initial"` | `reason`                |
| `current`          | boolean                  | true        | `current`               |
| `title`            | string or null           | null        | `title`                 |
| `kind`             | chat/subagent/cron/system/dock | `"chat"` | `kind`              |
| `spawnedBy`        | session key or null      | null        | `spawned_by`            |
| `ownerSessionKey`  | session key or null      | null        | `owner_session_key`     |
| `parentSessionKey` | session key or null      | null        | `parent_session_key`    |
| `incognito`        | boolean                  | false       | `incognito`             |
| `archived`         | boolean                  | false       | `archived`              |
| `group`            | string or null           | null        | `group` (sidebar group) |
| `createdAt`        | epoch ms or ISO string   | null        | `created_at` (epoch ms) |

Any other field is kept in `SessionWindow.extra`, as it came.
"""

from __future__ import annotations

from typing import Any

from engine.model import SessionWindow, canonical_window
from engine.transcript.projection import parse_js_date
from engine.transcript.validation import created_at_problem
from engine.transcript.windows import window_problem

#: JSON field -> (SessionWindow field, expected type name).
WINDOW_FIELDS: dict[str, tuple[str, str]] = {
    "sessionId": ("session_id", "string"),
    "sessionKey": ("session_key", "string"),
    "previousSessionId": ("previous_session_id", "optional string"),
    "reason": ("reason", "string"),
    "current": ("current", "boolean"),
    "title": ("title", "optional string"),
    "kind": ("kind", "string"),
    "spawnedBy": ("spawned_by", "optional string"),
    "ownerSessionKey": ("owner_session_key", "optional string"),
    "parentSessionKey": ("parent_session_key", "optional string"),
    "incognito": ("incognito", "boolean"),
    "archived": ("archived", "boolean"),
    "group": ("group", "optional string"),
    "createdAt": ("created_at", "time"),
}

REQUIRED_FIELDS = ("sessionId", "sessionKey")


def window_from_record(record: dict[str, Any]) -> SessionWindow:
    """Build a `SessionWindow` from one record, or raise `ValueError(reason)`.

    >>> window_from_record({"sessionId": "s1", "sessionKey": "global", "tag": 1})
    SessionWindow(session_id='s1', session_key='global', previous_session_id=None, reason='initial', current=True, title=None, kind='chat', spawned_by=None, owner_session_key=None, parent_session_key=None, incognito=False, archived=False, group=None, created_at=None, extra={'tag': 1})
    >>> window_from_record({"sessionId": "s1", "sessionKey": "global", "current": "yes"})
    Traceback (most recent call last):
    ...
    ValueError: "current" must be a boolean
    """
    for name in REQUIRED_FIELDS:
        if name not in record:
            raise ValueError(f'missing "{name}"')
    values: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for name, value in record.items():
        if name not in WINDOW_FIELDS:
            extra[name] = value
            continue
        attribute, expected = WINDOW_FIELDS[name]
        values[attribute] = _checked(name, value, expected)
    # Keys are stored as OpenClaw stores them (`engine.model.canonical_session_key`).
    window = canonical_window(SessionWindow(**values, extra=extra))
    problem = window_problem(window)
    if problem is not None:
        raise ValueError(problem)
    return window


def _checked(name: str, value: Any, expected: str) -> Any:
    """`value` converted for its field, or ValueError naming the field and the type."""
    if expected == "boolean":
        if not isinstance(value, bool):
            raise ValueError(f'"{name}" must be a boolean')
        return value
    if expected == "string":
        if not isinstance(value, str):
            raise ValueError(f'"{name}" must be a string')
        return value
    if expected == "optional string":
        if value is not None and not isinstance(value, str):
            raise ValueError(f'"{name}" must be a string or null')
        return value
    return _time_value(name, value)


def _time_value(name: str, value: Any) -> float | None:
    """A `createdAt` value as epoch milliseconds (number or ISO string), or None."""
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        problem = created_at_problem(value, f'"{name}"')
        if problem is not None:
            raise ValueError(problem)
        return float(value)
    if isinstance(value, str):
        parsed = parse_js_date(value)
        if parsed is not None:
            return parsed
    raise ValueError(f'"{name}" must be epoch milliseconds or an ISO-8601 date')
