"""Which backends exist, and how a store directory is created for one and reopened.

Owns: the mapping from a backend name to its class, the default backend of a new store,
and the rule that a store directory remembers the backend it was created for. Must not touch: any backend's internals; the
classes are imported lazily so that a missing optional dependency (psycopg) only matters
when that backend is chosen.

Each backend class provides:
* `create(path) -> Backend`: make a new store at `path` (a directory) and open it as writer;
* `open(path, *, writer=False) -> Backend`: open an existing store;
* `claims(path) -> bool`: whether the directory holds a store of this backend.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path

from engine.backends.protocol import Backend
from engine.errors import StoreError, UsageError

#: name -> "module:Class", in the order they are shown and probed.
BACKEND_CLASSES: dict[str, str] = {
    "reference": "engine.backends.reference:ReferenceBackend",
    "sqlite": "engine.backends.sqlite_fts5:SqliteBackend",
}

BACKEND_NAMES: tuple[str, ...] = tuple(BACKEND_CLASSES)

#: The backend of a new store when none is named.
DEFAULT_BACKEND = "reference"


def backend_class(name: str) -> type:
    """The class implementing backend `name` (UsageError for an unknown name)."""
    try:
        target = BACKEND_CLASSES[name]
    except KeyError:
        valid = ", ".join(BACKEND_NAMES)
        raise UsageError(f"unknown backend {name!r}; choose one of: {valid}") from None
    module_name, class_name = target.split(":")
    return getattr(importlib.import_module(module_name), class_name)


def detect_backend(path: str | os.PathLike[str]) -> str:
    """The name of the backend whose store lives at `path` (StoreError if none does)."""
    directory = Path(path)
    if not directory.is_dir():
        raise StoreError(f"{directory}: no store here (not a directory)")
    for name in BACKEND_NAMES:
        if backend_class(name).claims(directory):
            return name
    raise StoreError(f"{directory}: no session-search store here")


def existing_backend(path: str | os.PathLike[str]) -> str | None:
    """The backend of the store at `path`; None for an absent or empty folder (where a new
    store may be made). A file, or a non-empty folder holding no store, is a `UsageError`."""
    directory = Path(path)
    if not directory.exists():
        return None
    if not directory.is_dir():
        raise UsageError(f"{directory}: not a folder")
    if not any(directory.iterdir()):
        return None
    try:
        return detect_backend(directory)
    except StoreError:
        raise UsageError(f"{directory}: folder is not empty and holds no store") from None


def open_backend(
    path: str | os.PathLike[str],
    *,
    backend: str | None = None,
    create: bool = False,
    writer: bool = False,
) -> Backend:
    """Open the store at `path`; with `create=True` make it first (for `backend`).

    Opening an existing store with a different `backend` than it was created for is an
    error that names both.
    """
    directory = Path(path)
    if create:
        name = backend or DEFAULT_BACKEND
        if directory.exists() and any(directory.iterdir()):
            existing = detect_backend(directory)
            if existing != name:
                raise UsageError(
                    f"{directory}: store was created for backend {existing!r}, not {name!r}"
                )
            return backend_class(name).open(directory, writer=True)
        return backend_class(name).create(directory)
    name = detect_backend(directory)
    if backend is not None and backend != name:
        raise UsageError(f"{directory}: store was created for backend {name!r}, not {backend!r}")
    return backend_class(name).open(directory, writer=writer)
