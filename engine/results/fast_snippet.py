"""A faster equivalent of `engine.results.snippet.fts5_snippet` for rows with many hits.

Owns: nothing new about excerpts; the rules stay in `engine.results.snippet` (the clear
version and this module's test oracle). Must not touch: the window rules themselves.

Why: `results.snippet.window_candidates` scores each candidate window by visiting every
phrase instance of the row, so a row with h instances costs O(h²) (FTS5 does the same in
C). A long message holding a common word thousands of times took seconds per snippet.
Only the instances inside the window `[start, start + N)` change its score, and the
instances are visited in position order, so a binary search over the sorted positions
finds exactly those: O(h log h + h·N) per row. The output is identical, checked against
`fts5_snippet` under hypothesis in `tests/results/test_fast_snippet.py`. The sentence
starts come from the text's sentence breaks (`fast_sentence_starts`, one regular
expression and a bisection per break) instead of a Python scan before every token, the
larger cost for a short row.
"""

from __future__ import annotations

import operator
import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence

from engine.results.snippet import (
    COLUMN_START_BONUS,
    DEFAULT_ELLIPSIS,
    DEFAULT_TOKENS,
    SENTENCE_END,
    SENTENCE_SPACE,
    SENTENCE_START_BONUS,
    coalesced_instances,
    cut_window,
    ordered_hits,
    score_window,
)

#: A sentence end followed by its whole run of spaces (the two sets share no character).
_SENTENCE_BREAK = re.compile(
    "[" + "".join(map(re.escape, SENTENCE_END)) + "]"
    "[" + "".join(map(re.escape, SENTENCE_SPACE)) + "]+")


def fast_sentence_starts(text: str, token_spans: Sequence[tuple[int, int]]) -> list[int]:
    """Exactly `results.snippet.sentence_starts` (its clear version), from the text's
    sentence breaks instead of a backward scan before every token.

    A token at `start` begins a sentence when the maximal run of spaces before it is not
    empty and follows a sentence end: when `start` lies in `(e + 1, m]` for a match `e..m`
    of `_SENTENCE_BREAK`. The tokens in that range are found by bisection.

    >>> text = "One two. Three:four: five.six"
    >>> fast_sentence_starts(text, [(0, 3), (4, 7), (9, 14), (15, 19), (21, 25), (26, 29)])
    [0, 2, 4]
    """
    if not token_spans:
        return []
    starts = [0]
    for found in _SENTENCE_BREAK.finditer(text):
        first = bisect_left(token_spans, found.start() + 2, 1, key=_span_start)
        starts.extend(range(first, bisect_right(token_spans, found.end(), first, key=_span_start)))
    return starts


_span_start = operator.itemgetter(0)


def choose_window_start(
    text: str,
    token_spans: Sequence[tuple[int, int]],
    phrase_hits: Sequence[tuple[int, int, int]],
    tokens_per_window: int = DEFAULT_TOKENS,
) -> int:
    """The first token of the excerpt window (rules 1–2 of `results.snippet`).

    A row of at most `tokens_per_window` tokens (most rows) is its own window: every
    hit's window is pushed back to token 0 by `score_window`'s rule that a window ends
    by the row's end, and sentence starts are scored only past that size.

    >>> choose_window_start("a b. c", [(0, 1), (2, 3), (5, 6)], [(0, 2, 1)])
    0
    """
    if len(token_spans) <= tokens_per_window:
        return 0
    hits = ordered_hits(phrase_hits)
    positions = [position for _phrase, position, _length in hits]
    size = len(token_spans)
    starts = fast_sentence_starts(text, token_spans)
    best_score, best_start = 0, 0
    #: Each window scored once: many hits share a start (a phrase repeated in the query,
    #: each of its instances a hit at the same position), and a window's score depends
    #: on its start alone.
    scored: dict[int, tuple[int, int]] = {}

    def window_score(start: int) -> tuple[int, int]:
        found = scored.get(start)
        if found is None:
            inside = hits[bisect_left(positions, start):
                          bisect_left(positions, start + tokens_per_window)]
            found = scored[start] = score_window(inside, start, tokens_per_window, size)
        return found

    for _phrase, position, _length in hits:
        if position > size:
            continue
        score, adjusted = window_score(position)
        if score > best_score:
            best_score, best_start = score, adjusted
        if starts and size > tokens_per_window:
            sentence = starts[bisect_right(starts, position) - 1]
            if sentence < position:
                score = window_score(sentence)[0]
                score += COLUMN_START_BONUS if sentence == 0 else SENTENCE_START_BONUS
                if score > best_score:
                    best_score, best_start = score, sentence
    return best_start


def fast_fts5_snippet(
    text: str,
    token_spans: Sequence[tuple[int, int]],
    phrase_hits: Sequence[tuple[int, int, int]],
    *,
    tokens_per_window: int = DEFAULT_TOKENS,
    ellipsis: str = DEFAULT_ELLIPSIS,
) -> str:
    """Exactly `fts5_snippet(text, token_spans, phrase_hits)`, in O(h log h + h·N).

    >>> spans = [(index * 2, index * 2 + 1) for index in range(100)]
    >>> fast_fts5_snippet("a " * 100, spans, [(0, 70, 1)])[:9]
    ' … a a a '
    """
    return fast_fts5_snippet_matches(text, token_spans, phrase_hits,
                                     tokens_per_window=tokens_per_window, ellipsis=ellipsis)[0]


def fast_fts5_snippet_matches(
    text: str,
    token_spans: Sequence[tuple[int, int]],
    phrase_hits: Sequence[tuple[int, int, int]],
    *,
    tokens_per_window: int = DEFAULT_TOKENS,
    ellipsis: str = DEFAULT_ELLIPSIS,
) -> tuple[str, tuple[tuple[int, int], ...]]:
    """Exactly `fts5_snippet_matches(text, token_spans, phrase_hits)`, found as fast as
    `fast_fts5_snippet` finds its window. A row of at most `tokens_per_window` tokens
    without a NUL (most rows) is its own excerpt, whole (`render_window` of the window at
    0), and its matches are its coalesced instances' spans (`window_matches` then)."""
    size = len(token_spans)
    if size <= tokens_per_window and "\x00" not in text:
        return text, tuple((token_spans[first][0], token_spans[min(final, size - 1)][1])
                           for first, final in coalesced_instances(phrase_hits)
                           if 0 <= first < size)
    start = choose_window_start(text, token_spans, phrase_hits, tokens_per_window)
    return cut_window(text, token_spans, start, tokens_per_window, ellipsis, phrase_hits)
