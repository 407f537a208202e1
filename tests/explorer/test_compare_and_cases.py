"""Compare on stores that differ, saved cases of stores that are not the demo, SQLite stores.

* `--compare-with DIR` compares against another store: where the answers part, the
  differences name the paths and both values;
* a case saved from a store that is not the demo corpus carries that store's windows and
  events as set-up steps, and passes on both backends;
* over a SQLite store, Why this hit says it needs a reference store (409) while Compare
  runs a reference copy; the copy's temporary folder is gone when the server stops.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import engine
from engine.conformance.case_files import cases_of_file
from tests.conformance.suite import assert_case_passes, in_process_target
from tests.explorer.client import Explorer


def small_corpus(folder: Path, messages: list[tuple[str, str]]) -> Path:
    """A corpus folder of one window whose messages are `(id, text)`, user and assistant
    in turn."""
    folder.mkdir(parents=True)
    (folder / "sessions.jsonl").write_text(json.dumps(
        {"sessionId": "w1", "sessionKey": "agent:main:main", "title": "T"}) + "\n",
        encoding="utf-8")
    (folder / "transcripts").mkdir()
    lines, parent = [], None
    for number, (message_id, text) in enumerate(messages):
        lines.append(json.dumps({"type": "message", "id": message_id, "parentId": parent,
                                 "timestamp": 1_700_000_000_000 + number * 1000,
                                 "message": {"role": ("user", "assistant")[number % 2],
                                             "content": text}}))
        parent = message_id
    (folder / "transcripts" / "w1.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def test_compare_with_another_store_shows_the_differences(tmp_path: Path) -> None:
    words = [("m1", "tea and cafe"), ("m2", "cafe again, cafe"), ("m3", "nothing here")]
    first = tmp_path / "first"
    engine.import_into_store(first, "reference", [small_corpus(tmp_path / "a", words)])
    second = tmp_path / "second"
    engine.import_into_store(second, "sqlite", [small_corpus(tmp_path / "b", words[:2])])
    server = Explorer(first, "--compare-with", str(second), stderr=tmp_path / "stderr.txt")
    try:
        data = server.get("/api/compare", {"q": "cafe"}).json
    finally:
        status, errors = server.stop()
    assert status == 0, errors
    assert data["backends"] == ["reference", "sqlite"] and data["same"] is False
    paths = [item["path"] for item in data["differences"]]
    assert "hits[0].score" in paths  # N differs (3 rows against 2), so bm25 does
    score = next(item for item in data["differences"] if item["path"] == "hits[0].score")
    assert score["values"] == [data["answers"][0]["hits"][0]["score"],
                               data["answers"][1]["hits"][0]["score"]]


def test_a_case_from_another_store_carries_its_transcripts(tmp_path: Path) -> None:
    store = tmp_path / "store"
    engine.import_into_store(store, "reference", [small_corpus(
        tmp_path / "corpus", [("m1", "Café au lait"), ("m2", "café, cafe"),
                              ("m3", "tea")])])
    server = Explorer(store, stderr=tmp_path / "stderr.txt")
    try:
        answer = server.get("/api/case", {"q": "cafe", "limit": 5})
    finally:
        status, errors = server.stop()
    assert status == 0, errors
    document = answer.json
    assert document["corpus"][0] == {"window": {"sessionId": "w1",
                                                "sessionKey": "agent:main:main", "title": "T"}}
    assert [step["event"]["event"]["id"] for step in document["corpus"][1:4]] == \
        ["m1", "m2", "m3"]
    assert document["corpus"][-1] == {"reconcile": True}
    [case] = cases_of_file(document, "saved.json")
    assert [hit["messageId"] for hit in case.steps[0]["expect"]["result"]["hits"]] == \
        ["m2", "m1"]
    for backend in ("reference", "sqlite"):
        with in_process_target(backend) as target:
            assert_case_passes(target, case)


def test_a_sqlite_store_is_compared_against_a_reference_copy(tmp_path: Path) -> None:
    store = tmp_path / "sqlite-demo"
    engine.import_into_store(store, "sqlite", [engine.DEMO_CORPUS])
    before = set(Path(tempfile.gettempdir()).glob("session-search-explore-*"))
    server = Explorer(store, "--backend", "sqlite", stderr=tmp_path / "stderr.txt")
    try:
        why = server.get("/api/why", {"q": "cafe"})
        compare = server.get("/api/compare", {"q": "cafe"}).json
        during = set(Path(tempfile.gettempdir()).glob("session-search-explore-*")) - before
        facts = server.get("/api/index/facts").json
        hits = server.get("/api/hits", {"q": "cafe"}).json
    finally:
        status, errors = server.stop()
    assert status == 0, errors
    assert why.status == 409 and "needs a reference store" in why.json["error"]
    assert compare["backends"] == ["sqlite", "reference"] and compare["same"] is True
    assert len(during) == 1  # the copy, made for the first Compare
    assert not (set(Path(tempfile.gettempdir()).glob("session-search-explore-*")) - before)
    assert all("note" in partition for partition in facts["partitions"])
    assert [hit["messageId"] for hit in hits["result"]["hits"]] == \
        ["cafe-communication", "french"]
