"""The analysis profiles as a teaching view reads them: names, options, tokens.

Owns: the list of what a tokenizer view needs of `engine.analysis` (the profiles, their
options, the search profile, the token value and its ASCII preview, the CJK script
ranges), and the two teaching forms both views of tokens share: a token as a JSON
object (`token_record`: `tokenize --json` prints it, the explorer's Analysis panel
sends it) and the CJK runs of a text (`cjk_runs`, the runs the CJK retry is about).
Must not touch: tokenization (the analysis stage's), which characters are CJK
(`engine.analysis.cjk_script`'s ranges).
"""

from __future__ import annotations

import re
from typing import Any

from engine.analysis.cjk_script import is_cjk_character
from engine.analysis.profiles import (
    PROFILE_NAMES,
    PROFILE_OPTIONS,
    SEARCH_PROFILE,
    ProfileConfig,
    ascii_preview,
)
from engine.analysis.token import Token

__all__ = ["PROFILE_NAMES", "PROFILE_OPTIONS", "SEARCH_PROFILE", "ProfileConfig", "Token",
           "ascii_preview", "cjk_runs", "is_cjk_character", "printable", "token_record"]

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def printable(text: str) -> str:
    """`text` with lone surrogates replaced by U+FFFD, so it can be written as UTF-8.

    >>> printable("a\\udc80b") == "a\\ufffdb"
    True
    """
    return _LONE_SURROGATE.sub("\ufffd", text)


def token_record(text: str, token: Token) -> dict[str, Any]:
    """One token of `text` as a JSON-ready object: its term (`text`, folded), position,
    string and UTF-8 byte offsets, kind, the source span it came from and its ASCII
    preview.

    >>> from engine.inspection.tokens import SEARCH_PROFILE
    >>> [token] = SEARCH_PROFILE.analyzer().tokens("Café")
    >>> token_record("Café", token)
    {'position': 0, 'text': 'cafe', 'start': 0, 'end': 4, 'byteStart': 0, 'byteEnd': 5, 'kind': 'word', 'source': 'Café', 'ascii': 'cafe'}
    """
    return {
        "position": token.position,
        "text": printable(token.text),
        "start": token.start,
        "end": token.end,
        "byteStart": token.byte_start,
        "byteEnd": token.byte_end,
        "kind": token.kind,
        "source": printable(text[token.start : token.end]),
        "ascii": ascii_preview(printable(token.text)),
    }


def cjk_runs(text: str) -> list[tuple[int, int]]:
    """The runs of consecutive CJK characters of `text`, as `(start, end)` string offsets:
    what `unicode61` keeps as one token and the CJK retry searches inside.

    >>> text = "Café 会议讨论 and 東京"
    >>> [text[start:end] for start, end in cjk_runs(text)]
    ['会议讨论', '東京']
    """
    runs: list[tuple[int, int]] = []
    start: int | None = None
    for index, character in enumerate(text):
        if is_cjk_character(character):
            if start is None:
                start = index
        elif start is not None:
            runs.append((start, index))
            start = None
    if start is not None:
        runs.append((start, len(text)))
    return runs
