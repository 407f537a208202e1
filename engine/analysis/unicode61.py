"""The SQLite FTS5 `unicode61` tokenizer, rule for rule as SQLite 3.40.1 runs it.

Owns: deciding which code points form tokens, folding them (Unicode 6.1 simple case folding,
`remove_diacritics` 0/1/2), the `tokenchars`/`separators`/`categories` options and the
32,768-byte term limit (tokenizers.md §1). Must not touch: ICU (every table comes from the
generated `engine.analysis.tables.unicode61_data`), query parsing, storage or scoring.

Two implementations of the same rules live here:
* `Unicode61Tokenizer.tokens` walks the text one code point at a time, the way
  `fts5UnicodeTokenize` in `fts5_tokenize.c` walks UTF-8. It is the clear version and the
  test oracle.
* `Unicode61Tokenizer.terms`, `token_spans` and `spans` find token runs with a compiled regular
  expression (its character classes are computed from the same per-code-point rule) and fold
  each distinct raw token once with `str.translate`, through a cache. The first 20,000
  characters of non-ASCII text a process meets are walked by the clear version instead,
  since compiling the non-ASCII patterns costs as much (`CompiledTokenizer.walks_instead`).

Decisions this module documents (the real SQLite agrees with each; see the parity tests):
* A Python `str` may hold lone surrogates. Each one is read as U+FFFD (as SQLite reads the
  3-byte sequence `ED A0 80`), so it is a separator under the default categories and takes 3
  UTF-8 bytes in `byte_start`/`byte_end`. U+FFFE and U+FFFF are read as U+FFFD too.
* A term longer than 32,768 UTF-8 bytes is cut to 32,768 bytes, which may split a UTF-8
  sequence. The cut term is decoded with `surrogateescape`, so the dangling bytes become
  code points U+DC80..U+DCFF. Input surrogates never survive into a term (they became
  U+FFFD), so such a term cannot collide with an untruncated one, and a query term cut the
  same way compares equal. `term_bytes` gives the exact bytes FTS5 stores.
* A token whose every code point folds to nothing (possible only when a `categories` option
  makes the 25 marks token characters) is the empty term `""`. It still takes a position,
  as in FTS5 (whose `fts5vocab` shows it as NULL).
* `Token.kind` is `"number"` when every code point of the source span has the Unicode 6.1
  category `Nd` (decimal digits of any script), otherwise `"word"`.
* The `categories` option is parsed as SQLite 3.40.1 parses it: words separated by spaces or
  tabs; a word whose first letter is one of `C L M N P S Z` must continue with a valid class
  letter or `*` (`Lu`, `L*`, `LC`, ...; the rest of the word is ignored), otherwise the
  constructor fails; a word starting with any other character is ignored. Every word enables
  `Cn` (code points outside SQLite's Unicode 6.1 table); an empty or blank option enables no
  category at all, so nothing is a token (tokenizers.md §1.6 says "anything else is an
  error"; the real 3.40.1 accepts e.g. `lu`, `X*`, `Lu,Ll` and rejects only `L`, `Lx`, ...).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache, lru_cache
from itertools import pairwise

from engine.analysis.tables import unicode61_data as data
from engine.analysis.token import Token
from engine.errors import UsageError

#: `FTS5_MAX_TOKEN_SIZE`: FTS5 stores at most this many bytes of a term.
MAX_TERM_BYTES = 32768

#: The default `categories` option of `unicode61`.
DEFAULT_CATEGORIES = "L* N* Co"

REPLACEMENT_CHARACTER = 0xFFFD
CONTINUATION_MARKS = frozenset(data.CONTINUATION_MARKS)

#: Valid second letters after each category family letter (`sqlite3Fts5UnicodeCatParse`).
CATEGORY_FAMILIES: dict[str, tuple[str, ...]] = {
    "C": ("Cc", "Cf", "Cn", "Cs", "Co"),
    "L": ("Ll", "Lm", "Lo", "Lt", "Lu", "LC"),
    "M": ("Mc", "Me", "Mn"),
    "N": ("Nd", "Nl", "No"),
    "P": ("Pc", "Pd", "Pe", "Pf", "Pi", "Po", "Ps"),
    "S": ("Sc", "Sk", "Sm", "So"),
    "Z": ("Zl", "Zp", "Zs"),
}


# --------------------------------------------------------------------------------------
# Per-code-point rules (the clear version)


def effective_code_point(code_point: int) -> int:
    """The code point SQLite reads: surrogates, U+FFFE and U+FFFF become U+FFFD.

    >>> hex(effective_code_point(0xD800)), hex(effective_code_point(0x41))
    ('0xfffd', '0x41')
    """
    if 0xD800 <= code_point <= 0xDFFF or code_point in (0xFFFE, 0xFFFF):
        return REPLACEMENT_CHARACTER
    return code_point


def category_of(code_point: int) -> str:
    """The Unicode 6.1 category SQLite 3.40.1 gives `code_point` ("Cn" when it has none).

    >>> category_of(ord("A")), category_of(0x1F92F), category_of(0x19B0)
    ('Lu', 'Cn', 'Mc')
    """
    index = bisect_right(data.CATEGORY_RANGE_STARTS, code_point) - 1
    return data.CATEGORY_RANGE_NAMES[index]


def utf8_width(code_point: int) -> int:
    """UTF-8 bytes of the code point as FTS5 counts it (a lone surrogate counts 3).

    >>> [utf8_width(ord(c)) for c in "aé€😀"], utf8_width(0xDC00)
    ([1, 2, 3, 4], 3)
    """
    if code_point < 0x80:
        return 1
    if code_point < 0x800:
        return 2
    if code_point < 0x10000:
        return 3
    return 4


def parse_categories(option: str) -> frozenset[str]:
    """The category names a `categories` option enables.

    Each word parsed also enables "Cn" (slot 0); an option without words (empty or blank)
    enables nothing at all, so no character is a token character.

    >>> sorted(parse_categories("L* N* Co"))
    ['Cn', 'Co', 'LC', 'Ll', 'Lm', 'Lo', 'Lt', 'Lu', 'Nd', 'Nl', 'No']
    >>> sorted(parse_categories("Luxyz lu X*"))
    ['Cn', 'Lu']
    >>> sorted(parse_categories(" \t "))
    []
    """
    enabled: set[str] = set()
    for word in option.replace("\t", " ").split(" "):
        if not word:
            continue
        enabled.add("Cn")  # every parsed word enables slot 0, even an ignored one
        if word[0] not in CATEGORY_FAMILIES:
            continue
        family = CATEGORY_FAMILIES[word[0]]
        second = word[1:2]
        if second == "*":
            enabled.update(family)
        elif word[:2] in family:
            enabled.add(word[:2])
        else:
            raise UsageError(
                f"unicode61: invalid categories entry {word!r}: expected a class such as "
                f"{', '.join(family)} or {word[0]}* (SQLite: error in tokenizer constructor)"
            )
    return frozenset(enabled)


def fold_code_point(code_point: int, remove_diacritics: int) -> str:
    """`sqlite3Fts5UnicodeFold`: the text one token code point contributes.

    >>> [fold_code_point(ord(c), 2) for c in "AΣςẞİ"]
    ['a', 'σ', 'σ', 'ß', 'i']
    >>> fold_code_point(0x0301, 1), fold_code_point(0x0301, 0) == chr(0x0301)
    ('', True)
    >>> fold_code_point(0x01D6, 1), fold_code_point(0x01D6, 2)
    ('ǖ', 'u')
    """
    folded = data.CASE_FOLD.get(code_point, code_point)
    if remove_diacritics and code_point < 0x10000:
        return strip_table(remove_diacritics).get(folded, chr(folded))
    return chr(folded)


@lru_cache(maxsize=2)
def strip_table(remove_diacritics: int) -> dict[int, str]:
    """The diacritic-stripping map of rd=1 or rd=2, applied to already-folded code points."""
    if remove_diacritics == 1:
        return dict(data.DIACRITIC_STRIP_SIMPLE)
    return {**data.DIACRITIC_STRIP_SIMPLE, **data.DIACRITIC_STRIP_COMPLEX_EXTRA}


def truncate_term(term: str) -> str:
    """Cut a term to `MAX_TERM_BYTES` UTF-8 bytes, as the FTS5 index does.

    A split UTF-8 sequence is kept as `surrogateescape` code points, so equal byte strings
    give equal `str` terms.

    >>> len(truncate_term("é" * 20000).encode("utf-8", "surrogateescape"))
    32768
    >>> truncate_term("€" * 10923)[-3:] == "€\\udce2\\udc82"
    True
    """
    if len(term) * 4 <= MAX_TERM_BYTES:
        return term
    encoded = term.encode("utf-8", "surrogateescape")
    if len(encoded) <= MAX_TERM_BYTES:
        return term
    return encoded[:MAX_TERM_BYTES].decode("utf-8", "surrogateescape")


def term_bytes(term: str) -> bytes:
    """The bytes FTS5 stores for a term produced by this module.

    >>> term_bytes("ab")
    b'ab'
    """
    return term.encode("utf-8", "surrogateescape")


# --------------------------------------------------------------------------------------
# The configuration


@dataclass(frozen=True, slots=True)
class Unicode61Options:
    """The resolved options: which code points start tokens, and the fold mode."""

    remove_diacritics: int
    enabled_categories: frozenset[str]
    ascii_token_characters: tuple[bool, ...]  # 128 entries
    exceptions: frozenset[int]  # non-ASCII code points whose status is flipped

    def starts_token(self, code_point: int) -> bool:
        """`fts5UnicodeIsAlnum` (plus the ASCII table): can this code point start a token?"""
        code_point = effective_code_point(code_point)
        if code_point < 0x80:
            return self.ascii_token_characters[code_point]
        by_category = category_of(code_point) in self.enabled_categories
        return by_category != (code_point in self.exceptions)

    def continues_token(self, code_point: int) -> bool:
        """Token characters and the 25 continuation marks keep a token going."""
        return self.starts_token(code_point) or code_point in CONTINUATION_MARKS


def resolve_options(
    remove_diacritics: int, tokenchars: str, separators: str, categories: str | None
) -> Unicode61Options:
    """Apply the options in SQLite's order: categories, then tokenchars, then separators."""
    if remove_diacritics not in (0, 1, 2) or isinstance(remove_diacritics, bool):
        raise UsageError(
            f"unicode61: remove_diacritics must be 0, 1 or 2, not {remove_diacritics!r}"
        )
    for name, value in (("tokenchars", tokenchars), ("separators", separators)):
        if not isinstance(value, str) or "\x00" in value:
            raise UsageError(f"unicode61: {name} must be a string without NUL characters")
    if categories is not None and (not isinstance(categories, str) or "\x00" in categories):
        raise UsageError("unicode61: categories must be a string without NUL characters")
    enabled = parse_categories(DEFAULT_CATEGORIES if categories is None else categories)
    ascii_table = [category_of(code_point) in enabled for code_point in range(0x80)]
    ascii_table[0] = False  # NUL is never a token character
    exceptions: set[int] = set()
    for characters, make_token in ((tokenchars, True), (separators, False)):
        for character in characters:
            code_point = effective_code_point(ord(character))
            if code_point < 0x80:
                ascii_table[code_point] = make_token
                continue
            default = category_of(code_point) in enabled
            if default != make_token and code_point not in CONTINUATION_MARKS:
                exceptions.add(code_point)
    return Unicode61Options(remove_diacritics, enabled, tuple(ascii_table), frozenset(exceptions))


# --------------------------------------------------------------------------------------
# The fast path: a regular expression and a translate table per configuration


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

    def fold_all(self, raw_terms: list[str]) -> list[str]:
        """Fold (and truncate) raw token texts into terms."""
        cache = self.fold_cache
        if len(cache) > FOLD_CACHE_ENTRIES:
            cache.clear()
        table = self.fold_table
        folded: list[str] = []
        append = folded.append
        for raw in raw_terms:
            term = cache.get(raw)
            if term is None:
                term = truncate_term(raw.translate(table))
                if len(raw) <= FOLD_CACHE_MAX_TERM_LENGTH:
                    cache[raw] = term
            append(term)
        return folded


FOLD_CACHE_ENTRIES = 200_000
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


def fold_translation(remove_diacritics: int) -> dict[int, str]:
    """`str.translate` table equal to `fold_code_point` on every code point that can sit in a
    token (code points read as U+FFFD map to it)."""
    table: dict[int, str] = {}
    candidates = set(data.CASE_FOLD)
    if remove_diacritics:
        candidates |= set(strip_table(remove_diacritics))
    for code_point in candidates:
        folded = fold_code_point(code_point, remove_diacritics)
        if folded != chr(code_point):
            table[code_point] = folded
    replacement = fold_code_point(REPLACEMENT_CHARACTER, remove_diacritics)
    for code_point in [*range(0xD800, 0xE000), 0xFFFE, 0xFFFF]:
        table[code_point] = replacement
    return table


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


# --------------------------------------------------------------------------------------
# The tokenizer


class Unicode61Tokenizer:
    """SQLite 3.40.1 FTS5 `unicode61` with the given options (tokenizers.md §1).

    >>> tokenizer = Unicode61Tokenizer(remove_diacritics=2)
    >>> tokenizer.terms("Café naïve work_team 🤯🥰 😀")
    ['cafe', 'naive', 'work', 'team', '🤯🥰']
    >>> [(t.text, t.position, t.start, t.end, t.byte_start, t.byte_end)
    ...  for t in tokenizer.tokens("Ünïcode 61")]
    [('unicode', 0, 0, 7, 0, 9), ('61', 1, 8, 10, 10, 12)]
    """

    name = "unicode61"

    def __init__(
        self,
        remove_diacritics: int = 1,
        tokenchars: str = "",
        separators: str = "",
        categories: str | None = None,
    ) -> None:
        self.options = resolve_options(remove_diacritics, tokenchars, separators, categories)
        self.remove_diacritics = remove_diacritics
        self.tokenchars = tokenchars
        self.separators = separators
        self.categories = categories
        self._compiled = compile_options(self.options)
        ascii_table = self.options.ascii_token_characters
        #: ASCII text may be lowered before splitting (the fast `terms`) when unicode61's
        #: folding of ASCII is exactly `str.lower` and every letter is a token character
        #: exactly when its lower case is (true unless tokenchars/separators say otherwise).
        self._ascii_lower_first = all(
            ascii_table[code_point] == ascii_table[code_point + 32]
            for code_point in range(ord("A"), ord("Z") + 1)
        ) and all(
            fold_code_point(code_point, remove_diacritics) == chr(code_point).lower()
            for code_point in range(128)
        )

    # -- the clear version ------------------------------------------------------------

    def tokens(self, text: str) -> list[Token]:
        """Walk `text` one code point at a time, as `fts5UnicodeTokenize` walks UTF-8."""
        options = self.options
        tokens: list[Token] = []
        index = 0
        byte_offset = 0
        length = len(text)
        while True:
            while index < length and not options.starts_token(ord(text[index])):
                byte_offset += utf8_width(effective_code_point(ord(text[index])))
                index += 1
            if index >= length:
                return tokens
            start, byte_start = index, byte_offset
            pieces: list[str] = []
            while index < length and options.continues_token(ord(text[index])):
                code_point = effective_code_point(ord(text[index]))
                pieces.append(fold_code_point(code_point, options.remove_diacritics))
                byte_offset += utf8_width(code_point)
                index += 1
            span = text[start:index]
            is_number = all(category_of(ord(character)) == "Nd" for character in span)
            tokens.append(
                Token(
                    text=truncate_term("".join(pieces)),
                    position=len(tokens),
                    start=start,
                    end=index,
                    byte_start=byte_start,
                    byte_end=byte_offset,
                    kind="number" if is_number else "word",
                )
            )

    # -- the fast version -------------------------------------------------------------

    def terms(self, text: str) -> list[str]:
        """The folded terms of `text`; equal to `[t.text for t in self.tokens(text)]`."""
        if self._ascii_lower_first and text.isascii() and len(text) <= MAX_TERM_BYTES:
            # ASCII terms fold by lowering and are never long enough to be cut.
            return self._compiled.ascii_pattern.findall(text.lower())
        if self._compiled.walks_instead(text):
            return [token.text for token in self.tokens(text)]
        pattern, prepared = self._compiled.prepare(text)
        return self._compiled.fold_all(pattern.findall(prepared))

    def spans(self, text: str) -> list[tuple[int, int]]:
        """(start, end) per token, indexing `text`: `token_spans` without folding the
        terms (an excerpt needs only where its tokens are)."""
        if self._compiled.walks_instead(text):
            return [(token.start, token.end) for token in self.tokens(text)]
        pattern, prepared = self._compiled.prepare(text)
        return [match.span() for match in pattern.finditer(prepared)]

    def token_spans(self, text: str) -> list[tuple[str, int, int]]:
        """(term, start, end) per token, `start`/`end` indexing `text`."""
        if self._compiled.walks_instead(text):
            return [(token.text, token.start, token.end) for token in self.tokens(text)]
        pattern, prepared = self._compiled.prepare(text)
        matches = list(pattern.finditer(prepared))
        folded = self._compiled.fold_all([match.group() for match in matches])
        return [
            (term, match.start(), match.end()) for term, match in zip(folded, matches, strict=True)
        ]

    # -- description ------------------------------------------------------------------

    def fts5_tokenize_option(self) -> str:
        """The equivalent FTS5 `tokenize` argument, e.g. for `CREATE VIRTUAL TABLE`.

        >>> Unicode61Tokenizer(2, tokenchars="'-").fts5_tokenize_option()
        "unicode61 remove_diacritics 2 tokenchars '''-'"
        """
        parts = [f"unicode61 remove_diacritics {self.remove_diacritics}"]
        if self.categories is not None:
            parts.append(f"categories {quote_option(self.categories)}")
        if self.tokenchars:
            parts.append(f"tokenchars {quote_option(self.tokenchars)}")
        if self.separators:
            parts.append(f"separators {quote_option(self.separators)}")
        return " ".join(parts)

    def describe(self) -> list[str]:
        """One line per stage, in the order the stages run."""
        categories = DEFAULT_CATEGORIES if self.categories is None else self.categories
        mode = {
            0: "keep diacritics",
            1: "strip one diacritic from Latin letters (remove_diacritics 1)",
            2: "strip any number of diacritics from Latin letters (remove_diacritics 2)",
        }[self.remove_diacritics]
        return [
            "decode: code points; lone surrogates, U+FFFE and U+FFFF read as U+FFFD",
            (
                f"split: token characters = Unicode 6.1 categories {categories!r} + Cn "
                f"(SQLite {data.SQLITE_VERSION} table); ASCII token characters "
                f"{ascii_summary(self.options.ascii_token_characters)!r}; "
                f"{len(self.options.exceptions)} non-ASCII exceptions"
            ),
            "continue: 25 combining marks (U+0300..U+0331) continue a token, never start one",
            "fold: Unicode 6.1 simple case folding (BMP + Deseret)",
            f"diacritics: {mode}",
            f"truncate: terms to {MAX_TERM_BYTES} UTF-8 bytes (FTS5_MAX_TOKEN_SIZE)",
        ]

    def __repr__(self) -> str:
        return f"Unicode61Tokenizer({self.fts5_tokenize_option()!r})"


def quote_option(value: str) -> str:
    """Quote an FTS5 tokenizer argument: wrap in `'` and double every `'`.

    >>> quote_option("it's")
    "'it''s'"
    """
    return "'" + value.replace("'", "''") + "'"


def ascii_summary(table: tuple[bool, ...]) -> str:
    """The ASCII token characters as a compact range list.

    >>> ascii_summary(tuple(chr(i).isalnum() for i in range(128)))
    '0-9A-Za-z'
    """
    intervals = merge_intervals((i, i) for i in range(128) if table[i])
    return "".join(
        chr(low) if low == high else f"{chr(low)}-{chr(high)}" for low, high in intervals
    )
