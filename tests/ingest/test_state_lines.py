"""The live state reader parses each line of a transcript once (`live_state._complete_objects`,
`jsonl.line_object` first) and reads what the clear version read (its oracle here:
`iter_lines`, a last line without a newline parsed to see whether it is whole, then
`parse_line` on every line): the same lines, starts, bytes and objects, the same note on
an incomplete last line, the same first error, for any mix of good and bad lines, from
any offset."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.errors import MalformedInput
from engine.ingest.jsonl import iter_lines, parse_line
from engine.ingest.live_state import _complete_objects
from tests.ingest.test_jsonl_objects import ENDS, LINES, written_lines


def clear(path: Path, offset: int, first_line: int) -> tuple[list[Any], list[str]]:
    """The clear reading (the reader before `_complete_objects`)."""
    notes: list[str] = []
    lines: list[Any] = []
    try:
        for line, start, raw in iter_lines(path, offset, first_line):
            if not raw.endswith(b"\n"):
                try:
                    parse_line(raw, str(path), line)
                except MalformedInput:
                    notes.append(f"{path}:{line}: the last line is incomplete (no newline "
                                 "yet); left for the next import")
                    break
            lines.append((line, start, raw, parse_line(raw, str(path), line)))
    except MalformedInput as error:
        lines.append(str(error))
    return lines, notes


def once(path: Path, offset: int, first_line: int) -> tuple[list[Any], list[str]]:
    notes: list[str] = []
    lines: list[Any] = []
    try:
        lines.extend(_complete_objects(path, offset, first_line, notes))
    except MalformedInput as error:
        lines.append(str(error))
    return lines, notes


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(LINES, ENDS), max_size=6), st.booleans(), st.booleans(),
       st.integers(min_value=0, max_value=3))
def test_each_line_parsed_once_reads_as_the_clear_reader(
        tmp_path: Path, lines: list[tuple[bytes, bytes]], mark: bool, last_end: bool,
        skipped: int) -> None:
    path = written_lines(tmp_path / "transcript.jsonl", lines, mark, last_end)
    data = path.read_bytes()
    # From the start of a later line, as an append after a mark reads.
    offset, first_line = 0, 1
    for _ in range(skipped):
        end = data.find(b"\n", offset)
        if end < 0:
            break
        offset, first_line = end + 1, first_line + 1
    assert once(path, offset, first_line) == clear(path, offset, first_line)
