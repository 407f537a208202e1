"""Refreshing the served backend before a method reads it: `refreshed`.

Owns: the test of whether a served backend reads a snapshot (`Refreshable`), made once
per backend class, and the refresh before a read. Must not touch: what a refresh reads
or skips (the backend's own `refresh`), the methods' params or results.

Why once per class: `Refreshable` is a runtime-checkable protocol, whose `isinstance`
lists its members on every call (about 14 microseconds here, on every request a server
answers); a backend class decides the answer, as `engine.backends.protocol`'s
`has_capability` says of every capability.
"""

from __future__ import annotations

from typing import TypeVar

from engine import Refreshable

#: Whether instances of a backend class are `Refreshable`, by class, once asked.
_REFRESHABLE_CLASSES: dict[type, bool] = {}

Served = TypeVar("Served")


def refreshed(backend: Served) -> Served:
    """`backend`, refreshed first when it reads a snapshot (each call then sees every
    commit made before it).

    >>> refreshed(None) is None
    True
    """
    kind = type(backend)
    refreshable = _REFRESHABLE_CLASSES.get(kind)
    if refreshable is None:
        refreshable = _REFRESHABLE_CLASSES[kind] = isinstance(backend, Refreshable)
    if refreshable:
        backend.refresh()  # type: ignore[attr-defined]
    return backend
