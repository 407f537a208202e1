"""Helpers for tests that damage a store's files: fresh directories of either kind, and
copies of a store with some files replaced or dropped."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

from engine.directory import Directory, FileDirectory, MemoryDirectory


def directory_maker(kind: str, folder: Path) -> Callable[[], Directory]:
    """A function making a new empty directory per call: `"file"` ones under `folder`
    (a `FileDirectory` each) or `"memory"` ones."""
    if kind == "memory":
        return MemoryDirectory
    counter = itertools.count()
    return lambda: FileDirectory(folder / f"store-{next(counter)}")


def clone(source: Directory, target: Directory, edits: dict[str, bytes | None]) -> Directory:
    """Copy every store file of `source` into `target`, replacing (or, with None,
    dropping) those named in `edits`; the lock file is not copied."""
    for name in source.list_names():
        if name == "LOCK":
            continue
        data = edits.get(name, source.read_bytes(name))
        if data is not None:
            target.write_atomic(name, data)
    return target
