"""Numbers in readable output as the README promises (issue 32, item 3): scores with three
decimals, byte counts in binary units, times as ISO-8601 in UTC (also in `dump`).

Every case runs `python -m engine` in a fresh process (a pipe: the plain layout) on a
store of the demo corpus, and reads the cells the promise is about.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.cli.conftest import CHECKOUT

DEMO = CHECKOUT / "engine" / "demo_corpus"
SCORE = re.compile(r"-?\d+\.\d{3}")
BYTES = re.compile(r"\d+ B|\d+\.\d (KiB|MiB|GiB|TiB)")
ISO = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?Z"


def column(lines: list[str], header: str) -> list[str]:
    """The cells of `header`'s column in the first plain table of `lines` that has it
    (header line, rule, rows), found by the rule's dashes under it."""
    heading = next(index for index, line in enumerate(lines) if header in line.split())
    rule = lines[heading + 1]
    spans = [match.span() for match in re.finditer(r"-+", rule)]
    start = lines[heading].index(header)
    left, right = next(span for span in spans if span[0] <= start < span[1]
                       or span[0] <= start + len(header) - 1 < span[1])
    cells = []
    for line in lines[heading + 2:]:  # the rows, up to a blank line or the demo's verdict
        if not line.strip() or line.startswith(("  same", "  DIFFERS")):
            break
        cells.append(line[left:right].strip())
    return cells


def test_demo_scores_have_three_decimals(session_search) -> None:
    outcome = session_search("demo")
    assert outcome.status == 0
    lines = outcome.out.splitlines()
    scores = [cell for index, line in enumerate(lines) if line.split()[:4] == [
        "sessionKey", "messageId", "score", "snippet"]
              for cell in column(lines[index:], "score")]
    assert len(scores) > 10 and all(SCORE.fullmatch(score) for score in scores), scores
    assert "2.738" in scores  # cafe's first hit, which the old `.3g` printed as 2.74


def test_search_scores_and_times(session_search, demo_store: Path) -> None:
    lines = session_search("search", "--store", str(demo_store), "--agent", "main",
                           "cafe").out.splitlines()  # --agent: no notice under the rows
    assert column(lines, "score") == ["2.738", "2.396"]
    assert all(re.fullmatch(ISO, cell) for cell in column(lines, "timestamp"))


def test_compact_reclaims_bytes_in_binary_units(session_search, tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    assert session_search("import", "--store", store, "--quiet", str(DEMO)).status == 0
    assert session_search("delete", "--store", store, "agent:main:logical-reset").status == 0
    outcome = session_search("compact", "--store", store)
    match = re.fullmatch(r"compacted [1-9]\d* log files?, reclaimed (.+)\n", outcome.out)
    assert match is not None, outcome.out
    assert BYTES.fullmatch(match.group(1)) and match.group(1).endswith("KiB")


def test_stats_and_the_dump_listing_count_bytes_in_binary_units(session_search,
                                                                demo_store: Path) -> None:
    stats = session_search("stats", "--store", str(demo_store)).out.splitlines()
    byte_rows = [line.split(None, 1)[1] for line in stats if line.startswith("bytes ")]
    assert byte_rows and all(BYTES.fullmatch(value) for value in byte_rows)
    listing = session_search("dump", "--store", str(demo_store)).out.splitlines()
    sizes = column(listing, "size")
    assert len(sizes) > 10 and all(BYTES.fullmatch(size) for size in sizes)


def test_dump_shows_times_as_iso(session_search, demo_store: Path) -> None:
    name = "agents/main/transcripts/segment-000001.log"
    shown = session_search("dump", "--store", str(demo_store), name).out
    document = json.loads(session_search("dump", "--store", str(demo_store), "--json",
                                         name).out)
    first_window = document["records"][0]["fields"]["window"]
    assert first_window["created_at"] == 1788253200000.0
    assert "    created_at: 2026-09-01T09:00:00Z (1788253200000.0)\n" in shown
    # every time field: ISO first, the stored number after it; an ISO string stays a string
    times = re.findall(r"^\s*(?:created_at|committed_at|timestamp): (.*)$", shown, re.MULTILINE)
    assert len(times) > 50
    assert all(re.fullmatch(rf"{ISO} \(\d+(\.0)?\)", value) or
               re.fullmatch(rf'"{ISO}"', value) for value in times), times
    assert any(value.startswith('"') for value in times)  # the events' own ISO strings
