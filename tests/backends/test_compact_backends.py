"""`compact` on every backend, through the partitioned store and the command line.

A reference store compacts each partition's transcript log (`engine.transcript.
compaction`); a SQLite store runs VACUUM. On both, deleted sessions' data gives its
space back, every search and read answers the same before and after (and after a
reopen), a re-created window keeps its new events, and a reader opened before the
compaction answers correctly after it. The reference store also verifies clean and its
index is untouched.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.cli import main
from engine.errors import StoreError
from engine.model import SearchRequest, SessionWindow
from engine.store.partitioned import PartitionedStore
from engine.store.registry import open_backend

BACKENDS = ("reference", "sqlite", "postgres")
QUERIES = ("deployment", "friday", "rollback", "garden", "memo")
KEYS = ("agent:main:alpha", "agent:main:beta", "agent:ops:gamma", "agent:ops:delta")


def message(message_id: str, parent: str | None, text: str, timestamp: float) -> dict:
    return {"type": "message", "id": message_id, "parentId": parent, "timestamp": timestamp,
            "message": {"role": "user", "content": text}}


def put(store: PartitionedStore, session_id: str, key: str, texts: list[str]) -> None:
    with store.transaction() as transaction:
        transaction.put_window(SessionWindow(session_id, key, title=session_id))
        parent = None
        for number, text in enumerate(texts):
            message_id = f"{session_id}-{number}"
            transaction.append_event(session_id, message(message_id, parent, text, number + 1.0))
            parent = message_id


def filler(word: str, count: int) -> list[str]:
    return [f"{word} note {number} " + "padding words to take some space " * 30
            for number in range(count)]


def fill(store: PartitionedStore) -> None:
    words = ("deployment friday", "rollback plan", "garden memo", "deployment rollback")
    for number, key in enumerate(KEYS):
        put(store, f"s{number}", key, filler(words[number], 40))
        put(store, f"t{number}", key, filler("memo garden", 5))
    with store.transaction() as transaction:
        transaction.delete_session("agent:main:beta")
        transaction.delete_session("agent:ops:delta")
    put(store, "s1", "agent:main:epsilon", ["a re-created window about the deployment"])


def answers(store: PartitionedStore) -> dict:
    found = {}
    for query in QUERIES:
        result = store.search(SearchRequest(query, session_keys=()))
        found[query] = [(hit.session_id, hit.message_id, hit.score) for hit in result.hits]
    windows = [window.session_id for window in store.windows()]
    return {"search": found, "windows": windows,
            "events": {session_id: store.events(session_id) for session_id in windows}}


@pytest.fixture(params=BACKENDS)
def backend_name(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def filled(tmp_path: Path, backend_name: str) -> Iterator[Path]:
    path = tmp_path / "store"
    with open_backend(path, backend=backend_name, create=True) as store:
        fill(store)
        if backend_name == "reference":
            store.reconcile()
    yield path


def test_compaction_reclaims_space_and_every_answer_stays(
    filled: Path, backend_name: str, capsys: pytest.CaptureFixture[str],
):
    with open_backend(filled, writer=True) as store:
        before = answers(store)
        size = store.stats()["bytes"]
        index_files = sorted(filled.glob("agents/*/index/*"))
        index_bytes = [path.read_bytes() for path in index_files]
        outcome = store.compact()
        # the index names events by session id and seq: compaction leaves it as it was
        assert [path.read_bytes() for path in index_files] == index_bytes
        assert outcome.bytes_reclaimed > 0 and outcome.files_compacted >= 1
        assert outcome.kind == ("log" if backend_name == "reference" else "database")
        assert store.stats()["bytes"] < size
        assert answers(store) == before
        assert [event.event["message"]["content"] for event in store.events("s1")] == [
            "a re-created window about the deployment"]
    with open_backend(filled) as reopened:
        assert answers(reopened) == before
        assert not {"s3", "t1", "t3"} & set(before["windows"])
    if backend_name == "reference":
        assert main(["verify", "--store", str(filled)]) == 0, capsys.readouterr()


def test_a_reader_opened_before_a_compaction_answers_right_after_it(filled: Path):
    reader = open_backend(filled)
    try:
        before = answers(reader)
        with open_backend(filled, writer=True) as writer:
            writer.compact()
            assert answers(reader) == before  # while the writer is still open
        assert answers(reader) == before
        if hasattr(reader, "refresh"):
            reader.refresh()
        assert answers(reader) == before
    finally:
        reader.close()


def test_a_reader_cannot_compact(filled: Path):
    with open_backend(filled) as reader, pytest.raises(StoreError, match="read-only"):
        reader.compact()


def test_the_compact_command_prints_its_summary_and_json(
    filled: Path, backend_name: str, capsys: pytest.CaptureFixture[str],
):
    assert main(["compact", "--store", str(filled)]) == 0
    line = capsys.readouterr().out.strip()
    kind = "log" if backend_name == "reference" else "database"
    assert line.startswith("compacted ") and f" {kind} file" in line and ", reclaimed " in line
    assert main(["compact", "--store", str(filled), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["kind"] == kind
    if backend_name == "reference":  # nothing is left to reclaim
        assert document == {"filesCompacted": 0, "bytesReclaimed": 0, "recordsDropped": 0,
                            "kind": "log"}
    assert main(["search", "--store", str(filled), "--json", "deployment"]) == 0


def test_the_compact_command_refuses_a_missing_store(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]):
    assert main(["compact", "--store", str(tmp_path / "nothing")]) == 2
    assert "compact" in capsys.readouterr().err


def test_delete_then_compact_through_the_command_line(
    tmp_path: Path, backend_name: str, capsys: pytest.CaptureFixture[str],
):
    """`import`, `delete`, `compact`: the deleted session's bytes go, the other
    session's search answers the same."""
    messages = tmp_path / "messages.jsonl"
    lines = [{"sessionKey": f"agent:main:{key}", "sessionId": key, "messageId": f"{key}{n}",
              "role": "user", "timestamp": n, "text": f"harbour report {n} " + "words " * 80}
             for key in ("keep", "drop") for n in range(20)]
    messages.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    store = tmp_path / "store"
    assert main(["import", "--quiet", "--store", str(store), "--backend", backend_name,
                 str(messages)]) == 0
    assert main(["delete", "--store", str(store), "agent:main:drop"]) == 0
    capsys.readouterr()
    assert main(["search", "--store", str(store), "--all-sessions", "--json", "harbour"]) == 0
    before = json.loads(capsys.readouterr().out)
    assert main(["compact", "--store", str(store), "--json"]) == 0
    outcome = json.loads(capsys.readouterr().out)
    assert outcome["bytesReclaimed"] > 0 and outcome["filesCompacted"] == 1
    assert main(["search", "--store", str(store), "--all-sessions", "--json", "harbour"]) == 0
    assert json.loads(capsys.readouterr().out) == before
    assert {hit["sessionKey"] for hit in before["hits"]} == {"agent:main:keep"}
