"""Importing corpus directories (engine.ingest): happy path, atomic failures, duplicates."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine.directory import FileDirectory, MemoryDirectory
from engine.errors import DuplicateImport, MalformedInput, UsageError
from engine.ingest import detect_form, import_sources
from engine.model import SessionWindow
from engine.transcript.store import TranscriptStore

WINDOWS = [
    {"sessionId": "w1", "sessionKey": "agent:a:main", "current": False, "title": "First",
     "createdAt": "2026-01-01T00:00:00Z"},
    {"sessionId": "w2", "sessionKey": "agent:a:main", "previousSessionId": "w1",
     "reason": "reset", "createdAt": 1767312000000},
    {"sessionId": "w3", "sessionKey": "agent:a:child", "kind": "subagent",
     "spawnedBy": "agent:a:main", "ownerSessionKey": "agent:a:main",
     "parentSessionKey": "agent:a:main", "incognito": True, "archived": True,
     "group": "Research", "customField": {"kept": [1, 2]}},
]
EVENTS = {
    "w1": [
        {"type": "session", "version": 3, "id": "w1", "timestamp": "2026-01-01T00:00:00Z"},
        {"type": "message", "id": "m1", "parentId": None, "timestamp": 1,
         "message": {"role": "user", "content": "hello"}},
        {"type": "message", "id": "m2", "parentId": "m1", "timestamp": 2,
         "message": {"role": "assistant", "content": [{"type": "text", "text": "hi"}]}},
    ],
    "w2": [
        {"type": "message", "id": "m1", "parentId": None, "timestamp": 3,
         "message": {"role": "user", "content": "again"}},
    ],
    "w3": [],
}


def write_jsonl(path: Path, rows: list[Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows),
                    encoding="utf-8")


def write_corpus(folder: Path, windows: list[dict[str, Any]] = WINDOWS,
                 events: dict[str, list[Any]] = EVENTS) -> Path:
    write_jsonl(folder / "sessions.jsonl", windows)
    for session_id, rows in events.items():
        write_jsonl(folder / "transcripts" / f"{session_id}.jsonl", rows)
    return folder


def snapshot(store: TranscriptStore) -> tuple[dict[str, int], list[tuple[Any, ...]]]:
    """Everything an import could change: stats, windows (all fields) and events."""
    rows = []
    for window in store.windows():
        events = [(e.seq, json.dumps(e.event, sort_keys=True))
                  for e in store.events(window.session_id)]
        rows.append((repr(window), window.extra, events))
    return store.stats(), rows


@pytest.fixture
def store() -> TranscriptStore:
    with TranscriptStore.create(MemoryDirectory()) as opened:
        yield opened


def test_import_corpus_stores_windows_and_events(store: TranscriptStore, tmp_path: Path) -> None:
    report = import_sources(store, [write_corpus(tmp_path / "c")], received_at=77.0)
    assert (report.windows, report.events) == (3, 4)
    assert report.sources == ((str(tmp_path / "c"), "corpus"),)
    assert store.stats()["windows"] == 3 and store.stats()["events"] == 4
    assert store.window("w1") == SessionWindow(
        "w1", "agent:a:main", current=False, title="First", created_at=1767225600000.0)
    assert store.window("w2") == SessionWindow(
        "w2", "agent:a:main", previous_session_id="w1", reason="reset",
        created_at=1767312000000.0)
    child = store.window("w3")
    assert child == SessionWindow(
        "w3", "agent:a:child", kind="subagent", spawned_by="agent:a:main",
        owner_session_key="agent:a:main", parent_session_key="agent:a:main",
        incognito=True, archived=True, group="Research")
    assert child.extra == {"customField": {"kept": [1, 2]}}
    stored = store.events("w1")
    assert [e.event for e in stored] == EVENTS["w1"]
    assert [e.seq for e in stored] == [0, 1, 2]
    assert {e.created_at for e in stored} == {77.0}
    assert store.event_count("w3") == 0


def test_import_into_a_file_store(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "c")
    with TranscriptStore.create(FileDirectory(tmp_path / "store")) as store:
        import_sources(store, [corpus])
    with TranscriptStore.open(FileDirectory(tmp_path / "store")) as reopened:
        assert [w.session_id for w in reopened.windows()] == ["w1", "w2", "w3"]
        assert [e.event for e in reopened.events("w2")] == EVENTS["w2"]


def test_double_import_is_rejected_without_duplicates(store: TranscriptStore,
                                                      tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "c")
    import_sources(store, [corpus])
    before = snapshot(store)
    with pytest.raises(DuplicateImport, match='session window "w1" is already in the store'):
        import_sources(store, [corpus])
    assert snapshot(store) == before


def test_same_corpus_twice_in_one_import_is_rejected(store: TranscriptStore,
                                                     tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "c")
    with pytest.raises(DuplicateImport, match="was already read from"):
        import_sources(store, [corpus, corpus])
    assert store.stats()["windows"] == 0


def corrupt(folder: Path, relative: str, line: int, text: str) -> None:
    """Replace line `line` (1-based) of a corpus file with `text`."""
    path = folder / relative
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[line - 1] = text
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


MALFORMED = [
    ("bad json", "sessions.jsonl", 2, '{"sessionId": "w2",', "invalid JSON"),
    ("not an object", "sessions.jsonl", 1, "[1, 2]", "expected a JSON object, found an array"),
    ("unknown reason", "sessions.jsonl", 2,
     '{"sessionId": "w2", "sessionKey": "agent:a:main", "reason": "reboot"}',
     'unknown window reason "reboot"'),
    ("missing key", "sessions.jsonl", 3, '{"sessionId": "w3"}', 'missing "sessionKey"'),
    ("bad key", "sessions.jsonl", 3, '{"sessionId": "w3", "sessionKey": "main"}',
     'session key "main" must be'),
    ("NaN", "sessions.jsonl", 3, '{"sessionId": "w3", "sessionKey": "global", "createdAt": NaN}',
     "NaN is not valid JSON"),
    ("repeated id", "sessions.jsonl", 3, '{"sessionId": "w1", "sessionKey": "global"}',
     'sessionId "w1" is already on line 1'),
    ("two current", "sessions.jsonl", 3, '{"sessionId": "w3", "sessionKey": "agent:a:main"}',
     'key "agent:a:main" already has a current window "w2"'),
    ("event without id", "transcripts/w1.jsonl", 3,
     '{"type": "message", "message": {"role": "user", "content": "x"}}',
     'a message event needs a non-blank string "id"'),
    ("event not object", "transcripts/w1.jsonl", 2, '"just a string"',
     "expected a JSON object, found a string"),
    ("event bad leaf", "transcripts/w1.jsonl", 3,
     '{"type": "leaf", "id": "l1", "parentId": "m1"}', 'a leaf event needs "targetId"'),
    # msgpack cannot hold an integer past 64 bits; whatever the store's reason, the line is named
    ("value the store refuses", "transcripts/w1.jsonl", 3,
     '{"type": "message", "id": "m9", "n": 1208925819614629174706176}', ""),
    ("duplicate event id", "transcripts/w1.jsonl", 3,
     '{"type": "message", "id": "m1", "message": {"role": "user"}}',
     'event id "m1" is already used on line 2'),
]


@pytest.mark.parametrize(("name", "relative", "line", "text", "reason"), MALFORMED,
                         ids=[case[0] for case in MALFORMED])
def test_malformed_line_names_file_and_line_and_changes_nothing(
    store: TranscriptStore, tmp_path: Path, name: str, relative: str, line: int, text: str,
    reason: str,
) -> None:
    import_sources(store, [write_corpus(tmp_path / "earlier", [
        {"sessionId": "e1", "sessionKey": "global"}], {"e1": EVENTS["w2"]})])
    before = snapshot(store)
    corpus = write_corpus(tmp_path / "c")
    corrupt(corpus, relative, line, text)
    with pytest.raises(MalformedInput) as caught:
        import_sources(store, [corpus])
    assert caught.value.path == str(corpus / relative)
    assert caught.value.line == line
    assert reason in caught.value.reason
    assert snapshot(store) == before


def test_invalid_utf8_names_the_line(store: TranscriptStore, tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "c")
    path = corpus / "transcripts" / "w1.jsonl"
    path.write_bytes(path.read_bytes() + b'{"type": "x\xff"}\n')
    with pytest.raises(MalformedInput) as caught:
        import_sources(store, [corpus])
    assert (caught.value.line, caught.value.reason) == (4, "not valid UTF-8 at byte 11 of the line")
    assert store.stats()["windows"] == 0


def test_blank_lines_are_skipped_and_counted(store: TranscriptStore, tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "c")
    path = corpus / "transcripts" / "w1.jsonl"
    path.write_text("\n   \n" + path.read_text(encoding="utf-8") + "{bad\n", encoding="utf-8")
    with pytest.raises(MalformedInput) as caught:
        import_sources(store, [corpus])
    assert caught.value.line == 6


def test_missing_and_stray_transcript_files(store: TranscriptStore, tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "c")
    (corpus / "transcripts" / "w3.jsonl").unlink()
    with pytest.raises(MalformedInput) as caught:
        import_sources(store, [corpus])
    assert (caught.value.path, caught.value.line) == (str(corpus / "sessions.jsonl"), 3)
    assert "transcripts/w3.jsonl is missing" in caught.value.reason
    write_jsonl(corpus / "transcripts" / "w3.jsonl", [])
    write_jsonl(corpus / "transcripts" / "stray.jsonl", [])
    with pytest.raises(MalformedInput, match='no window in sessions.jsonl has sessionId "stray"'):
        import_sources(store, [corpus])
    assert store.stats()["windows"] == 0


def test_cycle_of_previous_windows(store: TranscriptStore, tmp_path: Path) -> None:
    windows = [{"sessionId": "a", "sessionKey": "global", "previousSessionId": "b",
                "current": False},
               {"sessionId": "b", "sessionKey": "global", "previousSessionId": "a"}]
    corpus = write_corpus(tmp_path / "c", windows, {"a": [], "b": []})
    with pytest.raises(MalformedInput, match="cycle of previous windows: a -> b -> a"):
        import_sources(store, [corpus])
    assert store.stats()["windows"] == 0


def test_second_source_failure_discards_the_first(store: TranscriptStore, tmp_path: Path) -> None:
    good = write_corpus(tmp_path / "good")
    bad = write_corpus(tmp_path / "bad", [{"sessionId": "z", "sessionKey": "global"}],
                       {"z": [{"type": "message"}]})
    with pytest.raises(MalformedInput):
        import_sources(store, [good, bad])
    assert store.windows() == []
    assert store.stats()["events"] == 0


def test_detect_form(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "c")
    flat = tmp_path / "m.jsonl"
    flat.write_text("", encoding="utf-8")
    other = tmp_path / "notes.txt"
    other.write_text("x", encoding="utf-8")
    (tmp_path / "empty").mkdir()
    assert detect_form(corpus) == "corpus"
    assert detect_form(flat) == "flat"
    with pytest.raises(MalformedInput, match="no such file or directory"):
        detect_form(tmp_path / "missing")
    with pytest.raises(MalformedInput, match="not a corpus directory"):
        detect_form(tmp_path / "empty")
    with pytest.raises(MalformedInput, match="not an importable file"):
        detect_form(other)


def test_no_sources_is_a_usage_error(store: TranscriptStore) -> None:
    with pytest.raises(UsageError):
        import_sources(store, [])
