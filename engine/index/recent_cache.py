"""A small least-recently-used cache of decoded file records.

Owns: keeping the last `capacity` values loaded by key and handing them back. Must not
touch: what the values are or where they come from (the caller passes the loader):
`engine.index.segment_rows` keeps text records in one, `engine.index.stored_terms`
term records.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

Key = TypeVar("Key")
Value = TypeVar("Value")


class RecentlyUsed(Generic[Key, Value]):
    """The values of the last `capacity` keys loaded.

    >>> cache = RecentlyUsed(2)
    >>> loads = []
    >>> load = lambda key: loads.append(key) or key * 10
    >>> [cache.get(key, load) for key in (1, 2, 1, 3, 2)], loads
    ([10, 20, 10, 30, 20], [1, 2, 3, 2])
    """

    __slots__ = ("_capacity", "_values")

    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        self._values: OrderedDict[Key, Value] = OrderedDict()

    def get(self, key: Key, load: Callable[[Key], Value]) -> Value:
        """The value of `key`, loaded with `load(key)` when it is not kept."""
        values = self._values
        value = values.get(key)
        if value is None:
            value = values[key] = load(key)
            if len(values) > self._capacity:
                values.popitem(last=False)
        else:
            values.move_to_end(key)
        return value
