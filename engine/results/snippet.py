"""FTS5 `snippet(tbl, 0, '', '', ' … ', 48)`, exactly (behaviour.md §5.5, `fts5_aux.c`).

Owns: choosing the excerpt window of one message and cutting it out of the original text
(the record of that choice for `explain` is `results.snippet_explanation`'s). Must not
touch: tokenization (the caller passes token spans from the `unicode61` profile), phrase
matching (the caller passes phrase instances), scoring of hits, the 500/300 bounds
(`results.bounds` applies those afterwards).

Inputs:
* `token_spans` — `(start, end)` `str` offsets of every token of the column, in order;
  their count is the column size FTS5 reports;
* `phrase_hits` — `(phrase_index, start_position, phrase_length)` for every phrase instance
  in the row. FTS5 visits instances ordered by position and, at equal positions, by phrase
  index; this module sorts them that way itself.

The algorithm, as SQLite 3.40.1 runs it (N = tokens per window, 48 here):
1. Sentence starts: token 0, and each later token whose preceding text, after skipping at
   least one space/TAB/LF/CR, ends in `.` or `:`.
2. Best = (score 0, start 0). For each instance at position `io`, in order:
   a. score the window `[io, io + N)`: over the instances inside it (in order), 1000 for the
      first instance of a phrase and 1 for a repeat; `iFirst` = the first such position,
      `iLast` = position + phrase length of the last one. Its start is
      `iFirst - (N - (iLast - iFirst)) / 2` (C division: truncates toward zero), then
      clamped to `docsize - N` from above and 0 from below. Keep it if strictly better;
   b. only when the column has more than N tokens: take the LAST sentence start `s <= io`;
      if `s < io`, score the window `[s, s + N)` (no re-centring, no clamp), add 120 if
      `s == 0` else 100, and keep `s` if strictly better.
3. Output: `" … "` if the start is > 0; the original text from the start token's first
   character (from the very beginning when the start is 0) to the end of token
   `start + N - 1`; then, if that token is at or past the column's last token, the rest of
   the text (trailing punctuation), else `" … "`.

A row with no instances gives the window at 0. `tokens_per_window` must be 1..64 (FTS5
documents 64 as its maximum; N = 0 takes another path in SQLite that we do not model).
"""

from __future__ import annotations

from collections.abc import Sequence

SENTENCE_END = (".", ":")
SENTENCE_SPACE = (" ", "\t", "\n", "\r")
FIRST_HIT_SCORE = 1000
REPEAT_HIT_SCORE = 1
COLUMN_START_BONUS = 120
SENTENCE_START_BONUS = 100
DEFAULT_TOKENS = 48
DEFAULT_ELLIPSIS = " … "

# One window FTS5 considered: (kind, anchor, start, score, chosen), kind "hit" or "sentence"
ScoredWindow = tuple[str, int, int, int, bool]


def c_division(numerator: int, denominator: int) -> int:
    """Integer division truncating toward zero, as C does.

    >>> c_division(7, 2), c_division(-7, 2)
    (3, -3)
    """
    quotient = abs(numerator) // abs(denominator)
    return quotient if (numerator >= 0) == (denominator > 0) else -quotient


def sentence_starts(text: str, token_spans: Sequence[tuple[int, int]]) -> list[int]:
    """Positions of the tokens that begin a sentence (rule 1).

    >>> text = "One two. Three:four: five.six"
    >>> spans = [(0, 3), (4, 7), (9, 14), (15, 19), (21, 25), (26, 29)]
    >>> sentence_starts(text, spans)
    [0, 2, 4]
    """
    starts = []
    for position, (start, _end) in enumerate(token_spans):
        if position == 0:
            starts.append(0)
            continue
        index = start - 1
        character = ""
        while index >= 0:
            character = text[index]
            if character not in SENTENCE_SPACE:
                break
            index -= 1
        if index != start - 1 and character in SENTENCE_END:
            starts.append(position)
    return starts


def ordered_hits(phrase_hits: Sequence[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """Instances in FTS5's visiting order: by position, then phrase index."""
    return sorted(phrase_hits, key=lambda hit: (hit[1], hit[0]))


def score_window(
    hits: Sequence[tuple[int, int, int]], window_start: int, window_tokens: int, document_size: int
) -> tuple[int, int]:
    """(score, adjusted start) of the window `[window_start, window_start + N)` (rule 2a).

    >>> score_window([(0, 60, 1)], 60, 48, 121)  # one hit in 121 tokens: 23 tokens before it
    (1000, 37)
    """
    seen: set[int] = set()
    score = 0
    first = -1
    last = 0
    end = window_start + window_tokens
    for phrase, position, length in hits:
        if window_start <= position < end:
            score += REPEAT_HIT_SCORE if phrase in seen else FIRST_HIT_SCORE
            seen.add(phrase)
            if first < 0:
                first = position
            last = position + length
    adjusted = first - c_division(window_tokens - (last - first), 2)
    if adjusted + window_tokens > document_size:
        adjusted = document_size - window_tokens
    return score, max(adjusted, 0)


def window_candidates(
    text: str,
    token_spans: Sequence[tuple[int, int]],
    phrase_hits: Sequence[tuple[int, int, int]],
    *,
    tokens_per_window: int = DEFAULT_TOKENS,
) -> tuple[list[int], list[ScoredWindow], int, int]:
    """Choose the window (rules 1–2): the sentence starts, every candidate FTS5 scored in
    the order it tried them, as `(kind, anchor, start, score, chosen)`, and the chosen
    start and its score.

    >>> window_candidates("a b", [(0, 1), (2, 3)], [(0, 1, 1)])
    ([0], [('hit', 1, 0, 1000, True)], 0, 1000)
    """
    if not 1 <= tokens_per_window <= 64:
        raise ValueError(f"tokens_per_window must be 1..64, got {tokens_per_window}")
    hits = ordered_hits(phrase_hits)
    size = len(token_spans)
    starts = sentence_starts(text, token_spans)
    best_score, best_start = 0, 0
    candidates: list[ScoredWindow] = []
    for _phrase, position, _length in hits:
        if position > size:
            continue  # SQLite reports FTS5_CORRUPT for such an instance; never from us
        score, adjusted = score_window(hits, position, tokens_per_window, size)
        chosen = score > best_score
        if chosen:
            best_score, best_start = score, adjusted
        candidates.append(("hit", position, adjusted, score, chosen))
        if starts and size > tokens_per_window:
            sentence = max(start for start in starts if start <= position)
            if sentence < position:
                score = score_window(hits, sentence, tokens_per_window, size)[0]
                score += COLUMN_START_BONUS if sentence == 0 else SENTENCE_START_BONUS
                chosen = score > best_score
                if chosen:
                    best_score, best_start = score, sentence
                candidates.append(("sentence", position, sentence, score, chosen))
    return starts, candidates, best_start, best_score


def render_window(
    text: str,
    token_spans: Sequence[tuple[int, int]],
    start: int,
    tokens_per_window: int,
    ellipsis: str = DEFAULT_ELLIPSIS,
    phrase_hits: Sequence[tuple[int, int, int]] = (),
) -> str:
    """Cut the window starting at token `start` out of `text` (rule 3).

    `phrase_hits` only matter for a window whose text holds a NUL (see
    `render_window_with_nul`).

    >>> render_window("a. b c d", [(0, 1), (3, 4), (5, 6), (7, 8)], 1, 2)
    ' … b c … '
    >>> render_window("a. b c d!", [(0, 1), (3, 4), (5, 6), (7, 8)], 2, 2)
    ' … c d!'
    """
    size = len(token_spans)
    last = start + tokens_per_window - 1
    head = ellipsis if start > 0 else ""
    begin = token_spans[start][0] if 0 < start < size else 0
    end = len(text) if last >= size - 1 else token_spans[last][1]
    if "\x00" in text[begin:end]:
        return render_window_with_nul(text, token_spans, start, tokens_per_window, ellipsis,
                                      phrase_hits)
    if last >= size - 1:
        return head + text[begin:]
    return head + text[begin:end] + ellipsis


def render_window_with_nul(
    text: str,
    token_spans: Sequence[tuple[int, int]],
    start: int,
    tokens_per_window: int,
    ellipsis: str,
    phrase_hits: Sequence[tuple[int, int, int]],
) -> str:
    """The window as FTS5 writes it when its text holds a NUL: each piece cut at its NUL.

    FTS5's highlighter appends the excerpt in pieces with `sqlite3_mprintf("%.*s")`, which
    stops at a NUL byte. The pieces, walking the window's tokens in order with `offset`
    starting at the window's first byte: at the first token of a (coalesced) phrase
    instance, the text from `offset` to the token's start; at the instance's last token,
    the text from `offset` to that token's end; at the window's last token, the text from
    `offset` to its end; after the walk, the rest of the text when the window reaches the
    last token, else the ellipsis. Instances that overlap (`start <= previous end`) are
    coalesced, and instances starting before the window are skipped, as FTS5's
    `CInstIter` does.

    >>> spans = [(0, 1), (4, 5), (6, 7)]
    >>> render_window_with_nul("a " + chr(0) + " b c", spans, 0, 48, " … ", [(0, 2, 1)])
    'a c'
    """
    return _nul_window(text, token_spans, start, tokens_per_window, ellipsis, phrase_hits)[0]


def _nul_window(
    text: str,
    token_spans: Sequence[tuple[int, int]],
    start: int,
    tokens_per_window: int,
    ellipsis: str,
    phrase_hits: Sequence[tuple[int, int, int]],
) -> tuple[str, tuple[tuple[int, int], ...]]:
    """The walk of `render_window_with_nul`: the window's text, and where each mark FTS5
    would put opens and closes in it (a mark still open at the window's last token closes
    there)."""
    size = len(token_spans)
    last = start + tokens_per_window - 1
    instances = coalesced_instances(phrase_hits)
    while instances and instances[0][0] < start:
        instances.pop(0)
    pieces = [ellipsis] if start > 0 else []
    length = len(ellipsis) if start > 0 else 0
    offset = token_spans[start][0] if 0 < start < size else 0
    spans: list[tuple[int, int]] = []
    opened: int | None = None

    def append(end: int) -> None:
        nonlocal offset, length
        piece = text[offset:end].split("\x00", 1)[0]
        pieces.append(piece)
        length += len(piece)
        offset = end

    def close() -> None:
        nonlocal opened
        if opened is not None:
            spans.append((opened, length))
            opened = None

    for position in range(start, min(last, size - 1) + 1):
        token_start, token_end = token_spans[position]
        if instances and position == instances[0][0]:
            append(token_start)
            opened = length
        if instances and position == instances[0][1]:
            append(token_end)
            instances.pop(0)
            close()
        if position == last:
            append(token_end)
            close()
    if last >= size - 1:
        append(len(text))
    else:
        pieces.append(ellipsis)
    return "".join(pieces), tuple(spans)


def window_matches(
    text: str,
    token_spans: Sequence[tuple[int, int]],
    start: int,
    tokens_per_window: int,
    ellipsis: str,
    phrase_hits: Sequence[tuple[int, int, int]],
) -> tuple[tuple[int, int], ...]:
    """Where the excerpt `render_window` cuts shows what FTS5's highlighter marks: for each
    coalesced phrase instance that starts inside the window, the `(start, end)` offsets of
    its text in the excerpt, cut at the window's last token (FTS5 closes an open mark
    there); instances that start before the window are skipped, as `CInstIter` skips them.
    A window whose text holds a NUL is walked piece by piece, as it is rendered
    (`_nul_window`, the walk of `render_window_with_nul`).

    >>> text = "a. b c d e"
    >>> spans = [(0, 1), (3, 4), (5, 6), (7, 8), (9, 10)]
    >>> excerpt = render_window(text, spans, 1, 3)
    >>> matches = window_matches(text, spans, 1, 3, " … ", [(0, 1, 1), (1, 3, 2), (0, 0, 1)])
    >>> excerpt, [excerpt[start:end] for start, end in matches]
    (' … b c d … ', ['b', 'd'])
    """
    size = len(token_spans)
    if size == 0:
        return ()
    last = min(start + tokens_per_window - 1, size - 1)
    begin = token_spans[start][0] if 0 < start < size else 0
    end = len(text) if last >= size - 1 else token_spans[last][1]
    instances = [(first, min(final, last)) for first, final in coalesced_instances(phrase_hits)
                 if start <= first <= last]
    if "\x00" in text[begin:end]:
        return _nul_window(text, token_spans, start, tokens_per_window, ellipsis,
                           phrase_hits)[1]
    head = len(ellipsis) if start > 0 else 0
    return tuple((head + token_spans[first][0] - begin, head + token_spans[final][1] - begin)
                 for first, final in instances)


def coalesced_instances(phrase_hits: Sequence[tuple[int, int, int]]) -> list[tuple[int, int]]:
    """(first token, last token) of each coalesced instance, in position order.

    >>> coalesced_instances([(0, 1, 2), (1, 2, 1), (0, 5, 1)])
    [(1, 2), (5, 5)]
    """
    merged: list[tuple[int, int]] = []
    for _phrase, position, length in sorted(phrase_hits, key=lambda hit: hit[1]):
        end = position + length - 1
        if merged and position <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((position, end))
    return merged


def fts5_snippet(
    text: str,
    token_spans: Sequence[tuple[int, int]],
    phrase_hits: Sequence[tuple[int, int, int]],
    *,
    tokens_per_window: int = DEFAULT_TOKENS,
    ellipsis: str = DEFAULT_ELLIPSIS,
) -> str:
    """The excerpt `snippet(tbl, 0, '', '', ellipsis, tokens_per_window)` returns.

    >>> text = "before " * 60 + "saffron " + "after " * 60
    >>> position = 0; spans = []
    >>> for word in text.split(" ")[:-1]:
    ...     spans.append((position, position + len(word))); position += len(word) + 1
    >>> excerpt = fts5_snippet(text, spans, [(0, 60, 1)])
    >>> excerpt == " … " + "before " * 23 + "saffron" + " after" * 24 + " … "
    True
    """
    return fts5_snippet_matches(text, token_spans, phrase_hits,
                                tokens_per_window=tokens_per_window, ellipsis=ellipsis)[0]


def fts5_snippet_matches(
    text: str,
    token_spans: Sequence[tuple[int, int]],
    phrase_hits: Sequence[tuple[int, int, int]],
    *,
    tokens_per_window: int = DEFAULT_TOKENS,
    ellipsis: str = DEFAULT_ELLIPSIS,
) -> tuple[str, tuple[tuple[int, int], ...]]:
    """`fts5_snippet` and where it shows what matched (`window_matches`).

    >>> fts5_snippet_matches("Per-session notes", [(0, 3), (4, 11), (12, 17)], [(0, 0, 2)])
    ('Per-session notes', ((0, 11),))
    """
    start = window_candidates(text, token_spans, phrase_hits,
                              tokens_per_window=tokens_per_window)[2]
    return cut_window(text, token_spans, start, tokens_per_window, ellipsis, phrase_hits)


def cut_window(text: str, token_spans: Sequence[tuple[int, int]], start: int,
               tokens_per_window: int, ellipsis: str,
               phrase_hits: Sequence[tuple[int, int, int]],
               ) -> tuple[str, tuple[tuple[int, int], ...]]:
    """The excerpt of the window at token `start` (`render_window`) and where it shows
    what matched (`window_matches`)."""
    return (render_window(text, token_spans, start, tokens_per_window, ellipsis, phrase_hits),
            window_matches(text, token_spans, start, tokens_per_window, ellipsis, phrase_hits))
