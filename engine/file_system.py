"""The operating system's file calls that every on-disk writer shares: errors named, folders
made and made durable.

Owns: turning an `OSError` into a `FileSystemError` naming the file and the operation
(`os_errors`), creating missing folders (`make_folders`) and fsyncing a folder so that the
names created or renamed in it are durable (`sync_folder`, `sync_new_folders`). Must not
touch: which files exist or what they hold (`engine.directory` names, reads and writes
files; the stores and backends above it decide which), and anything but `engine.errors`.

They live apart from `engine.directory` because the partitioned store's root and the
SQLite backend's database folder make their folder names durable the same way, without
being a `Directory` of named byte files.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from engine.errors import FileSystemError


@contextmanager
def os_errors(location: str, action: str) -> Iterator[None]:
    """Turn an `OSError` of the block into a `FileSystemError` naming `location` and
    `action` ("write", "sync", ...): every file operation of `FileDirectory` runs in one,
    so a full disk or an I/O error reaches the caller as one line naming the file."""
    try:
        yield
    except OSError as error:
        raise FileSystemError(location, action, error.errno,
                              error.strerror or str(error)) from None


def sync_folder(path: Path) -> None:
    """fsync a folder so that names created or renamed in it are durable
    (`FileSystemError` naming the folder when the system refuses)."""
    with os_errors(str(path), "sync the folder"):
        descriptor = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


def make_folders(folder: Path) -> list[Path]:
    """Create `folder` and its missing ancestors; return the ones created, outermost first
    (`FileSystemError` naming the folder when one cannot be made)."""
    missing = []
    while not folder.is_dir():
        missing.append(folder)
        folder = folder.parent
    for created in reversed(missing):
        with os_errors(str(created), "create the folder"):
            created.mkdir(exist_ok=True)
    return list(reversed(missing))


def sync_new_folders(created: list[Path]) -> None:
    """Make the names of newly created folders durable (fsync each one's parent)."""
    for folder in created:
        sync_folder(folder.parent)
