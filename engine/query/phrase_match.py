"""The clear, naive phrase matcher: the oracle for every fast matcher.

Owns: the definition of "phrase P occurs at position i of a message" (tokenizers.md §2.3).
Must not touch: postings, indexes or scores. Cost: O(len(document) × len(phrase)).

A phrase of n terms occurs at i when term k equals the document term at i + k for every k;
when the phrase has `prefix=True`, its last term only needs to be a *prefix* of the
document term, compared on UTF-8 bytes as FTS5 compares them. An empty phrase occurs
nowhere.

FTS5 truncates every indexed term and every query term to its first 32,768 UTF-8 bytes
(`FTS5_MAX_TOKEN_SIZE`, tokenizers.md §1.7), so two terms that agree on those bytes are
equal to it. `term_matches` compares the truncated bytes, whether or not the analyzer
already truncated (truncating twice changes nothing).
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.query.ast import Phrase

MAX_TERM_BYTES = 32768


def term_bytes(term: str) -> bytes:
    """The UTF-8 bytes FTS5 keeps of a term (at most 32,768; may split a character).

    >>> len(term_bytes("é" * 20000))
    32768
    """
    return term.encode("utf-8", "surrogatepass")[:MAX_TERM_BYTES]


def term_matches(document_term: str, query_term: str, *, prefix: bool) -> bool:
    """Whether one document term satisfies one query term.

    >>> term_matches("communication", "communi", prefix=True)
    True
    >>> term_matches("communication", "communi", prefix=False)
    False
    """
    short = len(document_term) * 4 <= MAX_TERM_BYTES and len(query_term) * 4 <= MAX_TERM_BYTES
    if not prefix:
        return document_term == query_term if short else term_bytes(document_term) == term_bytes(query_term)
    return term_bytes(document_term).startswith(term_bytes(query_term))


def phrase_positions(document_terms: Sequence[str], phrase: Phrase) -> list[int]:
    """Every start position where `phrase` occurs in `document_terms` (ascending).

    >>> phrase_positions(["per", "session", "per", "sessions"], Phrase(("per", "session")))
    [0]
    >>> phrase_positions(["per", "session", "per", "sessions"], Phrase(("per", "session"), True))
    [0, 2]
    >>> phrase_positions(["a", "a", "a"], Phrase(("a", "a")))
    [0, 1]
    >>> phrase_positions(["a"], Phrase(()))
    []
    """
    size = len(phrase.terms)
    if size == 0:
        return []
    last = size - 1
    positions = []
    for start in range(len(document_terms) - size + 1):
        if all(
            term_matches(document_terms[start + k], phrase.terms[k], prefix=phrase.prefix and k == last)
            for k in range(size)
        ):
            positions.append(start)
    return positions
