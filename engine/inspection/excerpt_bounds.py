"""How long a store's excerpt may be, and whether the bound cut this one (behaviour.md §5.5.4).

Owns: `excerpt_bounds`, the facts a reader needs to see the store's cut of an excerpt:
its length in UTF-16 units against the kernel's bound (500 units, `engine.results.bounds`),
and `json_bytes`, the UTF-8 length of a value's `JSON.stringify` text, the measure the
agent tool's byte budget counts in (`engine.analysis.js_json`). The tool's own cut (300
units) and budget are the tool's (`engine.agent_tools`): a view reads them there. Must
not touch: the bounds (the stages' constants and functions are called, never restated).
"""

from __future__ import annotations

from typing import Any

from engine.analysis.js_json import js_json_bytes as json_bytes
from engine.results.bounds import ELLIPSIS, SNIPPET_MAX_UNITS, utf16_length

__all__ = ["SNIPPET_MAX_UNITS", "excerpt_bounds", "json_bytes", "utf16_length"]


def excerpt_bounds(snippet: str) -> dict[str, Any]:
    """A store excerpt's length against the 500-unit bound, and whether it was cut there.

    >>> excerpt_bounds("x" * 320)
    {'units': 320, 'kernelBound': 500, 'kernelCut': False}
    >>> excerpt_bounds("x" * 500 + "…")["kernelCut"]
    True
    """
    units = utf16_length(snippet)
    # The bound keeps at most 500 units and adds "…": only a cut excerpt is that long and
    # ends so (FTS5's own ellipsis is " … ", spaced).
    return {"units": units, "kernelBound": SNIPPET_MAX_UNITS,
            "kernelCut": units >= SNIPPET_MAX_UNITS and snippet.endswith(ELLIPSIS)}
