"""behaviour.md §12.4, the embedded session-history anchor tests, on both backends.

Setup (as upstream's): key `agent:work:recall`, window `recall-session` holding `old`
(user, "quasar question" + 700 × `x`), `middle`, `newest`; a retained, archived window
`archived-session` before it; a window of another key and one of another agent.
The search half (`quasar` finds `old` with that key and window) runs on the real
index, so a hit's ids reopen the history they came from.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.agent_tools.sessions_history import sessions_history
from engine.analysis.js_json import js_json_bytes as json_bytes
from engine.errors import InputError
from engine.history.byte_caps import array_bytes
from engine.history.pages import read_history
from engine.history.request import HistoryRequest, HistoryRequestError, ToolHistoryRequest
from engine.model import SearchRequest
from tests.history.transcripts import BACKENDS, Transcript, new_store, write

KEY = "agent:work:recall"


def ids(messages) -> list[str]:
    return [message["__openclaw"]["id"] for message in messages]


@pytest.fixture(params=BACKENDS)
def recall(request: pytest.FixtureRequest, tmp_path: Path):
    archived = Transcript("archived-session", KEY, {"current": False, "archived": True})
    archived.message("archived-question", "user", "what did we archive?")
    archived.message("archived-answer", "assistant", "the cold storage policy")
    current = Transcript("recall-session", KEY, {"previous_session_id": "archived-session",
                                                 "reason": "reset"})
    current.message("old", "user", "quasar question " + "x" * 700)
    current.message("middle", "assistant", "middle: the telescope data")
    current.message("newest", "user", "newest: thanks")
    other_key = Transcript("other-key-session", "agent:work:elsewhere")
    other_key.message("elsewhere", "user", "elsewhere")
    other_agent = Transcript("other-agent-session", "agent:main:recall")
    other_agent.message("foreign", "user", "foreign")
    store = new_store(tmp_path, request.param)
    write(store, archived, current, other_key, other_agent)
    yield store
    store.close()


def test_search_hit_names_the_window_and_message_that_history_reopens(recall) -> None:
    hits = recall.search(SearchRequest("quasar", session_keys=(KEY,))).hits
    assert [(hit.session_key, hit.session_id, hit.message_id) for hit in hits] == [
        (KEY, "recall-session", "old")]
    hit = hits[0]
    page = sessions_history(recall, ToolHistoryRequest(KEY, message_id=hit.message_id,
                                                       session_id=hit.session_id, limit=1))
    assert ids(page["messages"]) == ["old"]


def test_tail_with_limit_one_is_the_newest_message(recall) -> None:
    assert ids(sessions_history(recall, ToolHistoryRequest(KEY, limit=1))["messages"]) == [
        "newest"]
    assert ids(read_history(recall, HistoryRequest(KEY, limit=1)).messages) == ["newest"]


@pytest.mark.parametrize("session_id", [None, "recall-session"])
def test_anchor_old_with_limit_one_is_old_without_next_offset(recall, session_id) -> None:
    answer = sessions_history(recall, ToolHistoryRequest(KEY, message_id="old",
                                                         session_id=session_id, limit=1))
    assert ids(answer["messages"]) == ["old"]
    assert "nextOffset" not in answer and "offset" not in answer
    assert answer["totalMessages"] == 3
    page = read_history(recall, HistoryRequest(KEY, message_id="old", session_id=session_id,
                                               limit=1))
    assert ids(page.messages) == ["old"] and page.next_offset is None
    assert page.older_cursor is None and page.newer_cursor is None


def test_missing_anchor_is_an_empty_list_not_the_tail(recall) -> None:
    answer = sessions_history(recall, ToolHistoryRequest(KEY, message_id="nope"))
    assert answer["messages"] == [] and "totalMessages" not in answer
    page = read_history(recall, HistoryRequest(KEY, message_id="nope"))
    assert page.to_json() == {"sessionKey": KEY, "sessionId": "recall-session", "messages": []}


@pytest.mark.parametrize("session_id", ["missing-session", "other-key-session",
                                        "other-agent-session"])
def test_session_id_of_nothing_another_key_or_another_agent_is_rejected(recall, session_id) -> None:
    for read in (lambda: read_history(recall, HistoryRequest(KEY, message_id="old",
                                                             session_id=session_id)),
                 lambda: sessions_history(recall, ToolHistoryRequest(
                     KEY, message_id="old", session_id=session_id))):
        with pytest.raises(HistoryRequestError) as raised:
            read()
        assert str(raised.value) == "sessionId does not belong to sessionKey"


def test_archived_window_reopens_with_its_session_id_and_message_id(recall) -> None:
    answer = sessions_history(recall, ToolHistoryRequest(
        KEY, session_id="archived-session", message_id="archived-answer", limit=1))
    assert ids(answer["messages"]) == ["archived-answer"]
    assert answer["messages"][0]["content"] == "the cold storage policy"
    # without its sessionId the anchor is looked up in the current window only
    assert sessions_history(recall, ToolHistoryRequest(
        KEY, message_id="archived-answer"))["messages"] == []


def test_gateway_cap_of_1200_bytes_keeps_the_anchor_within_the_cap(recall) -> None:
    page = read_history(recall, HistoryRequest(KEY, message_id="old", max_bytes=1200))
    assert "old" in ids(page.messages)
    assert array_bytes([json_bytes(message) for message in page.messages]) <= 1200
    # the minimum budget still keeps the requested message
    tight = read_history(recall, HistoryRequest(KEY, message_id="old", max_bytes=1024))
    assert "old" in ids(tight.messages)
    assert array_bytes([json_bytes(message) for message in tight.messages]) <= 1024


def test_offset_with_message_id_is_rejected_by_both(recall) -> None:
    with pytest.raises(HistoryRequestError, match="^offset and messageId cannot be used together$"):
        ToolHistoryRequest(KEY, offset=0, message_id="old")
    with pytest.raises(HistoryRequestError, match="^offset and messageId cannot be used together$"):
        HistoryRequest.from_json({"sessionKey": KEY, "offset": 0, "messageId": "old"})


def test_session_id_alone_is_rejected_by_both(recall) -> None:
    with pytest.raises(HistoryRequestError, match="^sessionId requires messageId$"):
        ToolHistoryRequest(KEY, session_id="recall-session")
    with pytest.raises(HistoryRequestError, match="^sessionId requires messageId$"):
        HistoryRequest(KEY, session_id="recall-session")


def test_cursor_with_offset_or_message_id_is_rejected() -> None:
    for members in ({"offset": 0}, {"messageId": "old"}):
        with pytest.raises(HistoryRequestError,
                           match="^cursor cannot be used with offset or messageId$"):
            HistoryRequest.from_json({"sessionKey": KEY, "cursor": "abc", **members})


def test_unknown_key_is_an_error_answer_for_the_tool_and_an_input_error_for_the_gateway(
        recall) -> None:
    assert sessions_history(recall, ToolHistoryRequest("agent:work:nothing")) == {
        "status": "error", "error": "No session found: agent:work:nothing"}
    with pytest.raises(InputError, match="unknown session key 'agent:work:nothing'"):
        read_history(recall, HistoryRequest("agent:work:nothing"))
