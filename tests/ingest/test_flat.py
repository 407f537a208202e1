"""Importing flat messages files (engine.ingest.flat): windows, linear chains, errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine.directory import MemoryDirectory
from engine.errors import DuplicateImport, MalformedInput
from engine.ingest import import_sources
from engine.model import SessionWindow
from engine.transcript.projection import index_entries
from engine.transcript.store import TranscriptStore
from engine.transcript.tree import active_path

LINES = [
    {"sessionKey": "agent:main:main", "sessionId": "s1", "messageId": "q1", "role": "user",
     "timestamp": "2026-03-01T10:00:00Z", "text": "Where is the café?"},
    {"sessionKey": "global", "sessionId": "g1", "messageId": "n1", "role": "user",
     "timestamp": "2026-03-01T11:00:00+01:00", "text": "an offset is read"},
    {"sessionKey": "agent:main:main", "sessionId": "s1", "messageId": "a1", "role": "assistant",
     "timestamp": 1772359260000, "text": "Round the corner."},
    {"sessionKey": "agent:main:main", "sessionId": "s2", "messageId": "q1", "role": "user",
     "timestamp": 1772359300000.5, "text": "New window, same key."},
    {"sessionKey": "agent:main:main", "sessionId": "s2", "messageId": "t1", "role": "toolResult",
     "timestamp": "2026-03-01 10:05", "text": "tool output"},
]


def write_lines(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows),
                    encoding="utf-8")
    return path


@pytest.fixture
def store() -> TranscriptStore:
    with TranscriptStore.create(MemoryDirectory()) as opened:
        yield opened


def test_flat_file_builds_windows_and_linear_chains(store: TranscriptStore,
                                                    tmp_path: Path) -> None:
    report = import_sources(store, [write_lines(tmp_path / "m.jsonl", LINES)], received_at=5.0)
    assert (report.windows, report.events, report.sources[0][1]) == (3, 5, "flat")
    assert report.unindexed_roles == (("toolResult", 1),)
    assert store.window("s1") == SessionWindow(
        "s1", "agent:main:main", current=False, created_at=1772359200000.0)
    assert store.window("s2") == SessionWindow(
        "s2", "agent:main:main", previous_session_id="s1", reason="rollover",
        created_at=1772359300000.5)
    assert store.window("g1") == SessionWindow("g1", "global", created_at=1772359200000.0)
    assert [e.event for e in store.events("s1")] == [
        {"type": "message", "id": "q1", "parentId": None, "timestamp": "2026-03-01T10:00:00Z",
         "message": {"role": "user", "content": "Where is the café?"}},
        {"type": "message", "id": "a1", "parentId": "q1", "timestamp": 1772359260000,
         "message": {"role": "assistant", "content": "Round the corner."}},
    ]
    assert store.events("g1")[0].event["timestamp"] == "2026-03-01T11:00:00+01:00"
    assert [e.event["id"] for e in active_path(store.events("s2"))] == ["q1", "t1"]
    # the line's own time is indexed, never the import time (received_at=5.0)
    entries = index_entries(store.events("s2")) + index_entries(store.events("g1"))
    assert [(e.message_id, e.timestamp) for e in entries] == [
        ("q1", 1772359300000.5), ("n1", 1772359200000.0)]


def test_flat_window_follows_an_existing_current_window(store: TranscriptStore,
                                                        tmp_path: Path) -> None:
    import_sources(store, [write_lines(tmp_path / "one.jsonl", LINES[:1])])
    import_sources(store, [write_lines(tmp_path / "two.jsonl", [
        {**LINES[0], "sessionId": "s9", "messageId": "x"}])])
    assert store.window("s1").current is False
    assert store.window("s9").previous_session_id == "s1"
    assert [w.session_id for w in store.windows_of("agent:main:main") if w.current] == ["s9"]


def line(session_id: str, message_id: str, timestamp: int, key: str = "agent:main:mix") -> dict:
    return {"sessionKey": key, "sessionId": session_id, "messageId": message_id,
            "role": "user", "timestamp": timestamp, "text": message_id}


def chain(store: TranscriptStore, key: str = "agent:main:mix") -> list[tuple]:
    return sorted((w.session_id, w.previous_session_id, w.reason, w.current)
                  for w in store.windows_of(key))


def test_interleaved_windows_make_the_window_with_the_newest_message_current(
        store: TranscriptStore, tmp_path: Path) -> None:
    # w1@1, w2@2, w1@3: OpenClaw's Gateway writes each message into the current window,
    # so w1 (holding the newest) is current and follows w2
    import_sources(store, [write_lines(tmp_path / "m.jsonl", [
        line("w1", "a", 1), line("w2", "b", 2), line("w1", "c", 3)])])
    assert chain(store) == [("w1", "w2", "rollover", True), ("w2", None, "initial", False)]
    assert [e.event["id"] for e in store.events("w1")] == ["a", "c"]  # one chain each


def test_a_tie_goes_to_the_later_line_and_ordered_windows_keep_their_order(
        store: TranscriptStore, tmp_path: Path) -> None:
    import_sources(store, [write_lines(tmp_path / "m.jsonl", [
        line("w1", "a", 5), line("w2", "b", 5),  # a tie: w2's line is later
        line("v1", "a", 1, "agent:main:seq"), line("v2", "b", 2, "agent:main:seq")])])
    assert chain(store) == [("w1", None, "initial", False), ("w2", "w1", "rollover", True)]
    assert chain(store, "agent:main:seq") == [
        ("v1", None, "initial", False), ("v2", "v1", "rollover", True)]


def test_interleaved_windows_follow_what_the_store_held_before(
        store: TranscriptStore, tmp_path: Path) -> None:
    import_sources(store, [write_lines(tmp_path / "one.jsonl", [line("w0", "z", 1)])])
    import_sources(store, [write_lines(tmp_path / "two.jsonl", [
        line("w1", "a", 10), line("w2", "b", 20), line("w1", "c", 30)])])
    assert chain(store) == [("w0", None, "initial", False), ("w1", "w2", "rollover", True),
                            ("w2", "w0", "rollover", False)]


def test_a_flat_file_imported_again_adds_nothing(store: TranscriptStore, tmp_path: Path) -> None:
    path = write_lines(tmp_path / "m.jsonl", LINES)
    import_sources(store, [path])
    before = (store.stats(), store.generation)
    report = import_sources(store, [path])
    assert (report.windows, report.events, report.extended) == (0, 0, 0)
    assert (store.stats(), store.generation) == before  # not even an empty commit


def test_a_flat_file_that_grew_adds_its_new_lines(store: TranscriptStore, tmp_path: Path) -> None:
    path = write_lines(tmp_path / "m.jsonl", LINES[:3])
    import_sources(store, [path])
    later = {"sessionKey": "agent:main:main", "sessionId": "s1", "messageId": "q2",
             "role": "user", "timestamp": 1772359400000, "text": "And the bakery?"}
    write_lines(path, [*LINES, later])
    report = import_sources(store, [path])
    assert (report.windows, report.events, report.extended) == (1, 3, 1)
    assert [stored.event["id"] for stored in store.events("s1")] == ["q1", "a1", "q2"]
    assert store.events("s1")[-1].event["parentId"] == "a1"
    assert [w.session_id for w in store.windows() if w.current] == ["g1", "s2"]


@pytest.mark.parametrize(("rows", "problem"), [
    ([{**LINES[0], "text": "changed"}, *LINES[1:3]],
     r'm\.jsonl:1: session window "s1" is already in the store, and its message 1 there'),
    (LINES[:2], r'm\.jsonl: session window "s1" holds 2 messages in the store, this file only 1'),
])
def test_a_flat_file_that_does_not_continue_its_windows_is_refused(
        store: TranscriptStore, tmp_path: Path, rows: list[Any], problem: str) -> None:
    path = write_lines(tmp_path / "m.jsonl", LINES[:3])
    import_sources(store, [path])
    before = store.stats()
    write_lines(path, rows)
    with pytest.raises(DuplicateImport, match=problem):
        import_sources(store, [path])
    assert store.stats() == before


BAD_LINES = [
    ("unknown field", {**LINES[0], "author": "me"}, "unknown field 'author'"),
    ("missing text", {k: v for k, v in LINES[0].items() if k != "text"}, 'missing "text"'),
    ("text not string", {**LINES[0], "text": 5}, '"text" must be a string'),
    ("blank role", {**LINES[0], "role": " "}, '"role" must not be blank'),
    ("bad key", {**LINES[0], "sessionKey": "agent:main"}, 'session key "agent:main"'),
    ("timestamp of another type", {**LINES[0], "timestamp": [1]},
     '"timestamp" must be epoch milliseconds or an ISO-8601 date-time string, not a JSON array'),
    ("missing timestamp", {k: v for k, v in LINES[0].items() if k != "timestamp"},
     'missing "timestamp" (epoch milliseconds or an ISO-8601 date-time string)'),
    ("null timestamp", {**LINES[0], "timestamp": None},
     '"timestamp" must be epoch milliseconds or an ISO-8601 date-time string, not null'),
    ("boolean timestamp", {**LINES[0], "timestamp": True}, "not a boolean"),
    ("unparseable timestamp", {**LINES[0], "timestamp": "last tuesday"},
     '"timestamp" "last tuesday" is not an ISO-8601 date-time'),
    ("impossible date", {**LINES[0], "timestamp": "2026-02-30T10:00:00Z"},
     '"timestamp" "2026-02-30T10:00:00Z" is not an ISO-8601 date-time'),
    ("timestamp out of range", {**LINES[0], "timestamp": 9e15},
     '"timestamp" 9000000000000000.0 is not a date'),
    ("id under another key", {**LINES[2], "sessionKey": "global"},
     'sessionId "s1" belongs to key "agent:main:main" (line 1), not "global"'),
    ("repeated message id", {**LINES[2], "messageId": "q1"},
     'messageId "q1" is already used in window "s1" on line 1'),
    ("bad session id", {**LINES[2], "sessionId": "a/b"}, 'must not contain "/"'),
]


@pytest.mark.parametrize(("name", "row", "reason"), BAD_LINES, ids=[c[0] for c in BAD_LINES])
def test_bad_flat_line_names_the_line_and_imports_nothing(
    store: TranscriptStore, tmp_path: Path, name: str, row: dict[str, Any], reason: str
) -> None:
    rows = [LINES[0], LINES[1], row]
    path = write_lines(tmp_path / "m.jsonl", rows)
    with pytest.raises(MalformedInput) as caught:
        import_sources(store, [path])
    assert (caught.value.path, caught.value.line) == (str(path), 3)
    assert reason in caught.value.reason
    assert store.stats()["windows"] == 0 and store.stats()["events"] == 0
