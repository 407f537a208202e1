"""The character classes of PostgreSQL's `default` text-search parser: what a letter, a
digit, a space and a "special" (word-continuing, zero-width) character are.

Owns: the character-class provider the parser asks about each code point (`CharacterClasses`),
and the default one, probed from the server (`c_utf8_classes`). Must not touch: the parser's
states and rules (`pg_parser_states.py`), the machine that runs them (`pg_parser.py`),
unaccent, lowercasing, positions or the tsvector (`pg_profile.py`), and anything outside
`analysis`.

Locale assumption: a UTF8 database with `LC_CTYPE = C.UTF-8` (glibc 2.36, Unicode 14.0), as
probed from PostgreSQL 15.20 by `tables/generate_pg.py`. Another glibc, or a `C` locale,
changes the classes (see tokenizers.md §4.2); only C.UTF-8 is modelled (the analyzer's
lowercasing is C.UTF-8's too).
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise
from typing import Protocol

from engine.analysis.tables import pg_char_classes

# Character classes (one per code point; the sets are disjoint).
OTHER, LETTER, DIGIT, SPECIAL, SPACE = 0, 1, 2, 3, 4

MAX_CODE_POINT = 0x10FFFF


class CharacterClasses(Protocol):
    """What the parser asks about a code point (the locale's `isw*()` classes)."""

    def class_of(self, code_point: int) -> int:
        """One of OTHER, LETTER, DIGIT, SPECIAL, SPACE."""
        ...


@dataclass(frozen=True, slots=True)
class RangeTableClasses:
    """Classes looked up in sorted inclusive ranges (letters, specials, spaces); digits are
    ASCII `0-9` only.

    >>> classes = c_utf8_classes()
    >>> [classes.class_of(ord(c)) for c in "a1\\u0301 \\u00a0\\u0661"]
    [1, 2, 3, 4, 0, 1]
    """

    starts: tuple[int, ...]
    ends: tuple[int, ...]
    kinds: tuple[int, ...]

    def class_of(self, code_point: int) -> int:
        if 0x30 <= code_point <= 0x39:
            return DIGIT
        index = bisect_right(self.starts, code_point) - 1
        if index >= 0 and code_point <= self.ends[index]:
            return self.kinds[index]
        return OTHER


def _range_table(tagged: list[tuple[int, int, int]]) -> RangeTableClasses:
    tagged.sort()
    for (_, last, _), (next_first, _, _) in pairwise(tagged):
        if next_first <= last:
            raise ValueError(f"overlapping class ranges at U+{next_first:04X}")
    return RangeTableClasses(
        starts=tuple(first for first, _, _ in tagged),
        ends=tuple(last for _, last, _ in tagged),
        kinds=tuple(kind for _, _, kind in tagged),
    )


@lru_cache(maxsize=1)
def c_utf8_classes() -> RangeTableClasses:
    """The C.UTF-8 classes probed from the server (the default provider)."""
    tagged = [(first, last, LETTER) for first, last in pg_char_classes.ALPHA_RANGES]
    tagged += [(first, last, SPECIAL) for first, last in pg_char_classes.SPECIAL_RANGES]
    tagged += [(first, last, SPACE) for first, last in pg_char_classes.SPACE_RANGES]
    return _range_table(tagged)
