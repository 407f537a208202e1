"""The substring a query plan holds for a CJK term of the zero-hit retry (behaviour.md §7.1).

Owns: `SubstringTerm`, the literal the message text must contain, compared as SQLite
`LIKE` (`query.cjk` makes them and models `LIKE`). Must not touch: tokenization, matching,
scoring or storage. Its own module so that a search whose query has no CJK term never
defines the class (`query.cjk.retry_plan` imports it only when it makes one).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SubstringTerm:
    """A literal the message text must contain (the CJK retry), compared as SQLite LIKE.

    >>> SubstringTerm("会议").text
    '会议'
    """

    text: str
