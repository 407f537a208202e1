"""What a store accepts: the checks every backend runs before it writes a window or an event.

Owns: the write-side rules, in one place, so that every backend refuses the same inputs
with the same message: the field types of a `SessionWindow` (and that a store can keep
its strings), `windows.window_problem`, `events.validation_problem`, that an event (and a
window's `extra`) is a JSON value every backend can keep exactly, the `created_at` of an
append (and of each event of a replaced transcript: `replacement_stamps`), and the wording of an append to a window that does not exist. Must not touch:
storage, or how a backend encodes a value; the rules of a valid window or event
themselves (`windows.py`, `events.py` own them; this module adds only what a store
needs on top).

Why these extra rules: each backend keeps values in its own encoding (msgpack for the
reference store, JSON text and SQLite `TEXT` for the SQLite backend), and a value one
encoding keeps and another cannot, or keeps differently, would make the backends
diverge. So a value is accepted only when every backend stores it and reads back the
same value:

* window strings (`session_id`, `title`, ...) hold no lone surrogate (SQLite `TEXT` is
  UTF-8), and every field has its declared type (SQLite would turn an `int` title into
  the string `'5'`, and a `1` flag into `True`);
* `created_at` is a finite number within ECMAScript's time range, or null (SQLite stores
  NaN as NULL, and its upstream column rounds the value to a 64-bit integer);
* an event and a window's `extra` are JSON values: objects (`dict`) with string keys,
  arrays (`list`; a tuple would come back as a list), strings, floats (NaN and the
  infinities included: both encodings keep them), booleans, null, and integers in the signed or unsigned 64-bit range (msgpack
  cannot hold larger ones), nested at most `MAX_JSON_DEPTH` levels. Lone surrogates in
  event strings are accepted: both encodings keep them (see the SQLite backend's
  divergences for how its index reads them).

Callers: `check_window` and `check_event` raise; the `*_problem` functions return the
reason or None, for callers (importers) that add a file and a line to it.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from typing import Any

from engine.errors import InputError, UsageError
from engine.model import SessionWindow
from engine.transcript.events import validation_problem
from engine.transcript.projection import MAX_TIME_VALUE
from engine.transcript.windows import window_problem

#: How deep an event or a window's `extra` may nest (objects and arrays).
MAX_JSON_DEPTH = 512

#: The integers every backend keeps exactly (msgpack: signed or unsigned 64-bit).
SMALLEST_INTEGER = -(2**63)
LARGEST_INTEGER = 2**64 - 1

#: `SessionWindow` fields by the type they must hold (`extra` is checked as JSON).
REQUIRED_STRING_FIELDS = ("session_id", "session_key", "reason", "kind")
OPTIONAL_STRING_FIELDS = (
    "previous_session_id", "title", "spawned_by", "owner_session_key", "parent_session_key",
    "group",
)
BOOLEAN_FIELDS = ("current", "incognito", "archived")

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate_problem(name: str, text: str) -> str | None:
    """Why `text` (the value of `name`) cannot be stored as UTF-8 text, or None.

    >>> lone_surrogate_problem("title", "caf\\u00e9") is None
    True
    >>> lone_surrogate_problem("title", "a\\ud800")
    'title holds a lone surrogate (U+D800), which cannot be stored as UTF-8 text'
    """
    found = _LONE_SURROGATE.search(text)
    if found is None:
        return None
    return (f"{name} holds a lone surrogate (U+{ord(found.group()):04X}), "
            "which cannot be stored as UTF-8 text")


def created_at_problem(created_at: object, name: str = "created_at") -> str | None:
    """Why `created_at` (the value of `name`) is not epoch milliseconds of a date or None,
    or None.

    A date is a finite number within ECMAScript's time range (±8.64e15 ms, as a
    timestamp is read: `projection.MAX_TIME_VALUE`): every backend keeps such a number
    exactly (SQLite's upstream column holds it as an integer), and an integer of any
    size is judged without converting it to a float first.

    >>> created_at_problem(1.5e12) is None, created_at_problem(None) is None
    (True, True)
    >>> created_at_problem(float("nan"))
    'created_at must be a finite number of epoch milliseconds or null (got nan)'
    >>> created_at_problem("5")
    'created_at must be a finite number of epoch milliseconds or null (got str)'
    >>> created_at_problem(10**400)
    'created_at must be epoch milliseconds within ±8.64e+15 (got an integer of 401 digits)'
    >>> created_at_problem(-1e300)
    'created_at must be epoch milliseconds within ±8.64e+15 (got -1e+300)'
    """
    if created_at is None:
        return None
    if isinstance(created_at, bool) or not isinstance(created_at, (int, float)):
        return (f"{name} must be a finite number of epoch milliseconds or null "
                f"(got {type(created_at).__name__})")
    if isinstance(created_at, float) and not math.isfinite(created_at):
        return f"{name} must be a finite number of epoch milliseconds or null (got {created_at})"
    if abs(created_at) > MAX_TIME_VALUE:
        return (f"{name} must be epoch milliseconds within ±{MAX_TIME_VALUE:.4g} "
                f"(got {shown_number(created_at)})")
    return None


def shown_number(value: float) -> str:
    """A number for a message: as written, or, for an integer of more than 20 digits,
    how many digits it has (a 400-digit value would fill the line).

    >>> shown_number(12), shown_number(-2.5), shown_number(-10**30)
    ('12', '-2.5', 'an integer of 31 digits')
    >>> shown_number(10**5000)
    'an integer of more than 4300 digits'
    """
    if isinstance(value, int) and abs(value) >= 10**20:
        try:
            return f"an integer of {len(str(abs(value)))} digits"
        except ValueError:  # past the interpreter's limit on integer-to-text conversion
            return "an integer of more than 4300 digits"
    return repr(value)


def json_value_problem(value: object, where: str) -> str | None:
    """Why `value` (named `where`) is not a JSON value every backend keeps, or None.

    Plain JSON is told at once by `_plain_json` (recursive, at most `MAX_JSON_DEPTH`
    deep; a RecursionError falls back); anything else by `walked_json_problem`, which
    spells the path of a member only when it reports one.

    >>> json_value_problem({"a": [1, "x", None, 2.5, {"b": True}]}, "event") is None
    True
    >>> json_value_problem({"a": [1, {2, 3}]}, "event")
    'event["a"][1] is a set, not a JSON value'
    >>> json_value_problem({1: "one"}, "extra")
    'extra has a key that is not a string (int 1)'
    >>> json_value_problem({"n": 2**64}, "event")
    'event["n"] is an integer outside the 64-bit range'
    """
    if not isinstance(value, (dict, list)):
        reason = _scalar_reason(value)
        return None if reason is None else f"{where} {reason}"
    try:
        if _plain_json(value, 1):  # the common case, told at once
            return None
    except RecursionError:  # a deep value met a deep caller: the walk decides
        pass
    return walked_json_problem(value, where)


def walked_json_problem(value: dict[str, Any] | list[Any], where: str) -> str | None:
    """`json_value_problem` of an object or an array by walking every member (the clear
    version, and the oracle of `_plain_json`, its shortcut; `tests/transcript`). The
    walk is iterative: a deep value cannot exhaust the interpreter's stack.

    >>> walked_json_problem({"a": [1, {2, 3}]}, "event")
    'event["a"][1] is a set, not a JSON value'
    """
    pending: list[tuple[Any, _Trail | None]] = [(value, None)]
    while pending:
        container, trail = pending.pop()
        depth = 1 if trail is None else trail[2] + 1
        if depth > MAX_JSON_DEPTH:
            return f"{where} is nested more than {MAX_JSON_DEPTH} levels deep"
        is_object = isinstance(container, dict)
        for key, member in container.items() if is_object else enumerate(container):
            if is_object and not isinstance(key, str):
                return (f"{_spelled(where, trail)} has a key that is not a string "
                        f"({type(key).__name__} {key!r})")
            kind = type(member)
            if kind is str or kind is float or kind is bool or member is None or (
                    kind is int and SMALLEST_INTEGER <= member <= LARGEST_INTEGER):
                continue
            if kind is dict or kind is list or isinstance(member, (dict, list)):
                pending.append((member, (trail, key, depth)))
                continue
            reason = _scalar_reason(member)
            if reason is not None:
                return f"{_spelled(where, (trail, key, depth))} {reason}"
    return None


def _plain_json(value: dict[str, Any] | list[Any], depth: int) -> bool:
    """True when `value`, an object or an array `depth` levels deep, holds only what
    `json_value_problem` accepts, every item of exactly its kind (`str`, `float`,
    `bool`, `None`, an `int` within 64 bits, `dict` with `str` keys, `list`), nested at
    most `MAX_JSON_DEPTH` levels: what a JSON reader makes. False says only that the
    walk must look (a subclass, another type, a problem): that walk is the oracle.

    >>> _plain_json({"a": [1, "x", None, 2.5, {"b": True}]}, 1), _plain_json([2**64], 1)
    (True, False)
    """
    if depth > MAX_JSON_DEPTH:
        return False
    if type(value) is dict:
        for key in value:
            if type(key) is not str:
                return False
        members: Any = value.values()
    elif type(value) is list:
        members = value
    else:
        return False
    for member in members:
        kind = type(member)
        if kind is str or kind is float or kind is bool or member is None:
            continue
        if kind is int:
            if SMALLEST_INTEGER <= member <= LARGEST_INTEGER:
                continue
            return False
        if (kind is dict or kind is list) and _plain_json(member, depth + 1):
            continue
        return False
    return True


#: Where a member sits: (the trail of its container, its key or index, container depth).
_Trail = tuple[Any, "str | int", int]


def _scalar_reason(value: object) -> str | None:
    """Why a value that is not an object or an array is not a JSON value, or None.

    >>> _scalar_reason(7) is None, _scalar_reason(-2**63 - 1), _scalar_reason(b"")
    (True, 'is an integer outside the 64-bit range', 'is a bytes, not a JSON value')
    """
    if isinstance(value, bool) or value is None or isinstance(value, (str, float)):
        return None
    if isinstance(value, int):
        if SMALLEST_INTEGER <= value <= LARGEST_INTEGER:
            return None
        return "is an integer outside the 64-bit range"
    return f"is a {type(value).__name__}, not a JSON value"


def _spelled(where: str, trail: _Trail | None) -> str:
    """The path of a member: `where` then `["key"]` or `[index]` per level.

    >>> _spelled("event", ((None, "a", 1), 0, 2))
    'event["a"][0]'
    """
    steps: list[str] = []
    while trail is not None:
        trail, key, _ = trail
        steps.append(f"[{json.dumps(key)}]" if isinstance(key, str) else f"[{key}]")
    return where + "".join(reversed(steps))


def window_write_problem(window: SessionWindow) -> str | None:
    """Why a store must refuse to write `window`, or None (the type is checked by the caller).

    >>> window_write_problem(SessionWindow("s1", "global")) is None
    True
    >>> window_write_problem(SessionWindow("s1", "global", title=5))
    'title must be a string or null (got int)'
    >>> window_write_problem(SessionWindow("s1", "global", current="yes"))
    'current must be true or false (got str)'
    >>> window_write_problem(SessionWindow("s1", "global", reason="reboot"))
    'unknown window reason "reboot" (expected one of: initial, reset, rollover, fork, rewind, switch, recovery, compaction)'
    """
    for name in REQUIRED_STRING_FIELDS:
        value = getattr(window, name)
        if not isinstance(value, str):
            return f"{name} must be a string (got {type(value).__name__})"
    for name in OPTIONAL_STRING_FIELDS:
        value = getattr(window, name)
        if value is not None and not isinstance(value, str):
            return f"{name} must be a string or null (got {type(value).__name__})"
    for name in BOOLEAN_FIELDS:
        value = getattr(window, name)
        if not isinstance(value, bool):
            return f"{name} must be true or false (got {type(value).__name__})"
    problem = created_at_problem(window.created_at)
    if problem is not None:
        return problem
    if not isinstance(window.extra, dict):
        return f"extra must be an object (got {type(window.extra).__name__})"
    problem = window_problem(window)
    if problem is not None:
        return problem
    for name in REQUIRED_STRING_FIELDS + OPTIONAL_STRING_FIELDS:
        value = getattr(window, name)
        if value is not None:
            problem = lone_surrogate_problem(name, value)
            if problem is not None:
                return problem
    return json_value_problem(window.extra, "extra")


def event_write_problem(event: object) -> str | None:
    """Why a store must refuse to append `event`, or None.

    >>> event_write_problem({"type": "model_change", "model": "x"}) is None
    True
    >>> event_write_problem({"type": 5})
    'an event needs a non-blank string "type"'
    >>> event_write_problem({"type": "custom", "data": b"raw"})
    'event["data"] is a bytes, not a JSON value'
    """
    problem = validation_problem(event)
    if problem is not None:
        return problem
    return json_value_problem(event, "event")


def check_window(window: object) -> None:
    """Raise unless a store may write `window` (`put_window`).

    `UsageError` when it is not a `SessionWindow` at all (a programming mistake),
    `InputError` naming the field otherwise.
    """
    if not isinstance(window, SessionWindow):
        raise UsageError(f"put_window needs a SessionWindow, not {type(window).__name__}")
    problem = window_write_problem(window)
    if problem is not None:
        raise InputError(problem)


def privacy_change_problem(stored: SessionWindow, window: SessionWindow) -> str | None:
    """Why a store must refuse to write `window` over the `stored` window of the same
    session id, or None: an incognito transcript stays incognito and a kept one stays kept
    (`SessionWindow.is_incognito`), since no index holds an incognito window's rows and a
    window cannot change what its committed rows were built from.

    >>> kept, secret = SessionWindow("s1", "agent:main:main"), SessionWindow("s1", "agent:main:main", incognito=True)
    >>> privacy_change_problem(kept, kept) is None
    True
    >>> privacy_change_problem(kept, secret)
    'window s1 was written as a kept transcript and cannot become incognito'
    >>> privacy_change_problem(secret, SessionWindow("s1", "agent:main:dashboard:incognito-x")) is None
    True
    """
    if stored.is_incognito == window.is_incognito:
        return None
    if stored.is_incognito:
        return (f"window {window.session_id} was written as an incognito transcript "
                "and cannot become a kept transcript")
    return (f"window {window.session_id} was written as a kept transcript "
            "and cannot become incognito")


def check_privacy_change(stored: SessionWindow | None, window: SessionWindow) -> None:
    """Raise `InputError` when `window` would change the privacy of `stored`
    (`privacy_change_problem`); None for `stored` is a new window."""
    problem = None if stored is None else privacy_change_problem(stored, window)
    if problem is not None:
        raise InputError(problem)


def check_event(session_id: object, event: object, created_at: object = None) -> None:
    """Raise `InputError` unless a store may append `event` to `session_id` (`append_event`).

    Whether the window exists is the store's to say, after this check
    (`unknown_session`).
    """
    problem = validation_problem(event)
    if problem is not None:
        raise InputError(f"session {session_id}: {problem}")
    check_shaped_event(session_id, event, created_at)  # type: ignore[arg-type]


def check_shaped_event(session_id: object, event: dict[str, Any],
                       created_at: object = None) -> None:
    """`check_event` for an event an importer already checked with
    `events.validation_problem` (and found none): the rest of its checks, with the same
    messages, so the event is not checked twice.

    >>> check_shaped_event("s1", {"type": "custom", "n": 2**64})
    Traceback (most recent call last):
    ...
    engine.errors.InputError: session s1: event["n"] is an integer outside the 64-bit range
    """
    problem = json_value_problem(event, "event")
    if problem is None:
        problem = created_at_problem(created_at)
    if problem is not None:
        raise InputError(f"session {session_id}: {problem}")


def replacement_stamps(created_at: object, count: int) -> list[Any]:
    """The receipt stamp of each of the `count` events of a replaced transcript:
    `created_at` for every one, or, when it is a sequence (a list or tuple), its items,
    which must be one per event (`UsageError` otherwise). The stamps are returned as
    given; `check_event` judges each one.

    >>> replacement_stamps(5.0, 2), replacement_stamps(None, 1), replacement_stamps([1.0, 2.0], 2)
    ([5.0, 5.0], [None], [1.0, 2.0])
    >>> replacement_stamps((1.0,), 2)
    Traceback (most recent call last):
    ...
    engine.errors.UsageError: created_at holds 1 stamp(s) for 2 events (one per event, or one for all)
    """
    if isinstance(created_at, (list, tuple)):
        if len(created_at) != count:
            raise UsageError(f"created_at holds {len(created_at)} stamp(s) for {count} events "
                             "(one per event, or one for all)")
        return list(created_at)
    return [created_at] * count


def check_replacement(session_id: object, events: Sequence[object], created_at: object
                      ) -> list[Any]:
    """Raise as `check_event` does unless every event of a replaced transcript, with its
    stamp (`replacement_stamps`), may be appended; return the stamps."""
    stamps = replacement_stamps(created_at, len(events))
    for event, stamp in zip(events, stamps, strict=True):
        check_event(session_id, event, stamp)
    return stamps
