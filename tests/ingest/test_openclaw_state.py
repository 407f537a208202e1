"""Importing an OpenClaw state directory (engine.ingest.openclaw_state)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine.directory import MemoryDirectory
from engine.errors import MalformedInput
from engine.ingest import detect_form, import_sources
from engine.transcript.projection import index_entries
from engine.transcript.store import TranscriptStore
from engine.transcript.windows import window_chain

HEADER = {"type": "session", "version": 3, "id": "uuid-1", "timestamp": "2026-02-01T10:00:00Z",
          "cwd": "/work"}


def message(entry_id: str, parent: str | None, role: str, text: str) -> dict[str, Any]:
    return {"type": "message", "id": entry_id, "parentId": parent,
            "timestamp": "2026-02-01T10:00:05.000Z",
            "message": {"role": role, "content": [{"type": "text", "text": text}],
                        "timestamp": 1769940005000}}


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


def build_state(root: Path) -> Path:
    sessions = root / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True)
    (sessions / "sessions.json").write_text(json.dumps({
        "agent:main:main": {"sessionId": "uuid-1", "sessionStartedAt": 1769940000000,
                            "chatType": "direct", "updatedAt": 1769940100000},
        "cron:daily": {"sessionId": "uuid-2", "sessionFile": str(sessions / "uuid-2.jsonl")},
    }), encoding="utf-8")
    write_jsonl(sessions / "uuid-1.jsonl", [HEADER, message("a1b2c3d4", None, "user", "live")])
    write_jsonl(sessions / "uuid-1.jsonl.reset.1769900000000",
                [{**HEADER, "timestamp": "2026-01-31T22:53:20Z"},
                 message("00000001", None, "user", "older")])
    write_jsonl(sessions / "uuid-1.jsonl.reset.1769800000000",
                [message("00000002", None, "assistant", "oldest")])
    write_jsonl(sessions / "uuid-2.jsonl", [message("c0ffee00", None, "assistant", "digest")])
    write_jsonl(sessions / "stray.jsonl", [message("deadbeef", None, "user", "orphan")])
    write_jsonl(sessions / "uuid-9.jsonl.deleted.1769000000000", [message("x", None, "user", "x")])
    (sessions / "notes.txt").write_text("not a transcript", encoding="utf-8")
    return root


@pytest.fixture
def store() -> TranscriptStore:
    with TranscriptStore.create(MemoryDirectory()) as opened:
        yield opened


def test_state_directory_windows_keys_and_chains(store: TranscriptStore, tmp_path: Path) -> None:
    state = build_state(tmp_path / "state")
    assert detect_form(state) == "openclaw-state"
    report = import_sources(store, [state])
    assert (report.windows, report.events) == (5, 7)
    chain = window_chain(store.windows_of("agent:main:main"))
    assert [(w.session_id, w.reason, w.current, w.previous_session_id) for w in chain] == [
        ("uuid-1.reset.1769800000000", "initial", False, None),
        ("uuid-1.reset.1769900000000", "reset", False, "uuid-1.reset.1769800000000"),
        ("uuid-1", "reset", True, "uuid-1.reset.1769900000000"),
    ]
    live = store.window("uuid-1")
    assert live.created_at == 1769940000000.0
    assert live.extra["openclawEntry"]["chatType"] == "direct"
    assert store.window("uuid-1.reset.1769900000000").created_at == 1769900000000.0
    assert store.window("uuid-2").session_key == "agent:main:cron:daily"
    assert store.window("uuid-2").current is True
    stray = store.window("stray")
    assert (stray.session_key, stray.current) == ("unknown", False)
    assert store.events("uuid-1")[0].event == HEADER
    entries = index_entries(store.events("uuid-1"))
    assert [(e.message_id, e.text, e.timestamp) for e in entries] == [
        ("a1b2c3d4", "live", 1769940005000.0)]


def test_state_notes_are_reported(store: TranscriptStore, tmp_path: Path) -> None:
    state = build_state(tmp_path / "state")
    sessions = state / "agents" / "main" / "sessions"
    report = import_sources(store, [state])
    assert sorted(report.notes) == sorted([
        f'{sessions / "stray.jsonl"}: no sessions.json entry names it; imported under "unknown"',
        f"{sessions / 'uuid-9.jsonl.deleted.1769000000000'}: deleted transcript archive skipped",
    ])


def test_bad_transcript_line_names_file_and_line(store: TranscriptStore, tmp_path: Path) -> None:
    state = build_state(tmp_path / "state")
    path = state / "agents" / "main" / "sessions" / "uuid-2.jsonl"
    path.write_text(path.read_text(encoding="utf-8") + '{"type": "message", "id": "z"}\n',
                    encoding="utf-8")
    with pytest.raises(MalformedInput) as caught:
        import_sources(store, [state])
    assert (caught.value.path, caught.value.line) == (str(path), 2)
    assert caught.value.reason == 'a message event needs a "message" object'
    assert store.windows() == []


def test_bad_session_index(store: TranscriptStore, tmp_path: Path) -> None:
    state = build_state(tmp_path / "state")
    index = state / "agents" / "main" / "sessions" / "sessions.json"
    index.write_text('{"agent:main:main": {"sessionId": 5}}', encoding="utf-8")
    with pytest.raises(MalformedInput, match='entry "agent:main:main" needs a string "sessionId"'):
        import_sources(store, [state])
    index.write_text('{\n  "x": ', encoding="utf-8")
    with pytest.raises(MalformedInput) as caught:
        import_sources(store, [state])
    assert (caught.value.path, caught.value.line) == (str(index), 2)
