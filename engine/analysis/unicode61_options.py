"""The options of SQLite's `unicode61` tokenizer: `categories`, `tokenchars`, `separators`
and `remove_diacritics`, resolved into which code points start and continue a token.

Owns: parsing the `categories` option (`parse_categories`), checking the options and
applying them in SQLite's order (`resolve_options`), and the resolved configuration
(`Unicode61Options`: which code points start a token, which keep one going). Must not touch:
folding (`unicode61_folding.py`), how a text is split (`unicode61.py`,
`unicode61_patterns.py`), and ICU (every table comes from the generated
`engine.analysis.tables.unicode61_data`).

The `categories` option is parsed as SQLite 3.40.1 parses it: words separated by spaces or
tabs; a word whose first letter is one of `C L M N P S Z` must continue with a valid class
letter or `*` (`Lu`, `L*`, `LC`, ...; the rest of the word is ignored), otherwise the
constructor fails; a word starting with any other character is ignored. Every word enables
`Cn` (code points outside SQLite's Unicode 6.1 table); an empty or blank option enables no
category at all, so nothing is a token (tokenizers.md §1.6 says "anything else is an
error"; the real 3.40.1 accepts e.g. `lu`, `X*`, `Lu,Ll` and rejects only `L`, `Lx`, ...).
"""

from __future__ import annotations

from typing import NamedTuple

from engine.analysis.unicode61_code_points import (
    CONTINUATION_MARKS,
    category_of,
    effective_code_point,
)
from engine.errors import UsageError

#: The default `categories` option of `unicode61`.
DEFAULT_CATEGORIES = "L* N* Co"

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


class Unicode61Options(NamedTuple):
    """The resolved options: which code points start tokens, and the fold mode.

    A NamedTuple, not a frozen dataclass: every search imports this module, and a
    NamedTuple's class costs a fraction of a dataclass's to make. It reads, hashes and
    prints as the dataclass did, and two options values compare as before; unlike the
    dataclass it also equals a plain tuple of the same values, which nothing compares it
    with.
    """

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
