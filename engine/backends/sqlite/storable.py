"""Which text SQLite can store: valid UTF-8, so no lone surrogate.

Owns: `storable_text` (lone surrogates become U+FFFD, for writes and query terms alike)
and `is_storable` (whether a key or id can be looked up at all). Must not touch: where the
text goes (`writes`, `search`), the transcript checks that refuse such keys and ids
(`engine.transcript.validation`).
"""

from __future__ import annotations


def is_storable(text: str) -> bool:
    """Whether SQLite can bind `text` as UTF-8 (no lone surrogate). No stored key or id
    holds one (the transcript checks refuse them), so a lookup by such a value finds
    nothing, on this backend as on the reference one.

    >>> is_storable("agent:main:x"), is_storable("agent:main:\\udc80")
    (True, False)
    """
    return storable_text(text) is text


def storable_text(text: str) -> str:
    """Text SQLite can store as UTF-8: lone surrogates become U+FFFD (a known divergence).

    >>> storable_text("a\\ud800b")
    'a\\ufffdb'
    """
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "".join("\ufffd" if 0xD800 <= ord(character) <= 0xDFFF else character
                       for character in text)
    return text
