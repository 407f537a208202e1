"""The fast path of SQLite's `unicode61` tokenizer: a regular expression and a translate
table per configuration.

Owns: the token patterns of one configuration (`compile_options`, `CompiledTokenizer`),
their character classes computed from the same per-code-point rule the clear version walks
(`Unicode61Options.starts_token`), and the fold cache from raw token to term. Must not
touch: the rules themselves (`unicode61_options.py`, `unicode61_folding.py`,
`unicode61_code_points.py`), the tokenizer's interface (`unicode61.py`), and ICU (every table
comes from the generated `engine.analysis.tables.unicode61_data`).

`Unicode61Tokenizer.terms`, `token_spans` and `spans` find token runs with a compiled regular
expression from here and fold each distinct raw token once with `str.translate`, through a
cache. The first 20,000 characters of non-ASCII text a process meets are walked by the clear
version instead, since compiling the non-ASCII patterns costs as much
(`CompiledTokenizer.walks_instead`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import cache, lru_cache
from itertools import pairwise

from engine.analysis.tables import unicode61_data as data
from engine.analysis.unicode61_code_points import CONTINUATION_MARKS
from engine.analysis.unicode61_folding import fold_translation, truncate_term
from engine.analysis.unicode61_options import Unicode61Options


class CompiledTokenizer:
    """Token patterns, the fold table and a fold cache for one configuration.

    Python's `re` tests a code point against a class through a 64K bitmap and then, one by
    one, the class ranges above U+FFFF, so every separator would pay for the ~80 ranges of
    supplementary token characters. The patterns therefore never list those ranges:
    * ASCII text: a pattern over the ASCII table alone;
    * text without supplementary code points: the BMP part of the classes;
    * otherwise the BMP part plus *all* of U+10000..U+10FFFF as token characters, after the
      supplementary separators that occur in the text (few distinct ones, usually emoji
      from Unicode 6.1 and older) have been replaced one for one by NUL, which is never a
      token character. Offsets do not move, and a replaced code point was never inside a
      token, so token texts are unchanged.

    Folding goes through a cache from raw token to term: natural text repeats its words, and
    a dictionary hit is much cheaper than `str.translate`.
    """

    __slots__ = (
        "_bmp_pattern", "_fold_table", "_make_bmp_pattern", "_make_fold_table",
        "_make_supplementary_pattern", "_supplementary_pattern", "ascii_pattern",
        "clear_budget", "fold_cache", "options",
    )  # fmt: skip

    def __init__(
        self,
        options: Unicode61Options,
        ascii_pattern: re.Pattern[str],
        bmp_pattern: Callable[[], re.Pattern[str]],
        supplementary_pattern: Callable[[], re.Pattern[str]],
        fold_table: Callable[[], dict[int, str]],
    ) -> None:
        """The ASCII pattern is built now; the others (large character classes, slow to
        compile) when the first non-ASCII text needs them."""
        self.options = options
        self.ascii_pattern = ascii_pattern
        self._make_bmp_pattern = bmp_pattern
        self._make_supplementary_pattern = supplementary_pattern
        self._make_fold_table = fold_table
        self._bmp_pattern: re.Pattern[str] | None = None
        self._supplementary_pattern: re.Pattern[str] | None = None
        self._fold_table: dict[int, str] | None = None
        self.fold_cache: dict[str, str] = {}
        #: Non-ASCII characters still to walk by the clear version before a pattern is
        #: compiled (`walks_instead`).
        self.clear_budget = CLEAR_WALK_BUDGET

    def walks_instead(self, text: str) -> bool:
        """Whether to split `text` by the clear walk (`Unicode61Tokenizer.tokens`)
        rather than compile the pattern it needs now.

        Compiling the BMP pattern costs about as much as walking `CLEAR_WALK_BUDGET`
        characters one at a time, so a process that meets little non-ASCII text (a fresh
        `search` cutting a few excerpts, a query with a diacritic) walks it, and one
        that meets more compiles the pattern once its budget is spent: the rule of
        renting until the rent would have paid for buying. A text longer than what is
        left of the budget compiles at once. The answers are the same either way (the
        clear walk is the oracle of the patterns).
        """
        if self.clear_budget <= 0 or text.isascii():
            return False
        if SUPPLEMENTARY_CODE_POINT.search(text) is None:
            compiled = self._bmp_pattern
        else:
            compiled = self._supplementary_pattern
        if compiled is not None:
            return False
        if len(text) > self.clear_budget:
            self.clear_budget = 0
            return False
        self.clear_budget -= len(text)
        return True

    @property
    def bmp_pattern(self) -> re.Pattern[str]:
        """The token pattern for text without supplementary-plane characters."""
        if self._bmp_pattern is None:
            self._bmp_pattern = self._make_bmp_pattern()
        return self._bmp_pattern

    @property
    def supplementary_pattern(self) -> re.Pattern[str]:
        """The token pattern for text with supplementary-plane characters."""
        if self._supplementary_pattern is None:
            self._supplementary_pattern = self._make_supplementary_pattern()
        return self._supplementary_pattern

    @property
    def fold_table(self) -> dict[int, str]:
        """`str.translate` table: code point to its folded text."""
        if self._fold_table is None:
            self._fold_table = self._make_fold_table()
        return self._fold_table

    def prepare(self, text: str) -> tuple[re.Pattern[str], str]:
        """The pattern to use, and the text to run it on (same length, same token texts)."""
        if text.isascii():
            return self.ascii_pattern, text
        supplementary = set(SUPPLEMENTARY_CODE_POINT.findall(text))
        if not supplementary:
            return self.bmp_pattern, text
        separators = sorted(
            ord(character)
            for character in supplementary
            if not self.options.starts_token(ord(character))
        )
        if separators:
            separator_class = character_class((code_point, code_point) for code_point in separators)
            text = re.sub(f"[{separator_class}]", "\x00", text)
        return self.supplementary_pattern, text

    def fold_all(self, raw_terms: list[str], cache_entries: int) -> list[str]:
        """Fold (and truncate) raw token texts into terms, through the fold cache, which
        never holds more than `cache_entries` (emptied when full: a vocabulary that
        outgrows it starts again rather than grow with the corpus)."""
        cache = self.fold_cache
        if len(cache) >= cache_entries:
            cache.clear()
        table = self.fold_table
        folded: list[str] = []
        append = folded.append
        for raw in raw_terms:
            term = cache.get(raw)
            if term is None:
                term = truncate_term(raw.translate(table))
                if len(raw) <= FOLD_CACHE_MAX_TERM_LENGTH and len(cache) < cache_entries:
                    cache[raw] = term
            append(term)
        return folded


#: How many characters of non-ASCII text are walked before a pattern is compiled
#: (`CompiledTokenizer.walks_instead`).
CLEAR_WALK_BUDGET = 20_000
FOLD_CACHE_MAX_TERM_LENGTH = 64
SUPPLEMENTARY_CODE_POINT = re.compile("[\U00010000-\U0010ffff]")
NEVER_MATCHES = re.compile("(?!)")


def class_intervals(options: Unicode61Options) -> list[tuple[int, int]]:
    """Inclusive code point intervals that start a token, from `starts_token` itself.

    Status only changes at a category range start, at an ASCII code point, at an exception,
    or at the code points read as U+FFFD, so testing one code point per segment suffices.
    """
    breaks = set(data.CATEGORY_RANGE_STARTS) | set(range(0x81))
    for code_point in options.exceptions:
        breaks.update((code_point, code_point + 1))
    breaks.update((0xD800, 0xE000, 0xFFFE, 0x10000, 0x110000))
    points = sorted(point for point in breaks if point <= 0x110000)
    intervals: list[tuple[int, int]] = []
    for low, high in pairwise(points):
        if not options.starts_token(low):
            continue
        if intervals and intervals[-1][1] == low - 1:
            intervals[-1] = (intervals[-1][0], high - 1)
        else:
            intervals.append((low, high - 1))
    return intervals


def character_class(intervals: Iterable[tuple[int, int]]) -> str:
    r"""A regular-expression character class body for the intervals, the characters
    written as themselves (a backslash before `\`, `]`, `[`, `^` and `-`): `re` parses
    that several times faster than `\U` escapes, and the BMP class has about a thousand
    ranges, compiled at the first non-ASCII text.

    >>> character_class([(0x30, 0x39), (0x41, 0x41), (0x5D, 0x5E)])
    '0-9A\\]-\\^'
    """
    parts = []
    for low, high in intervals:
        parts.append(_class_character(low) if low == high
                     else f"{_class_character(low)}-{_class_character(high)}")
    return "".join(parts)


def _class_character(code_point: int) -> str:
    character = chr(code_point)
    return "\\" + character if character in "\\]^-[" else character


def merge_intervals(intervals: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sort and merge overlapping or touching inclusive intervals.

    >>> merge_intervals([(5, 6), (0, 2), (3, 3), (9, 9)])
    [(0, 3), (5, 6), (9, 9)]
    """
    merged: list[tuple[int, int]] = []
    for low, high in sorted(intervals):
        if merged and low <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(high, merged[-1][1]))
        else:
            merged.append((low, high))
    return merged


@lru_cache(maxsize=32)
def compile_options(options: Unicode61Options) -> CompiledTokenizer:
    """Build (once per distinct configuration) the ASCII pattern now, the others and the
    fold table when first needed (computing the classes of every code point is a
    noticeable cost for a fresh process, and ASCII text never needs them)."""

    @cache
    def intervals() -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
        starts = class_intervals(options)
        return starts, merge_intervals([*starts, *((mark, mark) for mark in CONTINUATION_MARKS)])

    def supplementary() -> re.Pattern[str]:
        starts, continues = intervals()
        return token_pattern([*clip(starts, below=0x10000), *every_supplementary],
                             [*clip(continues, below=0x10000), *every_supplementary],
                             below=0x110000)

    every_supplementary = [(0x10000, 0x10FFFF)]
    ascii_starts = ascii_intervals(options)  # no continuation mark is ASCII
    return CompiledTokenizer(
        options=options,
        ascii_pattern=token_pattern(ascii_starts, ascii_starts, below=0x80),
        bmp_pattern=lambda: token_pattern(*intervals(), below=0x10000),
        supplementary_pattern=supplementary,
        fold_table=lambda: fold_translation(options.remove_diacritics),
    )


def ascii_intervals(options: Unicode61Options) -> list[tuple[int, int]]:
    """`clip(class_intervals(options), below=0x80)`, testing the 128 ASCII code points only.

    >>> from engine.analysis.unicode61_options import resolve_options
    >>> ascii_intervals(resolve_options(1, "", "", None))
    [(48, 57), (65, 90), (97, 122)]
    """
    intervals: list[tuple[int, int]] = []
    for code_point in range(0x80):
        if not options.starts_token(code_point):
            continue
        if intervals and intervals[-1][1] == code_point - 1:
            intervals[-1] = (intervals[-1][0], code_point)
        else:
            intervals.append((code_point, code_point))
    return intervals


def clip(intervals: list[tuple[int, int]], below: int) -> list[tuple[int, int]]:
    """The parts of the intervals under `below`.

    >>> clip([(1, 5), (8, 20), (30, 40)], below=10)
    [(1, 5), (8, 9)]
    """
    return [(low, min(high, below - 1)) for low, high in intervals if low < below]


def token_pattern(
    starts: list[tuple[int, int]], continues: list[tuple[int, int]], below: int
) -> re.Pattern[str]:
    """`[start][continue]*`, keeping only the code points under `below`."""
    start_class = character_class(clip(starts, below))
    if not start_class:
        return NEVER_MATCHES  # no token characters at all
    return re.compile(f"[{start_class}][{character_class(clip(continues, below))}]*")
