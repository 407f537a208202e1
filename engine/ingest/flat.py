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
| `timestamp` | epoch ms or ISO-8601 string           | yes      |

A `timestamp` is epoch milliseconds (a finite number within JavaScript's date range,
±8.64e15) or a date-time string read as the index reads it, with JavaScript's
`Date.parse` (`engine.transcript.projection.parse_js_date`): ISO-8601 such as
`2026-03-01T10:00:00Z` or `2026-03-01T11:00:00+01:00` (no offset: UTC), and the RFC 2822
form that `Date.parse` also reads. A line without one, with null, or with a string that
does not parse is refused: the index would otherwise date the message at the import.

What the importer builds:

* a window the first time a `sessionId` appears: current, kind `chat`, `created_at` from
  that line's timestamp when it has one. If its key already has a current window (in the
  store, or earlier in this import), that window becomes retained and the new one follows
  it (`previousSessionId`, reason `rollover`); otherwise the reason is `initial`;
* when the file is read, the window holding a key's newest message is its current one
  (`settle_current_windows`): OpenClaw's Gateway writes each message into its key's
  current window, so a log it wrote has its newest message there. Windows interleaved in
  time (`w1@t1, w2@t2, w1@t3`) are chained in the order of their newest messages
  (`w2` then `w1`, current); windows that follow one another keep the order they started;
* for each line, the event `{"type": "message", "id": messageId, "parentId": <the
  previous message of the window, or null>, "timestamp": timestamp, "message": {"role":
  role, "content": text}}` (the timestamp as the line gives it), so each window is one
  linear chain in file order. Only `user` and `assistant` messages are searchable; the
  import report counts the others by role (`ImportReport.unindexed_roles`).

A `sessionId` already in the store is **continued**: a chat log grows, and importing it
again adds what is new. The file's lines for that window must begin with exactly the
messages the store holds for it (the events this form makes of them, in order); the
lines past them are appended (their parent: the window's last message), and a window
with nothing new is left as it is, so importing a file twice adds nothing the second
time. A window whose stored messages differ from the file's lines (the file changed
before its end, or the window came from another file) or that holds more messages than
the file gives it is a `DuplicateImport` naming the line, with nothing imported: it was
not this file's window, or the file was rewritten (`--replace` takes the file as it is).
With `--replace`, that window's transcript is replaced by this file's lines for it (one
chain in file order, as above), its metadata and its place in its key's chain
unchanged. Either way its key must be the one the line names; the same `sessionId`
under two keys, a repeated `messageId` in a window, a missing or unknown field, a
missing or unreadable timestamp are `MalformedInput` with the line.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.errors import DuplicateImport, MalformedInput
from engine.ingest.batch import ImportBatch
from engine.ingest.jsonl import iter_objects
from engine.model import SessionWindow, canonical_session_key
from engine.transcript.events import is_blank
from engine.transcript.projection import MAX_TIME_VALUE, parse_js_date
from engine.transcript.validation import shown_number
from engine.transcript.windows import session_key_problem, window_problem

REQUIRED_FIELDS = ("sessionKey", "sessionId", "messageId", "role", "text", "timestamp")
#: The fields that must be strings (the timestamp may also be a number).
STRING_FIELDS = ("sessionKey", "sessionId", "messageId", "role", "text")
_FIELD_NAMES = frozenset(REQUIRED_FIELDS)
TIMESTAMP_FORMS = "epoch milliseconds or an ISO-8601 date-time string"
FLAT_REASON_AFTER_EXISTING = "rollover"


@dataclass(slots=True)
class _WindowCursor:
    """Per window of this file: its key, its last message id and the ids it holds, whether
    this file made it (not a replacement), and its newest message: (timestamp, line)."""

    session_key: str
    first_line: int
    last_message_id: str | None
    message_lines: dict[str, int]
    new: bool = True
    newest: tuple[float, int] = (float("-inf"), 0)
    #: A stored window this file continues: the events it held, and how many of the
    #: file's lines for it were read so far.
    stored: list[dict[str, Any]] | None = None
    read: int = 0


def is_flat_file(path: Path) -> bool:
    """True when `path` is a file named `*.jsonl`."""
    return path.is_file() and path.suffix == ".jsonl"


def import_flat(path: Path, batch: ImportBatch) -> None:
    """Read the flat messages file at `path` into `batch` (raises on the first problem)."""
    shown = str(path)
    cursors: dict[str, _WindowCursor] = {}
    known_keys: dict[str, str] = {}
    for line, record in iter_objects(path):
        fields, time = _checked_fields(record, shown, line, known_keys)
        session_id = fields["sessionId"]
        cursor = cursors.get(session_id)
        if cursor is None:
            cursor = _open_window(fields, time, batch, shown, line)
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
        event = message_event(fields, cursor.last_message_id)
        if cursor.stored is None or cursor.read >= len(cursor.stored):
            batch.append(session_id, event, shown, line)
            if cursor.stored is not None:
                batch.extended_ids.add(session_id)
        elif cursor.stored[cursor.read] != event:
            raise DuplicateImport(
                f'{shown}:{line}: session window "{session_id}" is already in the store, '
                f"and its message {cursor.read + 1} there is not this line's: this file "
                "does not continue it (--replace takes the file as it is); nothing was "
                "imported")
        cursor.read += 1
        cursor.message_lines[message_id] = line
        cursor.last_message_id = message_id
        cursor.newest = max(cursor.newest, (time, line))
    for session_id, cursor in cursors.items():
        if cursor.stored is not None and cursor.read < len(cursor.stored):
            raise DuplicateImport(
                f'{shown}: session window "{session_id}" holds {len(cursor.stored)} '
                f"messages in the store, this file only {cursor.read}: it does not continue "
                "it (--replace takes the file as it is); nothing was imported")
    settle_current_windows(cursors, batch, shown)


def settle_current_windows(cursors: dict[str, _WindowCursor], batch: ImportBatch,
                           path: str) -> None:
    """Make the window holding each key's newest message its current one, as OpenClaw's
    Gateway leaves a key (it writes every message into the key's current window, so the
    newest is always there): the windows this file made for a key are chained in the order
    of their newest messages (ties: the later line), each following the one before, and
    the last is current. Windows that do not interleave keep the order they started in."""
    by_key: dict[str, list[str]] = {}
    for session_id, cursor in cursors.items():
        if cursor.new:
            by_key.setdefault(cursor.session_key, []).append(session_id)
    for started in by_key.values():
        settled = sorted(started, key=lambda session_id: cursors[session_id].newest)
        if settled == started:
            continue
        first = batch.windows[started[0]]  # follows what the key had before this file
        chained = [first.previous_session_id, *settled[:-1]]
        for position, (session_id, previous) in enumerate(zip(settled, chained, strict=True)):
            window = batch.windows[session_id]
            batch.update_window(dataclasses.replace(
                window, previous_session_id=previous, current=False,
                reason=first.reason if position == 0 else FLAT_REASON_AFTER_EXISTING), path)
        newest = batch.windows[settled[-1]]
        batch.update_window(dataclasses.replace(newest, current=True), path)


def message_event(fields: dict[str, Any], parent_id: str | None) -> dict[str, Any]:
    """The transcript event of one flat line.

    >>> message_event({"messageId": "m2", "role": "user", "text": "hi",
    ...                "timestamp": 5}, "m1")
    {'type': 'message', 'id': 'm2', 'parentId': 'm1', 'timestamp': 5, 'message': {'role': 'user', 'content': 'hi'}}
    """
    return {"type": "message", "id": fields["messageId"], "parentId": parent_id,
            "timestamp": fields["timestamp"],
            "message": {"role": fields["role"], "content": fields["text"]}}


def _open_window(
    fields: dict[str, Any], time: float, batch: ImportBatch, path: str, line: int
) -> _WindowCursor:
    """Create the window of a `sessionId` seen for the first time (`time`: its first
    line's timestamp, its `created_at`)."""
    session_id, session_key = fields["sessionId"], fields["sessionKey"]
    if session_id in batch.stored_ids:
        stored_key = batch.windows[session_id].session_key
        if stored_key != session_key:
            raise MalformedInput(path, line, f'sessionId "{session_id}" belongs to key '
                                             f'"{stored_key}" in the store, not "{session_key}"')
    if batch.is_replacement(session_id):
        batch.start_replacement(session_id, path, line)
        return _WindowCursor(session_key, line, None, {}, new=False)
    if session_id in batch.stored_ids and session_id not in batch.added_at:
        stored = [stored.event for stored in batch.continue_stored(session_id, path, line)]
        return _WindowCursor(session_key, line, None, {}, new=False, stored=stored)
    batch.check_new(session_id, path, line)
    previous = batch.current_of(session_key)
    window = SessionWindow(
        session_id=session_id,
        session_key=session_key,
        previous_session_id=previous.session_id if previous else None,
        reason=FLAT_REASON_AFTER_EXISTING if previous else "initial",
        current=True,
        created_at=time,
    )
    problem = window_problem(window)
    if problem is not None:
        raise MalformedInput(path, line, problem)
    if previous is not None:
        batch.retire(previous)
    batch.add_window(window, path, line)
    return _WindowCursor(session_key, line, None, {})


def _checked_fields(record: dict[str, Any], path: str, line: int,
                    known_keys: dict[str, str]) -> tuple[dict[str, Any], float]:
    """The record's fields after checking names and types, and its timestamp as epoch
    milliseconds (MalformedInput otherwise). `known_keys` maps each `sessionKey` as
    written in the file to its canonical form once it was checked (a window's lines
    repeat their key, which is checked once)."""
    if record.keys() - _FIELD_NAMES:
        unknown = sorted(set(record) - _FIELD_NAMES)
        allowed = ", ".join(REQUIRED_FIELDS)
        raise MalformedInput(path, line,
                             f"unknown field {', '.join(repr(n) for n in unknown)} "
                             f"(a flat messages line has: {allowed})")
    if len(record) != len(REQUIRED_FIELDS):
        for name in REQUIRED_FIELDS:
            if name not in record:
                hint = f" ({TIMESTAMP_FORMS})" if name == "timestamp" else ""
                raise MalformedInput(path, line, f'missing "{name}"{hint}')
    for name in STRING_FIELDS:
        if not isinstance(record[name], str):
            raise MalformedInput(path, line, f'"{name}" must be a string')
    for name in ("sessionId", "messageId", "role"):
        if is_blank(record[name]):
            raise MalformedInput(path, line, f'"{name}" must not be blank')
    written_key = record["sessionKey"]
    session_key = known_keys.get(written_key)
    if session_key is None:
        # The key as OpenClaw stores it (`engine.model.canonical_session_key`).
        session_key = canonical_session_key(written_key)
        problem = session_key_problem(session_key)
        if problem is not None:
            raise MalformedInput(path, line, problem)
        known_keys[written_key] = session_key
    record["sessionKey"] = session_key
    try:
        return record, timestamp_value(record["timestamp"])
    except ValueError as problem:
        raise MalformedInput(path, line, str(problem)) from None


def timestamp_value(stamp: Any) -> float:
    """A line's timestamp as epoch milliseconds, or `ValueError` saying what is wrong.

    >>> timestamp_value(1772359260000), timestamp_value("2026-03-01T10:00:00Z")
    (1772359260000.0, 1772359200000.0)
    >>> timestamp_value("yesterday")
    Traceback (most recent call last):
    ...
    ValueError: "timestamp" "yesterday" is not an ISO-8601 date-time (nor epoch milliseconds)
    >>> timestamp_value(None)
    Traceback (most recent call last):
    ...
    ValueError: "timestamp" must be epoch milliseconds or an ISO-8601 date-time string, not null
    """
    if isinstance(stamp, (int, float)) and not isinstance(stamp, bool):
        try:
            value = float(stamp)
        except OverflowError:
            value = math.inf
        if not math.isfinite(value) or abs(value) > MAX_TIME_VALUE:
            raise ValueError(f'"timestamp" {shown_number(stamp)} is not a date: epoch '
                             f"milliseconds must be finite and within ±{MAX_TIME_VALUE:.4g}")
        return value
    if isinstance(stamp, str):
        parsed = parse_js_date(stamp)
        if parsed is None:
            raise ValueError(f'"timestamp" {json.dumps(stamp, ensure_ascii=False)} is not an '
                             "ISO-8601 date-time (nor epoch milliseconds)")
        return parsed
    if stamp is None:
        shown = "null"
    elif isinstance(stamp, bool):
        shown = "a boolean"
    else:
        shown = f"a JSON {'array' if isinstance(stamp, list) else 'object'}"
    raise ValueError(f'"timestamp" must be {TIMESTAMP_FORMS}, not {shown}')
