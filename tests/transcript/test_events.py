"""Event kinds and validation (engine.transcript.events)."""

from __future__ import annotations

import pytest

from engine.transcript.events import (
    is_canonical,
    is_side_append,
    js_trim,
    validation_problem,
)

VALID_EVENTS = [
    {"type": "session", "version": 3, "id": "abc", "timestamp": "2026-01-01T00:00:00Z"},
    {"type": "message", "id": "m1", "parentId": None,
     "message": {"role": "user", "content": "hi"}},
    {"type": "message", "id": "m2", "parentId": "m1", "timestamp": 1700000000000,
     "message": {"role": "assistant", "content": [
         {"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "ok"},
         {"type": "toolCall", "id": "c1", "name": "read", "arguments": {}}]}},
    {"type": "message", "id": "m3", "message": {"role": "toolResult", "toolCallId": "c1",
                                                "content": [{"type": "text", "text": "x"}]}},
    {"type": "message", "id": "m4", "message": {"role": "assistant", "content": []}},
    {"type": "leaf", "id": "l1", "parentId": "m2", "targetId": "m1"},
    {"type": "leaf", "id": "l2", "parentId": None, "targetId": None},
    {"type": "reset", "id": "r1", "parentId": "m2"},
    {"type": "reset", "id": "r2", "parentId": "m2", "firstKeptEntryId": "m1"},
    {"type": "compaction", "id": "c1", "parentId": "r2", "firstKeptEntryId": "m1",
     "tokensBefore": 1000},
    {"type": "custom_message", "id": "cm", "parentId": "c1", "display": True},
    {"type": "model_change", "id": "x", "parentId": "cm", "modelId": "sonnet-4.6"},
    {"type": "something_new", "payload": [1, 2, 3]},
    {"type": "message", "id": "m5", "timestamp": None, "message": {"role": "user"}},
]


@pytest.mark.parametrize("event", VALID_EVENTS, ids=lambda event: event["type"])
def test_valid_events_have_no_problem(event: dict) -> None:
    assert validation_problem(event) is None


INVALID_EVENTS = [
    ("not an object", ["message"], "an event must be a JSON object"),
    ("no type", {"id": "m1"}, 'an event needs a non-blank string "type"'),
    ("blank type", {"type": "  "}, 'an event needs a non-blank string "type"'),
    ("message without id", {"type": "message", "message": {"role": "user"}},
     'a message event needs a non-blank string "id"'),
    ("message blank id", {"type": "message", "id": " ", "message": {"role": "user"}},
     'a message event needs a non-blank string "id"'),
    ("message without body", {"type": "message", "id": "m1"},
     'a message event needs a "message" object'),
    ("message without role", {"type": "message", "id": "m1", "message": {}},
     'a message needs a non-blank string "role"'),
    ("content number", {"type": "message", "id": "m1",
                        "message": {"role": "user", "content": 5}},
     'a message "content" must be a string or a list of blocks'),
    ("block not object", {"type": "message", "id": "m1",
                          "message": {"role": "user", "content": ["x"]}},
     "content block 0 must be a JSON object"),
    ("block without type", {"type": "message", "id": "m1",
                            "message": {"role": "user", "content": [{"text": "x"}]}},
     'content block 0 needs a string "type"'),
    ("leaf without target", {"type": "leaf", "id": "l1", "parentId": None},
     'a leaf event needs "targetId" (a non-blank string, or null)'),
    ("leaf without parentId", {"type": "leaf", "id": "l1", "targetId": "m1"},
     'a leaf event needs "parentId" (a non-blank string, or null)'),
    ("bad parentId", {"type": "message", "id": "m1", "parentId": 3,
                      "message": {"role": "user"}},
     '"parentId" must be a non-blank string or null'),
    ("bad timestamp", {"type": "message", "id": "m1", "timestamp": [1],
                       "message": {"role": "user"}},
     '"timestamp" must be an ISO-8601 string, epoch milliseconds, or null'),
    ("bad display", {"type": "custom_message", "id": "c", "display": "yes"},
     'a custom_message "display" must be true or false'),
    ("bad firstKept", {"type": "reset", "id": "r", "firstKeptEntryId": ""},
     'a reset "firstKeptEntryId" must be a non-blank string'),
]


@pytest.mark.parametrize(("name", "event", "reason"), INVALID_EVENTS,
                         ids=[case[0] for case in INVALID_EVENTS])
def test_invalid_events_name_the_reason(name: str, event: object, reason: str) -> None:
    assert validation_problem(event) == reason


def test_canonical_and_side_append() -> None:
    assert is_canonical({"type": "reset"})
    assert not is_canonical({"type": "vendor_note"})
    assert is_side_append({"type": "message", "appendMode": "side"}) is True
    assert is_side_append({"type": "vendor_note", "appendMode": "side"}) is False


def test_js_trim_uses_the_javascript_whitespace_class() -> None:
    assert js_trim("\ufeff\u2028 x \u00a0") == "x"
    assert js_trim("\x1c x \x85") == "\x1c x \x85"
