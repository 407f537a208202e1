"""How SQLite's `unicode61` tokenizer reads one code point: the code point it sees, its
Unicode 6.1 category, its UTF-8 width.

Owns: the per-code-point facts every other `unicode61_*` module asks for, as SQLite 3.40.1
reads them, and the 25 continuation marks. Must not touch: which code points form tokens
(`unicode61_options.py`), folding (`unicode61_folding.py`), and ICU (every table comes from
the generated `engine.analysis.tables.unicode61_data`).

A Python `str` may hold lone surrogates. Each one is read as U+FFFD (as SQLite reads the
3-byte sequence `ED A0 80`), so it is a separator under the default categories and takes 3
UTF-8 bytes in `byte_start`/`byte_end`. U+FFFE and U+FFFF are read as U+FFFD too.
"""

from __future__ import annotations

from bisect import bisect_right

from engine.analysis.tables import unicode61_data as data

REPLACEMENT_CHARACTER = 0xFFFD
CONTINUATION_MARKS = frozenset(data.CONTINUATION_MARKS)


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
