"""History requests: the `chat.history` and `sessions_history` parameters as values.

Owns: `HistoryRequest` (the Gateway read, `chat.history`), `ToolHistoryRequest` (the
agent tool, `sessions_history`), their JSON forms and every rule about which
parameters go together, with the product's exact error strings (behaviour.md §9.1,
§9.2 and Precedence). Must not touch: reading (`pages.py`, `tool.py`).

Rules, checked when a value is made (so an invalid request cannot exist), in this order:

1. `offset` with `messageId`: `offset and messageId cannot be used together` (the seed
   wins over upstream's tool, which drops `offset` silently);
2. `cursor` with `offset` or `messageId`: `cursor cannot be used with offset or
   messageId` (`chat.history` only; the tool takes no cursor);
3. `sessionId` without `messageId`: `sessionId requires messageId`;
4. `sessionKey` a non-blank string; `messageId`, `sessionId` and `cursor` non-blank
   strings when given (ids are trimmed as JavaScript trims); `limit` 1..1000 (default
   200); `offset` at least 0; `maxBytes` at least 1,024 (`chat.history`; the Gateway's
   6 MiB ceiling still applies above it).

The JSON forms take exactly the members of `HISTORY_JSON_FIELDS` and
`TOOL_JSON_FIELDS`; any other member, or one of the wrong JSON type, is refused with a
message naming it. A member that is null means the same as leaving it out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.errors import InputError
from engine.history.byte_caps import MIN_MAX_BYTES
from engine.history.window_math import DEFAULT_LIMIT, MAX_LIMIT
from engine.model import js_trim, json_type_name
from engine.transcript.events import is_blank

OFFSET_WITH_ANCHOR = "offset and messageId cannot be used together"
CURSOR_WITH_SELECTOR = "cursor cannot be used with offset or messageId"
SESSION_ID_WITHOUT_ANCHOR = "sessionId requires messageId"
FOREIGN_SESSION_ID = "sessionId does not belong to sessionKey"


class HistoryRequestError(InputError):
    """A history request that breaks a rule of this module (the product's wording)."""


@dataclass(frozen=True, slots=True)
class HistoryRequest:
    """One `chat.history` read.

    Without `message_id` and `cursor`: the newest rows of the current view, `offset`
    rows back. With `message_id`: the window around that row (in `session_id`'s window,
    a retained one, when given). With `cursor`: the next page in the cursor's direction.
    `max_bytes` lowers the Gateway's 6 MiB budget.
    """

    session_key: str
    message_id: str | None = None
    session_id: str | None = None
    limit: int | None = None
    offset: int | None = None
    cursor: str | None = None
    max_bytes: int | None = None

    def __post_init__(self) -> None:
        check_selectors(self.offset, self.message_id, self.session_id, self.cursor)
        _set(self, "session_key", _key(self.session_key))
        for name, wire in (("message_id", "messageId"), ("session_id", "sessionId"),
                           ("cursor", "cursor")):
            _set(self, name, _optional_id(getattr(self, name), wire))
        check_limit(self.limit)
        check_offset(self.offset)
        if self.max_bytes is not None and (not _is_integer(self.max_bytes)
                                           or self.max_bytes < MIN_MAX_BYTES):
            raise HistoryRequestError(f"maxBytes must be an integer of at least {MIN_MAX_BYTES}")

    @property
    def page_limit(self) -> int:
        """The page size: `limit`, else 200."""
        return DEFAULT_LIMIT if self.limit is None else self.limit

    @classmethod
    def from_json(cls, value: Any) -> HistoryRequest:
        """The request a `chat.history` params object describes.

        >>> HistoryRequest.from_json({"sessionKey": "agent:work:recall", "limit": 1})
        HistoryRequest(session_key='agent:work:recall', message_id=None, session_id=None, limit=1, offset=None, cursor=None, max_bytes=None)
        >>> HistoryRequest.from_json({"sessionKey": "k", "offset": 0, "messageId": "old"})
        Traceback (most recent call last):
        ...
        engine.history.request.HistoryRequestError: offset and messageId cannot be used together
        """
        members = read_members(value, HISTORY_JSON_FIELDS)
        return cls(**members)

    def to_json(self) -> dict[str, Any]:
        """The params object (members that are None left out).

        >>> HistoryRequest("agent:main:main", limit=5).to_json()
        {'sessionKey': 'agent:main:main', 'limit': 5}
        """
        return write_members(self, HISTORY_JSON_FIELDS)


@dataclass(frozen=True, slots=True)
class ToolHistoryRequest:
    """One `sessions_history` call: the Gateway read plus `include_tools`.

    `session_key` may be `main`, the display alias of `agent:main:main`.
    """

    session_key: str
    message_id: str | None = None
    session_id: str | None = None
    limit: int | None = None
    offset: int | None = None
    include_tools: bool = False

    def __post_init__(self) -> None:
        check_selectors(self.offset, self.message_id, self.session_id, None)
        _set(self, "session_key", _key(self.session_key))
        for name, wire in (("message_id", "messageId"), ("session_id", "sessionId")):
            _set(self, name, _optional_id(getattr(self, name), wire))
        check_limit(self.limit)
        check_offset(self.offset)
        if not isinstance(self.include_tools, bool):
            raise HistoryRequestError("includeTools must be true or false")

    @classmethod
    def from_json(cls, value: Any) -> ToolHistoryRequest:
        """The request a `sessions_history` params object describes.

        >>> ToolHistoryRequest.from_json({"sessionKey": "k", "sessionId": "s"})
        Traceback (most recent call last):
        ...
        engine.history.request.HistoryRequestError: sessionId requires messageId
        """
        members = read_members(value, TOOL_JSON_FIELDS)
        if members.get("include_tools") is None:
            members.pop("include_tools", None)
        return cls(**members)

    def to_json(self) -> dict[str, Any]:
        """The params object (members that are None, and `includeTools` false, left out)."""
        value = write_members(self, TOOL_JSON_FIELDS)
        if not self.include_tools:
            value.pop("includeTools", None)
        return value


def check_selectors(offset: int | None, message_id: str | None, session_id: str | None,
                    cursor: str | None) -> None:
    """Rules 1–3 of the module docstring, in that order.

    >>> check_selectors(None, None, "s1", None)
    Traceback (most recent call last):
    ...
    engine.history.request.HistoryRequestError: sessionId requires messageId
    >>> check_selectors(0, None, None, "c")
    Traceback (most recent call last):
    ...
    engine.history.request.HistoryRequestError: cursor cannot be used with offset or messageId
    """
    if offset is not None and message_id is not None:
        raise HistoryRequestError(OFFSET_WITH_ANCHOR)
    if cursor is not None and (offset is not None or message_id is not None):
        raise HistoryRequestError(CURSOR_WITH_SELECTOR)
    if session_id is not None and message_id is None:
        raise HistoryRequestError(SESSION_ID_WITHOUT_ANCHOR)


def check_limit(limit: Any) -> None:
    """`limit` absent or an integer 1..1000.

    >>> check_limit(1001)
    Traceback (most recent call last):
    ...
    engine.history.request.HistoryRequestError: limit must be an integer from 1 to 1000
    """
    if limit is not None and (not _is_integer(limit) or not 1 <= limit <= MAX_LIMIT):
        raise HistoryRequestError(f"limit must be an integer from 1 to {MAX_LIMIT}")


def check_offset(offset: Any) -> None:
    """`offset` absent or an integer of at least 0."""
    if offset is not None and (not _is_integer(offset) or offset < 0):
        raise HistoryRequestError("offset must be an integer of at least 0")


#: Wire name -> (attribute, accepted JSON types, how an error names the type).
HISTORY_JSON_FIELDS: dict[str, tuple[str, tuple[type, ...], str]] = {
    "sessionKey": ("session_key", (str,), "a string"),
    "limit": ("limit", (int,), "an integer or null"),
    "offset": ("offset", (int,), "an integer or null"),
    "cursor": ("cursor", (str,), "a string or null"),
    "messageId": ("message_id", (str,), "a string or null"),
    "sessionId": ("session_id", (str,), "a string or null"),
    "maxBytes": ("max_bytes", (int,), "an integer or null"),
}
TOOL_JSON_FIELDS: dict[str, tuple[str, tuple[type, ...], str]] = {
    "sessionKey": HISTORY_JSON_FIELDS["sessionKey"],
    "limit": HISTORY_JSON_FIELDS["limit"],
    "offset": HISTORY_JSON_FIELDS["offset"],
    "messageId": HISTORY_JSON_FIELDS["messageId"],
    "sessionId": HISTORY_JSON_FIELDS["sessionId"],
    "includeTools": ("include_tools", (bool,), "true, false or null"),
}


def read_members(value: Any, fields: dict[str, tuple[str, tuple[type, ...], str]],
                 extra: tuple[str, ...] = ()) -> dict[str, Any]:
    """The attributes a params object gives, checked against `fields` (names in
    `extra` are allowed and left out: the caller reads them).

    >>> read_members({"sessionKey": "k", "limit": "5"}, HISTORY_JSON_FIELDS)
    Traceback (most recent call last):
    ...
    engine.history.request.HistoryRequestError: limit has the wrong type (expected an integer or null, got a string)
    >>> read_members({"sessionKey": "k", "colour": 1}, HISTORY_JSON_FIELDS)
    Traceback (most recent call last):
    ...
    engine.history.request.HistoryRequestError: unknown params: colour
    """
    if not isinstance(value, dict):
        raise HistoryRequestError("params must be an object")
    unknown = sorted(set(value) - set(fields) - set(extra))
    if unknown:
        raise HistoryRequestError(f"unknown params: {', '.join(unknown)}")
    if value.get("sessionKey") is None:
        raise HistoryRequestError("sessionKey is required")
    members: dict[str, Any] = {}
    for name, member in value.items():
        if name in extra or member is None:
            continue
        attribute, expected, description = fields[name]
        wrong_bool = isinstance(member, bool) and bool not in expected
        if not isinstance(member, expected) or wrong_bool:
            raise HistoryRequestError(f"{name} has the wrong type (expected {description}, "
                                      f"got {json_type_name(member)})")
        members[attribute] = member
    return members


def write_members(request: Any, fields: dict[str, tuple[str, tuple[type, ...], str]]) -> dict[str, Any]:
    """The params object of a request value (None members left out)."""
    return {name: getattr(request, attribute) for name, (attribute, _, _) in fields.items()
            if getattr(request, attribute) is not None}


def _key(session_key: Any) -> str:
    if not isinstance(session_key, str) or is_blank(session_key):
        raise HistoryRequestError("sessionKey must be a non-empty string")
    return js_trim(session_key)


def _optional_id(value: Any, wire: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or is_blank(value):
        raise HistoryRequestError(f"{wire} must be a non-empty string")
    return js_trim(value)


def _is_integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _set(request: Any, name: str, value: Any) -> None:
    object.__setattr__(request, name, value)

