"""UTF-16-safe length bounds (behaviour.md §4, `truncateUtf16Safe`).

Owns: the excerpt bounds. Must not touch: anything else; counting and cutting UTF-16
units is `engine.analysis.utf16`'s (`utf16_length` and `truncate_utf16_safe` are
re-exported here for the callers that bound excerpts).

`bound_snippet(text, n)` applies `truncate_utf16_safe` only when the text is longer than
`n` units and then appends `…` (U+2026): the backend bound is 500, the agent tool's is 300.
"""

from __future__ import annotations

from engine.analysis.utf16 import truncate_utf16_safe, utf16_length

__all__ = ["ELLIPSIS", "SNIPPET_MAX_UNITS", "bound_snippet", "truncate_utf16_safe",
           "utf16_length"]

SNIPPET_MAX_UNITS = 500
ELLIPSIS = "\u2026"


def bound_snippet(text: str, units: int = SNIPPET_MAX_UNITS) -> str:
    """`text` unchanged when it is at most `units` long, else its safe cut + `…`.

    >>> bound_snippet("abc", 2)
    'ab…'
    >>> bound_snippet("abc", 3)
    'abc'
    """
    if len(text) * 2 <= units or utf16_length(text) <= units:  # a character is 1 or 2 units
        return text
    return truncate_utf16_safe(text, units) + ELLIPSIS
