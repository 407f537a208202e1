"""The term dictionary: an ordered map from term to whatever a segment keeps for it.

Owns: exact, prefix and range lookup over sorted terms. It is the only module that
imports `sortedcontainers`. Must not touch: postings, bytes, tokens.

Terms are compared as Python strings (code-point order). Because UTF-8 preserves
code-point order, this is also FTS5's byte order, and a prefix in code points is a prefix
in bytes: the FTS5 prefix query `"communi"*` selects exactly the terms returned by
`with_prefix("communi")`.

Invariant (checked by `engine.index.check`): `terms()` is strictly increasing.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Generic, TypeVar

from sortedcontainers import SortedDict

Value = TypeVar("Value")


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
