"""`session-search call sessions_search` and `serve`'s `sessions_search` method, as users
meet them: the tool's JSON answer, the product's refusal messages with exit status 2, a
configuration typo named by file and key path, and a server that keeps serving after bad
tool requests.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.conftest import Runner

CALL = ("call", "sessions_search")


def test_call_prints_the_tools_answer(session_search: Runner, demo_store: Path) -> None:
    outcome = session_search(*CALL, "--store", str(demo_store), "--requester",
                             "agent:main:main", '{"query": "cafe", "limit": 1}')
    assert (outcome.status, outcome.err) == (0, "")
    answer = json.loads(outcome.out)
    assert [hit["messageId"] for hit in answer["results"]] == ["cafe-communication"]
    assert list(answer["results"][0]) == ["sessionKey", "timestamp", "role", "snippet",
                                          "score", "sessionId", "messageId"]
    assert answer["truncated"] is True  # more than one visible hit matched


def test_call_with_self_visibility_sees_only_the_requester(
        session_search: Runner, demo_store: Path, tmp_path: Path) -> None:
    config = tmp_path / "openclaw.toml"
    config.write_text('[tools.sessions]\nvisibility = "self"\n', encoding="utf-8")
    outcome = session_search(*CALL, "--store", str(demo_store), "--config", str(config),
                             "--requester", "agent:main:multilingual", '{"query": "cafe"}')
    assert outcome.status == 0, outcome.err
    keys = {hit["sessionKey"] for hit in json.loads(outcome.out)["results"]}
    assert keys == {"agent:main:multilingual"}


def test_a_forbidden_target_is_the_tools_answer(
        session_search: Runner, demo_store: Path, tmp_path: Path) -> None:
    config = tmp_path / "openclaw.json"
    config.write_text(json.dumps({"tools": {"sessions": {"visibility": "agent"}}}))
    outcome = session_search(*CALL, "--store", str(demo_store), "--config", str(config),
                             "--requester", "agent:work:main",
                             '{"query": "cafe", "sessionKey": "agent:main:ui-search"}')
    assert outcome.status == 0, outcome.err
    assert json.loads(outcome.out) == {
        "status": "forbidden",
        "error": "Session search visibility is restricted. Set tools.sessions.visibility=all "
                 "to allow cross-agent access; use tools.agentToAgent to restrict permitted "
                 "agent pairs."}


def test_bad_arguments_get_the_products_messages(session_search: Runner,
                                                 demo_store: Path) -> None:
    base = (*CALL, "--store", str(demo_store), "--requester", "agent:main:main")
    session_search(*base, '{"query": "   "}').refused(
        2, "query must not be empty; retry with non-empty keywords to match in past "
           "session text")
    session_search(*base, '{"query": "x", "limit": 26}').refused(
        2, "limit must be a positive integer")
    session_search(*base, json.dumps({"query": "x" * 4097})).refused(
        2, "query must not exceed 4096 characters")
    session_search(*base, "[1]").refused(
        2, "ARGS_JSON must be a JSON object such as '{\"query\": \"cafe\"}'")


def test_a_configuration_typo_names_the_file_and_key(session_search: Runner,
                                                     demo_store: Path, tmp_path: Path) -> None:
    config = tmp_path / "openclaw.json"
    config.write_text('{"tools": {"sessions": {"visibilty": "self"}}}')
    session_search(*CALL, "--store", str(demo_store), "--config", str(config),
                   "--requester", "agent:main:main", '{"query": "cafe"}').refused(
        2, f"{config}: tools.sessions.visibilty: unknown key (expected one of: visibility)")
    config.write_text('{"tools": {"sessions": {"visibility": "everyone"}}}')
    session_search(*CALL, "--store", str(demo_store), "--config", str(config),
                   "--requester", "agent:main:main", '{"query": "cafe"}').refused(
        2, f'{config}: tools.sessions.visibility: expected one of "self", "tree", "agent", '
           '"all", got "everyone"')


def test_serve_answers_bad_tool_requests_and_keeps_serving(session_search: Runner,
                                                            demo_store: Path) -> None:
    def request(number: int, params: object) -> str:
        return json.dumps({"jsonrpc": "2.0", "id": number, "method": "sessions_search",
                           "params": params})

    requester = {"sessionKey": "agent:main:main"}
    lines = [
        request(1, {"requester": requester, "arguments": {"query": ""}}),
        request(2, {"requester": {"sessionKey": 7}, "arguments": {"query": "cafe"}}),
        request(3, [1]),
        request(4, {"requester": requester, "arguments": {"query": "cafe", "limit": "two"}}),
        request(5, {"requester": requester, "arguments": {"query": "\udc80" * 5000}}),
        request(6, {"requester": requester, "arguments": {"query": "cafe", "limit": 1}}),
    ]
    outcome = session_search("serve", "--quiet", "--store", str(demo_store),
                             stdin="\n".join(lines) + "\n")
    assert outcome.status == 0 and "Traceback" not in outcome.err, outcome.err
    answers = [json.loads(line) for line in outcome.out.splitlines()]
    assert [answer["id"] for answer in answers] == [1, 2, 3, 4, 5, 6]
    assert [answer.get("error", {}).get("code") for answer in answers] == [
        -32602, -32602, -32602, -32602, -32602, None]
    assert answers[0]["error"]["message"].startswith("query must not be empty")
    assert answers[4]["error"]["message"] == "query must not exceed 4096 characters"
    assert answers[5]["result"]["results"][0]["messageId"] == "cafe-communication"


def test_a_session_link_base_adds_the_link_rule(session_search: Runner, demo_store: Path) -> None:
    outcome = session_search(*CALL, "--store", str(demo_store), "--session-link-base",
                             "http://localhost:18789/ui/", "--requester", "agent:main:main",
                             '{"query": "cafe", "limit": 1}')
    assert outcome.status == 0, outcome.err
    answer = json.loads(outcome.out)
    assert list(answer)[:2] == ["results", "sessionLinkRule"]
    assert "`http://localhost:18789/ui/chat/<agentId>`" in answer["sessionLinkRule"]
    session_search(*CALL, "--store", str(demo_store), "--session-link-base", "x" * 201,
                   "--requester", "agent:main:main", '{"query": "cafe"}').refused(
        2, "--session-link-base must be a URL of 1 to 200 characters")


def test_a_scoped_grant_allows_its_window_and_fails_once_the_session_moved_on(
        session_search: Runner, tmp_path: Path) -> None:
    """behaviour.md §12.1 "rejects a scoped grant when the target incarnation changes
    before search", through the command line: a grant for the current window lets a
    requester that visibility alone refuses search the session; a grant naming an older
    window fails with OpenClaw's message (exit 1)."""
    corpus = tmp_path / "messages.jsonl"
    corpus.write_text("\n".join(json.dumps(line) for line in [
        {"sessionKey": "agent:main:main", "sessionId": "before", "messageId": "m1",
         "role": "user", "timestamp": 1000, "text": "granted text"},
        {"sessionKey": "agent:main:main", "sessionId": "after", "messageId": "m2",
         "role": "user", "timestamp": 2000, "text": "granted text again"},
    ]) + "\n")
    store = tmp_path / "store"
    imported = session_search("import", "--quiet", "--store", str(store), str(corpus))
    assert imported.status == 0, imported.err
    config = tmp_path / "openclaw.json"
    config.write_text('{"tools": {"sessions": {"visibility": "self"}}}')
    base = (*CALL, "--store", str(store), "--config", str(config), "--requester",
            "agent:main:other")
    arguments = '{"query": "granted", "sessionKey": "agent:main:main"}'
    refused = session_search(*base, arguments)
    assert json.loads(refused.out)["status"] == "forbidden"
    granted = session_search(*base, "--grant", "agent:main:main=after", arguments)
    assert granted.status == 0, granted.err
    assert {hit["messageId"] for hit in json.loads(granted.out)["results"]} == {"m1", "m2"}
    session_search(*base, "--grant", "agent:main:main=before", arguments).refused(
        1, 'Session "agent:main:main" changed after access was granted.')
