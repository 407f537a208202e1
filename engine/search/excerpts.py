"""The excerpt of a returned row: FTS5's `snippet()` window or the CJK substring excerpt.

Owns: choosing which excerpt a row gets (a row with phrase instances gets FTS5's window,
a row found by substrings alone the substring excerpt) and the token spans the window is
cut from (the stored text re-analyzed). Must not touch: the window rules
(`engine.results.snippet`, the clear version, found faster by
`engine.results.fast_snippet`; `EngineConfig.fast_snippets` chooses), the substring
excerpt rule (`engine.query.cjk.substring_excerpt`), the 500-unit bound (hit assembly,
`engine.search.hits`, applies it).
"""

from __future__ import annotations

from engine.analysis.token import Analyzer
from engine.query.ast import QueryPlan
from engine.query.cjk import substring_excerpt, substring_spans
from engine.results.fast_snippet import fast_fts5_snippet_matches
from engine.results.snippet import fts5_snippet_matches
from engine.search.order import RankedRow


def token_spans(analyzer: Analyzer, text: str) -> list[tuple[int, int]]:
    """`(start, end)` str offsets of every token of `text` (the fastest version the
    analyzer offers: its `spans`, else its `token_spans`, else its tokens).

    >>> from engine.analysis.profiles import SEARCH_PROFILE
    >>> token_spans(SEARCH_PROFILE.analyzer(), "Café, crème")
    [(0, 4), (6, 11)]
    """
    spans = getattr(analyzer, "spans", None)
    if spans is not None:
        return spans(text)
    fast = getattr(analyzer, "token_spans", None)
    if fast is not None:
        return [(start, end) for _term, start, end in fast(text)]
    return [(token.start, token.end) for token in analyzer.tokens(text)]


def row_excerpt(row: RankedRow, analyzer: Analyzer, plan: QueryPlan, *,
                fast: bool = True) -> tuple[str, tuple[tuple[int, int], ...]]:
    """The excerpt of one returned row, before the UTF-16 bound, and where it shows what
    matched (`engine.model.SearchHit.matched`): the window's phrase instances as FTS5's
    highlighter marks them, or the retry's substrings. `fast=False` finds the window with
    the clear `fts5_snippet` over the analyzer's tokens (its oracle)."""
    text = row.record.text
    if row.by_substring and not row.phrase_hits:
        needles = [term.text for term in plan.substrings]
        excerpt = substring_excerpt(text, needles)
        return excerpt, substring_spans(excerpt, needles)
    if not fast:
        spans = [(token.start, token.end) for token in analyzer.tokens(text)]
        return fts5_snippet_matches(text, spans, row.phrase_hits)
    return fast_fts5_snippet_matches(text, token_spans(analyzer, text), row.phrase_hits)
