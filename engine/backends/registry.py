"""Which backends exist, and how a store folder is created for one and reopened.

Owns: the mapping from a backend name to its class and to where its partition sits in
an agent's folder, the default backend of a new store, the rule that a store folder
remembers the backend it was created for, and the refusal of the old single-index
layout. Must not touch: any backend's internals or the partitioned store's routing
(`engine.backends.partitioned`); the classes are imported lazily so that a missing
optional dependency only matters when that backend is chosen.

Every store is partitioned: one partition per agent, as OpenClaw keeps one database per
agent (`engine.backends.partitioned`), whichever backend the partitions are;
`open_backend` returns the partitioned store, so every caller gets partitions. Each
backend class provides, for one partition in one folder:
* `create(path) -> Backend`: make a new partition at `path` and open it as writer;
* `open(path, *, writer=False) -> Backend`: open an existing partition;
* `claims(path) -> bool`: whether the folder holds a partition of this backend.

Old stores kept every agent in one index (a `store.meta` of kind `store` with
`transcripts/` at the folder's root, or `session-search.sqlite` there). They are refused
(`UnsupportedVersion`) with a message saying to re-import, instead of being opened as
one partition: one partition holding every agent would score with global statistics,
which is what the partitions exist to avoid, and its agents could not be told apart
from the partitions the store would add next to it.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path

from engine.backends.partitioned import (
    AGENTS_FOLDER,
    PartitionedStore,
    PartitionKind,
    create_partitioned,
    is_partitioned_store,
    open_partitioned,
    read_root_meta,
)
from engine.codec import FILE_KINDS
from engine.errors import StoreError, UnsupportedVersion, UsageError

#: name -> "module:Class", in the order they are shown and probed.
BACKEND_CLASSES: dict[str, str] = {
    "reference": "engine.backends.reference:ReferenceBackend",
    "sqlite": "engine.backends.sqlite_fts5:SqliteBackend",
}

#: name -> the folder of a partition inside `agents/<agentId>/` ("" is that folder).
PARTITION_SUBFOLDERS: dict[str, str] = {
    "reference": "",
    "sqlite": "agent",
}

BACKEND_NAMES: tuple[str, ...] = tuple(BACKEND_CLASSES)

#: The backend of a new store when none is named.
DEFAULT_BACKEND = "reference"

#: The database an old single-index SQLite store kept at its root.
SINGLE_INDEX_DATABASE = "session-search.sqlite"


def backend_class(name: str) -> type:
    """The class implementing backend `name` (UsageError for an unknown name)."""
    try:
        target = BACKEND_CLASSES[name]
    except KeyError:
        valid = ", ".join(BACKEND_NAMES)
        raise UsageError(f"unknown backend {name!r}; choose one of: {valid}") from None
    module_name, class_name = target.split(":")
    return getattr(importlib.import_module(module_name), class_name)


def partition_kind(name: str) -> PartitionKind:
    """Backend `name` as the partitions of a store."""
    return PartitionKind(name, backend_class(name), PARTITION_SUBFOLDERS[name])


def single_index_problem(directory: Path) -> str | None:
    """Why `directory` holds no store this build opens although it holds one, or None:
    it is one partition of a store, or a store of the old single-index layout."""
    for agent_folder in (directory, directory.parent):
        root = agent_folder.parent.parent
        if agent_folder.parent.name == AGENTS_FOLDER and is_partitioned_store(root):
            return (f"{directory}: this is the partition of agent {agent_folder.name!r} of "
                    f"the store {root}; open that store instead")
    meta = directory / "store.meta"
    old_reference = meta.is_file() and meta.read_bytes()[:8] == FILE_KINDS["store"].magic
    if old_reference or (directory / SINGLE_INDEX_DATABASE).is_file():
        return (f"{directory}: this store keeps every agent in one index, a layout this "
                "build no longer opens (each agent is a partition of its own, as in "
                "OpenClaw); re-import its sources into a new store: session-search import "
                "--store NEW SOURCE...")
    return None


def detect_backend(path: str | os.PathLike[str]) -> str:
    """The name of the backend whose store lives at `path` (StoreError if none does;
    `UnsupportedVersion` for a store of the old single-index layout)."""
    directory = Path(path)
    if not directory.is_dir():
        raise StoreError(f"{directory}: no store here (not a directory)")
    if is_partitioned_store(directory):
        name = read_root_meta(directory).backend
        if name not in BACKEND_CLASSES:
            raise StoreError(f"{directory}: store of an unknown backend {name!r}")
        return name
    problem = single_index_problem(directory)
    if problem is not None:
        raise UnsupportedVersion(problem)
    if (directory / "store.meta").is_file():
        read_root_meta(directory)  # names the damage (CorruptFile)
    raise StoreError(f"{directory}: no session-search store here")


def existing_backend(path: str | os.PathLike[str]) -> str | None:
    """The backend of the store at `path`; None for an absent or empty folder (where a new
    store may be made). A file, or a non-empty folder holding no store, is a `UsageError`;
    a store of the old single-index layout is `UnsupportedVersion`."""
    directory = Path(path)
    if not directory.exists():
        return None
    if not directory.is_dir():
        raise UsageError(f"{directory}: not a folder")
    if not any(directory.iterdir()):
        return None
    try:
        return detect_backend(directory)
    except UnsupportedVersion:
        raise
    except StoreError:
        raise UsageError(f"{directory}: folder is not empty and holds no store") from None


def open_backend(
    path: str | os.PathLike[str],
    *,
    backend: str | None = None,
    create: bool = False,
    writer: bool = False,
) -> PartitionedStore:
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
            return open_partitioned(directory, partition_kind(name), writer=True)
        return create_partitioned(directory, partition_kind(name))
    name = detect_backend(directory)
    if backend is not None and backend != name:
        raise UsageError(f"{directory}: store was created for backend {name!r}, not {backend!r}")
    return open_partitioned(directory, partition_kind(name), writer=writer)
