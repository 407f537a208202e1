"""How FTS5's `snippet()` chose an excerpt window, for `explain` (behaviour.md §5.5).

Owns: `WindowCandidate`, `SnippetExplanation` and `explain_snippet`, the record of every
window `results.snippet.window_candidates` scored. Must not touch: the choice itself (the
rules are `results.snippet`'s), tokenization, phrase matching, scoring of hits. A search
never imports this module; `explain` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.results.snippet import DEFAULT_TOKENS, window_candidates


@dataclass(frozen=True, slots=True)
class WindowCandidate:
    """One window FTS5 considered: from a hit (`kind="hit"`) or a sentence start."""

    kind: str
    anchor: int
    start: int
    score: int
    chosen: bool


@dataclass(frozen=True, slots=True)
class SnippetExplanation:
    """How the excerpt window was chosen: every candidate in the order FTS5 tried it."""

    document_tokens: int
    window_tokens: int
    sentence_starts: tuple[int, ...]
    candidates: tuple[WindowCandidate, ...]
    start: int
    score: int

    def lines(self) -> list[str]:
        """A readable rendering, one line per candidate."""
        header = (
            f"tokens={self.document_tokens} window={self.window_tokens} "
            f"sentence starts={list(self.sentence_starts)}"
        )
        rows = [header]
        for candidate in self.candidates:
            mark = " <- best so far" if candidate.chosen else ""
            rows.append(
                f"  {candidate.kind} at {candidate.anchor}: start {candidate.start} "
                f"score {candidate.score}{mark}"
            )
        rows.append(f"chosen start {self.start} (score {self.score})")
        return rows

    def to_json(self) -> dict[str, Any]:
        """The same facts as `lines()`, as plain JSON with numbers as numbers.

        >>> explain_snippet("a b", [(0, 1), (2, 3)], [(0, 1, 1)]).to_json()["candidates"]
        [{'kind': 'hit', 'anchor': 1, 'start': 0, 'score': 1000, 'chosen': True}]
        """
        return {
            "tokens": self.document_tokens,
            "window": self.window_tokens,
            "sentenceStarts": list(self.sentence_starts),
            "candidates": [
                {
                    "kind": candidate.kind,
                    "anchor": candidate.anchor,
                    "start": candidate.start,
                    "score": candidate.score,
                    "chosen": candidate.chosen,
                }
                for candidate in self.candidates
            ],
            "start": self.start,
            "score": self.score,
        }


def explain_snippet(
    text: str,
    token_spans: Sequence[tuple[int, int]],
    phrase_hits: Sequence[tuple[int, int, int]],
    *,
    tokens_per_window: int = DEFAULT_TOKENS,
) -> SnippetExplanation:
    """Choose the window (rules 1–2) and record every candidate FTS5 scored.

    >>> explanation = explain_snippet("a. b c", [(0, 1), (3, 4), (5, 6)], [(0, 2, 1)],
    ...                               tokens_per_window=1)
    >>> [(candidate.kind, candidate.start, candidate.score) for candidate in explanation.candidates]
    [('hit', 2, 1000), ('sentence', 1, 100)]
    """
    starts, candidates, start, score = window_candidates(
        text, token_spans, phrase_hits, tokens_per_window=tokens_per_window)
    return SnippetExplanation(
        document_tokens=len(token_spans),
        window_tokens=tokens_per_window,
        sentence_starts=tuple(starts),
        candidates=tuple(WindowCandidate(*candidate) for candidate in candidates),
        start=start,
        score=score,
    )
