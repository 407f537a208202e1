"""Hit assembly: from a matching row's values to the `SearchHit` of behaviour.md §5.2.

Owns: the one place where a row becomes a hit, for every backend: the score is `-rank`
(`-bm25()`, larger is better; 0 for a row without a finite rank), a timestamp that is not
a finite number reads 0, and the excerpt is bounded to 500 UTF-16 units
(`engine.results.bounds`). Must not touch: how rows are found, ranked, ordered or
excerpted (the reference search stage and the SQLite backend each do that their own
way, then call `search_hit`, so their hits agree by construction).

A hit may also be made in two steps, for a partition of a merged search that cuts the
excerpts of the hits the merge keeps only: its merge key first (`hit_key`: identity,
timestamp and score, by the same rules), then the whole hit from the key (`whole_hit`),
equal to `search_hit` of the same values (its oracle in `tests/search/test_hit_keys.py`).
"""

from __future__ import annotations

import math
from typing import Any

from engine.model import SearchHit
from engine.results.bounds import ELLIPSIS, bound_snippet
from engine.search.merge import HitKey

#: `HitKey` made from a tuple of its five fields in C (its generated `__new__` is Python).
_new_key = tuple.__new__


def finite_or_zero(value: Any) -> float:
    """A finite number as float, anything else 0 (§5.2).

    >>> finite_or_zero(3), finite_or_zero(float("nan")), finite_or_zero(None), finite_or_zero(True)
    (3.0, 0.0, 0.0, 0.0)
    >>> finite_or_zero(-2.5), finite_or_zero(float("-inf"))
    (-2.5, 0.0)
    """
    if type(value) is float:  # the common case (a bm25 rank, a stored timestamp)
        return value if value - value == 0.0 else 0.0  # x - x is 0 exactly when x is finite
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return 0.0


def search_hit(
    *,
    session_key: str,
    session_id: str,
    message_id: str,
    role: str,
    timestamp: Any,
    excerpt: str,
    rank: Any,
    matched: tuple[tuple[int, int], ...] = (),
) -> SearchHit:
    """The hit of one row: `rank` is its bm25 (negative, lower is better; 0.0 without a
    MATCH), `excerpt` its snippet before the UTF-16 bound.

    >>> hit = search_hit(session_key="global", session_id="w", message_id="m", role="user",
    ...                  timestamp=None, excerpt="a [b] c", rank=-1.5)
    >>> hit.score, hit.timestamp, hit.snippet
    (1.5, 0.0, 'a [b] c')
    >>> search_hit(session_key="global", session_id="w", message_id="m", role="user",
    ...            timestamp=7, excerpt="", rank=-0.0).score
    0.0
    """
    score = finite_or_zero(rank)
    snippet = bound_snippet(excerpt)
    return SearchHit(
        session_key=session_key,
        session_id=session_id,
        message_id=message_id,
        role=role,
        timestamp=finite_or_zero(timestamp),
        snippet=snippet,
        score=-score if score else 0.0,
        matched=matched if snippet is excerpt else bound_spans(matched, snippet),
    )


def hit_key(session_key: str, session_id: str, message_id: str, timestamp: Any,
            rank: Any) -> HitKey:
    """The merge key of the hit `search_hit` makes of these values (its timestamp and
    score by the same rules).

    >>> hit_key("global", "w", "m", None, -1.5)
    HitKey(session_key='global', session_id='w', message_id='m', timestamp=0.0, score=1.5)
    """
    score = finite_or_zero(rank)
    return _new_key(HitKey, (session_key, session_id, message_id, finite_or_zero(timestamp),
                             -score if score else 0.0))


def whole_hit(key: HitKey, role: str, excerpt: str,
              matched: tuple[tuple[int, int], ...] = ()) -> SearchHit:
    """`search_hit` of the values `key` was made of (`hit_key`), with `role`, the excerpt
    before the UTF-16 bound and its matched spans.

    >>> whole_hit(hit_key("global", "w", "m", 7, -0.0), "user", "a [b] c", ((3, 6),))
    SearchHit(session_key='global', session_id='w', message_id='m', role='user', timestamp=7.0, snippet='a [b] c', score=0.0)
    """
    snippet = bound_snippet(excerpt)
    return SearchHit(key.session_key, key.session_id, key.message_id, role, key.timestamp,
                     snippet, key.score,
                     matched if snippet is excerpt else bound_spans(matched, snippet))


def bound_spans(matched: tuple[tuple[int, int], ...],
                snippet: str) -> tuple[tuple[int, int], ...]:
    """The spans a bounded snippet still shows: those that start before its cut, ended at
    the cut (the ellipsis `bound_snippet` appends is no match).

    >>> bound_spans(((0, 2), (4, 9), (12, 14)), "ab cdef" + ELLIPSIS)
    ((0, 2), (4, 7))
    """
    kept = len(snippet) - len(ELLIPSIS)
    return tuple((start, min(end, kept)) for start, end in matched if start < kept)
