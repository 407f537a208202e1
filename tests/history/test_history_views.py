"""Views, closed intervals and anchored windows (behaviour.md §9.3, §9.4) on both backends.

Each test writes a real transcript into a fresh store of each backend and reads it back
through `read_history`, so the rules are pinned on what the stores return.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.history.pages import read_history
from engine.history.request import HistoryRequest
from tests.history.transcripts import BACKENDS, Transcript, new_store, write

KEY = "agent:main:views"


def ids(page) -> list[str]:
    return [message["__openclaw"]["id"] for message in page.messages]


def seqs(page) -> list[int]:
    return [message["__openclaw"]["seq"] for message in page.messages]


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path):
    backend = new_store(tmp_path, request.param)
    yield backend
    backend.close()


def twenty(store) -> None:
    transcript = Transcript("w", KEY)
    transcript.messages("m", 20)
    write(store, transcript)


# ----- §9.4 window math -----------------------------------------------------------------


@pytest.mark.parametrize(("limit", "expected"), [
    (5, [f"m{i}" for i in range(8, 13)]),   # [a-2 … a+2]
    (4, [f"m{i}" for i in range(9, 13)]),   # [a-1 … a+2]
    (1, ["m10"]),                           # [a]
])
def test_anchored_window_around_the_anchor(store, limit, expected) -> None:
    twenty(store)
    page = read_history(store, HistoryRequest(KEY, message_id="m10", limit=limit))
    assert ids(page) == expected and page.total_messages == 20


def test_anchor_at_the_tail_gives_the_last_rows(store) -> None:
    twenty(store)
    page = read_history(store, HistoryRequest(KEY, message_id="m19", limit=5))
    assert ids(page) == [f"m{i}" for i in range(15, 20)]


def test_anchor_at_the_start_is_clamped(store) -> None:
    twenty(store)
    page = read_history(store, HistoryRequest(KEY, message_id="m0", limit=5))
    assert ids(page) == [f"m{i}" for i in range(5)]
    assert seqs(page) == [1, 2, 3, 4, 5]


# ----- logical resets ---------------------------------------------------------------------


def reset_transcript() -> Transcript:
    transcript = Transcript("w", KEY)
    transcript.message("a1", "user")
    transcript.message("a2", "assistant")
    transcript.message("kept-user", "user")
    transcript.message("kept-tool", "toolResult")
    transcript.message("kept-assistant", "assistant")
    transcript.compaction("pre-compaction")
    transcript.other("model")
    transcript.reset("r1", first_kept="kept-user")
    transcript.custom("notice", display=True)
    transcript.custom("hidden", display=False)
    transcript.custom("runtime", display=True, custom_type="openclaw.runtime-context")
    transcript.message("b1", "user")
    transcript.compaction("post-compaction")
    transcript.message("b2", "assistant")
    return transcript


def test_current_view_is_kept_rows_then_the_reset_and_everything_after(store) -> None:
    write(store, reset_transcript())
    page = read_history(store, HistoryRequest(KEY))
    assert ids(page) == ["kept-user", "kept-assistant", "r1", "notice", "b1",
                         "post-compaction", "b2"]
    assert seqs(page) == [1, 2, 3, 4, 5, 6, 7]
    kinds = [message["__openclaw"].get("kind") for message in page.messages]
    assert kinds == [None, None, "reset", "custom_message", None, "compaction", None]


def test_kept_row_anchor_stays_in_the_view_and_reaches_post_reset_turns(store) -> None:
    write(store, reset_transcript())
    page = read_history(store, HistoryRequest(KEY, message_id="kept-user", limit=5))
    assert page.scope == "current"
    assert ids(page) == ["kept-user", "kept-assistant", "r1", "notice", "b1"]


def test_retained_row_opens_its_closed_interval_without_later_turns(store) -> None:
    write(store, reset_transcript())
    page = read_history(store, HistoryRequest(KEY, message_id="a2", limit=200))
    assert page.scope == "interval"
    assert ids(page) == ["a1", "a2", "kept-user", "kept-tool", "kept-assistant",
                         "pre-compaction", "r1"]
    assert page.total_messages == 7 and seqs(page) == list(range(1, 8))


def test_a_kept_rows_unkept_neighbour_is_read_in_the_interval(store) -> None:
    write(store, reset_transcript())
    page = read_history(store, HistoryRequest(KEY, message_id="kept-tool", limit=1))
    assert page.scope == "interval" and ids(page) == ["kept-tool"]


def test_reset_without_first_kept_keeps_nothing(store) -> None:
    transcript = Transcript("w", KEY)
    transcript.messages("a", 3)
    transcript.reset("r1")
    transcript.messages("b", 2)
    write(store, transcript)
    assert ids(read_history(store, HistoryRequest(KEY))) == ["r1", "b0", "b1"]


def test_first_kept_entry_after_the_reset_keeps_nothing(store) -> None:
    transcript = Transcript("w", KEY)
    transcript.messages("a", 2)
    transcript.reset("r1", first_kept="b0")
    transcript.messages("b", 2)
    write(store, transcript)
    assert ids(read_history(store, HistoryRequest(KEY))) == ["r1", "b0", "b1"]


def test_several_resets_give_one_interval_each(store) -> None:
    transcript = Transcript("w", KEY)
    transcript.messages("a", 2)
    transcript.reset("r1")
    transcript.messages("b", 2)
    transcript.reset("r2")
    transcript.messages("c", 2)
    write(store, transcript)
    assert ids(read_history(store, HistoryRequest(KEY))) == ["r2", "c0", "c1"]
    assert ids(read_history(store, HistoryRequest(KEY, message_id="a1"))) == ["a0", "a1", "r1"]
    assert ids(read_history(store, HistoryRequest(KEY, message_id="b0"))) == ["b0", "b1", "r2"]
    # a reset outside the view opens the interval it closes
    assert ids(read_history(store, HistoryRequest(KEY, message_id="r1"))) == ["a0", "a1", "r1"]
    assert ids(read_history(store, HistoryRequest(KEY, message_id="r2"))) == ["r2", "c0", "c1"]


def test_compactions_do_not_close_a_view(store) -> None:
    transcript = Transcript("w", KEY)
    transcript.messages("a", 2)
    transcript.compaction("c1")
    transcript.messages("b", 2)
    write(store, transcript)
    page = read_history(store, HistoryRequest(KEY, message_id="a0"))
    assert page.scope == "current" and ids(page) == ["a0", "a1", "c1", "b0", "b1"]


# ----- the active path ---------------------------------------------------------------------


def rewound_transcript() -> Transcript:
    transcript = Transcript("w", KEY)
    transcript.message("m1")
    transcript.message("m2", "assistant")
    transcript.message("abandoned")
    transcript.rewind("back", "m2")
    transcript.message("m3")
    return transcript


def test_rewound_message_is_not_in_the_view(store) -> None:
    write(store, rewound_transcript())
    assert ids(read_history(store, HistoryRequest(KEY))) == ["m1", "m2", "m3"]


@pytest.mark.parametrize("anchor", ["abandoned", "back", "nope"])
def test_off_path_rewound_control_or_missing_anchor_is_empty(store, anchor) -> None:
    write(store, rewound_transcript())
    page = read_history(store, HistoryRequest(KEY, message_id=anchor))
    assert page.messages == () and page.total_messages is None and page.scope is None


def test_non_displayable_event_is_not_an_anchor(store) -> None:
    transcript = Transcript("w", KEY)
    transcript.message("m1")
    transcript.other("model")
    transcript.custom("hidden", display=False)
    write(store, transcript)
    for anchor in ("model", "hidden"):
        assert read_history(store, HistoryRequest(KEY, message_id=anchor)).messages == ()


def test_anchor_ids_are_trimmed(store) -> None:
    twenty(store)
    assert ids(read_history(store, HistoryRequest(KEY, message_id=" m3 ", limit=1))) == ["m3"]


# ----- physical resets ---------------------------------------------------------------------


def test_physical_reset_reads_the_current_window_and_reopens_the_retained_one(store) -> None:
    before = Transcript("before", KEY, {"current": False})
    before.messages("old", 3)
    after = Transcript("after", KEY, {"previous_session_id": "before", "reason": "reset"})
    after.messages("new", 2)
    write(store, before, after)
    tail = read_history(store, HistoryRequest(KEY))
    assert tail.session_id == "after" and ids(tail) == ["new0", "new1"]
    retained = read_history(store, HistoryRequest(KEY, session_id="before", message_id="old1"))
    assert retained.session_id == "before" and retained.retained
    assert ids(retained) == ["old0", "old1", "old2"]
    assert read_history(store, HistoryRequest(KEY, message_id="old1")).messages == ()


def test_shown_message_keeps_the_stored_message_with_time_and_metadata(store) -> None:
    transcript = Transcript("w", KEY)
    transcript.message("m1", "assistant", None, content=[{"type": "text", "text": "hi"}],
                       timestamp=1234, __openclaw={"runId": "run-1"})
    write(store, transcript)
    (shown,) = read_history(store, HistoryRequest(KEY)).messages
    assert shown == {"role": "assistant", "content": [{"type": "text", "text": "hi"}],
                     "timestamp": 1234, "__openclaw": {"runId": "run-1", "id": "m1", "seq": 1}}
