"""Every parameter wrong, huge, empty or hostile gets a 4xx with a message naming the
problem, and the server goes on answering.

Each case is a real request to a real server; after all of them the server still answers,
its standard error holds no traceback, and it stops cleanly (the `explorer` fixture).
"""

from __future__ import annotations

import http.client
import urllib.parse

import pytest

from engine.explorer.parameters import MAX_QUERY_STRING
from tests.explorer.client import Explorer

#: (path, params or a raw query string, expected status, words the message must hold).
BAD_REQUESTS = [
    # unknown, doubled, missing parameters
    ("/api/hits", {"q": "cafe", "bogus": "1"}, 400, "unknown parameter 'bogus'"),
    ("/api/hits", "q=cafe&q=tea", 400, "q is given twice"),
    ("/api/hits", {}, 400, "q is required"),
    ("/api/analysis", {}, 400, "text is required"),
    ("/api/index/message", {"sessionId": "ui-search"}, 400, "messageId is required"),
    ("/api/history", {}, 400, "sessionKey is required"),
    # empty and blank values: the product's own wording
    ("/api/hits", {"q": ""}, 400, "query must not be empty"),
    ("/api/hits", {"q": " \t\u3000 "}, 400, "query must not be empty"),
    ("/api/query", {"q": ""}, 400, "query must not be empty"),
    ("/api/hits", {"q": "cafe", "requester": "  "}, 400, "requester must be a session key"),
    ("/api/hits", {"q": "cafe", "agent": " "}, 400, "agent must name an agent"),
    ("/api/index/postings", {"term": "  "}, 400, "term must not be empty"),
    # wrong types and ranges
    ("/api/hits", {"q": "cafe", "limit": "0"}, 400, "limit must be an integer from 1 to 25"),
    ("/api/hits", {"q": "cafe", "limit": "26"}, 400, "limit must be an integer from 1 to 25"),
    ("/api/hits", {"q": "cafe", "limit": "-1"}, 400, "limit must be an integer"),
    ("/api/hits", {"q": "cafe", "limit": "1e3"}, 400, "limit must be an integer"),
    ("/api/hits", {"q": "cafe", "limit": "9" * 400}, 400, "(400 characters)"),
    ("/api/hits", {"q": "cafe", "match": "fuzzy"}, 400, "match must be one of: exact, prefix"),
    ("/api/hits", {"q": "cafe", "order": "random"}, 400, "order must be one of"),
    ("/api/hits", {"q": "cafe", "role": "system"}, 400, "role must be one of: user, assistant"),
    ("/api/hits", {"q": "cafe", "sandboxed": "maybe"}, 400, "sandboxed must be 1, 0"),
    ("/api/hits", {"q": "cafe", "sandboxed": "1"}, 400, "sandboxed needs a requester"),
    ("/api/why", {"q": "cafe", "hit": "25"}, 400, "hit must be an integer from 0 to 24"),
    ("/api/why", {"q": "cafe", "hit": "7"}, 404, "hit 7 does not exist: the search has 2"),
    ("/api/why", {"q": "cafe", "requester": "agent:main:main"}, 400, "leave requester out"),
    ("/api/analysis", {"text": "a", "profile": "snowball"}, 400, "profile must be one of"),
    ("/api/index/postings", {"term": "cafe", "agent": "nobody"}, 400,
     "agent 'nobody' has no partition"),
    ("/api/history", {"sessionKey": "agent:main:main", "limit": "0"}, 400, "limit must be"),
    ("/api/history", {"sessionKey": "agent:main:main", "maxBytes": "10"}, 400,
     "maxBytes must be an integer from 1024"),
    # combinations the engine refuses, in the product's words
    ("/api/history", {"sessionKey": "agent:main:main", "offset": "1", "messageId": "m"},
     400, "offset and messageId cannot be used together"),
    ("/api/history", {"sessionKey": "agent:main:main", "sessionId": "main-session"}, 400,
     "sessionId requires messageId"),
    ("/api/history", {"sessionKey": "agent:main:main", "cursor": "not-a-cursor"}, 400,
     "cursor"),
    ("/api/history", {"sessionKey": "agent:nobody:here"}, 404, "unknown session key"),
    ("/api/hits", {"q": "cafe", "agent": "work", "sessionKey": "agent:main:main"}, 400,
     "belongs to agent 'main', not to agent 'work'"),
    ("/api/hits", {"q": "cafe", "requester": "agent:main:main", "role": "user"}, 400,
     "role is not an argument of sessions_search"),
    ("/api/hits", [("q", "cafe"), ("requester", "agent:main:main"), ("sessionKey", "a"),
                   ("sessionKey", "b")], 400, "sessions_search takes one sessionKey"),
    ("/api/index/message", {"sessionId": "no-such-window", "messageId": "m"}, 404,
     "unknown session id"),
    ("/api/index/message", {"sessionId": "ui-search", "messageId": "nope"}, 400,
     "has no index row"),
    # huge values
    ("/api/hits", {"q": "x" * 5000}, 400, "query must not exceed 4096 characters"),
    ("/api/hits", {"q": "x" * 20000}, 400, "q is 20000 characters long; at most 16384"),
    ("/api/analysis", {"text": "会" * 9000}, 400, "text is 9000 characters long; at most 8192"),
    ("/api/hits", [("q", "cafe"), *(("sessionKey", f"k{n}") for n in range(1001))], 400,
     "sessionKey is given more than 1000 times"),
    # hostile values: markup, NUL, broken UTF-8, traversal
    ("/api/hits", "q=%FF%FE&limit=%00", 400, "limit must be an integer"),
    ("/api/hits", {"q": "cafe", "<script>alert(1)</script>": "1"}, 400,
     "unknown parameter '<script>alert(1)</script>'"),
    ("/static/..%2F..%2Fpyproject.toml", None, 404, "no such page"),
    ("/static/explorer.js/../../../../etc/passwd", None, 404, "no such page"),
    ("/api/nothing", None, 404, "no such page: /api/nothing"),
]


def message_of(answer) -> str:
    return answer.json["error"]


@pytest.mark.parametrize("path, params, status, words", BAD_REQUESTS,
                         ids=[f"{n}-{case[0]}" for n, case in enumerate(BAD_REQUESTS)])
def test_a_bad_request_gets_a_clear_refusal(explorer: Explorer, path: str, params: object,
                                           status: int, words: str) -> None:
    if isinstance(params, str):
        answer = explorer.get(path, raw_query=params)
    else:
        answer = explorer.get(path, params)
    assert answer.status == status, answer.body[:300]
    assert answer.headers["content-type"] == "application/json"
    assert words in message_of(answer), message_of(answer)
    assert len(answer.body) < 2000  # a refusal never echoes a huge input back
    assert explorer.get("/api").status == 200


def test_hostile_text_is_answered_as_data(explorer: Explorer) -> None:
    text = "<img src=x onerror=alert(1)> \x00 \u202e \ud7ff 😀 ' \" \\ %00"
    answer = explorer.get("/api/analysis", {"text": text})
    assert answer.status == 200
    assert answer.json["text"] == text  # as data, in JSON; the page sets it as text
    assert explorer.get("/api/hits", {"q": text}).status == 200
    assert explorer.get("/api/query", {"q": text}).status == 200


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH"])
def test_the_explorer_has_no_write_endpoint(explorer: Explorer, method: str) -> None:
    for path in ("/api/hits", "/api/case", "/"):
        answer = explorer.get(path, {"q": "cafe"}, method=method)
        assert answer.status == 405
        assert "read-only" in message_of(answer)


def test_a_foreign_host_is_refused(explorer: Explorer) -> None:
    answer = explorer.get("/api", headers={"Host": "attacker.example"})
    assert answer.status == 400
    assert explorer.get("/api").status == 200


def test_an_overlong_query_string_is_refused(explorer: Explorer) -> None:
    padding = "x" * (MAX_QUERY_STRING + 10)
    answer = explorer.get("/api/query", raw_query=f"q=cafe&pad={padding}")
    assert answer.status == 414
    assert "at most 262144 are read" in message_of(answer)


def test_a_request_line_beyond_the_server_limit_leaves_it_running(explorer: Explorer) -> None:
    host = urllib.parse.urlsplit(explorer.url)
    connection = http.client.HTTPConnection(host.hostname, host.port, timeout=60)
    try:
        connection.request("GET", "/api/query?q=" + "x" * (4 * MAX_QUERY_STRING))
        status = connection.getresponse().status
    except (ConnectionError, http.client.HTTPException):
        status = None  # the server may close the connection instead of answering
    finally:
        connection.close()
    assert status in (None, 400, 414, 431)
    assert explorer.get("/api").status == 200


def test_every_answer_carries_the_page_s_security_headers(explorer: Explorer) -> None:
    for path in ("/", "/static/explorer.js", "/api/hits?q=cafe", "/api/nothing"):
        answer = explorer.get(path)
        policy = answer.headers["content-security-policy"]
        assert "default-src 'none'" in policy and "script-src 'self'" in policy
        assert answer.headers["x-content-type-options"] == "nosniff"


def test_the_page_loads_nothing_from_the_network(explorer: Explorer) -> None:
    for path in ("/", "/static/explorer.js", "/static/explorer.css"):
        body = explorer.get(path).body.decode("utf-8")
        assert "http://" not in body and "https://" not in body and "//cdn" not in body, path
