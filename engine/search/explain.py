"""`explain`: why each hit of a search ranks where it does and how its excerpt was chosen.

Owns: the explanation of one search as frozen values (`SearchExplanation`, one
`HitExplanation` per returned hit) and their plain JSON (`to_json()`: numbers as numbers,
keys as in the text view: N, n, f, D, avgdl, idf). Must not touch: the search itself (it
runs the kernel, `engine.search.kernel`, and explains what that returned), the formulas
(`engine.score.bm25_explanation.explain_bm25`,
`engine.results.snippet_explanation.explain_snippet` record their own steps), printing (the CLI renders the text view from `lines()` of each part).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from engine.analysis.token import Analyzer
from engine.config import EngineConfig
from engine.index.view import IndexView
from engine.model import SearchHit, SessionWindow
from engine.query.ast import QueryPlan
from engine.query.checked_request import CheckedRequest
from engine.results.snippet_explanation import SnippetExplanation, explain_snippet
from engine.score.bm25_explanation import Bm25Explanation, explain_bm25
from engine.search.clear_path import match_phrases
from engine.search.excerpts import token_spans
from engine.search.kernel import DEFAULT_CONFIG, result_of_run, run_kernel


@dataclass(frozen=True, slots=True)
class SubstringExcerpt:
    """The excerpt of a hit found by substrings alone: no window was chosen, the text
    around the earliest needle was cut (`engine.query.cjk.substring_excerpt`)."""

    needles: tuple[str, ...]

    def lines(self) -> list[str]:
        """A readable rendering."""
        return ["substring excerpt around the earliest needle (engine.query.cjk)"]

    def to_json(self) -> dict[str, Any]:
        """Plain JSON: `{"kind": "substring", "needles": [...]}`."""
        return {"kind": "substring", "needles": list(self.needles)}


@dataclass(frozen=True, slots=True)
class HitExplanation:
    """Why one hit ranks where it does and how its excerpt window was chosen.

    `bm25` is None for a hit found by substrings alone (rank 0: there is no MATCH).
    """

    hit: SearchHit
    doc_id: int
    bm25: Bm25Explanation | None
    excerpt: SnippetExplanation | SubstringExcerpt

    @property
    def snippet_lines(self) -> tuple[str, ...]:
        """The excerpt choice, one line per fact."""
        return tuple(self.excerpt.lines())

    def to_json(self) -> dict[str, Any]:
        """The hit's JSON object plus `docId`, `bm25` (or null) and `excerpt`."""
        if isinstance(self.excerpt, SnippetExplanation):
            excerpt = {"kind": "window", **self.excerpt.to_json()}
        else:
            excerpt = self.excerpt.to_json()
        return {
            **self.hit.to_json(),
            "docId": self.doc_id,
            "bm25": self.bm25.to_json() if self.bm25 is not None else None,
            "excerpt": excerpt,
        }


@dataclass(frozen=True, slots=True)
class SearchExplanation:
    """One search explained: the plan it ran, whether the CJK retry ran, and every hit."""

    plan: QueryPlan
    retried: bool
    truncated: bool
    hits: tuple[HitExplanation, ...]

    def to_json(self) -> dict[str, Any]:
        """Plain JSON: `phrases`, `substrings`, `cjkRetry`, `truncated`, `hits`."""
        return {
            "phrases": [
                {"terms": list(phrase.terms), "prefix": phrase.prefix}
                for phrase in self.plan.phrases
            ],
            "substrings": [term.text for term in self.plan.substrings],
            "cjkRetry": self.retried,
            "truncated": self.truncated,
            "hits": [item.to_json() for item in self.hits],
        }


def explain_search(
    view: IndexView,
    windows: Iterable[SessionWindow],
    request: CheckedRequest,
    analyzer: Analyzer,
    *,
    config: EngineConfig = DEFAULT_CONFIG,
) -> SearchExplanation:
    """The kernel run plus, per returned hit, its bm25 terms and its excerpt choice (the
    run and the hits as `search_index` makes them with `config`)."""
    run = run_kernel(view, windows, request, analyzer, config=config)
    result = result_of_run(run, analyzer, indexing=False, config=config)
    matches = match_phrases(view, run.plan.phrases)
    needles = tuple(term.text for term in run.plan.substrings)
    explanations = []
    for row, hit in zip(run.rows, result.hits):
        record = row.record
        explanation = None
        if matches:
            explanation = explain_bm25(
                [
                    (" ".join(item.phrase.terms) + ("*" if item.phrase.prefix else ""),
                     item.matching_rows, len(item.occurrences.get(record.doc_id, ())))
                    for item in matches
                ],
                total_rows=view.document_count,
                total_tokens=view.total_tokens,
                document_length=record.length,
            )
        excerpt: SnippetExplanation | SubstringExcerpt
        if row.phrase_hits:
            excerpt = explain_snippet(
                record.text, token_spans(analyzer, record.text), row.phrase_hits
            )
        else:
            excerpt = SubstringExcerpt(needles)
        explanations.append(HitExplanation(hit, record.doc_id, explanation, excerpt))
    return SearchExplanation(
        run.plan, run.retried, run.truncated, tuple(explanations)
    )
