"""The total orders of behaviour.md §5.4 over ranked rows.

Owns: `RankedRow` (a matching row with its rank and phrase instances), SQLite's cross-type
value order, the relevance and recent keys, and taking the first rows of an order. Must
not touch: matching, scoring formulas, the index (rows arrive ranked; this module only
compares them).

* relevance = rank ASC (bm25 is negative, lower is better), timestamp DESC (SQLite type
  order: NULL < numbers < text), message id ASC (UTF-8 bytes), then session id and doc id
  ASC to settle ties;
* recent = timestamp DESC, doc id (insertion order) DESC.

Upstream orders relevance by the first three keys only; the session id and the doc id make
ties deterministic (the SQLite backend adds the same session-id key).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable
from functools import total_ordering
from typing import Any, NamedTuple

from engine.index.documents import DocumentRecord


def sqlite_value_key(value: Any) -> tuple[int, Any]:
    """SQLite's cross-type order of a column value: NULL < numbers < text (BINARY).

    >>> sorted([None, "10", 3, 2.5], key=sqlite_value_key)
    [None, 2.5, 3, '10']
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return (0, 0)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (1, value)
    if isinstance(value, str):
        return (2, value.encode("utf-8", "surrogatepass"))
    return (3, bytes(value))


@total_ordering
class Descending:
    """Wraps a sort key so that ascending sorts put larger values first.

    >>> sorted([1, 3, 2], key=Descending)
    [3, 2, 1]
    """

    __slots__ = ("key",)

    def __init__(self, key: Any) -> None:
        self.key = key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Descending) and self.key == other.key

    def __lt__(self, other: Descending) -> bool:
        return other.key < self.key


class RankedRow(NamedTuple):
    """One matching row with its rank and its phrase instances (for the snippet).

    `phrase_hits` are `(phrase index, start position, phrase length)`; `by_substring`
    says the plan held substrings (the CJK retry), so a row without phrase instances gets
    the substring excerpt.

    A `NamedTuple`, not a frozen dataclass: a search makes one for each row it may
    return, and the fast path makes them with `tuple.__new__` (one C call) where a frozen
    dataclass sets each field through `object.__setattr__`. (A row now also equals the
    plain tuple of its fields; nothing compares one with a tuple.)
    """

    record: DocumentRecord
    rank: float
    phrase_hits: tuple[tuple[int, int, int], ...]
    by_substring: bool = False


def relevance_key(row: RankedRow) -> tuple:
    """rank ASC, timestamp DESC, message id ASC, session id ASC (UTF-8 bytes), doc id ASC."""
    record = row.record
    return (
        row.rank,
        Descending(sqlite_value_key(record.timestamp)),
        record.message_id.encode("utf-8", "surrogatepass"),
        record.session_id.encode("utf-8", "surrogatepass"),
        record.doc_id,
    )


def plain_relevance_key(row: RankedRow) -> tuple:
    """`relevance_key` for rows whose timestamps are all plain numbers (`plain_timestamp`):
    the same order over such rows, from keys made without wrappers or encodings.

    Why the same: the timestamps' SQLite keys are `(1, value)`, so `Descending` of them
    compares as the negated values do (negating an int or a double is exact), and
    strings compare by code point, as their UTF-8 bytes do (surrogates included: UTF-8,
    `surrogatepass` too, keeps the order of code points); equal keys stay equal.
    """
    record = row.record
    return (row.rank, -record.timestamp, record.message_id, record.session_id, record.doc_id)


def plain_timestamp(value: Any) -> bool:
    """Whether a timestamp is an int or a double that is not NaN (what
    `plain_relevance_key` can negate); `bool` is not, as `sqlite_value_key` says.

    >>> [plain_timestamp(value) for value in (3, 2.5, float("inf"), float("nan"), None, True)]
    [True, True, True, False, False, False]
    """
    kind = value.__class__
    return kind is int or (kind is float and value == value)


def recent_key(row: RankedRow) -> tuple:
    """timestamp DESC, doc id (insertion order) DESC."""
    return (Descending(sqlite_value_key(row.record.timestamp)), -row.record.doc_id)


def order_rows(rows: Iterable[RankedRow], order: str, count: int | None = None) -> list[RankedRow]:
    """The rows in the request's total order; only the first `count` when given.

    `heapq.nsmallest` equals `sorted(...)[:count]` (the keys are a total order) in
    O(n log count) instead of O(n log n). Rows whose timestamps are all plain numbers
    are compared by `plain_relevance_key`, the same order as `relevance_key` (its oracle
    in `tests/search/test_order_keys.py`).
    """
    if order == "recent":
        key = recent_key
    else:
        rows = list(rows)
        key = (plain_relevance_key
               if all(plain_timestamp(row.record.timestamp) for row in rows) else relevance_key)
    if count is None:
        return sorted(rows, key=key)
    return heapq.nsmallest(count, rows, key=key)
