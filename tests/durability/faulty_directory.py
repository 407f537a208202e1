"""A `Directory` that fails on purpose: the file system refusing a store's writes.

Owns: `FaultyDirectory`, a wrapper of any `Directory` (usually a `MemoryDirectory`, whose
`crash_copy()` then gives what a power cut at the fault would leave) that counts the
operations a store asks of it and fails the ones a test names, and `Fault`, what fails
and when. Must not touch: what a store does about a failure (that is what the tests
check).

Why it lives in the tests and not in `engine/`: nothing in the product injects failures;
an engine module would be code that only tests run, and a switch in the product that
makes writes fail is a hazard. It implements the engine's `Directory` protocol, so every
store and index accepts it unchanged.

What can fail, counted over the whole directory (`counts`, 1-based `at`):

* `write`: bytes handed to a file, by an append handle's `write` or as the data of a
  `write_atomic` (or of an `open_atomic` file, counted once, at its commit). `ENOSPC`
  (a full disk) and `EIO` refuse the call: nothing of it lands. `SHORT` is a short
  write on a disk that just filled: the first half of the bytes land (an append) and
  the call fails with `ENOSPC`. For `write_atomic` every kind leaves the old file as
  it was (`FileDirectory` writes a temporary first and removes it when that fails);
* `sync`: an append handle's fsync, or the fsync of a `write_atomic`'s data. `EIO`: the
  bytes may or may not be durable (the handle's bytes stay as written, unsynced);
* `rename`: the rename of a `write_atomic`, which does not happen: `EIO`, the old file
  stays;
* `truncate`: an append handle's truncate (a rollback's): `EIO`, nothing is cut.

Each error is the `FileSystemError` `FileDirectory` raises when the system refuses
(naming the file and the operation). A fault is one-shot unless `until_space_returns`:
then every later `write` fails the same way too, as on a full disk, until
`space_returns()`.

`crash_at_fault()`: the crash copy of the wrapped directory taken just before the fault
fired (before the store could clean anything up), for "the process died at this
write". `None` until a fault fired, or when the wrapped directory cannot crash-copy.
"""

from __future__ import annotations

import errno
from collections import Counter
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Self

from engine.directory import (
    AppendHandle,
    AtomicWriteHandle,
    Directory,
    LockHandle,
    MemoryDirectory,
    ReadHandle,
)
from engine.errors import FileSystemError

#: The operations that can fail.
OPERATIONS = ("write", "sync", "rename", "truncate")

#: The kinds of failure.
ENOSPC = "enospc"
EIO = "eio"
SHORT = "short"

_REASONS = {
    ENOSPC: (errno.ENOSPC, "No space left on device"),
    SHORT: (errno.ENOSPC, "No space left on device"),
    EIO: (errno.EIO, "Input/output error"),
}


@dataclass(frozen=True, slots=True)
class Fault:
    """Fail the `at`-th `operation` (1-based) with `kind`; with `until_space_returns`,
    every later write too, until `FaultyDirectory.space_returns()`."""

    operation: str
    at: int
    kind: str = EIO
    until_space_returns: bool = False

    def __post_init__(self) -> None:
        if self.operation not in OPERATIONS:
            raise ValueError(f"unknown operation {self.operation!r}")
        if self.kind not in _REASONS:
            raise ValueError(f"unknown kind {self.kind!r}")
        if self.kind == SHORT and self.operation != "write":
            raise ValueError("only a write can be short")

    def __str__(self) -> str:
        lasting = " until space returns" if self.until_space_returns else ""
        return f"{self.kind} at {self.operation} #{self.at}{lasting}"


class FaultyDirectory:
    """`inner`, with the operations named by `faults` failing (see the module docstring)."""

    def __init__(self, inner: Directory, *faults: Fault) -> None:
        self.inner = inner
        self.faults = faults
        #: How many of each operation were asked for so far (failed ones included), and
        #: each one with the location it touched, in order.
        self.counts: Counter[str] = Counter()
        self.operations: list[tuple[str, str]] = []
        #: The faults that fired, in order, with the location they hit.
        self.fired: list[tuple[Fault, str]] = []
        self._full_disk: Fault | None = None
        self._crash_copy: MemoryDirectory | None = None

    def __repr__(self) -> str:
        return f"FaultyDirectory({self.inner!r}, {', '.join(map(str, self.faults))})"

    # ----- the faults ----------------------------------------------------------------

    def space_returns(self) -> None:
        """End a lasting full disk: later writes succeed (no one-shot fault fires again)."""
        self._full_disk = None
        self.faults = ()

    def crash_at_fault(self) -> MemoryDirectory | None:
        """What a power cut just before the first fault would have left (see above)."""
        return self._crash_copy

    def check(self, operation: str, location: str) -> Fault | None:
        """Count one `operation` on `location`; return the fault it meets, if any."""
        self.counts[operation] += 1
        self.operations.append((operation, location))
        number = self.counts[operation]
        met = next((fault for fault in self.faults
                    if fault.operation == operation and fault.at == number), None)
        if met is None and operation == "write" and self._full_disk is not None:
            met = self._full_disk
        if met is None:
            return None
        if not self.fired and isinstance(self.inner, MemoryDirectory):
            self._crash_copy = self.inner.crash_copy()
        self.fired.append((met, location))
        if met.until_space_returns:
            self._full_disk = met
        return met

    @staticmethod
    def error(fault: Fault, location: str, action: str) -> FileSystemError:
        """The error `FileDirectory` raises when the system refuses `action` on a file."""
        number, reason = _REASONS[fault.kind]
        return FileSystemError(location, action, number, reason)

    # ----- the Directory protocol ----------------------------------------------------

    def location(self, name: str) -> str:
        return self.inner.location(name)

    def list_names(self, prefix: str = "") -> list[str]:
        return self.inner.list_names(prefix)

    def exists(self, name: str) -> bool:
        return self.inner.exists(name)

    def size(self, name: str) -> int:
        return self.inner.size(name)

    def read_bytes(self, name: str, offset: int = 0, length: int | None = None) -> bytes:
        return self.inner.read_bytes(name, offset, length)

    def stamp(self, name: str) -> Hashable:
        return self.inner.stamp(name)

    def open_read(self, name: str) -> ReadHandle:
        return self.inner.open_read(name)

    def open_append(self, name: str) -> AppendHandle:
        return _FaultyAppendHandle(self, self.inner.open_append(name), self.location(name))

    def write_atomic(self, name: str, data: bytes) -> None:
        location = self.location(name)
        for operation, action in (("write", "write"), ("sync", "sync"), ("rename", "rename")):
            fault = self.check(operation, location)
            if fault is not None:
                raise self.error(fault, location, action)
        self.inner.write_atomic(name, data)

    def open_atomic(self, name: str) -> AtomicWriteHandle:
        return _FaultyAtomicWriter(self, self.inner.open_atomic(name), self.location(name))

    def remove(self, name: str) -> None:
        self.inner.remove(name)

    def acquire_lock(self, name: str) -> LockHandle:
        return self.inner.acquire_lock(name)


class _FaultyAtomicWriter:
    """A file written piece by piece whose `commit` can fail as a `write_atomic` can:
    its data's write, its sync or its rename (then nothing replaces the target)."""

    def __init__(self, directory: FaultyDirectory, inner: AtomicWriteHandle, location: str) -> None:
        self._directory = directory
        self._inner = inner
        self._location = location

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exception: object) -> None:
        self._inner.abort()

    def write(self, data: bytes) -> None:
        self._inner.write(data)

    def size(self) -> int:
        return self._inner.size()

    def write_at(self, offset: int, data: bytes) -> None:
        self._inner.write_at(offset, data)

    def read(self, offset: int, length: int) -> bytes:
        return self._inner.read(offset, length)

    def commit(self) -> None:
        for operation, action in (("write", "write"), ("sync", "sync"), ("rename", "rename")):
            fault = self._directory.check(operation, self._location)
            if fault is not None:
                self._inner.abort()
                raise self._directory.error(fault, self._location, action)
        self._inner.commit()

    def abort(self) -> None:
        self._inner.abort()


class _FaultyAppendHandle:
    """An append handle whose writes, syncs and truncates can fail (see the module)."""

    def __init__(self, directory: FaultyDirectory, inner: AppendHandle, location: str) -> None:
        self._directory = directory
        self._inner = inner
        self._location = location

    def write(self, data: bytes) -> None:
        fault = self._directory.check("write", self._location)
        if fault is not None:
            if fault.kind == SHORT:
                self._inner.write(data[: len(data) // 2])
            raise self._directory.error(fault, self._location, "write")
        self._inner.write(data)

    def flush(self) -> None:
        self._inner.flush()

    def sync(self) -> None:
        fault = self._directory.check("sync", self._location)
        if fault is not None:
            raise self._directory.error(fault, self._location, "sync")
        self._inner.sync()

    def truncate(self, size: int) -> None:
        fault = self._directory.check("truncate", self._location)
        if fault is not None:
            raise self._directory.error(fault, self._location, "truncate")
        self._inner.truncate(size)

    def size(self) -> int:
        return self._inner.size()

    def close(self) -> None:
        self._inner.close()
