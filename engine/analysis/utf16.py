"""JavaScript string lengths: counting and cutting text in UTF-16 code units.

Owns: `utf16_length` (JavaScript `.length`) and `truncate_utf16_safe` (upstream's
`truncateUtf16Safe`), the two length rules that every bound measured in UTF-16 units uses
(the search excerpt bounds of `engine.results.bounds`, the history text cut of
`engine.history.sanitize`). Must not touch: anything else.

`truncate_utf16_safe(text, n)` keeps the first `n` UTF-16 units of `text`; if the last kept
unit is a high surrogate (an astral character cut in half, or a lone high surrogate), it is
dropped.
"""

from __future__ import annotations


def _is_high_surrogate(character: str) -> bool:
    return 0xD800 <= ord(character) <= 0xDBFF


def utf16_length(text: str) -> int:
    """JavaScript `.length`: characters above U+FFFF count 2.

    >>> utf16_length("saffron 𐐀")
    10
    """
    if text.isascii():
        return len(text)
    # Two bytes per UTF-16 unit; `surrogatepass` counts a lone surrogate as the one unit it is.
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def truncate_utf16_safe(text: str, units: int) -> str:
    """The first `units` UTF-16 units of `text`, minus a trailing high surrogate.

    >>> truncate_utf16_safe("ab𐐀c", 3)  # the cut would split 𐐀: it is dropped
    'ab'
    >>> truncate_utf16_safe("ab𐐀c", 4)
    'ab𐐀'
    >>> truncate_utf16_safe("ab\\ud800c", 3)  # a lone high surrogate at the end goes too
    'ab'
    """
    if text.isascii():
        return _drop_trailing_high_surrogate(text[:units])
    count = 0
    for kept, character in enumerate(text):
        width = 2 if ord(character) > 0xFFFF else 1
        if count + width > units:
            # An astral character straddling the cut: JavaScript keeps its high surrogate
            # and then drops it, so the result simply ends before the character.
            if width == 2 and count < units:
                return text[:kept]
            return _drop_trailing_high_surrogate(text[:kept])
        count += width
    return text


def _drop_trailing_high_surrogate(text: str) -> str:
    if text and _is_high_surrogate(text[-1]):
        return text[:-1]
    return text
