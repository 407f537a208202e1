"""Byte budgets, truncation and limits (behaviour.md §9.1, §9.5) on both backends.

Sizes are measured as OpenClaw measures them (`json_bytes`: UTF-8 of `JSON.stringify`);
every budget assertion measures the returned `messages` array the same way.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.agent_tools.sessions_history import AccessDenial, HistoryTarget, sessions_history
from engine.analysis.js_json import js_json_bytes as json_bytes
from engine.history.byte_caps import (
    GATEWAY_PLACEHOLDER_TEXT,
    SINGLE_MESSAGE_MAX_BYTES,
    TOOL_MAX_BYTES,
    TOOL_PLACEHOLDER_TEXT,
)
from engine.history.pages import read_history
from engine.history.request import HistoryRequest, HistoryRequestError, ToolHistoryRequest
from engine.history.sanitize import TRUNCATION_MARKER
from tests.history.transcripts import BACKENDS, Transcript, new_store, write

KEY = "agent:main:caps"


def ids(messages) -> list[str]:
    return [message["__openclaw"]["id"] for message in messages]


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path):
    backend = new_store(tmp_path, request.param)
    yield backend
    backend.close()


def sized(store, sizes: list[int]) -> None:
    """One window whose message i (all from the user) has a text of sizes[i] characters."""
    transcript = Transcript("w", KEY)
    for index, size in enumerate(sizes):
        transcript.message(f"m{index}", "user", "x" * size)
    write(store, transcript)


# ----- the Gateway ---------------------------------------------------------------------------


def row_size(store) -> int:
    """The JSON bytes of one shown row of `sized(store, [300, ...])` (all alike)."""
    return json_bytes(read_history(store, HistoryRequest(KEY, message_id="m0",
                                                         limit=1)).messages[0])


def room_for(rows: int, size: int) -> int:
    """The array bytes of `rows` rows of `size` bytes."""
    return 2 + rows * size + rows - 1


def test_max_bytes_grows_around_the_anchor_older_first_then_newer(store) -> None:
    sized(store, [300] * 9)
    size = row_size(store)
    assert room_for(3, size) >= 1024
    page = read_history(store, HistoryRequest(KEY, message_id="m4",
                                              max_bytes=room_for(3, size)))
    assert ids(page.messages) == ["m3", "m4", "m5"]
    page = read_history(store, HistoryRequest(KEY, message_id="m4",
                                              max_bytes=room_for(4, size)))
    assert ids(page.messages) == ["m2", "m3", "m4", "m5"]  # the older side first
    assert json_bytes(list(page.messages)) == room_for(4, size)


def test_growth_alternates_and_stops_each_side_on_its_own(store) -> None:
    # m5 is too large for the budget: the newer side stops, the older side goes on
    sized(store, [300, 300, 300, 300, 300, 1500, 300])
    size = row_size(store)
    page = read_history(store, HistoryRequest(KEY, message_id="m4",
                                              max_bytes=room_for(5, size)))
    assert ids(page.messages) == ["m0", "m1", "m2", "m3", "m4"]
    page = read_history(store, HistoryRequest(KEY, message_id="m4", max_bytes=1024))
    assert ids(page.messages) == ["m3", "m4"] and room_for(3, size) > 1024


def test_anchor_larger_than_the_budget_is_returned_alone(store) -> None:
    sized(store, [100, 5000, 100])
    page = read_history(store, HistoryRequest(KEY, message_id="m1", max_bytes=1024))
    assert ids(page.messages) == ["m1"]
    assert json_bytes(list(page.messages)) > 1024  # the allowed lone-anchor case


def test_message_over_128_kib_becomes_the_gateway_placeholder(store) -> None:
    sized(store, [10, SINGLE_MESSAGE_MAX_BYTES + 10, 10])
    page = read_history(store, HistoryRequest(KEY))
    placeholder = page.messages[1]
    assert placeholder["content"] == [{"type": "text", "text": GATEWAY_PLACEHOLDER_TEXT}]
    assert placeholder["__openclaw"] == {"id": "m1", "seq": 2, "truncated": True,
                                         "reason": "oversized"}
    assert placeholder["role"] == "user" and ids(page.messages) == ["m0", "m1", "m2"]


def test_tail_drops_the_oldest_rows_while_over_the_budget(store) -> None:
    sized(store, [400] * 6)
    page = read_history(store, HistoryRequest(KEY, max_bytes=1024))
    assert ids(page.messages) == ["m4", "m5"]
    assert json_bytes(list(page.messages)) <= 1024
    assert (page.next_offset, page.has_more) == (2, True)


def test_gateway_default_budget_is_6_mib(store) -> None:
    sized(store, [100_000] * 70)  # 7 MB of text
    page = read_history(store, HistoryRequest(KEY))
    assert json_bytes(list(page.messages)) <= 6 * 1024 * 1024 < json_bytes(
        list(page.messages)) + 100_100
    with pytest.raises(HistoryRequestError, match="^maxBytes must be an integer of at least 1024$"):
        HistoryRequest(KEY, max_bytes=1023)
    bigger = read_history(store, HistoryRequest(KEY, max_bytes=10 * 1024 * 1024))
    assert bigger.messages == page.messages  # 6 MiB is also the ceiling


# ----- limits -----------------------------------------------------------------------------------


def test_limit_defaults_to_200_and_is_at_most_1000(store) -> None:
    sized(store, [1] * 1005)
    assert len(read_history(store, HistoryRequest(KEY)).messages) == 200
    assert len(read_history(store, HistoryRequest(KEY, limit=1000)).messages) == 1000
    for limit in (0, 1001, True):
        with pytest.raises(HistoryRequestError, match="^limit must be an integer from 1 to 1000$"):
            HistoryRequest(KEY, limit=limit)
    with pytest.raises(HistoryRequestError, match="^limit must be an integer from 1 to 1000$"):
        ToolHistoryRequest(KEY, limit=1001)


# ----- the tool --------------------------------------------------------------------------------


def test_tool_cuts_each_text_at_4000_units_with_the_marker(store) -> None:
    transcript = Transcript("w", KEY)
    transcript.message("long", "user", "é" * 4001)
    transcript.message("blocks", "assistant", None, content=[
        {"type": "text", "text": "a" * 4005}, {"type": "thinking", "thinking": "t" * 4005},
        {"type": "toolCall", "partialJson": "{" * 4005}], usage={"input": 1}, cost=1,
        details={"x": 1})
    transcript.message("astral", "user", "𐐀" * 2001)  # 4002 UTF-16 units
    transcript.message("short", "user", "fine")
    write(store, transcript)
    answer = sessions_history(store, ToolHistoryRequest(KEY))
    long, blocks, astral, short = answer["messages"]
    assert long["content"] == "é" * 4000 + TRUNCATION_MARKER
    assert [block.get("text") or block.get("thinking") or block.get("partialJson")
            for block in blocks["content"]] == [
        "a" * 4000 + TRUNCATION_MARKER, "t" * 4000 + TRUNCATION_MARKER,
        "{" * 4000 + TRUNCATION_MARKER]
    assert not {"usage", "cost", "details"} & set(blocks)
    assert astral["content"] == "𐐀" * 2000 + TRUNCATION_MARKER  # never half a pair
    assert short["content"] == "fine"
    assert (answer["contentTruncated"], answer["truncated"], answer["droppedMessages"],
            answer["contentRedacted"]) == (True, True, False, False)
    assert answer["bytes"] == json_bytes(answer["messages"])


def test_tool_keeps_credentials_as_they_are(store) -> None:
    transcript = Transcript("w", KEY)
    transcript.message("secret", "user", "SECRET_KEY = 'sk-live-1234567890abcdef'")
    write(store, transcript)
    answer = sessions_history(store, ToolHistoryRequest(KEY))
    assert answer["messages"][0]["content"] == "SECRET_KEY = 'sk-live-1234567890abcdef'"
    assert answer["contentRedacted"] is False


def test_tool_messages_only_with_include_tools(store) -> None:
    transcript = Transcript("w", KEY)
    transcript.message("ask", "user")
    transcript.message("call", "assistant")
    transcript.message("result", "toolResult")
    transcript.message("legacy", "tool")
    transcript.message("answer", "assistant")
    write(store, transcript)
    assert ids(sessions_history(store, ToolHistoryRequest(KEY))["messages"]) == [
        "ask", "call", "answer"]
    assert ids(sessions_history(store, ToolHistoryRequest(KEY, include_tools=True))[
        "messages"]) == ["ask", "call", "result", "legacy", "answer"]
    # the Gateway read shows every row
    assert len(read_history(store, HistoryRequest(KEY)).messages) == 5


def test_tool_caps_at_80_kib_around_the_anchor(store) -> None:
    sized(store, [3900] * 60)  # about 235 KB, each text under the 4,000-unit cut
    answer = sessions_history(store, ToolHistoryRequest(KEY, message_id="m30"))
    shown = ids(answer["messages"])
    assert "m30" in shown and answer["bytes"] <= TOOL_MAX_BYTES
    assert answer["bytes"] == json_bytes(answer["messages"])
    assert answer["droppedMessages"] and answer["truncated"]
    middle = shown.index("m30")
    assert abs(middle - (len(shown) - 1 - middle)) <= 1  # grown on both sides alike
    tail = sessions_history(store, ToolHistoryRequest(KEY))
    assert ids(tail["messages"])[-1] == "m59" and tail["bytes"] <= TOOL_MAX_BYTES


def test_tool_replaces_a_lone_message_over_its_budget(store) -> None:
    transcript = Transcript("w", KEY)
    transcript.message("small", "user", "hello")
    transcript.message("huge", "assistant", None,
                       content=[{"type": "text", "text": "y" * 3990}] * 25)
    write(store, transcript)
    answer = sessions_history(store, ToolHistoryRequest(KEY, message_id="huge"))
    assert answer["messages"] == [{"role": "assistant", "content": TOOL_PLACEHOLDER_TEXT,
                                   "__openclaw": {"seq": 2, "id": "huge"}}]
    assert answer["droppedMessages"] and answer["bytes"] == json_bytes(answer["messages"])


def test_tool_offset_pagination_members(store) -> None:
    sized(store, [10] * 5)
    answer = sessions_history(store, ToolHistoryRequest(KEY, offset=0, limit=2))
    assert ids(answer["messages"]) == ["m3", "m4"]
    assert {name: answer[name] for name in ("offset", "nextOffset", "hasMore",
                                            "totalMessages")} == {
        "offset": 0, "nextOffset": 2, "hasMore": True, "totalMessages": 5}
    last = sessions_history(store, ToolHistoryRequest(KEY, offset=4, limit=2))
    assert ids(last["messages"]) == ["m0"] and last["hasMore"] is False
    assert "nextOffset" not in last
    tail = sessions_history(store, ToolHistoryRequest(KEY, limit=2))
    assert not {"offset", "nextOffset", "hasMore", "totalMessages"} & set(tail)


def test_tool_next_offset_skips_stripped_tool_rows_again(store) -> None:
    transcript = Transcript("w", KEY)
    transcript.messages("m", 3)
    transcript.message("result", "toolResult")
    write(store, transcript)
    answer = sessions_history(store, ToolHistoryRequest(KEY, offset=0, limit=2))
    assert ids(answer["messages"]) == ["m2"]
    assert (answer["nextOffset"], answer["hasMore"], answer["totalMessages"]) == (2, True, 4)


class DenyEveryone:
    """A visibility policy that refuses every key (the seam's protocol)."""

    def resolve_target(self, session_key: str) -> HistoryTarget | AccessDenial:
        return AccessDenial("forbidden", f"Session history visibility is restricted: {session_key}")


def test_a_denying_access_check_answers_forbidden_before_reading(store) -> None:
    sized(store, [10])
    assert sessions_history(store, ToolHistoryRequest(KEY), DenyEveryone()) == {
        "status": "forbidden", "error": f"Session history visibility is restricted: {KEY}"}
    # even for a key the store does not hold: nothing is read
    assert sessions_history(store, ToolHistoryRequest("agent:x:y"), DenyEveryone())[
        "status"] == "forbidden"


def test_main_is_the_display_alias_of_the_default_main_session(store) -> None:
    transcript = Transcript("w", "agent:main:main")
    transcript.message("hello")
    write(store, transcript)
    answer = sessions_history(store, ToolHistoryRequest("main"))
    assert answer["sessionKey"] == "main" and ids(answer["messages"]) == ["hello"]
    assert sessions_history(store, ToolHistoryRequest("agent:main:main"))["sessionKey"] == "main"
