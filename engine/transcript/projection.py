"""THE definition of what is searchable: index entries from a window's events.

Owns: `extract_index_entry` (behaviour.md §2.3, rules 1–6), `index_entries` (the entries
of the visible path only), and the JavaScript emulation they need (`Date.parse` of
timestamp strings). Must not touch: tokens, the index, storage. Every backend and the
reference index call these functions; nothing else decides what is searchable.

The rules, for one stored event:

1. the event is an object with `type == "message"` and a non-blank string `id`;
2. `event.message.role` is exactly `"user"` or `"assistant"`;
3. the text is the first of: `message.content` when it is a string (trimmed); else
   `message.text` when it is a string (trimmed); else, when `content` is a list, the
   `text` of every block of type `text` / `input_text` / `output_text` whose text is not
   blank (kept untrimmed), joined with `"\\n"`. A blank string `content` gives no text: it
   does not fall through to `message.text`. Thinking blocks, images and tool calls are
   never searchable;
4. no text, no entry;
5. the timestamp is the event's **own top-level** `timestamp`: a finite number as it is,
   a string through `Date.parse`; when that gives no finite number (absent, another type,
   an unparsable string, NaN), the fallback — the store's `created_at` of the event. This
   follows the upstream kernel (`Number.isFinite(t) ? t : fallback`). The nested
   `message.timestamp` that OpenClaw files also carry is NOT used (openclaw-state-format.md
   maps it for display; the index follows §2.3);
6. `message_id` is the `id` trimmed (JavaScript trim).

Trimming and blankness use JavaScript's whitespace class (`engine.model.js_trim`), not Python's.

`Date.parse` subset: the ECMAScript date-time string format (`YYYY`, `YYYY-MM`,
`YYYY-MM-DD`, optionally `THH:mm`, `:ss`, `.fraction`, then `Z` or `±HH:mm`), with the
leniencies V8 accepts for it (a space instead of `T`, lowercase `t`/`z`, any number of
fraction digits truncated to milliseconds, `±HHMM`, hour 24 at minute zero, expanded
years `±YYYYYY`), plus RFC 2822 strings (`Mon, 30 Nov 2026 07:44:48 GMT`). A date-time
without an offset is read as UTC (JavaScript would use the process's local zone; the
engine fixes it to UTC so indexes do not depend on where they were built). Impossible
calendar dates (February 30) are rejected. Anything else is NaN, hence the fallback.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from engine.model import IndexEntry, StoredEvent, js_trim
from engine.transcript import events as kinds
from engine.transcript.tree import TranscriptTree, visible_events

#: ECMAScript's time value range: ±8.64e15 ms around the epoch.
MAX_TIME_VALUE = 8.64e15

_ISO_DATE_TIME = re.compile(
    r"""
    (?P<year>[+-]\d{6}|\d{4})
    (?:-(?P<month>\d{2})(?:-(?P<day>\d{2}))?)?
    (?:[Tt ]
       (?P<hour>\d{2}):(?P<minute>\d{2})
       (?::(?P<second>\d{2})(?:\.(?P<fraction>\d+))?)?
       (?P<zone>[Zz]|[+-]\d{2}:?\d{2})?
    )?
    """,
    re.VERBOSE | re.ASCII,  # `Date.parse` reads ASCII digits only: "２０２６" is NaN
)

#: How many of the latest date strings `parse_js_date` keeps the answer of.
PARSED_DATES = 4096

#: `Date.prototype.toISOString`'s form (`2026-01-23T00:00:22.290Z`), which nearly every
#: transcript timestamp has: `parse_js_date` reads it by position, without the groups.
_CANONICAL_ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", re.ASCII)


@lru_cache(maxsize=PARSED_DATES)
def parse_js_date(text: str) -> float | None:
    """Epoch milliseconds of a date string as JavaScript `Date.parse` reads it; None = NaN.

    The latest answers are kept (`PARSED_DATES`): an import reads an event's timestamp
    when it checks the line and again when it indexes the message, moments apart.

    >>> parse_js_date("1970-01-01T00:00:01.5Z")
    1500.0
    >>> parse_js_date("2026-11-30T07:44:48+01:00")
    1796021088000.0
    >>> parse_js_date("2026-11-30") == parse_js_date("2026-11-30T00:00:00Z") == 1795996800000
    True
    >>> parse_js_date("Mon, 30 Nov 2026 07:44:48 GMT") == parse_js_date("2026-11-30T07:44:48Z")
    True
    >>> parse_js_date("yesterday") is None, parse_js_date("2026-02-30") is None
    (True, True)
    """
    if len(text) == 24 and _CANONICAL_ISO.match(text) is not None:
        value = _canonical_time_value(text)
        if value is not None:
            return value
    return general_js_date(text)


def general_js_date(text: str) -> float | None:
    """`parse_js_date` without its shortcut for the canonical form (the oracle of the
    shortcut's tests: both give the same value for every string)."""
    candidate = text.strip()
    match = _ISO_DATE_TIME.fullmatch(candidate)
    if match is not None:
        return _iso_time_value(match)
    return _rfc2822_time_value(candidate)


def _canonical_time_value(text: str) -> float | None:
    """The time value of a string of `_CANONICAL_ISO`'s form, or None when this
    shortcut does not decide it (hour 24, a date that does not exist, a value out of
    range: the general reading says what those are).

    >>> _canonical_time_value("1970-01-01T00:00:01.500Z"), _canonical_time_value("2026-02-30T00:00:00.000Z")
    (1500.0, None)
    """
    minute_start = _minute_start(text[:16])
    second = int(text[17:19])
    if minute_start is None or second > 59:
        return None
    value = minute_start + second * 1000 + int(text[20:23])
    return float(value) if abs(value) <= MAX_TIME_VALUE else None


@lru_cache(maxsize=256)
def _minute_start(minute: str) -> int | None:
    """Epoch milliseconds of a `YYYY-MM-DDTHH:MM` minute in ASCII digits, None when the
    shortcut does not decide it (kept, a few: a transcript's events, read in order,
    share their minutes with their neighbours, and a long cache costs memory).

    >>> _minute_start("1970-01-02T00:01"), _minute_start("1970-01-01T24:00")
    (86460000, None)
    """
    hour, minute_of_hour = int(minute[11:13]), int(minute[14:16])
    if hour > 23 or minute_of_hour > 59:
        return None
    days = _day_number(minute[:10])
    if days is None:
        return None
    return ((days * 24 + hour) * 60 + minute_of_hour) * 60000


@lru_cache(maxsize=4096)
def _day_number(date: str) -> int | None:
    """Days since 1970-01-01 of a `YYYY-MM-DD` date in ASCII digits, None when the date
    does not exist (kept: the events of a window share a handful of dates)."""
    year, month, day = int(date[:4]), int(date[5:7]), int(date[8:10])
    if not 1 <= month <= 12 or not 1 <= day <= _days_in_month(year, month):
        return None
    return _days_from_civil(year, month, day)


def event_timestamp(event: dict[str, Any], fallback_timestamp: float) -> float:
    """Rule 5: the event's own `timestamp` as a finite number, else the fallback.

    >>> event_timestamp({"timestamp": 1700000000000}, 5.0)
    1700000000000.0
    >>> event_timestamp({"timestamp": "not a date"}, 5.0), event_timestamp({}, 5.0)
    (5.0, 5.0)
    >>> event_timestamp({"timestamp": True}, 5.0)
    5.0
    """
    stamp = event.get("timestamp")
    if type(stamp) is str:  # the common case; a parsed date is always finite
        parsed = parse_js_date(stamp)
        return float(fallback_timestamp) if parsed is None else parsed
    return clear_event_timestamp(event, fallback_timestamp)


def clear_event_timestamp(event: dict[str, Any], fallback_timestamp: float) -> float:
    """`event_timestamp` without its shortcut for a `str` timestamp (the oracle of the
    shortcut's tests, and the rest of the rule: numbers, `str` subclasses, no date).

    >>> clear_event_timestamp({"timestamp": "1970-01-01T00:00:01.000Z"}, 5.0)
    1000.0
    """
    stamp = event.get("timestamp")
    value: float | None = None
    if isinstance(stamp, (int, float)) and not isinstance(stamp, bool):
        try:
            value = float(stamp)
        except OverflowError:
            value = None
    elif isinstance(stamp, str):
        value = parse_js_date(stamp)
    if value is None or not math.isfinite(value):
        return float(fallback_timestamp)
    return value


def message_text(message: Any) -> str | None:
    """Rule 3 and 4: the searchable text of a `message` object, or None.

    >>> message_text({"role": "user", "content": "  hello  "})
    'hello'
    >>> message_text({"role": "user", "content": "   ", "text": "ignored"}) is None
    True
    >>> message_text({"role": "assistant", "content": [
    ...     {"type": "thinking", "thinking": "secret"},
    ...     {"type": "text", "text": " one "}, {"type": "output_text", "text": "two"}]})
    ' one \\ntwo'
    """
    if not isinstance(message, dict):
        return None
    content = message.get("content")
    if isinstance(content, str):
        return js_trim(content) or None
    text = message.get("text")
    if isinstance(text, str):
        return js_trim(text) or None
    if not isinstance(content, list):
        return None
    parts = [
        block["text"]
        for block in content
        if isinstance(block, dict)
        and block.get("type") in kinds.TEXT_BLOCK_TYPES
        and isinstance(block.get("text"), str)
        and not kinds.is_blank(block["text"])
    ]
    return "\n".join(parts) if parts else None


def extract_index_entry(
    stored: StoredEvent, fallback_timestamp: float | None = None
) -> IndexEntry | None:
    """The index entry of one stored event (rules 1–6), or None when it is not searchable.

    `fallback_timestamp` defaults to the event's `created_at` (never the indexing time).

    >>> from engine.model import StoredEvent
    >>> stored = StoredEvent("s1", 4, {"type": "message", "id": " m1 ", "timestamp": 10,
    ...                                "message": {"role": "user", "content": "Café"}})
    >>> extract_index_entry(stored)
    IndexEntry(session_id='s1', message_id='m1', role='user', timestamp=10.0, text='Café', seq=4)
    """
    event = stored.event
    if not isinstance(event, dict) or event.get("type") != kinds.MESSAGE:
        return None
    raw_id = kinds.non_blank_string(event.get("id"))
    if raw_id is None:
        return None
    message = event.get("message")
    role = message.get("role") if isinstance(message, dict) else None
    if role not in kinds.SEARCHABLE_ROLES:
        return None
    text = message_text(message)
    if text is None:
        return None
    fallback = stored.created_at if fallback_timestamp is None else fallback_timestamp
    return IndexEntry(
        session_id=stored.session_id,
        message_id=js_trim(raw_id),
        role=role,
        timestamp=event_timestamp(event, fallback),
        text=text,
        seq=stored.seq,
    )


def index_entries(events: Sequence[StoredEvent],
                  tree: TranscriptTree | None = None) -> list[IndexEntry]:
    """The index entries of ONE window: its visible (active-path) events, in path order
    (`tree`: its `scan_tree(events)`, when the caller has it)."""
    entries = []
    for stored in visible_events(events, tree):
        entry = extract_index_entry(stored)
        if entry is not None:
            entries.append(entry)
    return entries


# ---- Date.parse emulation ------------------------------------------------------------


def _iso_time_value(match: re.Match[str]) -> float | None:
    """Time value of a matched ISO string, or None when a field is out of range."""
    year_text = match["year"]
    if year_text == "-000000":
        return None
    year = int(year_text)
    month = int(match["month"] or 1)
    day = int(match["day"] or 1)
    hour = int(match["hour"] or 0)
    minute = int(match["minute"] or 0)
    second = int(match["second"] or 0)
    millisecond = int((match["fraction"] or "0")[:3].ljust(3, "0"))
    if not 1 <= month <= 12 or not 1 <= day <= _days_in_month(year, month):
        return None
    if minute > 59 or second > 59 or hour > 24:
        return None
    if hour == 24 and (minute or second or millisecond):
        return None
    offset_minutes = _offset_minutes(match["zone"])
    if offset_minutes is None:
        return None
    days = _days_from_civil(year, month, day)
    value = (((days * 24 + hour) * 60 + minute - offset_minutes) * 60 + second) * 1000
    value += millisecond
    return float(value) if abs(value) <= MAX_TIME_VALUE else None


def _offset_minutes(zone: str | None) -> int | None:
    """Minutes east of UTC for `Z`, `±HH:mm` or `±HHMM`; no zone means UTC (see module)."""
    if zone is None or zone in ("Z", "z"):
        return 0
    sign = -1 if zone[0] == "-" else 1
    digits = zone[1:].replace(":", "")
    hours, minutes = int(digits[:2]), int(digits[2:])
    if hours > 23 or minutes > 59:
        return None
    return sign * (hours * 60 + minutes)


def _rfc2822_time_value(text: str) -> float | None:
    """Time value of an RFC 2822 date (`Mon, 30 Nov 2026 07:44:48 GMT`), else None."""
    import email.utils  # here, not at the top: only non-ISO dates need it (start-up cost)

    try:
        moment = email.utils.parsedate_tz(text)
    except (TypeError, ValueError, IndexError):
        return None
    if moment is None:
        return None
    year, month, day, hour, minute, second = moment[:6]
    if not 1 <= month <= 12 or not 1 <= day <= _days_in_month(year, month):
        return None
    if hour > 23 or minute > 59 or second > 59:
        return None
    offset_seconds = moment[9] or 0
    days = _days_from_civil(year, month, day)
    value = ((((days * 24 + hour) * 60 + minute) * 60 + second) - offset_seconds) * 1000
    return float(value) if abs(value) <= MAX_TIME_VALUE else None


def _is_leap_year(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def _days_in_month(year: int, month: int) -> int:
    if month == 2:
        return 29 if _is_leap_year(year) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (any year, negative too).

    >>> _days_from_civil(1970, 1, 1), _days_from_civil(2000, 3, 1), _days_from_civil(0, 1, 1)
    (0, 11017, -719528)
    """
    shifted_year = year - 1 if month <= 2 else year
    era = shifted_year // 400
    year_of_era = shifted_year - era * 400
    day_of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * 146097 + day_of_era - 719468
