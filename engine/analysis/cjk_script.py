"""Which characters count as CJK: the script ranges the CJK retry and the CJK grams share.

Owns: `CJK_RANGES`, the same set as a regular-expression class (`CJK_CLASS`),
`is_cjk_character` and `contains_cjk` (and its clear version). Must not touch: what a query
does with a CJK term (`engine.query.cjk` decides the retry), indexes (`engine.index.cjk_grams`
narrows the retry with these ranges), tokenization rules. It lives in `analysis` because
both the query stage and the index read it, and neither may import the other.

Why these ranges: `unicode61` keeps a run of Han/Kana/Hangul as ONE token, so a word inside
such a run can only be found as a substring (behaviour.md §7.1). The ranges are the
memory-search precedent (U+3040–30FF, U+3400–9FFF, U+AC00–D7AF, U+3131–3163), widened to
whole scripts so that no Han, Kana or Hangul letter that `unicode61` glues into a run is
missed: Hangul Jamo U+1100–11FF, Hangul compatibility jamo U+3131–318E (the full letter
block), Hiragana + Katakana U+3040–30FF, Katakana phonetic extensions U+31F0–31FF,
ideographic iteration/closing marks and number zero U+3005–3007, CJK Extension A
U+3400–4DBF, CJK Unified U+4E00–9FFF, Hangul Jamo Extended-A U+A960–A97F, Hangul syllables
U+AC00–D7AF, Hangul Jamo Extended-B U+D7B0–D7FF, CJK compatibility ideographs U+F900–FAFF,
halfwidth Katakana U+FF66–FF9F, halfwidth Hangul U+FFA0–FFDC, and the supplementary
ideographic planes U+20000–2FFFF and U+30000–3FFFF (Extensions B–I, compatibility
supplement). Left out on purpose: Yijing hexagram symbols U+4DC0–4DFF (symbols, and
`unicode61` separators), CJK punctuation U+3000–3004/U+3008–303F and fullwidth Latin (not
words). The boundaries are pinned by `tests/analysis/test_cjk_script.py`.
"""

from __future__ import annotations

import re
from functools import cache

#: Inclusive code point ranges counted as CJK (see the module docstring for the reasons).
CJK_RANGES: tuple[tuple[int, int], ...] = (
    (0x1100, 0x11FF),    # Hangul Jamo
    (0x3005, 0x3007),    # 々 〆 〇
    (0x3040, 0x30FF),    # Hiragana, Katakana
    (0x3131, 0x318E),    # Hangul compatibility jamo (letters)
    (0x31F0, 0x31FF),    # Katakana phonetic extensions
    (0x3400, 0x4DBF),    # CJK Unified Ideographs Extension A
    (0x4E00, 0x9FFF),    # CJK Unified Ideographs
    (0xA960, 0xA97F),    # Hangul Jamo Extended-A
    (0xAC00, 0xD7AF),    # Hangul syllables
    (0xD7B0, 0xD7FF),    # Hangul Jamo Extended-B
    (0xF900, 0xFAFF),    # CJK compatibility ideographs
    (0xFF66, 0xFF9F),    # halfwidth Katakana
    (0xFFA0, 0xFFDC),    # halfwidth Hangul
    (0x20000, 0x2FFFF),  # supplementary ideographic plane (Ext B–F, compat supplement)
    (0x30000, 0x3FFFF),  # tertiary ideographic plane (Ext G–I)
)


def is_cjk_character(character: str) -> bool:
    """Whether one character lies in `CJK_RANGES`.

    >>> is_cjk_character("会"), is_cjk_character("ア"), is_cjk_character("한"), is_cjk_character("a")
    (True, True, True, False)
    """
    code = ord(character)
    return any(low <= code <= high for low, high in CJK_RANGES)


#: `CJK_RANGES` as one regular-expression character class (`[...]`).
CJK_CLASS = "[" + "".join(
    f"{re.escape(chr(low))}-{re.escape(chr(high))}" for low, high in CJK_RANGES) + "]"



@cache
def cjk_character() -> re.Pattern[str]:
    """One character of `CJK_RANGES` (compiled on first use: compiling the class costs
    a command's start-up a few milliseconds)."""
    return re.compile(CJK_CLASS)


def contains_cjk(text: str) -> bool:
    """Whether `text` has at least one CJK character (one regex search: every query
    term asks, so this is `contains_cjk_clear` without a Python call per character; an
    ASCII text has none).

    >>> contains_cjk("cat"), contains_cjk("会议"), contains_cjk("x𠀀")
    (False, True, True)
    """
    return not text.isascii() and cjk_character().search(text) is not None


def contains_cjk_clear(text: str) -> bool:
    """The same answer, one character at a time (the oracle of `contains_cjk`).

    >>> contains_cjk_clear("cat"), contains_cjk_clear("x𠀀")
    (False, True)
    """
    return any(is_cjk_character(character) for character in text)
