"""The CJK substring retry (behaviour.md §7.1) and the SQLite `LIKE` rules it runs on.

Owns: which query terms the retry turns into substrings, the escaped `LIKE` pattern, an
exact Python model of `text LIKE '%needle%' ESCAPE '\\'`, and the excerpt shown for a hit
found only by substrings. Both backends import these, so the SQLite backend and the
reference agree by construction. Must not touch: SQL execution, indexes, the zero-hit gate
(the search stage and the SQLite backend apply it: retry only when the word search returned
no rows and `retry_plan` is not None).

Why a retry exists: `unicode61` keeps a run of Han/Kana/Hangul as ONE token, so `会议`
never matches the token `明天下午三点开项目评审会议讨论排期` (issue #140736).

Design decisions (seed-only part; pinned by tests/query/test_cjk.py):
* **CJK characters** (`contains_cjk`): the script ranges of `engine.analysis.cjk_script`
  (the reasons for each range are there; the index's CJK grams read the same ranges).
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
from typing import TYPE_CHECKING

from engine.analysis.cjk_script import contains_cjk
from engine.query.ast import QueryPlan
from engine.query.user_query import split_terms, term_phrases

if TYPE_CHECKING:  # an annotation only: the analyzers' module loads when one is made
    from engine.analysis.token import Analyzer

EXCERPT_CONTEXT_BEFORE = 32
EXCERPT_MIN_LENGTH = 160
EXCERPT_ELLIPSIS = " … "
LIKE_ESCAPE = "\\"

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")

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


def retry_plan(query: str, analyzer: Analyzer, *, match: str) -> QueryPlan | None:
    """The retry plan of a checked query (`engine.query.checked_request`: trimmed, not
    empty, `match` one of the modes), or None when no term contains CJK.

    Word terms become phrases exactly as in `plan_query` (prefix rule in `retry_prefix`),
    CJK terms become `SubstringTerm`s.
    """
    terms = split_terms(query)
    word_terms, cjk_terms = partition_terms(terms)
    if not cjk_terms:
        return None
    # here, not at the top: a query without a CJK term makes no substring (start-up cost)
    from engine.query.substring_term import SubstringTerm

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


def substring_spans(excerpt: str, needles: Sequence[str]) -> tuple[tuple[int, int], ...]:
    """Where the retry's needles occur in an excerpt, with LIKE's comparison (ASCII
    letters ignore case; nothing after a NUL is seen): leftmost first, the longer needle
    at one place, not overlapping.

    >>> substring_spans(" … 评审会议讨论会议", ["会议"])
    ((5, 7), (9, 11))
    """
    visible = _like_visible(excerpt)
    folded = [text for text in (_like_visible(needle) for needle in needles) if text]
    found: list[tuple[int, int]] = []
    position = 0
    while folded:
        best: tuple[int, int] | None = None
        for needle in folded:
            index = visible.find(needle, position)
            if index >= 0 and (best is None or (index, -len(needle)) < (best[0], -best[1])):
                best = (index, len(needle))
        if best is None:
            break
        found.append((best[0], best[0] + best[1]))
        position = best[0] + best[1]
    return tuple(found)
