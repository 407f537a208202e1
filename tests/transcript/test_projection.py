"""What is searchable (engine.transcript.projection): behaviour.md §2.3 rules 1–6."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.model import IndexEntry, StoredEvent
from engine.transcript.projection import (
    extract_index_entry,
    general_js_date,
    index_entries,
    parse_js_date,
)

CREATED_AT = 4242.0


def stored(event: Any, seq: int = 0) -> StoredEvent:
    return StoredEvent("s1", seq, event, created_at=CREATED_AT)


def message(content: Any = "hello", role: str = "user", **fields: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"role": role}
    if content is not None:
        body["content"] = content
    body.update(fields.pop("body", {}))
    return {"type": "message", "id": "m1", "timestamp": 100, "message": body, **fields}


# Rule 1: type "message" and a non-blank string id.
@pytest.mark.parametrize("event", [
    {**message(), "type": "custom_message"},
    {**message(), "id": "   "},
    {**message(), "id": 7},
    {key: value for key, value in message().items() if key != "id"},
    ["not", "an", "object"],
])
def test_rule1_only_message_events_with_an_id(event: Any) -> None:
    assert extract_index_entry(stored(event)) is None


# Rule 2: role exactly user or assistant.
@pytest.mark.parametrize("role", ["toolResult", "system", "tool", "User", ""])
def test_rule2_other_roles_are_excluded(role: str) -> None:
    assert extract_index_entry(stored(message(role=role))) is None


def test_rule2_user_and_assistant_are_indexed() -> None:
    assert extract_index_entry(stored(message(role="assistant"))).role == "assistant"
    assert extract_index_entry(stored(message(role="user"))).role == "user"


# Rule 3: text sources in order.
def test_rule3_string_content_is_trimmed() -> None:
    assert extract_index_entry(stored(message("\u3000 Café crème \n"))).text == "Café crème"


def test_rule3_message_text_when_content_is_not_a_string() -> None:
    event = message(content=None, body={"text": "  from text  "})
    assert extract_index_entry(stored(event)).text == "from text"
    event = message(content=[{"type": "text", "text": "blocks"}], body={"text": "wins"})
    assert extract_index_entry(stored(event)).text == "wins"


def test_rule3_blank_string_content_does_not_fall_through_to_text() -> None:
    event = message(content="   ", body={"text": "never used"})
    assert extract_index_entry(stored(event)) is None


def test_rule3_text_blocks_joined_untrimmed_others_ignored() -> None:
    blocks = [
        {"type": "thinking", "thinking": "private reasoning"},
        {"type": "text", "text": " first "},
        {"type": "image", "source": {"data": "..."}},
        {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "x"}},
        {"type": "input_text", "text": "second"},
        {"type": "text", "text": "   "},
        {"type": "output_text", "text": "third\n"},
        {"type": "text", "text": 5},
        "stray string",
    ]
    entry = extract_index_entry(stored(message(blocks)))
    assert entry.text == " first \nsecond\nthird\n"


# Rule 4: empty text, no entry.
@pytest.mark.parametrize("content", ["", " \t ", [], [{"type": "thinking", "thinking": "x"}],
                                     [{"type": "image"}], None])
def test_rule4_empty_text_gives_no_entry(content: Any) -> None:
    assert extract_index_entry(stored(message(content))) is None


# Rule 5: the timestamp.
def test_rule5_number_timestamp() -> None:
    assert extract_index_entry(stored(message(timestamp=1700000000123))).timestamp == (
        1700000000123.0)
    assert extract_index_entry(stored(message(timestamp=12.5))).timestamp == 12.5


def test_rule5_iso_string_is_parsed_like_date_parse() -> None:
    entry = extract_index_entry(stored(message(timestamp="2026-11-30T07:44:48.250Z")))
    assert entry.timestamp == 1796024688250.0


@pytest.mark.parametrize("stamp", ["not a date", True, None, [1], {"ms": 1}])
def test_rule5_otherwise_created_at(stamp: Any) -> None:
    entry = extract_index_entry(stored(message(timestamp=stamp)))
    assert entry.timestamp == CREATED_AT


def test_rule5_missing_timestamp_uses_created_at_or_the_given_fallback() -> None:
    event = message()
    del event["timestamp"]
    assert extract_index_entry(stored(event)).timestamp == CREATED_AT
    assert extract_index_entry(stored(event), fallback_timestamp=9.0).timestamp == 9.0


def test_rule5_nested_message_timestamp_is_not_used() -> None:
    event = message(body={"timestamp": 1})
    del event["timestamp"]
    assert extract_index_entry(stored(event)).timestamp == CREATED_AT


# Rule 6: messageId trimmed.
def test_rule6_message_id_is_trimmed() -> None:
    entry = extract_index_entry(stored({**message(), "id": "\ufeff m1 "}, seq=7))
    assert entry == IndexEntry("s1", "m1", "user", 100.0, "hello", 7)


@pytest.mark.parametrize(("text", "expected"), [
    ("1970-01-01T00:00:00Z", 0.0),
    ("1970-01-01", 0.0),
    ("1970-01", 0.0),
    ("1970", 0.0),
    ("1970-01-01T00:00", 0.0),
    ("1970-01-01 00:00:01", 1000.0),
    ("1970-01-01T00:00:00.123456Z", 123.0),
    ("1970-01-01T01:00:00+01:00", 0.0),
    ("1970-01-01T01:00:00+0100", 0.0),
    ("1969-12-31T23:00:00-01:00", 0.0),
    ("1970-01-01T24:00:00Z", 86400000.0),
    ("+001970-01-01T00:00:00Z", 0.0),
    ("-000001-01-01T00:00:00Z", -62198755200000.0),
    ("Thu, 01 Jan 1970 00:00:10 GMT", 10000.0),
    ("2024-02-29", 1709164800000.0),
])
def test_parse_js_date_accepts(text: str, expected: float) -> None:
    assert parse_js_date(text) == expected


@pytest.mark.parametrize("text", ["", "tomorrow", "2023-02-29", "1970-13-01", "1970-01-01T25:00",
                                  "1970-01-01T24:00:01Z", "-000000-01-01T00:00:00Z",
                                  "+275761-01-01T00:00:00Z", "1970-1-1",
                                  "\uff12\uff10\uff12\uff16-01-23T00:00:22.290Z"])
def test_parse_js_date_rejects(text: str) -> None:
    # Node 20: `Date.parse` of each is NaN (fullwidth digits included: ASCII digits only).
    assert parse_js_date(text) is None


def _two_digits(*edges: int) -> st.SearchStrategy[str]:
    """Two digits: often one of `edges` (a field's limits and just past them)."""
    return st.one_of(st.sampled_from(edges), st.integers(0, 99)).map(
        lambda number: f"{number:02d}")


#: Strings of the canonical `toISOString` shape, with fields past their ranges too
#: (month 13, February 30, hour 24, minute 60) and the years around the edges.
_CANONICAL_SHAPED = st.builds(
    "{}-{}-{}T{}:{}:{}.{}Z".format,
    st.one_of(st.sampled_from([0, 1900, 2000, 2024, 2026, 9999]), st.integers(0, 9999)).map(
        lambda year: f"{year:04d}"),
    _two_digits(0, 1, 2, 12, 13), _two_digits(0, 1, 28, 29, 30, 31, 32),
    _two_digits(0, 23, 24, 25), _two_digits(0, 59, 60), _two_digits(0, 59, 60),
    st.integers(0, 999).map(lambda milliseconds: f"{milliseconds:03d}"),
)


@settings(max_examples=1000)  # a string takes microseconds; the edges need many draws
@given(st.one_of(_CANONICAL_SHAPED, st.text(alphabet="0123456789-T:.Z ", max_size=26)))
def test_the_canonical_shortcut_reads_as_the_general_parser(text: str) -> None:
    assert parse_js_date(text) == general_js_date(text)


@pytest.mark.parametrize("text", ["2026-02-30T00:00:00.000Z", "2026-01-01T24:00:00.000Z",
                                  "2026-01-01T24:30:00.000Z", "2026-01-01T23:60:00.000Z",
                                  "2024-02-29T23:59:59.999Z", "0000-01-01T00:00:00.000Z"])
def test_the_canonical_shortcut_defers_or_agrees_at_the_edges(text: str) -> None:
    assert parse_js_date(text) == general_js_date(text)


def test_index_entries_follow_the_active_path_only() -> None:
    events = [
        {"type": "message", "id": "m1", "parentId": None, "timestamp": 1,
         "message": {"role": "user", "content": "alpha origin"}},
        {"type": "message", "id": "m2", "parentId": "m1", "timestamp": 2,
         "message": {"role": "assistant", "content": "beta abandoned"}},
        {"type": "leaf", "id": "l1", "parentId": "m2", "targetId": "m1"},
        {"type": "message", "id": "m3", "parentId": "m1", "timestamp": 3,
         "message": {"role": "toolResult", "content": "tool output"}},
        {"type": "message", "id": "m4", "parentId": "m3", "timestamp": 4,
         "message": {"role": "assistant", "content": "gamma continues"}},
    ]
    entries = index_entries([stored(event, seq) for seq, event in enumerate(events)])
    assert [(e.message_id, e.text, e.seq) for e in entries] == [
        ("m1", "alpha origin", 0), ("m4", "gamma continues", 4)]
    assert all(math.isfinite(e.timestamp) for e in entries)
