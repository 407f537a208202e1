"""The Directory contract, run against both implementations (file and memory)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engine.directory import Directory, FileDirectory, MemoryDirectory
from engine.errors import StoreError, StoreLocked


@pytest.fixture(params=["file", "memory"])
def directory(request: pytest.FixtureRequest, tmp_path: Path) -> Directory:
    if request.param == "file":
        return FileDirectory(tmp_path / "store")
    return MemoryDirectory()


def test_append_read_and_list(directory: Directory) -> None:
    handle = directory.open_append("a/b.log")
    handle.write(b"hello ")
    handle.write(b"world")
    handle.flush()
    assert handle.size() == 11
    assert directory.read_bytes("a/b.log") == b"hello world"
    assert directory.read_bytes("a/b.log", 6) == b"world"
    assert directory.read_bytes("a/b.log", 2, 3) == b"llo"
    assert directory.size("a/b.log") == 11
    handle.close()
    directory.write_atomic("top", b"x")
    assert directory.list_names() == ["a/b.log", "top"]
    assert directory.list_names("a/") == ["a/b.log"]
    assert directory.exists("top") and not directory.exists("nothing")


def test_reopened_append_continues_at_the_end(directory: Directory) -> None:
    first = directory.open_append("f")
    first.write(b"abc")
    first.sync()
    first.close()
    second = directory.open_append("f")
    assert second.size() == 3
    second.write(b"d")
    second.close()
    assert directory.read_bytes("f") == b"abcd"


def test_truncate_then_append(directory: Directory) -> None:
    handle = directory.open_append("f")
    handle.write(b"0123456789")
    handle.truncate(4)
    handle.write(b"xy")
    handle.flush()
    assert handle.size() == 6
    assert directory.read_bytes("f") == b"0123xy"


def test_write_atomic_replaces_and_remove_deletes(directory: Directory) -> None:
    directory.write_atomic("m", b"one")
    directory.write_atomic("m", b"two!")
    assert directory.read_bytes("m") == b"two!"
    directory.remove("m")
    assert not directory.exists("m")
    with pytest.raises(StoreError, match="no such store file"):
        directory.remove("m")
    with pytest.raises(StoreError, match="no such store file"):
        directory.read_bytes("m")


@pytest.mark.parametrize("name", ["", "/abs", "a/../b", "a//b", "."])
def test_invalid_names_are_refused(directory: Directory, name: str) -> None:
    with pytest.raises(StoreError, match="invalid store file name"):
        directory.exists(name)


def test_second_lock_is_refused_until_released(directory: Directory) -> None:
    lock = directory.acquire_lock("LOCK")
    with pytest.raises(StoreLocked, match="locked by another writer") as refused:
        directory.acquire_lock("LOCK")
    assert "LOCK" in str(refused.value)
    lock.release()
    lock.release()  # idempotent
    directory.acquire_lock("LOCK").release()


def test_file_lock_names_the_holder_pid(tmp_path: Path) -> None:
    lock = FileDirectory(tmp_path).acquire_lock("LOCK")
    try:
        with pytest.raises(StoreLocked) as refused:
            FileDirectory(tmp_path).acquire_lock("LOCK")
        assert str(refused.value) == (
            f"{tmp_path / 'LOCK'}: the store is locked by another writer (pid {os.getpid()})"
        )
    finally:
        lock.release()


def test_memory_crash_copy_keeps_only_synced_bytes() -> None:
    directory = MemoryDirectory()
    handle = directory.open_append("f")
    handle.write(b"durable")
    handle.sync()
    handle.write(b" lost")
    directory.write_atomic("atomic", b"kept")
    crashed = directory.crash_copy()
    assert crashed.read_bytes("f") == b"durable"
    assert crashed.read_bytes("atomic") == b"kept"
    assert directory.read_bytes("f") == b"durable lost"
    crashed.acquire_lock("LOCK").release()


def test_file_directory_lists_nothing_before_creation(tmp_path: Path) -> None:
    directory = FileDirectory(tmp_path / "absent")
    assert directory.list_names() == []
    assert not directory.exists("store.meta")


def test_leftover_temporaries_are_not_listed(tmp_path: Path) -> None:
    directory = FileDirectory(tmp_path)
    directory.write_atomic("sub/real", b"1")
    (tmp_path / "sub" / ".tmp-real-999").write_bytes(b"half")
    assert directory.list_names() == ["sub/real"]
