"""Strict input through the command line (`python -m engine` in a fresh process): flat
timestamps, roles that are never indexed, `--limit`, contradicting scope options."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

LINE = {"sessionKey": "agent:main:main", "sessionId": "s1", "messageId": "q1", "role": "user",
        "timestamp": "2026-03-01T10:00:00Z", "text": "saffron rice for dinner"}


def flat_file(path: Path, *rows: dict[str, Any]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture
def store(session_search, tmp_path: Path) -> Path:
    """A store holding three windows of three agents, each with a "saffron" message."""
    rows = [{**LINE, "sessionKey": f"agent:{agent}:main", "sessionId": agent,
             "messageId": f"{agent}-1", "timestamp": 1772359200000 + number}
            for number, agent in enumerate(("main", "work", "ops"))]
    rows.append({**LINE, "sessionKey": "global", "sessionId": "g", "messageId": "g-1"})
    outcome = session_search("import", "--store", str(tmp_path / "store"), "--quiet",
                             str(flat_file(tmp_path / "three.jsonl", *rows)))
    assert (outcome.status, outcome.out, outcome.err) == (0, "", "")
    return tmp_path / "store"


BAD_TIMESTAMPS = [
    ("missing", None, ('missing "timestamp" (epoch milliseconds or an ISO-8601 date-time '
                      "string)")),
    ("null", {"timestamp": None}, ('"timestamp" must be epoch milliseconds or an ISO-8601 '
                                  "date-time string, not null")),
    ("not a date", {"timestamp": "soon"}, ('"timestamp" "soon" is not an ISO-8601 date-time '
                                          "(nor epoch milliseconds)")),
    ("impossible day", {"timestamp": "2026-02-30"}, ('"timestamp" "2026-02-30" is not an '
                                                    "ISO-8601 date-time (nor epoch "
                                                    "milliseconds)")),
    ("out of range", {"timestamp": 1e16}, ('"timestamp" 1e+16 is not a date: epoch '
                                          "milliseconds must be finite and within ±8.64e+15")),
]


@pytest.mark.parametrize(("name", "change", "reason"), BAD_TIMESTAMPS,
                         ids=[case[0] for case in BAD_TIMESTAMPS])
def test_a_flat_line_without_a_usable_timestamp_is_refused_with_file_and_line(
        session_search, tmp_path: Path, name: str, change: dict | None, reason: str) -> None:
    second = ({key: value for key, value in LINE.items() if key != "timestamp"}
              if change is None else {**LINE, **change})
    source = flat_file(tmp_path / "m.jsonl", {**LINE, "messageId": "q0"}, second)
    store = tmp_path / "store"
    session_search("import", "--store", str(store), str(source)).refused(
        2, f"{source}:2: {reason}")
    assert not store.exists()


def test_iso_and_epoch_timestamps_are_the_hits_timestamps(session_search,
                                                          tmp_path: Path) -> None:
    source = flat_file(tmp_path / "m.jsonl", LINE,
                       {**LINE, "messageId": "q2", "timestamp": 1772359260000},
                       {**LINE, "messageId": "q3", "timestamp": "2026-03-01T12:00:00+01:00"})
    store = str(tmp_path / "store")
    assert session_search("import", "--store", store, "--quiet", str(source)).status == 0
    found = session_search("search", "--store", store, "--json", "--order", "recent", "saffron")
    assert [(hit["messageId"], hit["timestamp"]) for hit in json.loads(found.out)["hits"]] == [
        ("q3", 1772362800000), ("q2", 1772359260000), ("q1", 1772359200000)]


def test_roles_that_are_never_indexed_are_counted_in_the_summary(session_search,
                                                                 tmp_path: Path) -> None:
    source = flat_file(tmp_path / "m.jsonl", LINE,
                       {**LINE, "messageId": "t1", "role": "toolResult"},
                       {**LINE, "messageId": "t2", "role": "toolResult"},
                       {**LINE, "messageId": "y1", "role": "system"})
    plain = session_search("import", "--store", str(tmp_path / "a"), str(source))
    assert (plain.status, plain.err) == (0, "")
    assert plain.out.splitlines()[1] == (
        "note: 3 messages are stored but never searched (only user and assistant messages "
        "are): 1 system, 2 toolResult")
    as_json = session_search("import", "--store", str(tmp_path / "b"), "--json", str(source))
    report = json.loads(as_json.out)
    assert report["imported"]["unindexedRoles"] == {"system": 1, "toolResult": 2}
    assert (report["imported"]["events"], report["stats"]["messagesIndexed"]) == (4, 1)


@pytest.mark.parametrize("limit", ["0", "26", "-3", "1000"])
def test_a_limit_outside_1_to_25_is_refused_with_the_range(session_search, store: Path,
                                                            limit: str) -> None:
    for command in ("search", "explain"):
        session_search(command, "--store", str(store), "--limit", limit, "saffron").refused(
            2, f"--limit must be between 1 and 25 (got {limit})")


def test_the_limits_at_the_ends_of_the_range_are_used(session_search, store: Path) -> None:
    for limit, hits, truncated in (("1", 1, True), ("25", 4, False)):
        found = session_search("search", "--store", str(store), "--json", "--limit", limit,
                               "saffron")
        result = json.loads(found.out)
        assert (found.status, len(result["hits"]), result["truncated"]) == (0, hits, truncated)
    plain = session_search("search", "--store", str(store), "--limit", "1", "saffron")
    assert plain.out.splitlines()[-1] == (
        "more hits than the limit (truncated); refine the query or raise --limit (up to 25)")


CONFLICTS = [
    (["--agent", "main", "--all-sessions"],
     ("--all-sessions cannot be combined with --agent (--agent searches one agent's "
     "namespace, --all-sessions every session)")),
    (["--all-sessions", "--session-key", "global"],
     "--all-sessions cannot be combined with --session-key"),
    (["--agent", "main", "--session-key", "agent:main:main", "--session-key", "agent:work:main"],
     "--session-key agent:work:main belongs to agent 'work', not to --agent main"),
]


@pytest.mark.parametrize(("options", "message"), CONFLICTS, ids=["agent+all", "all+key",
                                                                  "agent+other-key"])
def test_conflicting_scope_options_are_refused(session_search, store: Path,
                                               options: list[str], message: str) -> None:
    for command in ("search", "explain"):
        session_search(command, "--store", str(store), *options, "saffron").refused(2, message)


def test_an_agent_with_its_own_keys_and_the_shared_ones_is_accepted(session_search,
                                                                     store: Path) -> None:
    found = session_search("search", "--store", str(store), "--json", "--agent", "work",
                           "--session-key", "agent:work:main", "--session-key", "global",
                           "saffron")
    assert found.status == 0
    assert sorted(hit["sessionKey"] for hit in json.loads(found.out)["hits"]) == [
        "agent:work:main", "global"]
