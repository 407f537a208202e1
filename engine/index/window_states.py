"""`WindowStates`: the index's per-window states, with a stamp that moves at every write.

Owns: the mapping from session id to `WindowIndexState` that an `InvertedIndex` keeps, and
its change stamp. Must not touch: what a state means or when it changes (the §8 rules
are `engine.index.lifecycle`'s and the backend's), storage, search.

Why a stamp. A state can change without any row changing (a reconcile of a window with
no indexable message, a window going dirty, a rebuild that keeps the same rows), so the
index's version (`engine.index.view.index_version`) does not see it. What a search
derives from the states (its scope, `engine.search.scope.ScopeCache`) is kept under the
stamp instead. Every write (`[key] = state`, `del`, `pop`, `popitem`, `clear`, `update`,
`setdefault`, `|=`) takes a new stamp from one process-wide counter, and so does a new
mapping: two different contents never share a stamp, even across mappings.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from typing import Any, Self

from engine.index.lifecycle import WindowIndexState

#: Stamps are unique in a process, across every `WindowStates`.
_STAMPS = itertools.count()


class WindowStates(dict[str, WindowIndexState]):
    """A dict of window states whose `stamp` changes at every write.

    >>> states = WindowStates({"w1": WindowIndexState(0, "m1")})
    >>> first = states.stamp
    >>> states["w2"] = WindowIndexState(needs_rebuild=True)
    >>> moved = states.stamp
    >>> moved != first, states.pop("w2").needs_rebuild, states.stamp != moved
    (True, True, True)
    >>> quiet = states.stamp
    >>> _ = states.get("w1"), len(states), dict(states)
    >>> states.stamp == quiet
    True
    """

    __slots__ = ("stamp",)

    def __init__(self, states: Mapping[str, WindowIndexState] | Iterable[Any] = (),
                 /, **named: WindowIndexState) -> None:
        super().__init__(states, **named)
        self.stamp = next(_STAMPS)

    def _moved(self) -> None:
        self.stamp = next(_STAMPS)

    def __setitem__(self, session_id: str, state: WindowIndexState) -> None:
        super().__setitem__(session_id, state)
        self._moved()

    def __delitem__(self, session_id: str) -> None:
        super().__delitem__(session_id)
        self._moved()

    def __ior__(self, other: Any) -> Self:  # type: ignore[override,misc]
        super().__ior__(other)
        self._moved()
        return self

    def pop(self, *arguments: Any) -> Any:
        """`dict.pop`, then a new stamp."""
        try:
            return super().pop(*arguments)
        finally:
            self._moved()

    def popitem(self) -> tuple[str, WindowIndexState]:
        """`dict.popitem`, then a new stamp."""
        try:
            return super().popitem()
        finally:
            self._moved()

    def clear(self) -> None:
        """`dict.clear`, then a new stamp."""
        super().clear()
        self._moved()

    def update(self, *arguments: Any, **named: Any) -> None:
        """`dict.update`, then a new stamp."""
        try:
            super().update(*arguments, **named)
        finally:
            self._moved()

    def setdefault(self, session_id: str, default: Any = None) -> Any:
        """`dict.setdefault`, then a new stamp."""
        try:
            return super().setdefault(session_id, default)
        finally:
            self._moved()
