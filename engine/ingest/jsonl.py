"""Reading JSON Lines source files strictly, one numbered JSON object at a time.

Owns: how an import source file becomes `(line_number, object)` pairs, and the exact
`MalformedInput` for every way a line can be unreadable. Must not touch: what the objects
mean (`corpus.py`, `flat.py`) or any store.

Rules:

* the file is UTF-8; a byte order mark at the start is skipped; a line that is not valid
  UTF-8 is an error naming its line;
* line numbers count from 1, and count every line (blank ones included); a line holding
  only whitespace is skipped, so a trailing newline or a spacer line is fine;
* each other line is exactly one JSON value, and it must be an object;
* JSON is strict: `NaN`, `Infinity` and `-Infinity` are not JSON and are rejected (Python's
  `json` module would accept them).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from engine.errors import MalformedInput, json_syntax_error

BYTE_ORDER_MARK = b"\xef\xbb\xbf"
#: Bytes read from a source file at a time (lines are read from this buffer).
_READ_BUFFER = 1 << 16


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


#: One strict decoder for every line (`json.loads` with options builds a new one per call).
_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
#: The decoder's scanner (the C one where there is one): one value from an index on.
_SCAN = _DECODER.scan_once
#: What JSON counts as whitespace (`json.decoder.WHITESPACE`).
_JSON_WHITESPACE = " \t\n\r"


def _whole_object(text: str) -> Any:
    """The JSON object `text` holds (whitespace after it allowed), or None when the scan
    from its first character does not make one: what `_DECODER.decode` makes of such a
    text (its oracle, `tests/ingest/test_whole_object.py`), without that method's two
    whitespace matches and frames a line. A text that starts with whitespace, or holds
    anything else, is None here and read again by `parse_line`, which says what it is.

    >>> _whole_object('{"a": [1]}\\n'), _whole_object('{"a": 1} x'), _whole_object(' {}')
    ({'a': [1]}, None, None)
    """
    try:
        value, end = _SCAN(text, 0)
    except (StopIteration, ValueError, RecursionError):  # JSONDecodeError is a ValueError
        return None
    if end != len(text) and text[end:].strip(_JSON_WHITESPACE):
        return None
    return value if type(value) is dict else None


def parse_object(text: str, path: str, line_number: int) -> dict[str, Any]:
    """Parse one line's text as a JSON object or raise `MalformedInput`.

    >>> parse_object('{"a": 1}', "f.jsonl", 1)
    {'a': 1}
    >>> parse_object('[1]', "f.jsonl", 2)
    Traceback (most recent call last):
    ...
    engine.errors.MalformedInput: f.jsonl:2: expected a JSON object, found an array
    >>> parse_object('{"a": NaN}', "f.jsonl", 3)
    Traceback (most recent call last):
    ...
    engine.errors.MalformedInput: f.jsonl:3: invalid JSON: NaN is not valid JSON

    The line is read without its line end, and the column counts its characters, 1
    first, so a line cut short is named where it stops:

    >>> parse_object('{"a": 1\\n', "f.jsonl", 4)
    Traceback (most recent call last):
    ...
    engine.errors.MalformedInput: f.jsonl:4: invalid JSON: Expecting ',' delimiter at column 8
    """
    try:
        value = _DECODER.decode(text.rstrip("\r\n"))
    except json.JSONDecodeError as error:
        raise MalformedInput(path, line_number,
                             f"invalid JSON: {json_syntax_error(error)}") from None
    except ValueError as error:
        raise MalformedInput(path, line_number, f"invalid JSON: {error}") from None
    except RecursionError:
        raise MalformedInput(path, line_number, "invalid JSON: nested too deeply") from None
    if not isinstance(value, dict):
        raise MalformedInput(path, line_number,
                             f"expected a JSON object, found {_json_kind(value)}")
    return value


def iter_objects(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield `(line_number, object)` for every non-blank line of the file at `path`.

    A line is decoded and parsed here at once; any line that does not make a JSON object
    that way (a blank line, a byte order mark, every error) is read again by
    `parse_line`, which says what it is: the same objects and the same errors as
    `parse_line` over `iter_lines`, its oracle (`tests/ingest/test_jsonl_objects.py`).
    """
    name = str(path)
    whole_object = _whole_object
    with _open(path) as handle:
        for line_number, raw in enumerate(handle, start=1):
            try:
                value = whole_object(raw.decode("utf-8"))
            except ValueError:  # UnicodeDecodeError
                value = None
            if value is None:
                value = parse_line(raw, name, line_number)
                if value is None:
                    continue
            yield line_number, value


def line_object(raw: bytes) -> dict[str, Any] | None:
    """The JSON object one raw line holds, when it decodes and parses as one at once;
    else None, and `parse_line` says what the line is (blank, an error, a byte order
    mark, an object after whitespace): the fast step of `iter_objects`, for readers that
    keep each line's bytes.

    >>> line_object(b'{"a": 1}\\n'), line_object(b"[1]\\n"), line_object(b"\\n")
    ({'a': 1}, None, None)
    """
    try:
        return _whole_object(raw.decode("utf-8"))
    except ValueError:  # UnicodeDecodeError
        return None


def _open(path: Path) -> BinaryIO:
    """The file at `path` opened for reading bytes, or `MalformedInput` naming it."""
    try:
        return path.open("rb", buffering=_READ_BUFFER)
    except OSError as error:
        raise MalformedInput(str(path), None, f"cannot read: {error.strerror or error}") from None


def iter_lines(path: Path, offset: int = 0, first_line: int = 1
               ) -> Iterator[tuple[int, int, bytes]]:
    """Yield `(line_number, start offset, raw bytes)` for every line of the file at `path`
    from byte `offset` on (the line there is numbered `first_line`); the bytes keep their
    newline, and a last line without one is yielded as it is."""
    with _open(path) as handle:
        handle.seek(offset)
        start = offset
        for line_number, raw in enumerate(handle, start=first_line):
            yield line_number, start, raw
            start += len(raw)


def parse_line(raw: bytes, path: str, line_number: int) -> dict[str, Any] | None:
    """One raw line as a JSON object (None for a blank line), or `MalformedInput`; a byte
    order mark is skipped on line 1.

    >>> parse_line(b'\\xef\\xbb\\xbf{"a": 1}\\n', "f.jsonl", 1), parse_line(b" \\n", "f.jsonl", 2)
    ({'a': 1}, None)
    """
    if line_number == 1 and raw.startswith(BYTE_ORDER_MARK):
        raw = raw[len(BYTE_ORDER_MARK):]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise MalformedInput(path, line_number,
                             f"not valid UTF-8 at byte {error.start} of the line") from None
    if not text.strip():
        return None
    return parse_object(text, path, line_number)


def _json_kind(value: Any) -> str:
    """The JSON name of a parsed value's type, with its article."""
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    return "a number"
