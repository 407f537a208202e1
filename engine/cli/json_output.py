"""How a command prints JSON (`--json`): one document, for programs.

Owns: the JSON printers every command shares: one document (`--json`), or one JSON
object per line (`--jsonl`, for the commands that print many records). Must not touch: what a command prints (each
command builds its document) or readable output (`engine.cli.output`): kept apart so
that `search --json` does not import the readable output (a start-up test pins it;
other commands import both).

Rules: UTF-8 with non-ASCII kept readable, keys in the order given, a lone surrogate
written as a `\\uXXXX` escape (`print_json`). Numbers stay numbers: a timestamp that is
a whole number of epoch milliseconds is written as an integer by the values themselves
(`engine.model.json_number`, in every JSON form of a hit).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from typing import Any


def print_json(value: Any) -> None:
    """Print one JSON document, UTF-8, keys in the order given, newline-terminated.

    A Python `str` can hold a lone surrogate (JSON input may carry one), but UTF-8 cannot;
    writing it as an escape keeps the output valid UTF-8 and still exact JSON.

    >>> print_json({"text": "é" + chr(0xD800)})
    {
      "text": "é\\ud800"
    }
    """
    text = json.dumps(value, ensure_ascii=False, indent=2)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: only then is the RPC layer's escaping loaded
        from engine.rpc.framing import escape_lone_surrogates

        text = escape_lone_surrogates(text)
    sys.stdout.write(text)
    sys.stdout.write("\n")


def print_json_lines(records: Iterable[Any]) -> None:
    """Print each record as one line of JSON (`--jsonl`, JSON Lines): compact, UTF-8,
    keys in the order given, a lone surrogate escaped, as a JSON-RPC line is written.

    >>> print_json_lines([{"a": 1}, {"text": "é"}])
    {"a": 1}
    {"text": "é"}
    """
    from engine.rpc.framing import message_line

    for record in records:
        sys.stdout.write(message_line(record))
