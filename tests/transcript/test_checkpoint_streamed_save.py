"""The catalog checkpoint is saved a record at a time into the atomic write's temporary:
the file is the one `encode_catalog_file` encodes whole, and a save that stops half-way
leaves the old checkpoint in place and no temporary behind."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from engine.codec.catalog_file import decode_catalog_file, encode_catalog_file
from engine.config import EngineConfig
from engine.directory import Directory, FileDirectory, MemoryDirectory
from engine.errors import StoreError
from engine.model import SessionWindow
from engine.transcript.checkpoint import CHECKPOINT_NAME
from engine.transcript.store import TranscriptStore

SMALL_RECORDS = EngineConfig(log_roll_bytes=700, checkpoint_windows_per_record=2)
#: No log file is sealed, so no commit saves a checkpoint of its own.
ONE_LOG_FILE = EngineConfig(checkpoint_windows_per_record=2)


class StoppingWriter:
    """An atomic write that raises `error` at its `stop_at`-th write."""

    def __init__(self, writer: Any, stop_at: int, error: BaseException) -> None:
        self.writer, self.stop_at, self.error, self.writes = writer, stop_at, error, 0

    def __enter__(self) -> StoppingWriter:
        self.writer.__enter__()
        return self

    def __exit__(self, *exception: object) -> None:
        self.writer.__exit__(*exception)

    def write(self, data: bytes) -> None:
        self.writes += 1
        if self.writes == self.stop_at:
            raise self.error
        self.writer.write(data)

    def commit(self) -> None:
        self.writer.commit()


class StoppingFileDirectory(FileDirectory):
    stop: tuple[int, BaseException] | None = None

    def open_atomic(self, name: str) -> Any:
        writer = super().open_atomic(name)
        return writer if self.stop is None else StoppingWriter(writer, *self.stop)


class StoppingMemoryDirectory(MemoryDirectory):
    stop: tuple[int, BaseException] | None = None

    def open_atomic(self, name: str) -> Any:
        writer = super().open_atomic(name)
        return writer if self.stop is None else StoppingWriter(writer, *self.stop)


@pytest.fixture(params=["file", "memory"])
def directory(request: pytest.FixtureRequest, tmp_path: Path) -> Directory:
    if request.param == "file":
        return StoppingFileDirectory(tmp_path / "store")
    return StoppingMemoryDirectory()


def grow(store: TranscriptStore, rounds: int, start: int = 0) -> None:
    counter = itertools.count(start)
    for _ in range(rounds):
        number = next(counter)
        with store.transaction() as transaction:
            transaction.put_window(SessionWindow(f"w{number}", f"agent:a{number % 3}:main",
                                                 title=f"t{number}"))
            for seq in range(number % 4):
                transaction.append_event(f"w{number}", {"id": f"e{number}.{seq}"}, 1.0)


def checkpoint_bytes(directory: Directory) -> bytes:
    handle = directory.open_read(CHECKPOINT_NAME)
    try:
        return bytes(handle.read(0, handle.size()))
    finally:
        handle.close()


def leftovers(directory: Directory, tmp_path: Path) -> list[str]:
    if isinstance(directory, FileDirectory):
        return sorted(path.name for path in (tmp_path / "store").rglob(".tmp-*"))
    return []


def test_a_saved_checkpoint_is_the_file_encoded_whole(directory: Directory) -> None:
    store = TranscriptStore.create(directory, config=SMALL_RECORDS)
    grow(store, 15)
    store.rewrite_checkpoint()
    data = checkpoint_bytes(directory)
    store.close()
    assert encode_catalog_file(decode_catalog_file(data, "x"), windows_per_record=2) == data
    assert len(decode_catalog_file(data, "x").windows) == 15


@pytest.mark.parametrize("stop_at", [1, 2, 4, 14, -1])
@pytest.mark.parametrize("error", [KeyboardInterrupt(), StoreError("refused")])
def test_a_save_stopped_half_way_leaves_the_old_checkpoint(
    directory: Directory, tmp_path: Path, stop_at: int, error: BaseException,
) -> None:
    store = TranscriptStore.create(directory, config=ONE_LOG_FILE)
    grow(store, 6)
    store.rewrite_checkpoint()
    grow(store, 9, start=6)
    old = checkpoint_bytes(directory)
    assert len(decode_catalog_file(old, "x").windows) < 15
    # header, head, sealed, 15 windows in 8 records, keys, transactions, positions, footer
    pieces = 1 + 1 + 1 + 8 + 1 + 1 + 1 + 1
    assert isinstance(directory, (StoppingFileDirectory, StoppingMemoryDirectory))
    directory.stop = (stop_at if stop_at > 0 else pieces, error)
    with pytest.raises(type(error)):
        store.rewrite_checkpoint()
    assert checkpoint_bytes(directory) == old
    assert leftovers(directory, tmp_path) == []
    directory.stop = None
    store.rewrite_checkpoint()
    saved = decode_catalog_file(checkpoint_bytes(directory), "x")
    assert len(saved.windows) == 15
    store.close()
    reopened = TranscriptStore.open(directory, config=ONE_LOG_FILE)
    assert [window.session_id for window in reopened.windows()] == \
        [f"w{number}" for number in range(15)]
    reopened.close()
