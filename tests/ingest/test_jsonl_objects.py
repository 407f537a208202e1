"""`iter_objects` reads a file exactly as `parse_line` over `iter_lines` does (its oracle):
the same `(line, object)` pairs, or the same first error, for any mix of good and bad lines."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.errors import MalformedInput
from engine.ingest.jsonl import BYTE_ORDER_MARK, iter_lines, iter_objects, parse_line

#: Pieces of lines: good objects, blank and odd whitespace, every kind of bad line.
LINES = st.sampled_from([
    b'{"a": 1}', b'{"type": "message", "id": "m1", "message": {"role": "user"}}',
    b'  {"b": [1, 2.5, null, true]}  ', b"", b"   ", b"\t", b"\r", b"\xc2\xa0",
    b"[1, 2]", b'"text"', b"3", b"null", b'{"a": NaN}', b'{"a": Infinity}', b'{"a": 1',
    b'{"a": 1} {"b": 2}', b'{"a": "\xff"}', b'{"\xc3\xa9": "caf\xc3\xa9"}', b"\xef\xbb\xbf{}",
    b'{"deep": ' + b"[" * 3000 + b"]" * 3000 + b"}", b'{"lone": "\\ud800"}', b"{}",
])
ENDS = st.sampled_from([b"\n", b"\r\n"])


def oracle(path: Path) -> list[tuple[int, Any]] | str:
    """The clear reading: every line through `parse_line`; the error's text if one fails."""
    pairs = []
    try:
        for line, _, raw in iter_lines(path):
            value = parse_line(raw, str(path), line)
            if value is not None:
                pairs.append((line, value))
    except MalformedInput as error:
        return str(error)
    return pairs


def fast(path: Path) -> list[tuple[int, Any]] | str:
    try:
        return list(iter_objects(path))
    except MalformedInput as error:
        return str(error)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(LINES, ENDS), max_size=6), st.booleans(), st.booleans())
def test_iter_objects_matches_parse_line(tmp_path: Path, lines: list[tuple[bytes, bytes]],
                                         mark: bool, last_end: bool) -> None:
    path = written_lines(tmp_path / "lines.jsonl", lines, mark, last_end)
    assert fast(path) == oracle(path)


def written_lines(path: Path, lines: list[tuple[bytes, bytes]], mark: bool, last_end: bool
                  ) -> Path:
    """`lines` (each with its end) written at `path`, after a byte order mark with
    `mark`, the last line's newline left out unless `last_end`."""
    data = b"".join(line + end for line, end in lines)
    if mark:
        data = BYTE_ORDER_MARK + data
    if not last_end and data.endswith(b"\n"):
        data = data[:-1]
    path.write_bytes(data)
    return path


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "missing.jsonl"
    assert fast(path) == oracle(path)
    assert "cannot read" in fast(path)
