"""Shared printing helpers for command modules: JSON and aligned plain-text tables.

Owns: how results look on standard output. Must not touch: engine state.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

from engine.rpc.framing import escape_lone_surrogates


def to_json_text(value: Any) -> str:
    """JSON text, non-ASCII kept readable, lone surrogates written as `\\uXXXX` escapes.

    A Python `str` can hold a lone surrogate (JSON input may carry one), but UTF-8 cannot;
    escaping it keeps the output valid UTF-8 and still exact JSON.

    >>> to_json_text({"text": "é" + chr(0xD800)})
    '{"text": "é\\\\ud800"}'
    """
    return escape_lone_surrogates(json.dumps(value, ensure_ascii=False))


def print_json(value: Any) -> None:
    """Print one JSON document, UTF-8, keys in the order given, newline-terminated."""
    sys.stdout.write(escape_lone_surrogates(json.dumps(value, ensure_ascii=False, indent=2)))
    sys.stdout.write("\n")


def format_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Format rows as a left-aligned text table with a header rule.

    >>> print(format_table(["name", "n"], [["alpha", 1], ["b", 22]]))
    name   n
    -----  --
    alpha  1
    b      22
    """
    cells = [[str(cell) for cell in row] for row in rows]
    widths = [len(header) for header in headers]
    for row in cells:
        for column, cell in enumerate(row):
            widths[column] = max(widths[column], len(cell))
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines.extend("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells)
    return "\n".join(lines)
