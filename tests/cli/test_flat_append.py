"""A chat log that grows, imported again as a user would (issue 32, item 2): the new lines
are added to their windows and nothing else is; `--replace` of the whole log leaves the
store about the size it was (it compacts), on both backends.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest


def write_log(path: Path, count: int, start: int = 0) -> Path:
    """`count` messages of three windows (two agents), numbered from `start`, appended."""
    with path.open("a", encoding="utf-8") as file:
        for number in range(start, start + count):
            window = number % 3
            agent = "main" if window < 2 else "ops"
            file.write(json.dumps({
                "sessionKey": f"agent:{agent}:chat{window}", "sessionId": f"w{window}",
                "messageId": f"m{number}", "role": "user" if number % 2 else "assistant",
                "timestamp": 1_772_359_260_000 + number * 1000,
                "text": f"message {number} about topic{number % 5} and word{number}"}) + "\n")
    return path


def stats(session_search, store: Path) -> dict:
    return json.loads(session_search("stats", "--store", str(store), "--json").out)


@pytest.mark.parametrize("backend", ["reference", "sqlite"])
def test_a_grown_chat_log_adds_its_new_lines(session_search, tmp_path: Path,
                                             backend: str) -> None:
    log = write_log(tmp_path / "chat.jsonl", 30)
    store = tmp_path / "store"
    assert session_search("import", "--store", str(store), "--backend", backend, "--quiet",
                          str(log)).status == 0
    again = session_search("import", "--store", str(store), str(log))
    assert again.status == 0 and again.out.startswith(
        f"imported 1 source into {store}: 0 windows, 0 events (")
    write_log(log, 6, start=30)
    grown = session_search("import", "--store", str(store), "--json", str(log))
    imported = json.loads(grown.out)["imported"]
    assert (imported["windows"], imported["events"], imported["extended"]) == (0, 6, 3)
    assert stats(session_search, store)["events"] == 36
    found = json.loads(session_search("search", "--store", str(store), "--json",
                                      "--agent", "ops", "word35").out)
    assert [hit["messageId"] for hit in found["hits"]] == ["m35"]


@pytest.mark.parametrize("backend", ["reference", "sqlite"])
def test_replace_of_the_whole_log_does_not_double_the_store(session_search, tmp_path: Path,
                                                             backend: str) -> None:
    log = write_log(tmp_path / "chat.jsonl", 3000)
    store = tmp_path / "store"
    assert session_search("import", "--store", str(store), "--backend", backend, "--quiet",
                          str(log)).status == 0
    before = stats(session_search, store)["bytes"]
    replaced = session_search("import", "--store", str(store), "--replace", str(log))
    assert replaced.status == 0, replaced.err
    assert "replaced the transcript of 3 stored windows and compacted the store" in replaced.out
    after = stats(session_search, store)
    assert after["events"] == 3000
    assert after["bytes"] < 1.25 * before, (before, after["bytes"])
