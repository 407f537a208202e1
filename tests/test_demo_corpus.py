"""The demo corpus (engine/demo_corpus): it holds what the spec needs, and the engine reads it right.

Counts are taken independently, by reading the JSONL files here, then compared with the
engine's import and stats.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine.directory import MemoryDirectory
from engine.ingest import import_sources
from engine.model import SESSION_KINDS, IndexEntry
from engine.transcript.projection import index_entries
from engine.transcript.store import TranscriptStore
from engine.transcript.tree import active_path, scan_tree
from engine.transcript.windows import current_window, window_chain

DEMO = Path(__file__).resolve().parent.parent / "engine" / "demo_corpus"


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


RECORDS = read_jsonl(DEMO / "sessions.jsonl")
TRANSCRIPTS = {record["sessionId"]: read_jsonl(DEMO / "transcripts" /
                                               f"{record['sessionId']}.jsonl")
               for record in RECORDS}


def expected_counts() -> dict[str, int]:
    keys = {record["sessionKey"] for record in RECORDS}
    agents = {key.split(":")[1] for key in keys if key.startswith("agent:")}
    return {"agents": len(agents), "sessions": len(keys), "windows": len(RECORDS),
            "events": sum(len(events) for events in TRANSCRIPTS.values())}


@pytest.fixture(scope="module")
def store() -> TranscriptStore:
    with TranscriptStore.create(MemoryDirectory()) as opened:
        import_sources(opened, [DEMO], received_at=0.0)
        yield opened


def path_ids(store: TranscriptStore, session_id: str) -> list[str]:
    return [stored.event["id"] for stored in active_path(store.events(session_id))]


def entries(store: TranscriptStore) -> list[IndexEntry]:
    return [entry for window in store.windows()
            for entry in index_entries(store.events(window.session_id))]


def test_stats_equal_the_independent_counts(store: TranscriptStore) -> None:
    stats = store.stats()
    assert {name: stats[name] for name in ("agents", "sessions", "windows", "events")} == (
        expected_counts())
    assert expected_counts() == {"agents": 5, "sessions": 19, "windows": 23, "events": 73}


def test_corpus_covers_the_spec_features() -> None:
    keys = {record["sessionKey"] for record in RECORDS}
    required_keys = {"agent:work_team:main", "agent:workxteam:main", "agent:owner:main",
                     "agent:main:main", "global", "unknown"}
    assert required_keys <= keys
    assert {record.get("kind", "chat") for record in RECORDS} == set(SESSION_KINDS)
    assert any(record.get("incognito") for record in RECORDS)
    assert any(record.get("archived") for record in RECORDS)
    assert any(record.get("spawnedBy") and record.get("group") for record in RECORDS)
    assert any(record.get("spawnedBy") and not record.get("group") for record in RECORDS)
    kinds = {event["type"] for events in TRANSCRIPTS.values() for event in events}
    required_kinds = {"session", "message", "leaf", "reset", "compaction", "custom_message",
                      "model_change"}
    assert required_kinds <= kinds
    blocks = {block["type"] for events in TRANSCRIPTS.values() for event in events
              if isinstance(event.get("message", {}).get("content"), list)
              for block in event["message"]["content"]}
    assert {"text", "input_text", "output_text", "thinking", "image", "toolCall"} <= blocks


def test_rewind_and_branch_switch(store: TranscriptStore) -> None:
    assert path_ids(store, "branches") == ["branch-m1", "branch-m3", "branch-m4", "branch-m5"]
    tree = scan_tree(store.events("branches"))
    assert tree.leaf_id == "branch-m5" and tree.has_leaf_control
    assert {"branch-m2", "branch-m6", "branch-side"} <= set(tree.nodes)


def test_logical_reset_keeps_pre_reset_rows_on_the_path(store: TranscriptStore) -> None:
    path = path_ids(store, "logical-reset")
    assert path[:4] == ["reset-m1", "reset-m2", "reset-m3", "reset-m4"]
    assert "reset-r1" in path and path[-1] == "reset-m8"
    reset = next(e for e in TRANSCRIPTS["logical-reset"] if e["type"] == "reset")
    assert reset["firstKeptEntryId"] in path


def test_window_chains(store: TranscriptStore) -> None:
    lifecycle = window_chain(store.windows_of("agent:owner:lifecycle"))
    assert [(w.session_id, w.reason, w.current) for w in lifecycle] == [
        ("before-reset", "initial", False), ("after-reset", "reset", True)]
    recall = store.windows_of("agent:work:recall")
    assert [w.session_id for w in window_chain(recall)] == ["archived-session", "recall-session"]
    assert current_window(recall).session_id == "recall-session"
    assert store.window("archived-session").archived is True
    long_run = window_chain(store.windows_of("agent:main:long-run"))
    assert [(w.session_id, w.reason, w.current) for w in long_run] == [
        ("long-run-1", "initial", False), ("long-run-2", "rollover", False),
        ("long-run-3", "compaction", True)]
    fork = store.window("forked")
    assert (fork.reason, fork.previous_session_id) == ("fork", "main-session")
    assert store.window("main-session").session_key != fork.session_key
    assert window_chain(store.windows_of("agent:main:fork")) == [fork]
    reasons = {w.reason for w in store.windows()}
    assert reasons == {"initial", "reset", "rollover", "compaction", "fork"}
    for key in store.session_keys():
        assert sum(w.current for w in store.windows_of(key)) == 1


def test_searchable_text_excludes_hidden_content(store: TranscriptStore) -> None:
    texts = " ".join(entry.text for entry in entries(store))
    for hidden in ("zeppelin", "toolresultonly", "beta abandoned", "zeta alternative",
                   "theta aside", "sonnet-4.6", "heartbeat", "runtime context", "aW1hZ2Vvbmx5"):
        assert hidden not in texts
    for visible in ("alpha origin", "epsilon answer", "Café", "ΟΣ ος", "Grüße",
                    "明天下午三点开项目评审会议讨论排期", "회의", "quasar question"):
        assert visible in texts


def test_index_entries_of_named_messages(store: TranscriptStore) -> None:
    by_id = {entry.message_id: entry for entry in entries(store)}
    assert by_id["complete"].text == "Per-session communication controls in UI"
    assert by_id["literal"].text == 'A literal "OR" keyword in the message'
    assert by_id["main-u2"].text == "Here's the dashboard screenshot; does it look healthy?"
    assert by_id["main-a1"].text == "Yes, it failed at 17:02 on Friday. I'll read the logs."
    assert by_id["old"].text == "quasar question " + "x" * 700
    assert by_id["cron-a1"].timestamp == 1788328812000.0
    assert by_id["main-u1"].timestamp == 1788253205000.0
    # every demo message has its own timestamp: none falls back to created_at (0.0 here)
    assert all(entry.timestamp > 0 for entry in by_id.values())
    # 64 message events, minus 3 off the active path (branch-m2, branch-m6, branch-side),
    # minus the toolResult and the system message; ids are unique across the demo corpus
    messages = [e for events in TRANSCRIPTS.values() for e in events if e["type"] == "message"]
    assert len(messages) == 64
    assert len(by_id) == 64 - 3 - 2
