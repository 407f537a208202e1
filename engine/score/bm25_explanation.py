"""Every number behind one FTS5 `bm25()` value, for `explain` and for diffing parity.

Owns: `PhraseExplanation`, `Bm25Explanation` and `explain_bm25`, which recomputes a row's
score with `score.bm25`'s functions and records each phrase's inputs. Must not touch: the
formula itself (`score.bm25` is its one place), indexes, tokens, SQL. A search never
imports this module; `explain` does.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.score.bm25 import K1, B, average_length, bm25, inverse_document_frequency, phrase_term


@dataclass(frozen=True, slots=True)
class PhraseExplanation:
    """One phrase's inputs and contribution: `n` matching rows, `f` hits here, its IDF."""

    phrase: str
    matching_rows: int
    frequency: int
    idf: float
    idf_floored: bool
    contribution: float


@dataclass(frozen=True, slots=True)
class Bm25Explanation:
    """Every number behind one `bm25()` value, for `explain` and for diffing parity."""

    total_rows: int
    document_length: int
    average_length: float
    k1: float
    b: float
    phrases: tuple[PhraseExplanation, ...]
    bm25: float

    @property
    def score(self) -> float:
        """The hit score (`-bm25`, positive)."""
        return -self.bm25

    def lines(self) -> list[str]:
        """A readable rendering, one line per fact."""
        header = (
            f"N={self.total_rows} D={self.document_length} avgdl={self.average_length!r} "
            f"k1={self.k1} b={self.b}"
        )
        rows = [header]
        for item in self.phrases:
            floored = " (floored)" if item.idf_floored else ""
            rows.append(
                f"  phrase {item.phrase!r}: n={item.matching_rows} f={item.frequency} "
                f"idf={item.idf!r}{floored} contribution={item.contribution!r}"
            )
        rows.append(f"bm25={self.bm25!r} score={self.score!r}")
        return rows

    def to_json(self) -> dict[str, Any]:
        """The same facts as `lines()`, as plain JSON with numbers as numbers.

        >>> explain_bm25([("saffron", 2, 1)], total_rows=3, total_tokens=9,
        ...              document_length=1).to_json()["phrases"][0]["idfFloored"]
        True
        """
        return {
            "N": self.total_rows,
            "D": self.document_length,
            "avgdl": self.average_length,
            "k1": self.k1,
            "b": self.b,
            "phrases": [
                {
                    "phrase": item.phrase,
                    "n": item.matching_rows,
                    "f": item.frequency,
                    "idf": item.idf,
                    "idfFloored": item.idf_floored,
                    "contribution": item.contribution,
                }
                for item in self.phrases
            ],
            "bm25": self.bm25,
            "score": self.score,
        }


def explain_bm25(
    phrases: Sequence[tuple[str, int, int]],
    *,
    total_rows: int,
    total_tokens: int,
    document_length: int,
) -> Bm25Explanation:
    """Explain one row's score; `phrases` is `[(label, n_i, f_i)]` in phrase order.

    >>> explanation = explain_bm25([("saffron", 2, 1)], total_rows=3, total_tokens=9,
    ...                            document_length=1)
    >>> explanation.phrases[0].idf_floored, round(explanation.score, 14)
    (True, 1.375e-06)
    """
    average = average_length(total_tokens, total_rows)
    items = []
    stats = []
    for label, matching_rows, frequency in phrases:
        raw = math.log((total_rows - matching_rows + 0.5) / (matching_rows + 0.5))
        idf = inverse_document_frequency(total_rows, matching_rows)
        stats.append((idf, frequency))
        items.append(
            PhraseExplanation(
                phrase=label,
                matching_rows=matching_rows,
                frequency=frequency,
                idf=idf,
                idf_floored=raw <= 0.0,
                contribution=phrase_term(idf, float(frequency), document_length, average),
            )
        )
    return Bm25Explanation(
        total_rows=total_rows,
        document_length=document_length,
        average_length=average,
        k1=K1,
        b=B,
        phrases=tuple(items),
        bm25=bm25(stats, document_length, average),
    )
