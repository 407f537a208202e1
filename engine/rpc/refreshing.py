"""Refreshing the served backend before a method reads it: `refreshed`.

Owns: the refresh before a read, for a backend that reads a snapshot (`Refreshable`).
Must not touch: what a refresh reads or skips (the backend's own `refresh`), the methods'
params or results.

Why `has_capability` and not `isinstance`: `Refreshable` is a runtime-checkable protocol,
whose `isinstance` lists its members on every call, on every request a server answers; a
backend class decides the answer, and `has_capability` asks once per class.
"""

from __future__ import annotations

from typing import TypeVar

from engine import Refreshable, has_capability

Served = TypeVar("Served")


def refreshed(backend: Served) -> Served:
    """`backend`, refreshed first when it reads a snapshot (each call then sees every
    commit made before it).

    >>> refreshed(None) is None
    True
    """
    if has_capability(backend, Refreshable):
        backend.refresh()  # type: ignore[attr-defined]
    return backend
