"""FTS5's `bm25()` ranking formula: the one place it is written (behaviour.md §5.4).

Owns: the constants, the IDF with its floor and the per-row score (their explanation tree
for `explain` is `score.bm25_explanation`'s). Must not touch: indexes, tokens, SQL. Callers supply the counts:

* `N` (`total_rows`) — rows in the WHOLE FTS table (every session and agent in the database,
  filtered-out and dirty rows included), so scores do not change when scope filters change;
* `n_i` (`matching_rows`) — rows that match phrase i on its own;
* `f_i` — instances of phrase i in this row; `D` — tokens in this row; `avgdl` — total
  tokens / N.

Formula (SQLite `fts5Bm25Function`, k1 = 1.2, b = 0.75)::

    idf_i = ln((N - n_i + 0.5) / (n_i + 0.5)),  replaced by 1e-6 when <= 0
    bm25  = -( Σ_i idf_i * (f_i * (k1 + 1)) / (f_i + k1 * (1 - b + b * D / avgdl)) )

The arithmetic below follows the C source operation by operation, in the same order and in
IEEE doubles (`N - n_i` is an exact integer difference before `+ 0.5`; `b * D / avgdl` is
`(b * D) / avgdl`; the sum runs in phrase order from 0.0), so the result equals SQLite's to
the last bit where the C compiler does not fuse operations.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

K1 = 1.2
B = 0.75
IDF_FLOOR = 1e-6


def inverse_document_frequency(total_rows: int, matching_rows: int) -> float:
    """`ln((N - n + 0.5) / (n + 0.5))`, or 1e-6 when that is not positive.

    >>> round(inverse_document_frequency(3, 1), 12)
    0.510825623766
    >>> inverse_document_frequency(3, 2)
    1e-06
    """
    idf = math.log((total_rows - matching_rows + 0.5) / (matching_rows + 0.5))
    return IDF_FLOOR if idf <= 0.0 else idf


def average_length(total_tokens: int, total_rows: int) -> float:
    """`avgdl` = total tokens / N (FTS5 divides two doubles).

    >>> average_length(7, 3)
    2.3333333333333335
    """
    return float(total_tokens) / float(total_rows)


def length_norm(document_length: int, average: float) -> float:
    """`k1 * (1 - b + b * D / avgdl)`, the part of every phrase's denominator that
    depends on the row only (the same for all its phrases).

    >>> length_norm(3, 3.0)
    1.2
    """
    return K1 * (1 - B + B * document_length / average)


def contribution(idf: float, frequency: float, norm: float) -> float:
    """One phrase's contribution (positive) given the row's `length_norm`, in FTS5's
    operation order: `idf * ((f * (k1 + 1)) / (f + norm))`."""
    return idf * ((frequency * (K1 + 1.0)) / (frequency + norm))


def phrase_term(idf: float, frequency: float, document_length: int, average: float) -> float:
    """One phrase's contribution (positive), in FTS5's operation order."""
    return contribution(idf, frequency, length_norm(document_length, average))


def phrase_bm25(idf: float, frequency: int, document_length: int,
                average_length: float) -> float:
    """`bm25([(idf, frequency)], document_length, average_length)`, a query of one
    phrase, in the same operations (the same bits, `tests/score/test_phrase_bm25.py`)
    without the loop and calls of the general one: the search of one phrase ranks with
    it many times a query.

    >>> phrase_bm25(0.5, 2, 3, 3.0) == bm25([(0.5, 2)], 3, 3.0)
    True
    """
    as_float = float(frequency)
    return -1.0 * (0.0 + idf * ((as_float * (K1 + 1.0)) / (
        as_float + K1 * (1 - B + B * document_length / average_length))))


def bm25(phrase_stats: Iterable[tuple[float, int]], document_length: int,
         average_length: float) -> float:
    """FTS5's `bm25()` for one row: NEGATIVE, lower is better.

    `phrase_stats` is `[(idf_i, f_i)]` in phrase order (any iterable of pairs). The
    length norm is computed once for the row; it is the value each `phrase_term` would
    compute, so the sum has the same bits as summing `phrase_term`s (the clear version,
    checked in `tests/score/test_bm25.py`).

    >>> # the 3-row corpus of behaviour.md §5.4, row "saffron" (D=1, avgdl=9/3, n=2)
    >>> score = -bm25([(inverse_document_frequency(3, 2), 1)], 1, 9 / 3)
    >>> round(score, 14)
    1.375e-06
    """
    norm = length_norm(document_length, average_length)
    score = 0.0
    for idf, frequency in phrase_stats:
        score += contribution(idf, float(frequency), norm)
    return -1.0 * score
