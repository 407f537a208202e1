"""`session-search import --replace`: a window the store holds gets the transcript the
sources give it, on both backends, instead of a `DuplicateImport` (issue 14, item 1)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from engine.cli import main
from engine.errors import DuplicateImport, MalformedInput
from engine.ingest import import_into_store
from engine.model import SearchRequest
from engine.store.registry import open_store

BACKENDS = ["reference", "sqlite", "postgres"]


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def message(message_id: str, parent: str | None, text: str, role: str = "user") -> dict:
    return {"type": "message", "id": message_id, "parentId": parent, "timestamp": 10,
            "message": {"role": role, "content": text}}


def corpus(folder: Path, transcripts: dict[str, list[dict]], title: str = "first") -> Path:
    write_jsonl(folder / "sessions.jsonl", [
        {"sessionId": session_id, "sessionKey": f"agent:main:{session_id}", "title": title}
        for session_id in transcripts])
    for session_id, events in transcripts.items():
        write_jsonl(folder / "transcripts" / f"{session_id}.jsonl", events)
    return folder


def flat_line(session_id: str, message_id: str, text: str) -> dict:
    return {"sessionKey": f"agent:main:{session_id}", "sessionId": session_id,
            "messageId": message_id, "role": "user", "text": text, "timestamp": 20}


@contextmanager
def opened(store: Path) -> Iterator[Any]:
    """The store at `store`, opened to read, closed after the block."""
    backend = open_store(store, "search")
    try:
        yield backend
    finally:
        backend.close()


def hits(store: Path, query: str) -> list[tuple[str, str]]:
    with opened(store) as backend:
        result = backend.search(SearchRequest(query, agent_id="main"))
        return sorted((hit.session_id, hit.message_id) for hit in result.hits)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_corpus_import_with_replace_replaces_the_stored_transcripts(
        tmp_path: Path, backend: str, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "store"
    first = corpus(tmp_path / "one", {"s1": [message("m1", None, "stale words")],
                                      "s2": [message("k1", None, "kept words")]})
    assert main(["import", "--store", str(store), "--backend", backend, "--quiet", str(first)]) == 0
    again = corpus(tmp_path / "two", {"s1": [message("n1", None, "fresh words"),
                                             message("n2", "n1", "fresh reply", "assistant")]},
                   title="second")
    assert main(["import", "--store", str(store), str(again)]) == 2
    assert "already in the store" in capsys.readouterr().err
    assert main(["import", "--store", str(store), "--replace", "--json", str(again)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["imported"]["windows"], report["imported"]["replaced"],
            report["imported"]["events"]) == (0, 1, 2)
    assert hits(store, "stale") == []
    assert hits(store, "fresh") == [("s1", "n1"), ("s1", "n2")]
    assert hits(store, "kept") == [("s2", "k1")]
    with opened(store) as reader:
        assert reader.window("s1").title == "second"
        assert reader.stats()["windows"] == 2 and reader.stats()["events"] == 3


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_flat_import_with_replace_rewrites_a_window_and_adds_new_ones(
        tmp_path: Path, backend: str) -> None:
    store = tmp_path / "store"
    first = write_jsonl(tmp_path / "one.jsonl", [flat_line("s1", "m1", "stale words")])
    import_into_store(store, backend, [first])
    second = write_jsonl(tmp_path / "two.jsonl", [
        flat_line("s1", "n1", "fresh words"), flat_line("s3", "x1", "fresh other"),
        flat_line("s1", "n2", "fresh again")])
    outcome = import_into_store(store, None, [second], replace=True)
    assert (outcome.imported.windows, outcome.imported.replaced) == (1, 1)
    assert hits(store, "fresh") == [("s1", "n1"), ("s1", "n2"), ("s3", "x1")]
    assert hits(store, "stale") == []
    with opened(store) as reader:
        events = reader.events("s1")
        assert [(event.event["id"], event.event["parentId"]) for event in events] == [
            ("n1", None), ("n2", "n1")]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_bad_line_in_a_replacement_names_it_and_changes_nothing(
        tmp_path: Path, backend: str) -> None:
    store = tmp_path / "store"
    import_into_store(store, backend, [corpus(tmp_path / "one",
                                              {"s1": [message("m1", None, "stale words")]})])
    bad = corpus(tmp_path / "two", {"s1": [message("n1", None, "fresh"),
                                           {"type": "message", "id": "n2", "parentId": "n1",
                                            "message": {"role": 5}}]})
    with pytest.raises(MalformedInput, match=r"s1\.jsonl:2: "):
        import_into_store(store, None, [bad], replace=True)
    assert hits(store, "stale") == [("s1", "m1")]
    twice = write_jsonl(tmp_path / "twice.jsonl", [flat_line("s1", "n1", "fresh")])
    with pytest.raises(DuplicateImport, match="was already read from"):
        import_into_store(store, None, [twice, twice], replace=True)
    assert hits(store, "stale") == [("s1", "m1")]


def test_a_flat_replacement_under_another_key_is_refused(tmp_path: Path) -> None:
    store = tmp_path / "store"
    import_into_store(store, "reference", [write_jsonl(tmp_path / "one.jsonl",
                                                       [flat_line("s1", "m1", "stale")])])
    moved = dict(flat_line("s1", "n1", "fresh"), sessionKey="agent:main:elsewhere")
    with pytest.raises(MalformedInput, match='belongs to key "agent:main:s1" in the store'):
        import_into_store(store, None, [write_jsonl(tmp_path / "two.jsonl", [moved])],
                          replace=True)
