"""Offset paging and directional cursors (behaviour.md §9.4, §9.5 and the seed's "directional
history cursors continue through adjacent large messages without skipping them or
reporting a false end of history"), on both backends.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.analysis.js_json import js_json_bytes as json_bytes
from engine.errors import InputError
from engine.history.cursor import HistoryCursor
from engine.history.pages import HistoryPage, read_history, shown_offset_range
from engine.history.request import HistoryRequest
from engine.history.rows import HistoryRow
from engine.history.window_math import offset_range
from engine.model import SessionWindow, StoredEvent
from tests.history.transcripts import BACKENDS, Transcript, new_store, write

KEY = "agent:main:paging"


def user_row(index: int, hidden: bool) -> HistoryRow:
    """A user message row, blank when `hidden`."""
    event = {"type": "message", "id": f"u{index}",
             "message": {"role": "user", "content": " " if hidden else f"text {index}"}}
    return HistoryRow(index, StoredEvent("s", index, event), "message", f"u{index}")


def ids(page: HistoryPage) -> list[str]:
    return [message["__openclaw"]["id"] for message in page.messages]


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path):
    backend = new_store(tmp_path, request.param)
    yield backend
    backend.close()


def ten(store, sizes: dict[int, int] | None = None) -> Transcript:
    transcript = Transcript("w", KEY)
    for index in range(10):
        transcript.message(f"m{index}", "user", "x" * (sizes or {}).get(index, 20))
    write(store, transcript)
    return transcript


def test_offset_pages_walk_back_to_the_first_row(store) -> None:
    ten(store)
    seen: list[str] = []
    offset = 0
    while True:
        page = read_history(store, HistoryRequest(KEY, offset=offset, limit=3))
        seen = ids(page) + seen
        assert page.offset == offset and page.total_messages == 10
        if not page.has_more:
            assert page.next_offset is None
            break
        offset = page.next_offset
    assert seen == [f"m{index}" for index in range(10)]


def test_next_offset_follows_a_page_the_byte_cap_shortened(store) -> None:
    ten(store, {8: 820})
    page = read_history(store, HistoryRequest(KEY, limit=4, max_bytes=1024))
    assert ids(page) == ["m8", "m9"]  # m6, m7 did not fit
    assert (page.next_offset, page.has_more) == (2, True)
    assert ids(read_history(store, HistoryRequest(KEY, offset=2, limit=4))) == [
        "m4", "m5", "m6", "m7"]


def follow(store, page: HistoryPage, direction: str, limit: int, max_bytes: int | None = None):
    """Every page reached by following `direction` cursors from `page`."""
    pages = []
    cursor = page.older_cursor if direction == "older" else page.newer_cursor
    while cursor is not None:
        page = read_history(store, HistoryRequest(KEY, cursor=cursor, limit=limit,
                                                  max_bytes=max_bytes))
        assert not page.window_reset
        pages.append(page)
        cursor = page.older_cursor if direction == "older" else page.newer_cursor
        assert page.has_more == (cursor is not None)
    return pages


@pytest.mark.parametrize("limit", [1, 2, 3, 10])
def test_older_cursors_from_the_tail_visit_every_row_once_in_order(store, limit) -> None:
    ten(store)
    tail = read_history(store, HistoryRequest(KEY, limit=limit))
    seen = ids(tail)
    for page in follow(store, tail, "older", limit):
        assert len(page.messages) <= limit
        seen = ids(page) + seen
    assert seen == [f"m{index}" for index in range(10)]


def test_newer_cursors_from_an_old_page_reach_the_tail(store) -> None:
    ten(store)
    start = read_history(store, HistoryRequest(KEY, offset=8, limit=2))
    assert ids(start) == ["m0", "m1"] and start.newer_cursor is not None
    seen = ids(start)
    for page in follow(store, start, "newer", 3):
        seen += ids(page)
    assert seen == [f"m{index}" for index in range(10)]


def test_cursors_go_through_adjacent_large_messages(store) -> None:
    ten(store, {3: 3000, 4: 3000, 5: 3000})  # each larger than the budget
    tail = read_history(store, HistoryRequest(KEY, limit=5, max_bytes=1024))
    seen = ids(tail)
    for page in follow(store, tail, "older", 5, max_bytes=1024):
        seen = ids(page) + seen
        if len(page.messages) > 1:
            assert json_bytes(list(page.messages)) <= 1024
    assert seen == [f"m{index}" for index in range(10)]
    large = [page for page in follow(store, tail, "older", 5, max_bytes=1024)
             if json_bytes(list(page.messages)) > 1024]
    assert [ids(page) for page in large] == [["m5"], ["m4"], ["m3"]]  # alone, none skipped


def test_cursor_page_after_a_new_reset_says_window_reset(tmp_path: Path) -> None:
    for backend in BACKENDS:
        store = new_store(tmp_path, backend)
        try:
            transcript = Transcript("w", KEY)
            transcript.messages("m", 5)
            write(store, transcript)
            tail = read_history(store, HistoryRequest(KEY, limit=2))
            with store.transaction() as transaction:
                transaction.append_event("w", {"type": "reset", "id": "r1",
                                               "parentId": "m4", "timestamp": 1})
            moved = read_history(store, HistoryRequest(KEY, cursor=tail.older_cursor))
            assert moved.window_reset and moved.messages == ()
            assert moved.to_json()["windowReset"] is True
        finally:
            store.close()


def test_cursor_page_after_a_rotation_or_a_rewind_says_window_reset(tmp_path: Path) -> None:
    for backend in BACKENDS:
        store = new_store(tmp_path, backend)
        try:
            first = Transcript("w", KEY)
            first.messages("m", 5)
            write(store, first)
            tail = read_history(store, HistoryRequest(KEY, limit=2))
            with store.transaction() as transaction:  # rewind past the cursor's anchor
                transaction.append_event("w", {"type": "leaf", "id": "back", "parentId": "m4",
                                               "targetId": "m1"})
            assert read_history(store, HistoryRequest(KEY, cursor=tail.older_cursor)).window_reset
            again = read_history(store, HistoryRequest(KEY, limit=1))
            rotated = Transcript("w2", KEY, {"previous_session_id": "w", "reason": "reset"})
            rotated.message("n0")
            with store.transaction() as transaction:
                transaction.put_window(SessionWindow("w", KEY, current=False))
            write(store, rotated)
            assert read_history(store, HistoryRequest(KEY, cursor=again.older_cursor)).window_reset
        finally:
            store.close()


def test_a_cursor_that_does_not_decode_or_belongs_elsewhere_is_refused(store) -> None:
    ten(store)
    other = Transcript("x", "agent:main:other")
    other.message("o1")
    write(store, other)
    with pytest.raises(InputError, match="^cursor is not a history cursor"):
        read_history(store, HistoryRequest(KEY, cursor="not-a-cursor!"))
    foreign = HistoryCursor("older", "x", -1, "o1", 1, 0).encode()
    with pytest.raises(InputError, match="^cursor does not belong to sessionKey$"):
        read_history(store, HistoryRequest(KEY, cursor=foreign))


def test_anchored_pages_carry_no_cursor_or_offset(store) -> None:
    ten(store)
    page = read_history(store, HistoryRequest(KEY, message_id="m5", limit=3)).to_json()
    assert set(page) == {"sessionKey", "sessionId", "messages", "totalMessages"}


def test_blank_user_messages_keep_their_place_and_cursors_step_over_them(store) -> None:
    transcript = Transcript("w", KEY)
    transcript.message("m0", "user", "first")
    for index in range(1, 4):
        transcript.message(f"blank{index}", "user", ("", "   ", "\u3000")[index - 1])
    transcript.message("empty-answer", "assistant", "")
    transcript.message("m5", "user", "last")
    write(store, transcript)
    tail = read_history(store, HistoryRequest(KEY))
    assert ids(tail) == ["m0", "empty-answer", "m5"] and tail.total_messages == 6
    assert [message["__openclaw"]["seq"] for message in tail.messages] == [1, 5, 6]
    one = read_history(store, HistoryRequest(KEY, limit=1, offset=1))
    assert ids(one) == ["empty-answer"]
    seen = ids(one)
    pages = follow(store, one, "older", 1)
    for page in pages:
        seen = ids(page) + seen
    assert seen == ["m0", "empty-answer"] and len(pages) == 4  # three hidden rows, then m0
    assert read_history(store, HistoryRequest(KEY, message_id="blank2")).messages == ()


def blank_window(store, texts: list[str]) -> None:
    transcript = Transcript("w", KEY)
    for index, text in enumerate(texts):
        transcript.message(text.strip() or f"hidden{index}", ("user", "assistant")[index % 2],
                           text)
    write(store, transcript)


@pytest.mark.parametrize(("texts", "request_options", "expected", "following"), [
    # issue 27, item 4: OpenClaw 2026.9.6's answers
    (["tb1", "tb2", "tb3", "tb4", ""], {"limit": 1}, ["tb4"], 2),
    (["tb1", "tb2", "tb3", "tb4", " "], {"limit": 2, "offset": 0}, ["tb3", "tb4"], 3),
    (["mb1", "mb2", " ", "mb4", "mb5"], {"limit": 3}, ["mb2", "mb4", "mb5"], 4),
    (["mb1", "mb2", "", "mb4", "mb5"], {"limit": 2, "offset": 1}, ["mb2", "mb4"], 4),
    (["mb1", "mb2", "", "mb4", "mb5"], {"limit": 2, "offset": 2}, ["mb1", "mb2"], None),
])
def test_a_limited_page_fills_its_limit_with_shown_rows(
        store, texts: list[str], request_options: dict[str, int], expected: list[str],
        following: int | None) -> None:
    blank_window(store, texts)
    page = read_history(store, HistoryRequest(KEY, **request_options))
    assert ids(page) == expected
    assert page.next_offset == following


@settings(max_examples=300, deadline=None)
@given(st.lists(st.booleans(), max_size=12), st.integers(0, 14), st.integers(1, 6))
def test_the_shown_offset_range_is_the_plain_one_without_hidden_rows_and_fills_its_limit(
        hidden: list[bool], offset: int, limit: int) -> None:
    """`shown_offset_range` against its oracle: `offset_range` when no row is hidden;
    otherwise the page ends where the plain one does and shows the `limit` newest shown
    rows before that end (all of them when fewer)."""
    rows = [user_row(index, flag) for index, flag in enumerate(hidden)]
    scope = SimpleNamespace(rows=rows)
    found = shown_offset_range(scope, offset, limit)  # type: ignore[arg-type]
    plain = offset_range(len(rows), offset, limit)
    if not any(hidden):
        assert found == plain
    assert found.end == plain.end
    shown_before_end = [index for index in range(plain.end) if not hidden[index]]
    covered = [index for index in range(found.start, found.end) if not hidden[index]]
    assert covered == shown_before_end[-limit:]
    # a full page starts at its oldest shown row; a short one reaches the first row
    assert found.start == (covered[0] if len(covered) == limit else 0)
