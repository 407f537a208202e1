"""The fault layer itself does what its docstring says, so the sweeps built on it test
what they claim: the right call fails, with the error `FileDirectory` would raise, and
the bytes left behind are those a real file system leaves."""

from __future__ import annotations

import errno

import pytest

from engine.directory import MemoryDirectory
from engine.errors import FileSystemError
from tests.durability.faulty_directory import EIO, ENOSPC, SHORT, Fault, FaultyDirectory


def test_a_short_write_lands_half_and_reports_a_full_disk() -> None:
    directory = FaultyDirectory(MemoryDirectory(), Fault("write", 2, SHORT))
    handle = directory.open_append("log")
    handle.write(b"first")
    with pytest.raises(FileSystemError) as refused:
        handle.write(b"12345678")
    assert (str(refused.value), refused.value.errno) == (
        "memory:log: cannot write: No space left on device", errno.ENOSPC)
    handle.write(b"!")  # one-shot: the next write goes through
    assert directory.read_bytes("log") == b"first1234!"
    assert directory.fired == [(Fault("write", 2, SHORT), "memory:log")]


def test_a_refused_atomic_write_or_rename_leaves_the_old_file() -> None:
    for operation in ("write", "sync", "rename"):
        directory = FaultyDirectory(MemoryDirectory())
        directory.write_atomic("meta", b"old")
        directory.faults = (Fault(operation, directory.counts[operation] + 1, EIO),)
        with pytest.raises(FileSystemError, match="^memory:meta: cannot .*: Input/output error$"):
            directory.write_atomic("meta", b"new")
        assert directory.read_bytes("meta") == b"old"


def test_a_lasting_full_disk_refuses_every_write_until_space_returns() -> None:
    directory = FaultyDirectory(MemoryDirectory(), Fault("write", 2, ENOSPC,
                                                         until_space_returns=True))
    handle = directory.open_append("log")
    handle.write(b"a")
    for data in (b"b", b"c"):
        with pytest.raises(FileSystemError, match="No space left on device"):
            handle.write(data)
    with pytest.raises(FileSystemError, match="No space left on device"):
        directory.write_atomic("other", b"x")
    handle.sync()  # syncs and truncates need no space
    handle.truncate(1)
    directory.space_returns()
    handle.write(b"d")
    assert directory.read_bytes("log") == b"ad"


def test_the_crash_copy_is_taken_before_the_fault() -> None:
    directory = FaultyDirectory(MemoryDirectory(), Fault("sync", 2, EIO))
    handle = directory.open_append("log")
    handle.write(b"durable")
    handle.sync()
    assert directory.crash_at_fault() is None
    handle.write(b" not yet")
    with pytest.raises(FileSystemError, match="cannot sync: Input/output error"):
        handle.sync()
    crashed = directory.crash_at_fault()
    assert crashed is not None and crashed.read_bytes("log") == b"durable"
    assert directory.read_bytes("log") == b"durable not yet"
