"""Posting lists: which documents hold a term, and at which token positions.

Owns: the in-memory shape of a posting list and the pure operations on it (merge
segments' lists, drop deleted documents). Must not touch: bytes (that is
`engine.codec.postings_file`), the term dictionary, scoring.

A *document* is one index row (one searchable message), named by its `doc_id`: the
insertion order of the row in the whole index, like the FTS5 rowid. Ids are never reused.

Invariants of a posting list (checked by `engine.index.check`): doc ids strictly
increase; every position list is non-empty and strictly increasing; every position is
below the document's length in tokens.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Posting:
    """One document's occurrences of one term: token positions, 0-based, increasing."""

    doc_id: int
    positions: tuple[int, ...]


def positions_by_term(terms: Sequence[str]) -> dict[str, list[int]]:
    """Group the token positions of one document's term sequence by term.

    >>> positions_by_term(["to", "be", "or", "not", "to", "be"])
    {'to': [0, 4], 'be': [1, 5], 'or': [2], 'not': [3]}
    """
    grouped: dict[str, list[int]] = {}
    for position, term in enumerate(terms):
        grouped.setdefault(term, []).append(position)
    return grouped


def concatenate(lists: Iterable[Sequence[Posting]]) -> list[Posting]:
    """Join posting lists of segments that cover increasing, disjoint doc-id ranges.

    >>> concatenate([[Posting(1, (0,))], [], [Posting(4, (2, 3))]])
    [Posting(doc_id=1, positions=(0,)), Posting(doc_id=4, positions=(2, 3))]
    """
    joined: list[Posting] = []
    for postings in lists:
        joined.extend(postings)
    return joined


def merge_sorted(lists: Iterable[Sequence[Posting]]) -> list[Posting]:
    """Merge posting lists whose doc-id ranges may interleave (same doc never twice).

    >>> merge_sorted([[Posting(3, (0,))], [Posting(1, (1,)), Posting(5, (0,))]])
    [Posting(doc_id=1, positions=(1,)), Posting(doc_id=3, positions=(0,)), Posting(doc_id=5, positions=(0,))]
    """
    joined = concatenate(lists)
    joined.sort(key=lambda posting: posting.doc_id)
    return joined


def without_deleted(postings: Sequence[Posting], deleted: Container[int]) -> list[Posting]:
    """The postings whose document is not in `deleted` (the tombstones).

    >>> without_deleted([Posting(1, (0,)), Posting(2, (0,))], {1})
    [Posting(doc_id=2, positions=(0,))]
    """
    return [posting for posting in postings if posting.doc_id not in deleted]
