"""Payloads of transcript log records: window, event, replace, delete_session, commit.

Owns: how each transcript record kind is laid out as a msgpack value. Must not touch:
files or framing (a transcript log file is a `framing` file of kind `segment`, its name
and magic since the first format; this module turns record values into payload bytes
and back, and opens nothing).

Payload grammar (msgpack values; `str` is UTF-8, `float` is a msgpack float 64)::

    payload         := window | event | replace | delete_session | commit
    window          := ["w", {field: value, ...}]
                       every field of `engine.model.SessionWindow` by its Python name
                       (`extra` is a map); on decode a missing field takes its default
                       and an unknown field is an error
    event           := ["e", session_id:str, seq:int, created_at:float, event:map]
                       `event` is the transcript JSON object verbatim, key order kept
    replace         := ["r", session_id:str, event_count:int, rebuild_deferred:bool]
                       (since version 2) drops every event of the window; the next
                       `event_count` records of the transaction are `event` records of
                       that window, seq 0, 1, ...: its new transcript. `rebuild_deferred`
                       records the decision of behaviour.md §8.2 taken in the
                       transaction (True: the index rebuild waits for reconcile), so a
                       replay of the log decides as the commit did
    delete_session  := ["d", session_key:str, [session_id:str, ...]]
                       the windows the delete removed, so a change feed can be read
                       without replaying what came before
    commit          := ["c", transaction_id:int, committed_at:float]
                       closes a transaction; `transaction_id` counts from 1 and is the
                       store generation after the commit

`committed_at` and `created_at` are epoch milliseconds.

The record values are NamedTuples, not frozen dataclasses: opening a store imports this
module (a search's start-up too), where a NamedTuple's class costs a fraction of a frozen
dataclass's to make; and one value is made per record read or written. A record equals
only a record of its own kind (`engine.light_values.same_kind_equal`), as a dataclass did: a tuple's equality
would make `WindowRecord(w)` equal the change `WindowPut(w)` (`engine.transcript.changes`),
which has the same one field, so a mix-up of the two would pass every test.
"""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple

from engine.codec.framing import DecodeError, decode_payload, encode_record
from engine.light_values import same_kind_equal, same_kind_unequal
from engine.model import SessionWindow

WINDOW_TAG = "w"
EVENT_TAG = "e"
REPLACE_TAG = "r"
DELETE_SESSION_TAG = "d"
COMMIT_TAG = "c"

_WINDOW_FIELDS = {field.name: field for field in dataclasses.fields(SessionWindow)}

#: The encoded size of a commit record is far below this (used to find commits by scanning).
MAX_COMMIT_PAYLOAD_LENGTH = 64


class WindowRecord(NamedTuple):
    """A full upsert of one window's metadata."""

    window: SessionWindow

    __eq__ = same_kind_equal
    __ne__ = same_kind_unequal
    __hash__ = tuple.__hash__


class EventRecord(NamedTuple):
    """One appended event."""

    session_id: str
    seq: int
    created_at: float
    event: dict[str, Any]

    __eq__ = same_kind_equal
    __ne__ = same_kind_unequal
    __hash__ = tuple.__hash__


class ReplaceRecord(NamedTuple):
    """The start of a window's new transcript: its old events are dropped, and the next
    `event_count` event records are its events from seq 0."""

    session_id: str
    event_count: int
    rebuild_deferred: bool

    __eq__ = same_kind_equal
    __ne__ = same_kind_unequal
    __hash__ = tuple.__hash__


class DeleteSessionRecord(NamedTuple):
    """The deletion of every window of a session key."""

    session_key: str
    session_ids: tuple[str, ...]

    __eq__ = same_kind_equal
    __ne__ = same_kind_unequal
    __hash__ = tuple.__hash__


class CommitRecord(NamedTuple):
    """The end of a transaction."""

    transaction_id: int
    committed_at: float

    __eq__ = same_kind_equal
    __ne__ = same_kind_unequal
    __hash__ = tuple.__hash__


LogRecord = WindowRecord | EventRecord | ReplaceRecord | DeleteSessionRecord | CommitRecord


# --------------------------------------------------------------------------------------
# Encoding
# --------------------------------------------------------------------------------------


def encode_log_value(record: LogRecord) -> list[Any]:
    """The msgpack-ready value of a record.

    >>> encode_log_value(CommitRecord(3, 1700000000000.0))
    ['c', 3, 1700000000000.0]
    """
    match record:
        case WindowRecord(window=window):
            return [WINDOW_TAG, encode_window_fields(window)]
        case EventRecord():
            return [EVENT_TAG, record.session_id, record.seq, float(record.created_at),
                    record.event]
        case ReplaceRecord():
            return [REPLACE_TAG, record.session_id, record.event_count,
                    bool(record.rebuild_deferred)]
        case DeleteSessionRecord():
            return [DELETE_SESSION_TAG, record.session_key, list(record.session_ids)]
        case CommitRecord():
            return [COMMIT_TAG, record.transaction_id, float(record.committed_at)]
    raise TypeError(f"not a log record: {record!r}")


def encode_log_record(record: LogRecord) -> bytes:
    """The framed bytes of one record (DecodeError if a value cannot be stored); an
    event record's value is made here without `encode_log_value`'s match (the commonest
    record, once an event).

    >>> record = EventRecord("s1", 3, 5, {"a": 1})
    >>> from engine.codec.framing import encode_frame, encode_payload
    >>> encode_log_record(record) == encode_frame(encode_payload(encode_log_value(record)))
    True
    """
    if type(record) is EventRecord:
        return encode_record([EVENT_TAG, record.session_id, record.seq,
                              float(record.created_at), record.event])
    return encode_record(encode_log_value(record))


def encode_event_record(session_id: str, seq: int, created_at: float,
                        event: dict[str, Any]) -> bytes:
    """`encode_log_record` of `EventRecord(session_id, seq, created_at, event)`, from its
    fields (a transaction's event, written without making the record).

    >>> encode_event_record("s1", 3, 5, {"a": 1}) == encode_log_record(
    ...     EventRecord("s1", 3, 5, {"a": 1}))
    True
    """
    return encode_record([EVENT_TAG, session_id, seq, float(created_at), event])


# --------------------------------------------------------------------------------------
# Decoding
# --------------------------------------------------------------------------------------


def _require(condition: bool, reason: str) -> None:
    if not condition:
        raise DecodeError(reason)


def encode_window_fields(window: SessionWindow) -> dict[str, Any]:
    """Every field of a window by name (also used by the catalog checkpoint)."""
    return {name: getattr(window, name) for name in _WINDOW_FIELDS}


def decode_window_fields(fields: Any) -> SessionWindow:
    """The window of a field map (DecodeError on unknown or mistyped fields)."""
    _require(isinstance(fields, dict), "window record: fields are not a map")
    unknown = sorted(set(fields) - set(_WINDOW_FIELDS))
    _require(not unknown, f"window record: unknown fields {unknown}")
    for name in ("session_id", "session_key"):
        _require(isinstance(fields.get(name), str), f"window record: {name} is not a string")
    _require(isinstance(fields.get("extra", {}), dict), "window record: extra is not a map")
    return SessionWindow(**fields)


def _decode_window(fields: Any) -> WindowRecord:
    return WindowRecord(decode_window_fields(fields))


def _decode_event(items: list[Any]) -> EventRecord:
    _require(len(items) == 4, "event record: expected 4 fields")
    session_id, seq, created_at, event = items
    _require(isinstance(session_id, str), "event record: session_id is not a string")
    _require(isinstance(seq, int) and seq >= 0, "event record: seq is not a natural number")
    _require(isinstance(created_at, (int, float)), "event record: created_at is not a number")
    _require(isinstance(event, dict), "event record: event is not a map")
    return EventRecord(session_id, seq, float(created_at), event)


def _decode_replace(items: list[Any]) -> ReplaceRecord:
    _require(len(items) == 3, "replace record: expected 3 fields")
    session_id, event_count, rebuild_deferred = items
    _require(isinstance(session_id, str), "replace record: session_id is not a string")
    _require(isinstance(event_count, int) and not isinstance(event_count, bool)
             and event_count >= 0, "replace record: event_count is not a natural number")
    _require(isinstance(rebuild_deferred, bool), "replace record: rebuild_deferred is not a boolean")
    return ReplaceRecord(session_id, event_count, rebuild_deferred)


def _decode_delete(items: list[Any]) -> DeleteSessionRecord:
    _require(len(items) == 2, "delete_session record: expected 2 fields")
    session_key, session_ids = items
    _require(isinstance(session_key, str), "delete_session record: key is not a string")
    _require(isinstance(session_ids, list) and all(isinstance(s, str) for s in session_ids),
             "delete_session record: session ids are not a list of strings")
    return DeleteSessionRecord(session_key, tuple(session_ids))


def _decode_commit(items: list[Any]) -> CommitRecord:
    _require(len(items) == 2, "commit record: expected 2 fields")
    transaction_id, committed_at = items
    _require(isinstance(transaction_id, int) and transaction_id >= 1,
             "commit record: transaction id is not a positive integer")
    _require(isinstance(committed_at, (int, float)), "commit record: time is not a number")
    return CommitRecord(transaction_id, float(committed_at))


_DECODERS = {
    WINDOW_TAG: lambda items: _decode_window(items[0] if len(items) == 1 else None),
    EVENT_TAG: _decode_event,
    REPLACE_TAG: _decode_replace,
    DELETE_SESSION_TAG: _decode_delete,
    COMMIT_TAG: _decode_commit,
}


def decode_log_value(value: Any) -> LogRecord:
    """The record of a decoded msgpack value (DecodeError on any grammar violation).

    >>> decode_log_value(["e", "s1", 0, 5.0, {"id": "a"}])
    EventRecord(session_id='s1', seq=0, created_at=5.0, event={'id': 'a'})
    >>> decode_log_value(["x"])
    Traceback (most recent call last):
    ...
    engine.codec.framing.DecodeError: unknown segment record tag 'x'
    """
    _require(isinstance(value, list) and len(value) >= 1, "segment record is not a tagged list")
    decoder = _DECODERS.get(value[0])
    _require(decoder is not None, f"unknown segment record tag {value[0]!r}")
    return decoder(value[1:])


def decode_log_payload(payload: bytes) -> LogRecord:
    """The record of one frame's payload bytes."""
    return decode_log_value(decode_payload(payload))


def is_commit_payload(payload: bytes) -> bool:
    """Whether payload bytes decode to a well-formed commit record.

    >>> from engine.codec.framing import encode_payload
    >>> is_commit_payload(encode_payload(["c", 1, 0.0])), is_commit_payload(b"\\x01")
    (True, False)
    """
    try:
        return isinstance(decode_log_payload(payload), CommitRecord)
    except DecodeError:
        return False


def describe_payload(value: Any) -> dict[str, Any]:
    """A readable dict of a decoded payload value, for `session-search dump`."""
    record = decode_log_value(value)
    match record:
        case WindowRecord():
            # nested: a window has its own `kind` field (chat, subagent, ...)
            return {"kind": "window", "window": encode_log_value(record)[1]}
        case EventRecord():
            return {"kind": "event", "session_id": record.session_id, "seq": record.seq,
                    "created_at": record.created_at, "event": record.event}
        case ReplaceRecord():
            return {"kind": "replace", "session_id": record.session_id,
                    "event_count": record.event_count,
                    "rebuild_deferred": record.rebuild_deferred}
        case DeleteSessionRecord():
            return {"kind": "delete_session", "session_key": record.session_key,
                    "session_ids": list(record.session_ids)}
        case CommitRecord():
            return {"kind": "commit", "transaction_id": record.transaction_id,
                    "committed_at": record.committed_at}
    raise DecodeError(f"cannot describe {record!r}")  # pragma: no cover - exhaustive above
