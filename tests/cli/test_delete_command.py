"""`session-search delete --store DIR SESSION_KEY` on both backends (issue 14, item 4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.cli import main


def write_messages(path: Path) -> Path:
    lines = [
        {"sessionKey": "agent:main:main", "sessionId": "w1", "messageId": "m1",
         "role": "user", "text": "deployment failed", "timestamp": 1},
        {"sessionKey": "agent:main:main", "sessionId": "w2", "messageId": "m2",
         "role": "user", "text": "deployment fixed", "timestamp": 2},
        {"sessionKey": "agent:main:other", "sessionId": "w3", "messageId": "m3",
         "role": "user", "text": "deployment elsewhere", "timestamp": 3},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def search_ids(store: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    assert main(["search", "--store", str(store), "--json", "deployment"]) == 0
    return sorted(hit["messageId"] for hit in json.loads(capsys.readouterr().out)["hits"])


@pytest.mark.parametrize("backend", ["reference", "sqlite"])
def test_delete_removes_every_window_of_the_key(
        tmp_path: Path, backend: str, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "store"
    source = write_messages(tmp_path / "messages.jsonl")
    assert main(["import", "--store", str(store), "--backend", backend, "--quiet",
                 str(source)]) == 0
    assert search_ids(store, capsys) == ["m1", "m2", "m3"]
    assert main(["delete", "--store", str(store), "agent:main:main"]) == 0
    assert capsys.readouterr().out == (
        "deleted session agent:main:main: 2 windows with their events and index rows\n")
    assert search_ids(store, capsys) == ["m3"]
    assert main(["stats", "--store", str(store), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert (stats["sessions"], stats["windows"], stats["events"]) == (1, 1, 1)
    assert main(["delete", "--store", str(store), "--json", "agent:main:other"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "store": str(store), "sessionKey": "agent:main:other", "deleted": 1}
    assert search_ids(store, capsys) == []
    assert main(["verify", "--store", str(store)]) == 0
    capsys.readouterr()


def test_deleting_a_key_the_store_does_not_hold_is_an_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "store"
    assert main(["import", "--store", str(store), "--quiet",
                 str(write_messages(tmp_path / "messages.jsonl"))]) == 0
    assert main(["delete", "--store", str(store), "agent:main:nope"]) == 2
    assert capsys.readouterr().err == (
        f"session-search: error: no session key 'agent:main:nope' in the store {store}; "
        "nothing was deleted\n")
    assert search_ids(store, capsys) == ["m1", "m2", "m3"]
