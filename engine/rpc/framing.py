"""How JSON-RPC messages travel: one JSON object per line, UTF-8.

Owns: turning a message into one line of bytes and back. Must not touch: what a message
means (`engine.rpc.server`, `engine.rpc.client`).

The rules, for both directions:

* a message is one JSON value on one line, ended by `\\n`; JSON text never holds a raw
  newline (strings escape it), so the line break is an unambiguous frame end;
* the bytes are UTF-8. Non-ASCII text is written as itself, not as `\\uXXXX`; a lone
  surrogate (a Python string may hold one; UTF-8 cannot) is written as its `\\uXXXX`
  escape, so the line is valid UTF-8 and still says exactly the same JSON;
* a reader skips lines that hold only whitespace; a line that is not UTF-8, or not JSON,
  is a `FramingError` (the server answers it with a parse error);
* a line longer than `MAX_LINE_BYTES` is not read into memory: `bounded_lines` reads
  at most that much of it, skips the rest in small pieces and gives an `OversizedLine`
  in its place (the server answers it with an invalid request). A server's memory so
  stays bounded whatever its clients send: no request of the protocol comes near the
  limit (a query is at most 4096 characters, a scope at most 200 keys). A line is parsed
  without its line end, so that the error of a line cut short names the place Python
  names for the line alone (`Unterminated string starting at: line 1 column 72`), not
  its newline ("Invalid control character") or the line after it (`column 1`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

#: The longest request line a reader takes (bytes, its newline included).
MAX_LINE_BYTES = 1024 * 1024
#: How much of an over-long line is read at a time while it is skipped.
_SKIP_PIECE = 64 * 1024

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class FramingError(ValueError):
    """A line that is not one UTF-8 JSON value."""


@dataclass(frozen=True, slots=True)
class OversizedLine:
    """A line longer than the limit, skipped unread: how many bytes it had."""

    length: int

    def reason(self, limit: int = MAX_LINE_BYTES) -> str:
        """What the server answers it with.

        >>> OversizedLine(3_000_000).reason()
        'request line too long: 3000000 bytes (a line holds at most 1048576)'
        """
        return f"request line too long: {self.length} bytes (a line holds at most {limit})"


def bounded_lines(stream: IO[bytes], limit: int = MAX_LINE_BYTES
                  ) -> Iterator[bytes | OversizedLine]:
    """The lines of `stream`; each longer than `limit` bytes as an `OversizedLine`, read
    in pieces and dropped, so that no more than `limit` bytes of a line are held.

    >>> import io
    >>> list(bounded_lines(io.BytesIO(b"ab\\n" + b"x" * 10 + b"\\ncd"), limit=5))
    [b'ab\\n', OversizedLine(length=11), b'cd']
    """
    while True:
        line = stream.readline(limit + 1)
        if not line:
            return
        if len(line) <= limit or line.endswith(b"\n"):
            yield line
            continue
        length = len(line)
        while True:
            piece = stream.readline(_SKIP_PIECE)
            length += len(piece)
            if not piece or piece.endswith(b"\n"):
                break
        yield OversizedLine(length)


def escape_lone_surrogates(json_text: str) -> str:
    """Replace each lone surrogate in JSON text by its `\\uXXXX` escape.

    >>> escape_lone_surrogates('"a' + chr(0xD800) + '"')
    '"a\\\\ud800"'
    """
    return _LONE_SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", json_text)


def message_line(message: Any) -> str:
    """One message as its line of text (`json.dumps` separators), `\\n`-terminated; the
    text encodes to UTF-8 without error.

    >>> message_line({"id": 1, "text": "café" + chr(0xD800)})
    '{"id": 1, "text": "café\\\\ud800"}\\n'
    """
    return escape_lone_surrogates(json.dumps(message, ensure_ascii=False)) + "\n"


def encode_message(message: Any) -> bytes:
    """One message as its line of UTF-8 bytes: `message_line(message)` encoded, found
    with one encoding of the JSON text when it holds no surrogate (nearly always: only
    then does UTF-8 refuse it) instead of a search for one first.

    >>> encode_message({"text": "é"})
    b'{"text": "\\xc3\\xa9"}\\n'
    >>> encode_message({"text": "a" + chr(0xD800)})
    b'{"text": "a\\\\ud800"}\\n'
    """
    text = json.dumps(message, ensure_ascii=False) + "\n"
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: escaped, as `message_line` does
        return escape_lone_surrogates(text).encode("utf-8")


def is_blank_line(line: bytes | str) -> bool:
    """True for a line holding only whitespace (skipped by readers).

    >>> is_blank_line(b"  \\r\\n"), is_blank_line('{"a": 1}')
    (True, False)
    """
    return not line.strip()


def decode_message(line: bytes | str) -> Any:
    """The JSON value of one line (bytes are UTF-8); `FramingError` says why not.

    >>> decode_message(b'{"jsonrpc": "2.0", "id": 7}\\n')
    {'jsonrpc': '2.0', 'id': 7}
    >>> decode_message('{"query": "caf\\n')
    Traceback (most recent call last):
    ...
    engine.rpc.framing.FramingError: parse error: Unterminated string starting at: line 1 column 11 (char 10)
    >>> decode_message(b"\\xff{}")
    Traceback (most recent call last):
    ...
    engine.rpc.framing.FramingError: parse error: the line is not UTF-8 ('utf-8' codec can't decode byte 0xff in position 0: invalid start byte)
    >>> decode_message("[" * 100_000 + "]" * 100_000)
    Traceback (most recent call last):
    ...
    engine.rpc.framing.FramingError: parse error: the line nests arrays or objects too deeply
    """
    if isinstance(line, bytes):
        try:
            line = line.decode("utf-8")
        except UnicodeDecodeError as error:
            raise FramingError(f"parse error: the line is not UTF-8 ({error})") from None
    try:
        return json.loads(line.rstrip("\r\n"))
    except ValueError as error:
        raise FramingError(f"parse error: {error}") from None
    except RecursionError:
        # Python's decoder recurses once per nesting level: a line nested deeper than the
        # interpreter's recursion limit (about 1,000) is not a value this server can hold.
        raise FramingError("parse error: the line nests arrays or objects too deeply") from None
