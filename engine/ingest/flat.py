"""The flat-messages input form: one message per JSONL line, so any chat log can be loaded.

Owns: turning a flat messages file into windows and message events in an `ImportBatch`.
Must not touch: the store itself, or the corpus-directory form.

Each line is an object with exactly these fields (documented in `corpora/README.md`):

| field       | type                                  | required |
|-------------|---------------------------------------|----------|
| `sessionKey`| session key (`agent:<id>:<rest>`, `global`, `unknown`) | yes |
| `sessionId` | string, the window                    | yes      |
| `messageId` | non-blank string, unique in its window| yes      |
| `role`      | non-blank string (`user`, `assistant`, `toolResult`, ...) | yes |
| `text`      | string (the message content)          | yes      |
| `timestamp` | epoch ms or ISO-8601 string, or null  | no       |

What the importer builds:

* a window the first time a `sessionId` appears: current, kind `chat`, `created_at` from
  that line's timestamp when it has one. If its key already has a current window (in the
  store, or earlier in this import), that window becomes retained and the new one follows
  it (`previousSessionId`, reason `rollover`); otherwise the reason is `initial`;
* for each line, the event `{"type": "message", "id": messageId, "parentId": <the
  previous message of the window, or null>, "timestamp": timestamp, "message": {"role":
  role, "content": text}}` (no `timestamp` key when the line has none), so each window is
  one linear chain in file order.

A `sessionId` already in the store is a `DuplicateImport` (a flat file never appends to
an existing window); the same `sessionId` under two keys, a repeated `messageId` in a
window, a missing or unknown field are `MalformedInput` with the line.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.errors import MalformedInput
from engine.ingest.batch import ImportBatch
from engine.ingest.jsonl import iter_objects
from engine.model import SessionWindow
from engine.transcript.events import is_blank
from engine.transcript.projection import parse_js_date
from engine.transcript.windows import session_key_problem, window_problem

REQUIRED_FIELDS = ("sessionKey", "sessionId", "messageId", "role", "text")
OPTIONAL_FIELDS = ("timestamp",)
FLAT_REASON_AFTER_EXISTING = "rollover"


@dataclass(slots=True)
class _WindowCursor:
    """Per window of this file: its key, its last message id and the ids it holds."""

    session_key: str
    first_line: int
    last_message_id: str | None
    message_lines: dict[str, int]


def is_flat_file(path: Path) -> bool:
    """True when `path` is a file named `*.jsonl`."""
    return path.is_file() and path.suffix == ".jsonl"


def import_flat(path: Path, batch: ImportBatch) -> None:
    """Read the flat messages file at `path` into `batch` (raises on the first problem)."""
    shown = str(path)
    cursors: dict[str, _WindowCursor] = {}
    for line, record in iter_objects(path):
        fields = _checked_fields(record, shown, line)
        session_id = fields["sessionId"]
        cursor = cursors.get(session_id)
        if cursor is None:
            cursor = _open_window(fields, batch, shown, line)
            cursors[session_id] = cursor
        elif cursor.session_key != fields["sessionKey"]:
            raise MalformedInput(shown, line,
                                 f'sessionId "{session_id}" belongs to key '
                                 f'"{cursor.session_key}" (line {cursor.first_line}), '
                                 f'not "{fields["sessionKey"]}"')
        message_id = fields["messageId"]
        if message_id in cursor.message_lines:
            raise MalformedInput(shown, line,
                                 f'messageId "{message_id}" is already used in window '
                                 f'"{session_id}" on line {cursor.message_lines[message_id]}')
        batch.append(session_id, message_event(fields, cursor.last_message_id), shown, line)
        cursor.message_lines[message_id] = line
        cursor.last_message_id = message_id


def message_event(fields: dict[str, Any], parent_id: str | None) -> dict[str, Any]:
    """The transcript event of one flat line.

    >>> message_event({"messageId": "m2", "role": "user", "text": "hi",
    ...                "timestamp": 5}, "m1")
    {'type': 'message', 'id': 'm2', 'parentId': 'm1', 'timestamp': 5, 'message': {'role': 'user', 'content': 'hi'}}
    """
    event: dict[str, Any] = {"type": "message", "id": fields["messageId"], "parentId": parent_id}
    if fields.get("timestamp") is not None:
        event["timestamp"] = fields["timestamp"]
    event["message"] = {"role": fields["role"], "content": fields["text"]}
    return event


def _open_window(
    fields: dict[str, Any], batch: ImportBatch, path: str, line: int
) -> _WindowCursor:
    """Create the window of a `sessionId` seen for the first time."""
    session_id, session_key = fields["sessionId"], fields["sessionKey"]
    batch.check_new(session_id, path, line)
    previous = batch.current_of(session_key)
    window = SessionWindow(
        session_id=session_id,
        session_key=session_key,
        previous_session_id=previous.session_id if previous else None,
        reason=FLAT_REASON_AFTER_EXISTING if previous else "initial",
        current=True,
        created_at=_time_of(fields.get("timestamp")),
    )
    problem = window_problem(window)
    if problem is not None:
        raise MalformedInput(path, line, problem)
    if previous is not None:
        batch.retire(previous)
    batch.add_window(window, path, line)
    return _WindowCursor(session_key, line, None, {})


def _checked_fields(record: dict[str, Any], path: str, line: int) -> dict[str, Any]:
    """The record's fields after checking names and types (MalformedInput otherwise)."""
    unknown = sorted(set(record) - set(REQUIRED_FIELDS) - set(OPTIONAL_FIELDS))
    if unknown:
        allowed = ", ".join(REQUIRED_FIELDS + OPTIONAL_FIELDS)
        raise MalformedInput(path, line,
                             f"unknown field {', '.join(repr(n) for n in unknown)} "
                             f"(a flat messages line has: {allowed})")
    for name in REQUIRED_FIELDS:
        if name not in record:
            raise MalformedInput(path, line, f'missing "{name}"')
        if not isinstance(record[name], str):
            raise MalformedInput(path, line, f'"{name}" must be a string')
    for name in ("sessionId", "messageId", "role"):
        if is_blank(record[name]):
            raise MalformedInput(path, line, f'"{name}" must not be blank')
    problem = session_key_problem(record["sessionKey"])
    if problem is not None:
        raise MalformedInput(path, line, problem)
    stamp = record.get("timestamp")
    if stamp is not None and (isinstance(stamp, bool) or not isinstance(stamp, (int, float, str))
                              or (isinstance(stamp, float) and not math.isfinite(stamp))):
        raise MalformedInput(path, line,
                             '"timestamp" must be epoch milliseconds, an ISO-8601 string or null')
    return record


def _time_of(stamp: Any) -> float | None:
    """A line's timestamp as epoch ms for the window's `created_at`, when it has one."""
    if isinstance(stamp, (int, float)) and not isinstance(stamp, bool):
        return float(stamp)
    if isinstance(stamp, str):
        return parse_js_date(stamp)
    return None
