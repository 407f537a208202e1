"""`session-search ui-search` and `serve`'s `ui.search` method on the demo corpus, as users
meet them: the grouped answer, the configured agents of `--config`, a short query that is
not an error, refusals with one line, and a server that keeps serving after bad requests.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.conftest import Runner

ARCHIVED_NOTICE = ("1 archived transcripts excluded; open a session to restore its "
                   "searchable history.")


def test_ui_search_prints_the_grouped_answer(session_search: Runner, demo_store: Path) -> None:
    outcome = session_search("ui-search", "--store", str(demo_store), "--json", "notes")
    assert (outcome.status, outcome.err) == (0, "")
    answer = json.loads(outcome.out)
    assert [(entry["sessionKey"], entry["match"]) for entry in answer["sessions"]] == [
        ("agent:main:multilingual", "title")]  # not "Global notes", not "Dock notes"
    assert [(entry["sessionKey"], entry["hit"]["messageId"]) for entry in answer["messages"]] == [
        ("agent:main:ui-search", "cafe-communication")]  # a grouped agent-created session
    assert answer["notices"] == [ARCHIVED_NOTICE]
    assert answer["archivedTranscriptsExcluded"] == 1


def test_the_readable_listing_names_both_groups(session_search: Runner, demo_store: Path) -> None:
    outcome = session_search("ui-search", "--store", str(demo_store), "notes")
    assert outcome.status == 0, outcome.err
    lines = outcome.out.splitlines()
    assert lines[0] == 'ui-search "notes": 1 session by title or identifier, 1 session by message'
    assert "Sessions" in lines and "Messages" in lines
    assert lines[-1] == ARCHIVED_NOTICE


def test_configured_agents_narrow_the_scope(session_search: Runner, demo_store: Path,
                                            tmp_path: Path) -> None:
    config = tmp_path / "openclaw.json"
    config.write_text(json.dumps({"agents": {"list": [{"id": "main"}]}}))
    everyone = json.loads(session_search("ui-search", "--store", str(demo_store), "--json",
                                         "quasar").out)
    assert [entry["sessionKey"] for entry in everyone["sessions"]] == ["agent:work:recall"]
    outcome = session_search("ui-search", "--store", str(demo_store), "--config", str(config),
                             "--json", "quasar")
    assert outcome.status == 0, outcome.err
    answer = json.loads(outcome.out)
    assert (answer["sessions"], answer["messages"]) == ([], [])
    assert "archivedTranscriptsExcluded" not in answer  # work's archive is out of scope


def test_a_short_query_is_not_an_error(session_search: Runner, demo_store: Path) -> None:
    outcome = session_search("ui-search", "--store", str(demo_store), "a")
    assert (outcome.status, outcome.out, outcome.err) == (
        0, 'ui-search "a": type at least 2 characters to search\n', "")


def test_refusals_are_one_line(session_search: Runner, demo_store: Path, tmp_path: Path) -> None:
    session_search("ui-search", "--store", str(demo_store), "--limit", "26", "cafe").refused(
        2, "--limit must be between 1 and 25 (got 26)")
    session_search("ui-search", "--store", str(demo_store), "x" * 4097).refused(
        2, "query must not exceed 4096 characters")
    config = tmp_path / "openclaw.json"
    config.write_text('{"agents": {"list": [{"name": "main"}]}}')
    session_search("ui-search", "--store", str(demo_store), "--config", str(config),
                   "cafe").refused(2, f'{config}: agents.list[0]: missing "id"')


def test_serve_answers_ui_search_and_keeps_serving(session_search: Runner,
                                                   demo_store: Path) -> None:
    def request(number: int, params: object) -> str:
        return json.dumps({"jsonrpc": "2.0", "id": number, "method": "ui.search",
                           "params": params})

    lines = [
        request(1, {"query": "per session communi"}),
        request(2, {"query": "cafe", "limit": 26}),
        request(3, {"query": 7}),
        request(4, {"query": "cafe", "scope": {}}),
        request(5, {"query": "\udc80" * 5000}),
        request(6, {"query": "c"}),
        request(7, [1]),
        request(8, {"query": "cafe", "limit": 1}),
    ]
    outcome = session_search("serve", "--quiet", "--store", str(demo_store),
                             stdin="\n".join(lines) + "\n")
    assert outcome.status == 0 and "Traceback" not in outcome.err, outcome.err
    answers = [json.loads(line) for line in outcome.out.splitlines()]
    assert [answer["id"] for answer in answers] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert [answer.get("error", {}).get("code") for answer in answers] == [
        None, -32602, -32602, -32602, -32602, None, -32602, None]
    assert [entry["sessionKey"] for entry in answers[0]["result"]["sessions"]] == [
        "agent:main:ui-search"]
    assert answers[1]["error"]["message"] == "limit must be an integer from 1 to 25 (got 26)"
    assert answers[3]["error"]["message"] == ("params has an unknown member 'scope' "
                                              "(expected: query, limit)")
    assert answers[4]["error"]["message"] == "query must not exceed 4096 characters"
    assert answers[5]["result"]["searched"] is False
    last = answers[7]["result"]
    assert len(last["messages"]) == 1 and last["truncated"] is True and last["notices"] == [
        ARCHIVED_NOTICE]
