"""The CJK substring retry (behaviour.md §7.1) and the SQLite `LIKE` rules it runs on.

Owns: which characters count as CJK, which query terms the retry turns into substrings,
the escaped `LIKE` pattern, an exact Python model of `text LIKE '%needle%' ESCAPE '\\'`,
and the excerpt shown for a hit found only by substrings. Both backends import these, so
the SQLite backend and the reference agree by construction. Must not touch: SQL execution,
indexes, the zero-hit gate (the backends apply it: retry only when the word search returned
no rows and `retry_plan` is not None).

Why a retry exists: `unicode61` keeps a run of Han/Kana/Hangul as ONE token, so `会议`
never matches the token `明天下午三点开项目评审会议讨论排期` (issue #140736).

Design decisions (seed-only part; pinned by tests/query/test_cjk.py):
* **CJK characters** (`contains_cjk`): the memory-search precedent (U+3040–30FF,
  U+3400–9FFF, U+AC00–D7AF, U+3131–3163), widened to whole scripts so that no Han, Kana or
  Hangul letter that `unicode61` glues into a run is missed:
  Hangul Jamo U+1100–11FF, Hangul compatibility jamo U+3131–318E (the full letter block),
  Hiragana + Katakana U+3040–30FF, Katakana phonetic extensions U+31F0–31FF, ideographic
  iteration/closing marks and number zero U+3005–3007, CJK Extension A U+3400–4DBF, CJK
  Unified U+4E00–9FFF, Hangul Jamo Extended-A U+A960–A97F, Hangul syllables U+AC00–D7AF,
  Hangul Jamo Extended-B U+D7B0–D7FF, CJK compatibility ideographs U+F900–FAFF, halfwidth
  Katakana U+FF66–FF9F, halfwidth Hangul U+FFA0–FFDC, and the supplementary ideographic
  planes U+20000–2FFFF and U+30000–3FFFF (Extensions B–I, compatibility supplement).
  Left out on purpose: Yijing hexagram symbols U+4DC0–4DFF (symbols, and `unicode61`
  separators), CJK punctuation U+3000–3004/U+3008–303F and fullwidth Latin (not words).
* **Which terms**: a whitespace-separated query term is a CJK term when it contains at
  least one CJK character; the whole term (as typed, after the query trim) becomes one
  substring. Every other term stays a phrase with its word/prefix matching; in prefix mode
  the prefix flag stays on the last phrase only if the query's last term is a word term
  (a substring needs no prefix flag: it already matches inside words).
* **What the LIKE runs on**: the indexed message text (the FTS `text` column, i.e. the
  `IndexEntry.text` of behaviour.md §2.3), not the analyzed tokens.
* **Case folding**: exactly SQLite's `LIKE` (case_sensitive_like off): only ASCII A–Z fold
  to a–z; every other character, CJK included, must match exactly. SQLite's `LIKE` reads
  both operands as C strings, so text after a NUL is invisible; `substring_matches`
  reproduces that, and `retry_plan` splits a CJK term at NUL characters (each piece is its
  own substring) so that a pattern never contains a NUL.
* **Excerpt** for a hit with no MATCH phrase (`substring_excerpt`): a window of code
  points around the earliest occurrence of any needle: up to 32 code points before it and
  at least 160 code points from the window start (extended to include the whole needle),
  with `" … "` added at whichever end is cut — FTS5's ellipsis convention, counted in
  characters because a CJK run has no word boundaries to count.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from engine.analysis.token import Analyzer
from engine.query.ast import QueryPlan, SubstringTerm
from engine.query.user_query import check_match_mode, split_terms, term_phrases, validate_query

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

EXCERPT_CONTEXT_BEFORE = 32
EXCERPT_MIN_LENGTH = 160
EXCERPT_ELLIPSIS = " … "
LIKE_ESCAPE = "\\"

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def is_cjk_character(character: str) -> bool:
    """Whether one character lies in `CJK_RANGES`.

    >>> is_cjk_character("会"), is_cjk_character("ア"), is_cjk_character("한"), is_cjk_character("a")
    (True, True, True, False)
    """
    code = ord(character)
    return any(low <= code <= high for low, high in CJK_RANGES)


def contains_cjk(text: str) -> bool:
    """Whether `text` has at least one CJK character.

    >>> contains_cjk("cat"), contains_cjk("会议"), contains_cjk("x𠀀")
    (False, True, True)
    """
    return any(is_cjk_character(character) for character in text)


_LONE_SURROGATES = re.compile("[\ud800-\udfff]")


def partition_terms(terms: Sequence[str]) -> tuple[list[str], list[str]]:
    """Split query terms into (word terms, CJK terms), each in query order.

    >>> partition_terms(["会议", "cat", "評審"])
    (['cat'], ['会议', '評審'])
    """
    word_terms = [term for term in terms if not contains_cjk(term)]
    cjk_terms = [term for term in terms if contains_cjk(term)]
    return word_terms, cjk_terms


def retry_prefix(terms: Sequence[str], match: str) -> bool:
    """Whether the retry's word phrases keep a prefix flag (prefix mode, last term a word).

    >>> retry_prefix(["cat", "会议"], "prefix"), retry_prefix(["会议", "cat"], "prefix")
    (False, True)
    """
    return match == "prefix" and bool(terms) and not contains_cjk(terms[-1])


def substring_needles(cjk_terms: Sequence[str]) -> list[str]:
    """The literal needles of the CJK terms: each term split at NUL, empty pieces dropped,
    lone surrogates read as U+FFFD (what a UTF-8 binding of the query and the indexed
    text both hold, so the needle `议\\ud800讨` finds the text `会议\\ud800讨论`).

    >>> substring_needles(["会议", "評\\x00審"])
    ['会议', '評', '審']
    >>> substring_needles(["议" + chr(0xD800) + "讨"]) == ["议\\ufffd讨"]
    True
    """
    return [
        _LONE_SURROGATES.sub("\ufffd", piece)
        for term in cjk_terms
        for piece in term.split("\x00")
        if piece
    ]


def retry_plan(raw_query: str, analyzer: Analyzer, *, match: str) -> QueryPlan | None:
    """The retry plan of a query, or None when no term contains CJK.

    Word terms become phrases exactly as in `plan_query` (prefix rule in `retry_prefix`),
    CJK terms become `SubstringTerm`s.
    """
    check_match_mode(match)
    terms = split_terms(validate_query(raw_query))
    word_terms, cjk_terms = partition_terms(terms)
    if not cjk_terms:
        return None
    phrases = term_phrases(word_terms, analyzer, prefix=retry_prefix(terms, match))
    substrings = tuple(SubstringTerm(needle) for needle in substring_needles(cjk_terms))
    return QueryPlan(phrases, substrings)


def like_pattern(text: str) -> str:
    """`%text%` with `\\`, `%` and `_` escaped by a backslash, for `LIKE ? ESCAPE '\\'`.

    >>> like_pattern("50%_off\\\\")
    '%50\\\\%\\\\_off\\\\\\\\%'
    """
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return "%" + escaped + "%"


def _like_visible(text: str) -> str:
    """What SQLite's LIKE compares: the text up to its first NUL, ASCII-lowercased."""
    return text.split("\x00", 1)[0].translate(_ASCII_LOWER)


def substring_matches(message_text: str, needle: str) -> bool:
    """Exactly `message_text LIKE like_pattern(needle) ESCAPE '\\'` in SQLite.

    ASCII letters compare case-insensitively, nothing else does; text after a NUL is never
    seen; an empty needle (pattern `%%`) matches everything.

    >>> substring_matches("明天下午三点开项目评审会议讨论排期", "会议")
    True
    >>> substring_matches("Straße", "STRASSE"), substring_matches("CAT", "cat")
    (False, True)
    >>> substring_matches("ab\\x00会议", "会议")
    False
    """
    return _like_visible(needle) in _like_visible(message_text)


def first_occurrence(message_text: str, needles: Sequence[str]) -> tuple[int, int] | None:
    """(start, length) of the earliest occurrence of any needle (LIKE rules), or None.

    >>> first_occurrence("xx会议yy评审", ["评审", "会议"])
    (2, 2)
    """
    visible = _like_visible(message_text)
    best: tuple[int, int] | None = None
    for needle in needles:
        folded = _like_visible(needle)
        index = visible.find(folded)
        if index >= 0 and (best is None or index < best[0]):
            best = (index, len(folded))
    return best


def substring_excerpt(message_text: str, needles: Sequence[str]) -> str:
    """The excerpt of a hit found only by substrings (rule in the module docstring).

    >>> substring_excerpt("明天下午三点开项目评审会议讨论排期", ["会议"])
    '明天下午三点开项目评审会议讨论排期'
    >>> substring_excerpt("x" * 40 + "会议" + "y" * 200, ["会议"])[:7]
    ' … xxxx'
    """
    occurrence = first_occurrence(message_text, needles)
    index, length = occurrence if occurrence is not None else (0, 0)
    start = max(0, index - EXCERPT_CONTEXT_BEFORE)
    end = min(len(message_text), max(start + EXCERPT_MIN_LENGTH, index + length))
    head = EXCERPT_ELLIPSIS if start > 0 else ""
    tail = EXCERPT_ELLIPSIS if end < len(message_text) else ""
    return head + message_text[start:end] + tail
