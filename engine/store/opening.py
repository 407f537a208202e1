"""Opening a partitioned store: making a new one, opening one, and opening a state folder
OpenClaw wrote.

Owns: which store class partitions of a kind get (`store_class`: `PartitionedSnapshotStore`
over partitions that read snapshots and explain, else `PartitionedStore`), and the three
ways to get a store over a folder (`create_partitioned`, `open_partitioned`,
`open_openclaw_state`), each releasing the folder's lock again when the store cannot be
made. Must not touch: the checks of a command's store path and which backend a folder
holds (`engine.store.registry`, which calls these), the folders and their root
metadata (`engine.store.layout`), what the store does once open (`engine.store.partitioned`).

Why apart. The store's classes say what a store does once it is open; which of them a
folder gets, and over which folders (a store's, or an OpenClaw state's), is decided
once, here, before any of it runs.

An OpenClaw state (`open_openclaw_state`): a state folder the real OpenClaw wrote opens
read-only as a partitioned store of SQLite partitions (`OpenClawStatePartitions`;
`engine.store.layout` says what is read and that not a byte of the state changes). A
writer, a transaction or a new partition is refused with a `StoreError` naming the
state folder.
"""

from __future__ import annotations

import errno
from pathlib import Path

from engine.backends.protocol import Explainable
from engine.config import EngineConfig
from engine.errors import FileSystemError, StoreError, StoreLocked
from engine.store.layout import (
    JOURNAL_NAME,
    FolderPartitions,
    OpenClawStatePartitions,
    PartitionKind,
)
from engine.store.partitioned import PartitionedSnapshotStore, PartitionedStore


def store_class(kind: PartitionKind) -> type[PartitionedStore]:
    """The partitioned store class for partitions of `kind` (its capabilities follow
    theirs)."""
    if kind.reads_snapshots and isinstance(kind.backend_class, type) and issubclass(
            kind.backend_class, Explainable):
        return PartitionedSnapshotStore
    return PartitionedStore


def create_partitioned(root: Path, kind: PartitionKind,
                       config: EngineConfig | None = None) -> PartitionedStore:
    """Make an empty partitioned store in folder `root`, opened as the writer."""
    return store_class(kind)(FolderPartitions.create(root, kind), writer=True, config=config)


def open_partitioned(root: Path, kind: PartitionKind, *, writer: bool,
                     accept_missing: bool = False,
                     config: EngineConfig | None = None) -> PartitionedStore:
    """Open the partitioned store in folder `root` (`accept_missing`: see
    `FolderPartitions.open`). A reader that finds a transaction across agents left
    unfinished (`engine.store.commit_journal`) first finishes it as a writer would, when
    it can take the writer's lock and write; otherwise it reads the store as it is, and
    its problems name the journal."""
    if not writer and (root / JOURNAL_NAME).exists():
        _finish_as_writer(root, kind, accept_missing, config)
    space = FolderPartitions.open(root, kind, writer=writer, accept_missing=accept_missing)
    try:
        return store_class(kind)(space, writer=writer, config=config)
    except BaseException:
        space.close()
        raise


def _finish_as_writer(root: Path, kind: PartitionKind, accept_missing: bool,
                      config: EngineConfig | None) -> None:
    """Open the store as its writer for a moment, so that it finishes an interrupted
    commit; a live writer (it finishes it itself) or no write access leaves it."""
    try:
        open_partitioned(root, kind, writer=True, accept_missing=accept_missing,
                         config=config).close()
    except (StoreLocked, PermissionError):
        pass  # a live writer finishes it; a reader without write access reads as it is
    except FileSystemError as error:
        if error.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
            raise


def open_openclaw_state(root: Path, kind: PartitionKind, *, writer: bool = False) -> PartitionedStore:
    """Open the state OpenClaw wrote in folder `root`, read-only, as a partitioned store
    of `kind` (the SQLite partition); `writer=True` is refused, naming `root`."""
    space = OpenClawStatePartitions(root, kind)
    if writer:
        raise StoreError(space.read_only_reason())
    return store_class(kind)(space, writer=False)
