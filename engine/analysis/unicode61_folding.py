"""How SQLite's `unicode61` tokenizer turns a token's code points into a term: Unicode 6.1
simple case folding, `remove_diacritics` 0/1/2, and the 32,768-byte term limit.

Owns: the fold of one code point (`fold_code_point`), the `str.translate` table equal to it
(`fold_translation`), the diacritic-stripping maps, and cutting a term to the bytes FTS5
stores (`truncate_term`, `term_bytes`). Must not touch: which code points form tokens
(`unicode61_options.py`), and ICU (every table comes from the generated
`engine.analysis.tables.unicode61_data`).

A term longer than 32,768 UTF-8 bytes is cut to 32,768 bytes, which may split a UTF-8
sequence. The cut term is decoded with `surrogateescape`, so the dangling bytes become code
points U+DC80..U+DCFF. Input surrogates never survive into a term (they became U+FFFD,
`unicode61_code_points.py`), so such a term cannot collide with an untruncated one, and a
query term cut the same way compares equal. `term_bytes` gives the exact bytes FTS5 stores.
"""

from __future__ import annotations

from functools import lru_cache

from engine.analysis.tables import unicode61_data as data
from engine.analysis.unicode61_code_points import REPLACEMENT_CHARACTER

#: `FTS5_MAX_TOKEN_SIZE`: FTS5 stores at most this many bytes of a term.
MAX_TERM_BYTES = 32768


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
