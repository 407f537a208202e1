"""Phrase matching over posting lists with positions: which rows hold a phrase, and where.

Owns: turning one query phrase (its terms, and whether its last term is a prefix) into
`{doc_id: [start positions]}` over the whole live index. Must not touch: scope, roles,
ranking, snippets (the search stage does those), or the query policy that makes phrases.

FTS5 semantics (tokenizers.md §2.3): a phrase of k tokens matches at position p when
token i of the phrase is at position p + i for every i; instances may overlap
(`"a a"` occurs twice in `a a a`). With the prefix flag, the last phrase token matches
any term that starts with it. A phrase of zero tokens matches nothing.

Cost: for a phrase of k tokens, reading k posting lists (for a prefix token, the lists of
every term with that prefix, merged) and intersecting them by doc id, then by position:
O(sum of list lengths + positions in the intersected documents). The clear oracle is
`engine.query.phrase_match.phrase_positions` over each row's terms, which tests compare
with this function under hypothesis.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from engine.index.postings import Posting
from engine.index.termdict import index_term


class PostingSource(Protocol):
    """The two lookups matching needs (an `InvertedIndex` provides them)."""

    def postings(self, term: str) -> list[Posting]:
        """The live posting list of `term`."""
        ...

    def terms_with_prefix(self, prefix: str) -> list[str]:
        """Every term starting with `prefix`."""
        ...


def token_positions(source: PostingSource, term: str, *, prefix: bool) -> dict[int, list[int]]:
    """`{doc_id: sorted positions}` of one phrase token (all prefix completions if `prefix`).

    The token is cut to FTS5's 32,768 bytes first (`termdict.index_term`).
    """
    term = index_term(term)
    if not prefix:
        return {posting.doc_id: list(posting.positions) for posting in source.postings(term)}
    merged: dict[int, list[int]] = {}
    for completion in source.terms_with_prefix(term):
        for posting in source.postings(completion):
            merged.setdefault(posting.doc_id, []).extend(posting.positions)
    for positions in merged.values():
        positions.sort()
    return merged


def phrase_occurrences(
    source: PostingSource, terms: Sequence[str], *, prefix: bool = False
) -> dict[int, list[int]]:
    """`{doc_id: start positions}` of every instance of the phrase `terms`.

    >>> from engine.index.inverted_index import InvertedIndex
    >>> from engine.model import IndexEntry
    >>> index = InvertedIndex()
    >>> _ = index.add_entry(IndexEntry("w", "m1", "user", 0, "", 0), ["a", "a", "a", "b"])
    >>> _ = index.add_entry(IndexEntry("w", "m2", "user", 0, "", 1), ["abc", "b"])
    >>> phrase_occurrences(index, ["a", "a"])
    {0: [0, 1]}
    >>> phrase_occurrences(index, ["a", "b"], prefix=True), phrase_occurrences(index, ["a"], prefix=True)
    ({0: [2]}, {0: [0, 1, 2], 1: [0]})
    >>> phrase_occurrences(index, [])
    {}
    """
    if not terms:
        return {}
    last = len(terms) - 1
    per_token = [
        token_positions(source, term, prefix=prefix and index == last)
        for index, term in enumerate(terms)
    ]
    # Intersect by document, starting from the rarest token.
    rarest = min(per_token, key=len)
    candidates = [doc_id for doc_id in rarest if all(doc_id in token for token in per_token)]
    found: dict[int, list[int]] = {}
    for doc_id in sorted(candidates):
        starts = per_token[0][doc_id]
        if len(per_token) > 1:
            later = [set(token[doc_id]) for token in per_token[1:]]
            starts = [
                start
                for start in starts
                if all(start + offset in positions for offset, positions in enumerate(later, 1))
            ]
        if starts:
            found[doc_id] = starts
    return found
