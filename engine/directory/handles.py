"""The handles a `FileDirectory` and a `MemoryDirectory` give out: appending to a file
with a buffer of its own, reading by `os.pread` or from a snapshot of bytes, writing a
new file piece by piece that replaces its target atomically, and a held `flock`.

Owns: one open file each (its descriptor, its buffer, its lock) and the `OSError` of
each operation on it, raised as the `engine.errors` the directory promises. Must not
touch: names and folders (`engine.directory`, which opens these) or what the bytes mean
(`engine.codec`).
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Self

from engine.errors import FileSystemError, StoreError
from engine.file_system import make_folders, os_errors, sync_folder, sync_new_folders

#: How many appended bytes `FileAppendHandle` keeps before it hands them to the system.
APPEND_BUFFER_BYTES = 1 << 16


class FileAppendHandle:
    """An append-only file with its own buffer; remembers whether its name still needs a
    folder fsync.

    The buffer is ours (not a buffered file object's) so that `truncate` can drop bytes
    the system refused: after a failed write (a full disk) the file is cut back to what
    the caller asks and nothing refused past that size is retried, so a transaction
    rolls back without needing space for what it wrote. Bytes go to the system by `os.write`, looping over short
    writes."""

    def __init__(self, path: Path, location: str,
                 flags: int = os.O_WRONLY | os.O_APPEND | os.O_CREAT) -> None:
        self._location = location
        self._descriptor: int | None = None
        self._new_folders = make_folders(path.parent)
        created = not path.exists()
        with os_errors(location, "open for appending"):
            self._descriptor = os.open(path, flags, 0o666)
            self._written = os.fstat(self._descriptor).st_size  # bytes the system holds
        self._path = path
        self._pending = bytearray()
        self._name_needs_sync = created

    def _open_descriptor(self) -> int:
        if self._descriptor is None:
            raise StoreError(f"{self._location}: write to a closed store file")
        return self._descriptor

    def write(self, data: bytes) -> None:
        self._open_descriptor()
        self._pending += data
        if len(self._pending) >= APPEND_BUFFER_BYTES:
            self.flush()

    def flush(self) -> None:
        descriptor = self._open_descriptor()
        pending = self._pending
        with os_errors(self._location, "write"):
            while pending:
                written = os.write(descriptor, pending)
                del pending[:written]
                self._written += written

    def sync(self) -> None:
        self.flush()
        with os_errors(self._location, "sync"):
            os.fsync(self._open_descriptor())
        if self._name_needs_sync:
            sync_folder(self._path.parent)
            sync_new_folders(self._new_folders)
            self._name_needs_sync = False
            self._new_folders = []

    def truncate(self, size: int) -> None:
        descriptor = self._open_descriptor()
        if size >= self._written:
            del self._pending[size - self._written:]
            self.flush()  # the file now ends at `size`, as after an ftruncate
            return
        self._pending.clear()
        with os_errors(self._location, "truncate"):
            os.ftruncate(descriptor, size)
        self._written = size

    def size(self) -> int:
        return self._written + len(self._pending)

    def close(self) -> None:
        if self._descriptor is None:
            return
        try:
            self.flush()
        finally:
            descriptor, self._descriptor = self._descriptor, None
            os.close(descriptor)


class FileReadHandle:
    """`os.pread` on a file descriptor held open (so a removed file stays readable)."""

    def __init__(self, path: Path, location: str) -> None:
        self._location = location
        self._descriptor: int | None = None  # set first: __del__ runs even if open fails
        try:
            self._descriptor = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            raise StoreError(f"{location}: no such store file") from None
        except OSError as error:
            raise FileSystemError(location, "open", error.errno,
                                  error.strerror or str(error)) from None
        with os_errors(location, "read"):
            self._size = os.fstat(self._descriptor).st_size

    def read(self, offset: int, length: int) -> bytes:
        if self._descriptor is None:
            raise StoreError(f"{self._location}: read after close")
        with os_errors(self._location, "read"):
            data = os.pread(self._descriptor, length, offset)
        if len(data) != length:
            raise StoreError(f"{self._location}: {length} bytes at offset {offset} run past "
                             f"the end of the file ({self._size} bytes)")
        return data

    def size(self) -> int:
        return self._size

    def close(self) -> None:
        if self._descriptor is not None:
            os.close(self._descriptor)
            self._descriptor = None

    def __del__(self) -> None:
        self.close()


class BytesReadHandle:
    """A `ReadHandle` over a snapshot of bytes (the in-memory directory's files)."""

    def __init__(self, data: bytes, location: str) -> None:
        self._data: bytes | None = data
        self._location = location

    def read(self, offset: int, length: int) -> bytes:
        if self._data is None:
            raise StoreError(f"{self._location}: read after close")
        if offset < 0 or offset + length > len(self._data):
            raise StoreError(f"{self._location}: {length} bytes at offset {offset} run past "
                             f"the end of the file ({len(self._data)} bytes)")
        return self._data[offset: offset + length]

    def size(self) -> int:
        return len(self._data or b"")

    def close(self) -> None:
        self._data = None


class BytesAtomicWriter:
    """An `AtomicWriteHandle` in memory: bytes collected apart, handed whole to `put` at
    `commit` (the in-memory directory's files)."""

    def __init__(self, location: str, put: Callable[[bytes], None]) -> None:
        self._location = location
        self._put = put
        self._data: bytearray | None = bytearray()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exception: object) -> None:
        self.abort()

    def _open_data(self) -> bytearray:
        if self._data is None:
            raise StoreError(f"{self._location}: write to a closed store file")
        return self._data

    def write(self, data: bytes) -> None:
        self._open_data().extend(data)

    def size(self) -> int:
        return len(self._open_data())

    def write_at(self, offset: int, data: bytes) -> None:
        written = self._open_data()
        if offset < 0 or offset + len(data) > len(written):
            raise StoreError(f"{self._location}: {len(data)} bytes at offset {offset} "
                             f"overwrite past the end ({len(written)} bytes written)")
        written[offset: offset + len(data)] = data

    def read(self, offset: int, length: int) -> bytes:
        written = self._open_data()
        if offset < 0 or offset + length > len(written):
            raise StoreError(f"{self._location}: {length} bytes at offset {offset} run past "
                             f"the end of the file ({len(written)} bytes)")
        return bytes(written[offset: offset + length])

    def commit(self) -> None:
        data = self._open_data()
        self._data = None
        self._put(bytes(data))

    def abort(self) -> None:
        self._data = None


class FileLock:
    """An `flock` held on an open lock file; closing the file releases it."""

    def __init__(self, file: object) -> None:
        self._file = file

    def release(self) -> None:
        file = self._file
        if file is not None:
            self._file = None
            try:
                fcntl.flock(file.fileno(), fcntl.LOCK_UN)  # type: ignore[attr-defined]
            finally:
                file.close()  # type: ignore[attr-defined]


class FileAtomicWriter(FileAppendHandle):
    """A new file written piece by piece under a temporary name, then renamed over its
    target by `commit` (fsync, rename, folder fsync), as `write_atomic` does with bytes
    held whole; `abort` (or leaving its `with` block without a commit) removes the
    temporary and leaves the target as it was.

    Appends go through the buffer of `FileAppendHandle`; `write_at` overwrites bytes
    already written (a header whose values are known only at the end) and `read` reads
    them back (a scratch file that is never committed), both by offset (`os.pwrite` and
    `os.pread` leave the end where appends go)."""

    def __init__(self, temporary: Path, target: Path, location: str) -> None:
        super().__init__(temporary, location, os.O_RDWR | os.O_CREAT | os.O_TRUNC)
        self._target = target

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exception: object) -> None:
        self.abort()

    def write_at(self, offset: int, data: bytes) -> None:
        if offset < 0 or offset + len(data) > self.size():
            raise StoreError(f"{self._location}: {len(data)} bytes at offset {offset} "
                             f"overwrite past the end ({self.size()} bytes written)")
        self.flush()
        view = memoryview(data)
        with os_errors(self._location, "write"):
            while view:
                written = os.pwrite(self._open_descriptor(), view, offset)
                view = view[written:]
                offset += written

    def read(self, offset: int, length: int) -> bytes:
        self.flush()
        with os_errors(self._location, "read"):
            data = os.pread(self._open_descriptor(), length, offset)
        if len(data) != length:
            raise StoreError(f"{self._location}: {length} bytes at offset {offset} run past "
                             f"the end of the file ({self._written} bytes)")
        return data

    def commit(self) -> None:
        descriptor = self._open_descriptor()
        try:
            self.flush()
            with os_errors(self._location, "sync"):
                os.fsync(descriptor)
        except BaseException:
            self.abort()
            raise
        self._descriptor = None
        try:
            with os_errors(self._location, "write"):
                os.close(descriptor)
                os.replace(self._path, self._target)
        except BaseException:
            with suppress(OSError):
                self._path.unlink()
            raise
        sync_folder(self._target.parent)
        sync_new_folders(self._new_folders)

    def abort(self) -> None:
        descriptor, self._descriptor = self._descriptor, None
        if descriptor is None:
            return
        self._pending.clear()
        try:
            os.close(descriptor)
        finally:
            with suppress(OSError):
                self._path.unlink()
