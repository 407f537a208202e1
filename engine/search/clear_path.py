"""The clear path of the search stage: every matching row, ranked by plain loops (the oracle).

Owns: matching a query plan against an `IndexView` one phrase at a time
(`engine.index.matching.phrase_occurrences`), the scope and role filter per row, the
substring check of the CJK retry, and bm25 per row with whole-index statistics. Must not
touch: the order (`engine.search.order`), excerpts, the query policy (plans arrive made),
the formulas (`engine.score.bm25`, `engine.query.cjk.substring_matches`).

This is the version to read first, and the test oracle of `engine.search.fast_path`
(`tests/search/test_fast_path.py`): `order_rows(rank_rows(...), order, count)` is what
`top_rows` must return, row for row and bit for bit.

The steps, for a plan over a scope:

1. for each phrase, its occurrences over the WHOLE index (`n_i` counts rows outside the
   scope too, like FTS5); the rows matching every phrase, in scope, with the role;
2. rank = `bm25` (negative, lower is better) with `N`, `avgdl` of the whole index;
3. with substrings (the CJK retry), only rows whose stored text holds every substring
   (SQLite's LIKE); rows found by substrings alone have no bm25 (there is no MATCH) and
   rank 0.0.

Cost of the CJK retry: with `cjk_grams=False` a substring plan scans the stored text of
every row, O(total characters); with `cjk_grams=True` the CJK character/bigram index of
`engine.index.cjk_grams` narrows the rows first (an in-memory index built at the first
retry, which pays for building it). The hypothesis tests require both to give identical
results.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from engine.index.documents import DocumentRecord
from engine.index.matching import phrase_occurrences
from engine.index.view import IndexView
from engine.query.ast import Phrase, QueryPlan
from engine.query.cjk import substring_matches
from engine.score.bm25 import bm25, inverse_document_frequency
from engine.search.order import RankedRow
from engine.search.scope import Scope


@dataclass(frozen=True, slots=True)
class PhraseMatches:
    """One phrase's occurrences over the whole index: `{doc_id: [start positions]}`."""

    phrase: Phrase
    occurrences: Mapping[int, list[int]]

    @property
    def matching_rows(self) -> int:
        """FTS5's `n_i`: rows of the whole index holding the phrase."""
        return len(self.occurrences)


def match_phrases(view: IndexView, phrases: Sequence[Phrase]) -> list[PhraseMatches]:
    """The occurrences of every phrase of a plan, in phrase order."""
    return [
        PhraseMatches(phrase, phrase_occurrences(view, phrase.terms, prefix=phrase.prefix))
        for phrase in phrases
    ]


def _eligible(record: DocumentRecord, scope: Scope, role: str | None) -> bool:
    return record.session_id in scope.session_keys and (role is None or record.role == role)


def substring_candidates(view: IndexView, plan: QueryPlan) -> set[int] | None:
    """Rows that may hold every substring of `plan` (CJK gram index), or None: no narrowing."""
    narrowed: set[int] | None = None
    for term in plan.substrings:
        rows = view.cjk_candidates(term.text)
        if rows is not None:
            narrowed = rows if narrowed is None else narrowed & rows
    return narrowed


def rank_rows(
    view: IndexView,
    plan: QueryPlan,
    scope: Scope,
    role: str | None,
    *,
    cjk_grams: bool = True,
) -> list[RankedRow]:
    """Every row in scope matching the whole plan, with its rank (unordered).

    With `cjk_grams=False` a substring plan scans every row (the clear version); with
    True the CJK gram index first narrows the rows to scan (same answers, tested).
    """
    if plan.matches_nothing:
        return []
    matches = match_phrases(view, plan.phrases)
    narrowed = substring_candidates(view, plan) if cjk_grams and plan.substrings else None
    if matches:
        candidate_ids = set(min(matches, key=lambda item: item.matching_rows).occurrences)
        for item in matches:
            candidate_ids.intersection_update(item.occurrences)
        if narrowed is not None:
            candidate_ids.intersection_update(narrowed)
        candidates = [view.document(doc_id) for doc_id in sorted(candidate_ids)]
    elif narrowed is not None:
        candidates = [view.document(doc_id) for doc_id in sorted(narrowed)]
    else:
        candidates = list(view.documents())  # a substring-only retry scans every row
    total_rows = view.document_count
    average = view.average_length
    idfs = [inverse_document_frequency(total_rows, item.matching_rows) for item in matches]
    rows = []
    for record in candidates:
        if not _eligible(record, scope, role):
            continue
        if not all(substring_matches(record.text, term.text) for term in plan.substrings):
            continue
        hits = tuple(
            (phrase_index, start, len(item.phrase.terms))
            for phrase_index, item in enumerate(matches)
            for start in item.occurrences[record.doc_id]
        )
        stats = [
            (idfs[phrase_index], len(item.occurrences[record.doc_id]))
            for phrase_index, item in enumerate(matches)
        ]
        rank = bm25(stats, record.length, average) if stats else 0.0
        rows.append(RankedRow(record, rank, hits, by_substring=bool(plan.substrings)))
    return rows

