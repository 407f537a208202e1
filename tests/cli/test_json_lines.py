"""`--json` on every command, `--jsonl` for the commands that print many records (issue 32,
item 3).

Every case runs `python -m engine` in a fresh process on the demo store. `--jsonl` prints
one JSON object per line, the same objects as the `--json` document holds (hits, history
rows, dumped files or records), so that `jq` and `sqlite-utils insert` can take them line
by line; what the readable view would add (truncated, how to page on) goes to standard
error as notes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine.cli.commands import COMMANDS
from tests.cli.conftest import Outcome


@pytest.fixture
def demo(demo_store: Path) -> str:
    return str(demo_store)


def json_lines(outcome: Outcome) -> list[dict[str, Any]]:
    """The objects of a `--jsonl` output: every line is one JSON object, nothing else."""
    assert outcome.status == 0, outcome.err
    assert outcome.out.endswith("\n")
    lines = outcome.out.splitlines()
    objects = [json.loads(line) for line in lines]
    assert all(isinstance(value, dict) for value in objects)
    return objects


def test_search_prints_one_hit_a_line(session_search, demo: str) -> None:
    document = json.loads(session_search("search", "--store", demo, "--json", "cafe").out)
    lines = session_search("search", "--store", demo, "--jsonl", "cafe")
    assert json_lines(lines) == document["hits"] and len(document["hits"]) == 2
    truncated = session_search("search", "--store", demo, "--jsonl", "--limit", "1", "cafe")
    assert json_lines(truncated) == document["hits"][:1]
    assert ("session-search: note: more hits than the limit (truncated); refine the query "
            "or raise --limit (up to 25)\n") in truncated.err


def test_history_prints_one_row_a_line(session_search, demo: str) -> None:
    argv = ("history", "--store", demo, "agent:main:logical-reset", "--limit", "3")
    document = json.loads(session_search(*argv, "--json").out)
    lines = session_search(*argv, "--jsonl")
    assert json_lines(lines) == document["messages"] and len(document["messages"]) == 3
    assert lines.err.splitlines() == [
        "session-search: note: rows 7-9 of 9 in the current view of window logical-reset",
        "session-search: note: older rows: --offset 3"]


def test_dump_prints_one_file_or_record_a_line(session_search, demo: str) -> None:
    listing = json.loads(session_search("dump", "--store", demo, "--json").out)
    assert json_lines(session_search("dump", "--store", demo, "--jsonl")) == listing["files"]
    name = "agents/main/transcripts/segment-000001.log"
    view = json.loads(session_search("dump", "--store", demo, "--json", name).out)
    records = json_lines(session_search("dump", "--store", demo, "--jsonl", name))
    assert records == [{"file": name, **record} for record in view["records"]]
    assert len(records) > 10


@pytest.mark.parametrize("command", ["search", "history", "dump"])
def test_json_and_jsonl_exclude_each_other(session_search, demo: str, command: str) -> None:
    tail = {"search": ["cafe"], "history": ["agent:main:main"], "dump": []}[command]
    outcome = session_search(command, "--store", demo, "--json", "--jsonl", *tail)
    assert outcome.status == 2 and outcome.out == ""
    assert outcome.err.startswith(f"usage: session-search {command} ")
    assert "argument --jsonl: not allowed with argument --json" in outcome.err


def test_every_command_takes_json(session_search) -> None:
    missing = [entry.name for entry in COMMANDS
               if "--json" not in session_search(entry.name, "--help").out]
    assert missing == []


def test_call_takes_json_and_answers_alike(session_search, demo: str) -> None:
    argv = ("call", "sessions_search", "--store", demo, "--requester", "agent:main:main",
            '{"query": "cafe"}')
    plain, with_json = session_search(*argv), session_search(*argv, "--json")
    assert (with_json.status, with_json.err) == (0, "")
    assert with_json.out == plain.out and json.loads(with_json.out)["results"]


def test_serve_takes_json(session_search, demo: str) -> None:
    request = {"jsonrpc": "2.0", "id": 1, "method": "sessions.search",
               "params": {"sessionKeys": [], "query": "cafe"}}
    outcome = session_search("serve", "--store", demo, "--json", "--quiet",
                             stdin=json.dumps(request) + "\n")
    assert (outcome.status, outcome.err) == (0, "")
    assert len(json.loads(outcome.out)["result"]["hits"]) == 2


def test_completion_json_holds_the_script(session_search) -> None:
    script = session_search("completion", "bash").out
    document = json.loads(session_search("completion", "bash", "--json").out)
    assert document == {"shell": "bash", "script": script} and "session-search" in script
