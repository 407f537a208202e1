"""Properties of history pages over random transcripts, on both backends at once.

Random keys hold one to three windows (physical resets: each rotation retains the
window before it) whose events mix messages of every size (blank user messages too,
which no page shows) (some larger than any
budget, some over the 128 KiB single-message limit), tool results, logical resets (with
and without `firstKeptEntryId`), compactions, displayed and hidden custom messages,
other entries and rewinds. For each, with a random `limit` and `maxBytes`:

* following `older` cursors from the tail visits every shown row of the current view
  exactly once, in order (every row but the hidden ones: user messages without visible
  text), and so does following `nextOffset`;
* an anchored read of any shown row of any window's active path contains the anchor (in
  its view or closed interval); a hidden row and an id off the path give an empty page;
* no page exceeds its byte budget unless it holds a single row (the lone-anchor case);
* the reference and SQLite backends return identical pages for every request.

The expected view is the one `engine.history.views` computes from the stored events
(its rules are pinned case by case in `test_history_views.py`); these properties pin
the paging, the caps and the backends' agreement on top of it.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.analysis.js_json import js_json_bytes as json_bytes
from engine.history.byte_caps import GATEWAY_MAX_BYTES
from engine.history.pages import HistoryPage, read_history
from engine.history.request import HistoryRequest
from engine.history.rows import is_hidden
from engine.history.views import window_history
from tests.history.transcripts import BACKENDS, Transcript, new_store, write

KEY = "agent:main:random"

HISTORY_SETTINGS = settings(
    max_examples=int(os.environ.get("HISTORY_EXAMPLES", "40")),
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

OPERATIONS = ("message", "message", "message", "message", "blank", "tool", "large", "reset",
              "compaction", "custom", "hidden", "other", "rewind")
LARGE_SIZES = (1500, 3000, 6000, 140_000)


@dataclass(frozen=True)
class Case:
    transcripts: tuple[Transcript, ...]
    limit: int
    max_bytes: int | None


@st.composite
def cases(draw: st.DrawFn) -> Case:
    transcripts = []
    count = draw(st.integers(1, 3))
    for number in range(count):
        window: dict[str, Any] = {"current": number == count - 1}
        if number:
            window.update(previous_session_id=f"w{number - 1}", reason="reset")
        transcript = Transcript(f"w{number}", KEY, window)
        entries: list[str] = []
        for index, operation in enumerate(draw(st.lists(st.sampled_from(OPERATIONS),
                                                        max_size=28))):
            entry_id = f"w{number}e{index}"
            if operation == "message":
                role = draw(st.sampled_from(("user", "assistant")))
                transcript.message(entry_id, role, "x" * draw(st.integers(0, 300)))
            elif operation == "blank":
                transcript.message(entry_id, "user", draw(st.sampled_from(("", "  ", "\u3000"))))
            elif operation == "tool":
                transcript.message(entry_id, "toolResult", "tool output")
            elif operation == "large":
                large = draw(st.sampled_from(LARGE_SIZES))
                transcript.message(entry_id, draw(st.sampled_from(("user", "assistant"))),
                                   "y" * large)
            elif operation == "reset":
                kept = draw(st.sampled_from(entries)) if entries and draw(st.booleans()) else None
                transcript.reset(entry_id, first_kept=kept)
            elif operation == "compaction":
                transcript.compaction(entry_id)
            elif operation in ("custom", "hidden"):
                transcript.custom(entry_id, display=operation == "custom")
            elif operation == "other":
                transcript.other(entry_id)
            elif entries:
                transcript.rewind(entry_id, draw(st.sampled_from(entries)))
                continue
            else:
                continue
            entries.append(entry_id)
        transcripts.append(transcript)
    return Case(tuple(transcripts), draw(st.integers(1, 6)),
                draw(st.sampled_from((None, 1024, 1500, 4000))))


def ids(page: HistoryPage) -> list[str]:
    return [message["__openclaw"]["id"] for message in page.messages]


def within_budget(page: HistoryPage, max_bytes: int | None) -> bool:
    budget = min(max_bytes or GATEWAY_MAX_BYTES, GATEWAY_MAX_BYTES)
    return len(page.messages) <= 1 or json_bytes(list(page.messages)) <= budget


def check_one_store(store: Any, case: Case) -> list[dict[str, Any]]:
    """Check the properties on one store; return every page it answered, in order."""
    answered: list[dict[str, Any]] = []
    limit, max_bytes = case.limit, case.max_bytes

    def read(request: HistoryRequest) -> HistoryPage:
        page = read_history(store, request)
        assert within_budget(page, max_bytes), (request, json_bytes(list(page.messages)))
        answered.append(page.to_json())
        return page

    current = case.transcripts[-1].session_id
    view = [row.entry_id for row in window_history(current, store.events(current)).current.rows
            if not is_hidden(row)]
    # older cursors from the tail
    page = read(HistoryRequest(KEY, limit=limit, max_bytes=max_bytes))
    seen = ids(page)
    while page.older_cursor is not None:
        cursor = page.older_cursor
        page = read(HistoryRequest(KEY, cursor=cursor, limit=limit, max_bytes=max_bytes))
        assert not page.window_reset and page.older_cursor != cursor
        seen = ids(page) + seen
    assert seen == view
    # offsets from the tail
    offset, seen = 0, []
    while True:
        page = read(HistoryRequest(KEY, offset=offset, limit=limit, max_bytes=max_bytes))
        seen = ids(page) + seen
        if not page.has_more:
            break
        assert page.next_offset is not None and page.next_offset > offset
        offset = page.next_offset
    assert seen == view
    # anchors on and off every window's active path
    for transcript in case.transcripts:
        history = window_history(transcript.session_id, store.events(transcript.session_id))
        rows = {row.entry_id for row in history.rows if not is_hidden(row)}
        for event in transcript.events:
            anchored = read(HistoryRequest(KEY, message_id=event["id"], limit=limit,
                                           session_id=transcript.session_id,
                                           max_bytes=max_bytes))
            if event["id"] in rows:
                assert event["id"] in ids(anchored), event["id"]
            else:
                assert anchored.messages == () and anchored.total_messages is None
    return answered


@HISTORY_SETTINGS
@given(cases())
def test_history_pages_over_random_transcripts(case: Case) -> None:
    with tempfile.TemporaryDirectory() as folder:
        answers = []
        for backend in BACKENDS:
            store = new_store(Path(folder), backend)
            try:
                write(store, *case.transcripts)
                answers.append(check_one_store(store, case))
            finally:
                store.close()
        first, *others = answers
        assert all(other == first for other in others), dict(zip(BACKENDS, answers))
