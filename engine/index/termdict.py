"""The term dictionary: an ordered map from term to whatever a segment keeps for it.

Owns: exact, prefix and range lookup over sorted terms. It is the only module that
imports `sortedcontainers`, when the first dictionary is made: a store opened to read
makes none (its segments' terms are read from their files, `engine.index.stored_terms`), so
a search never loads it. Must not touch: postings, bytes, tokens.

Terms are compared as Python strings (code-point order). Because UTF-8 preserves
code-point order, this is also FTS5's byte order, and a prefix in code points is a prefix
in bytes: the FTS5 prefix query `"communi"*` selects exactly the terms returned by
`with_prefix("communi")`.

FTS5 keeps at most 32,768 UTF-8 bytes of a term (`FTS5_MAX_TOKEN_SIZE`, tokenizers.md
§1.7), at index time and at query time alike; `index_term` applies the same cut before a
term enters or is looked up in a dictionary. A cut inside a character leaves its first
bytes as lone surrogate escapes, so the key stays a `str`.

Invariant (checked by `engine.index.check`): `terms()` is strictly increasing.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from sortedcontainers import SortedDict

Value = TypeVar("Value")

MAX_TERM_BYTES = 32768


def index_term(term: str) -> str:
    """`term` cut to its first 32,768 UTF-8 bytes, as FTS5 indexes and looks it up.

    >>> len(index_term("a" * 40000)), index_term("short")
    (32768, 'short')
    >>> index_term("é" * 16384 + "x") == "é" * 16384
    True
    """
    if len(term) * 4 <= MAX_TERM_BYTES:
        return term
    data = term.encode("utf-8", "surrogatepass")
    if len(data) <= MAX_TERM_BYTES:
        return term
    return data[:MAX_TERM_BYTES].decode("utf-8", "surrogateescape")


class TermDictionary(Generic[Value]):
    """A sorted `term -> value` map with prefix lookup.

    >>> terms = TermDictionary({"communication": 1, "communi": 2, "common": 3, "zeta": 4})
    >>> list(terms.with_prefix("communi"))
    ['communi', 'communication']
    >>> terms.get("zeta"), terms.get("missing")
    (4, None)
    """

    __slots__ = ("_entries",)

    def __init__(self, entries: Iterable[tuple[str, Value]] | dict[str, Value] = ()) -> None:
        from sortedcontainers import SortedDict  # loaded by the first dictionary (docstring)

        self._entries: SortedDict = SortedDict(entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, term: object) -> bool:
        return term in self._entries

    def get(self, term: str) -> Value | None:
        """The value of `term`, or None. O(1) (hash lookup)."""
        return self._entries.get(term)

    def set(self, term: str, value: Value) -> None:
        """Insert or replace `term`. O(log n)."""
        self._entries[term] = value

    def setdefault(self, term: str, default: Value) -> Value:
        """The value of `term`, inserting `default` first when absent."""
        return self._entries.setdefault(term, default)

    def with_prefix(self, prefix: str) -> Iterator[str]:
        """Every term starting with `prefix`, in order. O(log n + matches).

        >>> list(TermDictionary({"a": 0, "ab": 0, "abc": 0, "b": 0}).with_prefix("ab"))
        ['ab', 'abc']
        """
        for term in self._entries.irange(minimum=prefix):
            if not term.startswith(prefix):
                return
            yield term

    def terms(self) -> Iterator[str]:
        """Every term, in increasing order."""
        return iter(self._entries.keys())

    def items(self) -> Iterator[tuple[str, Value]]:
        """Every `(term, value)`, in increasing term order."""
        return iter(self._entries.items())
