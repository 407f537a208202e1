"""`docs/protocol.md` is complete and current: every method, parameter, result member and
error code of `engine.rpc` is documented, and its example session replays exactly.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from engine.model import REQUEST_JSON_FIELDS, SearchHit, SearchResult
from engine.rpc.errors import ERROR_NAMES
from engine.rpc.methods import METHODS

ROOT = Path(__file__).resolve().parents[2]
PROTOCOL = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")


def section(title: str) -> str:
    """The text of the `##`/`###` section whose heading is `title`, up to the next heading."""
    start = re.search(rf"^#+ {re.escape(title)}\n", PROTOCOL, re.MULTILINE)
    assert start is not None, f"no section {title!r}"
    rest = PROTOCOL[start.end():]
    end = re.search(r"^#+ ", rest, re.MULTILINE)
    return rest if end is None else rest[:end.start()]


def table_first_cells(text: str) -> list[str]:
    """The first cell of every table row of `text` (the header row included)."""
    return [line.split("|")[1].strip() for line in text.splitlines() if line.startswith("|")]


def test_every_error_code_is_in_the_table_with_its_name() -> None:
    rows = {line.split("|")[1].strip(): line.split("|")[2].strip()
            for line in section("Error codes").splitlines() if line.startswith("| -")}
    assert rows == {str(code): name for code, name in ERROR_NAMES.items()}


def test_every_method_has_a_row_and_a_section() -> None:
    assert [cell.strip("`") for cell in table_first_cells(section("Methods"))[2:]] == list(
        METHODS)
    for name in METHODS:
        section(f"`{name}`")


def test_every_parameter_and_result_member_is_documented() -> None:
    search = section("`sessions.search`")
    params = [cell.strip("`") for cell in table_first_cells(search.split("**Result**")[0])]
    assert sorted(params[2:]) == sorted(REQUEST_JSON_FIELDS)
    result_rows = " ".join(table_first_cells(search.split("**Result**")[1]))
    for member in SearchResult((), archived_transcripts_excluded=1).to_json():
        assert f"`{member}`" in result_rows, member
    for member in SearchHit("k", "s", "m", "user", 1.0, "x", 1.0).to_json():
        assert f"`hits[].{member}`" in result_rows or f"`{member}`" in result_rows, member


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("protocol") / "demo"
    subprocess.run([sys.executable, "-m", "engine", "import", "--quiet", "--store", str(store),
                    str(ROOT / "engine" / "demo_corpus")], cwd=ROOT, check=True, timeout=120)
    return store


def test_the_example_session_replays_exactly(demo_store: Path) -> None:
    example = section("An example session").split("```text\n", 1)[1].split("```", 1)[0]
    sent = [line[2:] for line in example.splitlines() if line.startswith("> ")]
    received = [line[2:] for line in example.splitlines() if line.startswith("< ")]
    completed = subprocess.run(
        [sys.executable, "-m", "engine", "serve", "--quiet", "--store", str(demo_store)],
        cwd=ROOT, input="".join(line + "\n" for line in sent), capture_output=True,
        text=True, timeout=120, check=True)
    assert completed.stdout.splitlines() == received
    assert len(sent) > len(received)  # the notification got no answer


def test_every_history_parameter_and_result_member_is_documented() -> None:
    from engine.history.pages import HistoryPage
    from engine.history.request import HISTORY_JSON_FIELDS, TOOL_JSON_FIELDS
    from engine.rpc.sessions_history_method import REQUESTER_PARAM

    for title, fields in (("`chat.history`", list(HISTORY_JSON_FIELDS)),
                          ("`sessions_history`", [*TOOL_JSON_FIELDS, REQUESTER_PARAM])):
        text = section(title)
        params = [cell.strip("`") for cell in table_first_cells(text.split("**Result**")[0])]
        assert sorted(params[2:]) == sorted(fields), title
    page = HistoryPage("k", "s", (), "current", 1, offset=0, next_offset=1, has_more=True,
                       older_cursor="c", newer_cursor="c", window_reset=True)
    rows = " ".join(table_first_cells(section("`chat.history`").split("**Result**")[1]))
    for member in page.to_json():
        assert f"`{member}`" in rows, member
    tool_rows = " ".join(table_first_cells(section("`sessions_history`").split("**Result**")[1]))
    for member in ("sessionKey", "messages", "truncated", "droppedMessages", "contentTruncated",
                   "contentRedacted", "bytes", "offset", "nextOffset", "hasMore",
                   "totalMessages", "status", "error"):
        assert f"`{member}`" in tool_rows, member
