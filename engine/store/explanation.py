"""What a partitioned store's `explain` answers: the partitions' explanations, each hit
labelled with the partition (agent) whose statistics scored it.

Owns: the two explanation values of a store of several partitions. Must not touch: how a
partition explains its own hits (`engine.search.explain`) or how hits are merged
(`engine.search.merge`; `engine.store.fan_out.explain_search`, which
`PartitionedSnapshotStore.explain` runs, labels each partition's hits, then merges them).
Kept apart from `engine.store.fan_out` so that a search, which never explains, does not
define these classes at start-up.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engine.model import SearchHit
    from engine.query.ast import QueryPlan
    from engine.score.bm25_explanation import Bm25Explanation
    from engine.search.explain import HitExplanation


@dataclass(frozen=True, slots=True)
class PartitionHitExplanation:
    """One explained hit and the partition whose statistics scored it (its `doc_id` is
    that partition's)."""

    partition: str
    explanation: HitExplanation

    @property
    def hit(self) -> SearchHit:
        """The hit."""
        return self.explanation.hit

    @property
    def doc_id(self) -> int:
        """The hit's row in its partition's index."""
        return self.explanation.doc_id

    @property
    def bm25(self) -> Bm25Explanation | None:
        """Its bm25 inputs (N, n, avgdl of its partition), None for a substring hit."""
        return self.explanation.bm25

    @property
    def snippet_lines(self) -> tuple[str, ...]:
        """How its excerpt window was chosen."""
        return self.explanation.snippet_lines

    @property
    def excerpt(self) -> Any:
        """The excerpt choice itself (`HitExplanation.excerpt`)."""
        return self.explanation.excerpt

    def to_json(self) -> dict[str, Any]:
        """The hit's explanation as JSON plus `partition` (the agent id)."""
        return {**self.explanation.to_json(), "partition": self.partition}


@dataclass(frozen=True, slots=True)
class PartitionedExplanation:
    """A store-level search explained: the plan, whether any partition retried CJK terms
    as substrings, `truncated` as the search reports it, and every hit with its partition."""

    plan: QueryPlan
    retried: bool
    truncated: bool
    hits: tuple[PartitionHitExplanation, ...]

    def to_json(self) -> dict[str, Any]:
        """`SearchExplanation.to_json` of the same values, each hit with its `partition`."""
        from engine.search.explain import SearchExplanation

        value = SearchExplanation(self.plan, self.retried, self.truncated,
                                  tuple(item.explanation for item in self.hits)).to_json()
        value["hits"] = [item.to_json() for item in self.hits]
        return value
