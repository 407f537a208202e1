"""The values of an explanation as a teaching view reads them.

Owns: nothing of its own but the list of the values `explain` answers with, each the
stage's own: the query's plan and phrases (`engine.query.ast`), an excerpt's choice
(`engine.results.snippet`), bm25's terms and its idf floor (`engine.score.bm25`), the
hit explained (`engine.search.explain`), the partition that scored it
(`engine.store.explanation`).
Must not touch: how any of them is computed.
"""

from __future__ import annotations

from engine.query.ast import Phrase, QueryPlan
from engine.query.substring_term import SubstringTerm
from engine.results.snippet_explanation import SnippetExplanation
from engine.score.bm25 import IDF_FLOOR
from engine.score.bm25_explanation import Bm25Explanation
from engine.search.explain import HitExplanation, SearchExplanation
from engine.store.explanation import PartitionHitExplanation

__all__ = ["IDF_FLOOR", "Bm25Explanation", "HitExplanation", "PartitionHitExplanation",
           "Phrase", "QueryPlan", "SearchExplanation", "SnippetExplanation", "SubstringTerm"]
