"""Where store files live: a `Directory` of named byte files, on disk or in memory.

Owns: naming, reading, appending, atomically replacing and removing files, durability
(`sync`), and the single-writer lock. Must not touch: what the bytes mean (that is
`engine.codec`) or which files a store has (that is `engine.transcript`).

Two implementations share one protocol so that every storage test runs twice, once per
implementation (the tantivy `RamDirectory` pattern):

* `FileDirectory(path)`: real files under `path`. Appends go through a buffer of the
  handle's own, which `truncate` can drop (so a transaction the system refused space
  for rolls back without writing); `sync()` flushes and `os.fsync`s it (and, the first
  time, the parent folder, so a new file's name is durable too). `open_read` holds a
  file descriptor and reads with `os.pread`, so an index segment a reader opened stays
  readable after a writer's merge removed its name. `write_atomic` writes a temporary
  file, fsyncs it, renames it over the target and fsyncs the folder (a failure before
  the rename removes the temporary and leaves the old file); `open_atomic` does the same
  for a file written piece by piece (a merged index segment). The lock is `fcntl.flock` on a lock file that
  also records the holder's pid for the error message. `flock` locks belong to an open
  file description, so a second `FileDirectory` in the same process is refused exactly
  like a second process. Every `OSError` of a file operation (a full disk, an I/O error,
  a file size limit) is raised as a `FileSystemError` naming the file and the operation
  (`os_errors`, which `engine.file_system` owns with the folder creation and folder fsyncs
  the store's root shares), a missing file as a `StoreError`; so no caller meets a raw
  `OSError`.
* `MemoryDirectory()`: the same semantics in memory. It also remembers how many bytes of
  each file were synced, and `crash_copy()` returns the directory a power cut would leave:
  every file cut back to its synced length (atomic writes and removals are durable at
  once, as they are on disk after the folder fsync).

`stamp(name)` tells a reader whether a file changed since it last looked, without
reading it: on disk its inode, size and times, once its modification time is settled;
in memory a number per content.

The handles they give out (appending, reading, the lock) are `engine.directory.handles`.

Names are relative, use `/` between folders (`transcripts/segment-000001.log`), and never
start with `/` or contain `..`; folders are created on demand (and their names fsynced with
the first file in them) and are not listed; leftover `write_atomic` temporaries are not
listed either.
"""

from __future__ import annotations

import errno
import fcntl
import os
import time
from collections.abc import Hashable, Iterable
from contextlib import suppress
from itertools import count
from pathlib import Path
from typing import Protocol, Self

from engine.directory.handles import (
    BytesAtomicWriter,
    BytesReadHandle,
    FileAppendHandle,
    FileAtomicWriter,
    FileLock,
    FileReadHandle,
)
from engine.errors import FileSystemError, StoreError, StoreLocked
from engine.file_system import make_folders, os_errors, sync_folder, sync_new_folders


class AppendHandle(Protocol):
    """A file open for appending. Writes are visible to readers after `flush()`."""

    def write(self, data: bytes) -> None:
        """Append `data` at the end of the file."""
        ...

    def flush(self) -> None:
        """Hand buffered bytes to the operating system (readers can now see them)."""
        ...

    def sync(self) -> None:
        """Flush, then make every written byte durable (fsync)."""
        ...

    def truncate(self, size: int) -> None:
        """Cut the file back to `size` bytes; later writes append after that."""
        ...

    def size(self) -> int:
        """The file's length including bytes not yet flushed."""
        ...

    def close(self) -> None:
        """Flush and close (does not sync)."""
        ...


class ReadHandle(Protocol):
    """An immutable file open for reading at any offset (index segment files).

    It keeps reading the bytes it was opened on even after the name is removed or
    replaced (a reader's segments outlive a writer's merge), until `close()`.
    """

    def read(self, offset: int, length: int) -> bytes:
        """Exactly `length` bytes from `offset` (StoreError when the file is shorter)."""
        ...

    def size(self) -> int:
        """The file's length in bytes."""
        ...

    def close(self) -> None:
        """Release the file (later reads raise StoreError)."""
        ...


class AtomicWriteHandle(Protocol):
    """A new file written piece by piece that replaces its target only at `commit`.

    Until then the target is untouched (a crash leaves at most a listed-nowhere
    temporary); leaving its `with` block without a commit aborts it."""

    def __enter__(self) -> Self: ...

    def __exit__(self, *exception: object) -> None: ...

    def write(self, data: bytes) -> None:
        """Append `data`."""
        ...

    def size(self) -> int:
        """How many bytes were written so far."""
        ...

    def write_at(self, offset: int, data: bytes) -> None:
        """Overwrite bytes already written, from `offset` (StoreError past the end)."""
        ...

    def read(self, offset: int, length: int) -> bytes:
        """Exactly `length` bytes already written, from `offset`."""
        ...

    def commit(self) -> None:
        """Make every byte durable and replace the target by this file at once."""
        ...

    def abort(self) -> None:
        """Drop what was written (idempotent; nothing after a commit)."""
        ...


class LockHandle(Protocol):
    """A held writer lock; `release()` is idempotent."""

    def release(self) -> None:
        """Give the lock up."""
        ...


class Directory(Protocol):
    """A flat namespace of byte files with `/`-separated names."""

    def location(self, name: str) -> str:
        """A human-readable path of `name`, used in error messages."""
        ...

    def list_names(self, prefix: str = "") -> list[str]:
        """Every file name starting with `prefix`, sorted."""
        ...

    def exists(self, name: str) -> bool:
        """Whether the file `name` exists."""
        ...

    def size(self, name: str) -> int:
        """The file's length in bytes (StoreError if absent)."""
        ...

    def read_bytes(self, name: str, offset: int = 0, length: int | None = None) -> bytes:
        """Up to `length` bytes from `offset` (all the rest when `length` is None)."""
        ...

    def stamp(self, name: str) -> Hashable:
        """A value equal to a later `stamp(name)` only if `name` was not written,
        replaced, created or removed in between (None while it is absent): a reader's
        refresh compares them to skip the files that did not change. A stamp that
        cannot promise it (a file changed too recently for its times to tell) equals
        no other value."""
        ...

    def open_read(self, name: str) -> ReadHandle:
        """Open the existing file `name` for reads by offset (StoreError if absent)."""
        ...

    def open_append(self, name: str) -> AppendHandle:
        """Open `name` for appending, creating it (and its folders) when absent."""
        ...

    def write_atomic(self, name: str, data: bytes) -> None:
        """Replace `name` by `data` all at once and durably."""
        ...

    def open_atomic(self, name: str) -> AtomicWriteHandle:
        """Start a new file that replaces `name` at its `commit`, as `write_atomic` does
        with bytes held whole (a large file is written without being held)."""
        ...

    def remove(self, name: str) -> None:
        """Delete `name` (StoreError if absent)."""
        ...

    def acquire_lock(self, name: str) -> LockHandle:
        """Take the exclusive writer lock `name`, or raise StoreLocked at once."""
        ...


#: `write_atomic` writes here first; a crash can leave one behind, and listings skip them.
TEMPORARY_PREFIX = ".tmp-"


def check_name(name: str) -> str:
    """Return `name` if it is a valid relative file name, else raise StoreError.

    >>> check_name("transcripts/segment-000001.log")
    'transcripts/segment-000001.log'
    >>> check_name("../etc/passwd")
    Traceback (most recent call last):
    ...
    engine.errors.StoreError: invalid store file name '../etc/passwd'
    """
    parts = name.split("/")
    if not name or name.startswith("/") or any(part in ("", ".", "..") for part in parts):
        raise StoreError(f"invalid store file name {name!r}")
    return name


# --------------------------------------------------------------------------------------
# On disk
# --------------------------------------------------------------------------------------


#: `FileDirectory._full`: how many checked names a directory keeps before it starts again.
_FULL_PATHS_KEPT = 4096

#: How old (in nanoseconds) a file's modification time must be for `FileDirectory.stamp`
#: to vouch for it: a change in the same clock tick as the stamp would leave the file's
#: times equal (file systems with coarse times have ticks of up to 2 s; the same rule
#: as `engine.store.layout`'s listing of partitions).
STAMP_SETTLED_NANOSECONDS = 2_000_000_000


class FileDirectory:
    """Store files under a folder on disk (created on the first write)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        #: The full path of each name already checked: a reader's refresh asks for the
        #: same few files of every partition before each served search.
        self._full_paths: dict[str, Path] = {}

    def __repr__(self) -> str:
        return f"FileDirectory({str(self.path)!r})"

    def _full(self, name: str) -> Path:
        full = self._full_paths.get(name)
        if full is None:
            if len(self._full_paths) >= _FULL_PATHS_KEPT:
                self._full_paths.clear()
            full = self._full_paths[name] = self.path / check_name(name)
        return full

    def location(self, name: str) -> str:
        return str(self._full(name))

    def list_names(self, prefix: str = "") -> list[str]:
        # Only the folder the prefix names is walked: a reader's refresh lists the log
        # folder of every partition before each search, not the index files beside it.
        top = self.path
        folder_name = prefix.rpartition("/")[0]
        if folder_name:
            try:
                top = self._full(folder_name)
            except StoreError:  # no store file can be in it: walk everything, as before
                top = self.path
        if not top.is_dir():
            return []
        names = []
        root = str(self.path)
        for folder, _subfolders, files in os.walk(top, onerror=_raise_listing_error):
            if folder == root:
                base = ""
            elif folder.startswith(root + os.sep):
                base = folder[len(root) + 1:].replace(os.sep, "/") + "/"
            else:  # a root such as "." that the walk's folders do not start with
                relative = os.path.relpath(folder, root).replace(os.sep, "/")
                base = "" if relative == "." else relative + "/"
            for file in files:
                name = base + file
                if name.startswith(prefix) and not file.startswith(TEMPORARY_PREFIX):
                    names.append(name)
        return sorted(names)

    def exists(self, name: str) -> bool:
        return self._full(name).is_file()

    def size(self, name: str) -> int:
        try:
            return self._full(name).stat().st_size
        except FileNotFoundError:
            raise StoreError(f"{self.location(name)}: no such store file") from None
        except OSError as error:
            raise FileSystemError(self.location(name), "read", error.errno,
                                  error.strerror or str(error)) from None

    def read_bytes(self, name: str, offset: int = 0, length: int | None = None) -> bytes:
        try:
            with open(self._full(name), "rb") as file:
                file.seek(offset)
                return file.read() if length is None else file.read(length)
        except FileNotFoundError:
            raise StoreError(f"{self.location(name)}: no such store file") from None
        except OSError as error:
            raise FileSystemError(self.location(name), "read", error.errno,
                                  error.strerror or str(error)) from None

    def stamp(self, name: str) -> Hashable:
        # Identity, size and times: an append moves the size, a rewrite in place the
        # modification time, a replacement the inode number. An inode number freed by
        # one replacement and reused by a later one comes with a later time, since the
        # stamp's time was already settled when it was taken.
        try:
            status = os.stat(self._full(name))
        except FileNotFoundError:
            return None
        except (OSError, StoreError):
            return object()
        if time.time_ns() - status.st_mtime_ns <= STAMP_SETTLED_NANOSECONDS:
            return object()
        return (status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)

    def open_read(self, name: str) -> ReadHandle:
        return FileReadHandle(self._full(name), self.location(name))

    def open_append(self, name: str) -> AppendHandle:
        return FileAppendHandle(self._full(name), self.location(name))

    def write_atomic(self, name: str, data: bytes | Iterable[bytes]) -> None:
        """Write a temporary file, fsync it, rename it over `name`, fsync the folder; when
        the system refuses a step before the rename, the temporary is removed and the old
        file (if any) is left as it was. `data` may come in pieces (an iterable of
        bytes), so a large file is written without being held whole."""
        target = self._full(name)
        new_folders = make_folders(target.parent)
        temporary = target.with_name(f"{TEMPORARY_PREFIX}{target.name}-{os.getpid()}")
        pieces = [data] if isinstance(data, (bytes, bytearray, memoryview)) else data
        try:
            with os_errors(self.location(name), "write"):
                with open(temporary, "wb") as file:
                    file.writelines(pieces)
                    file.flush()
                    os.fsync(file.fileno())
                os.replace(temporary, target)
        except BaseException:
            with suppress(OSError):
                temporary.unlink()
            raise
        sync_folder(target.parent)
        sync_new_folders(new_folders)

    def open_atomic(self, name: str) -> AtomicWriteHandle:
        """A `FileAtomicWriter` under the temporary name `write_atomic` uses."""
        target = self._full(name)
        temporary = target.with_name(f"{TEMPORARY_PREFIX}{target.name}-{os.getpid()}")
        return FileAtomicWriter(temporary, target, self.location(name))

    def remove(self, name: str) -> None:
        try:
            self._full(name).unlink()
        except FileNotFoundError:
            raise StoreError(f"{self.location(name)}: no such store file") from None
        except OSError as error:
            raise FileSystemError(self.location(name), "remove", error.errno,
                                  error.strerror or str(error)) from None
        sync_folder(self._full(name).parent)

    def acquire_lock(self, name: str) -> LockHandle:
        path = self._full(name)
        sync_new_folders(make_folders(path.parent))
        with os_errors(str(path), "open the lock file"):
            file = open(path, "a+")  # noqa: SIM115 - owned by the returned FileLock
        try:
            fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            file.seek(0)
            holder = file.read().strip()
            file.close()
            if error.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise StoreError(f"{path}: cannot lock: {error.strerror}") from None
            raise StoreLocked(_locked_message(str(path), holder)) from None
        lock = FileLock(file)
        try:
            with os_errors(str(path), "write the lock file"):
                file.seek(0)
                file.truncate()
                file.write(f"{os.getpid()}\n")
                file.flush()
        except BaseException:
            lock.release()
            raise
        return lock


def _raise_listing_error(error: OSError) -> None:
    """`os.walk`'s error hook: a folder that cannot be listed is an error naming it, not
    a folder without files."""
    raise FileSystemError(str(error.filename), "list the folder", error.errno,
                          error.strerror or str(error))


def _locked_message(location: str, holder: str) -> str:
    """The StoreLocked wording, naming the lock file and the holder's pid when known.

    >>> _locked_message("/s/LOCK", "123")
    '/s/LOCK: the store is locked by another writer (pid 123)'
    >>> _locked_message("memory:LOCK", "")
    'memory:LOCK: the store is locked by another writer'
    """
    who = f" (pid {holder})" if holder.isdigit() else ""
    return f"{location}: the store is locked by another writer{who}"


# --------------------------------------------------------------------------------------
# In memory
# --------------------------------------------------------------------------------------


#: Numbers no two contents of in-memory files share (`MemoryDirectory.stamp`).
_MEMORY_VERSIONS = count()


class _MemoryFile:
    """The bytes of one in-memory file, how many of them are durable, and the number of
    its current content (a new one at every change: `MemoryDirectory.stamp`)."""

    __slots__ = ("data", "synced", "version")

    def __init__(self, data: bytes = b"", synced: int = 0) -> None:
        self.data = bytearray(data)
        self.synced = synced
        self.version = next(_MEMORY_VERSIONS)


class _MemoryAppendHandle:
    """Appends straight into the shared bytearray (so `flush` has nothing to do)."""

    def __init__(self, file: _MemoryFile) -> None:
        self._file = file
        self._closed = False

    def _open_file(self) -> _MemoryFile:
        if self._closed:
            raise StoreError("write to a closed store file")
        return self._file

    def write(self, data: bytes) -> None:
        file = self._open_file()
        file.data.extend(data)
        file.version = next(_MEMORY_VERSIONS)

    def flush(self) -> None:
        self._open_file()

    def sync(self) -> None:
        file = self._open_file()
        file.synced = len(file.data)

    def truncate(self, size: int) -> None:
        file = self._open_file()
        del file.data[size:]
        file.synced = min(file.synced, size)
        file.version = next(_MEMORY_VERSIONS)

    def size(self) -> int:
        return len(self._file.data)

    def close(self) -> None:
        self._closed = True


class _MemoryLock:
    def __init__(self, held: set[str], name: str) -> None:
        self._held = held
        self._name: str | None = name

    def release(self) -> None:
        if self._name is not None:
            self._held.discard(self._name)
            self._name = None


class MemoryDirectory:
    """An in-memory `Directory` with a crash simulator (`crash_copy`)."""

    def __init__(self) -> None:
        self._files: dict[str, _MemoryFile] = {}
        self._held_locks: set[str] = set()

    def __repr__(self) -> str:
        return f"MemoryDirectory({len(self._files)} files)"

    def _file(self, name: str) -> _MemoryFile:
        try:
            return self._files[check_name(name)]
        except KeyError:
            raise StoreError(f"{self.location(name)}: no such store file") from None

    def location(self, name: str) -> str:
        return f"memory:{name}"

    def list_names(self, prefix: str = "") -> list[str]:
        return sorted(name for name in self._files if name.startswith(prefix))

    def exists(self, name: str) -> bool:
        return check_name(name) in self._files

    def size(self, name: str) -> int:
        return len(self._file(name).data)

    def read_bytes(self, name: str, offset: int = 0, length: int | None = None) -> bytes:
        data = self._file(name).data
        end = len(data) if length is None else offset + length
        return bytes(data[offset:end])

    def stamp(self, name: str) -> Hashable:
        file = self._files.get(check_name(name))
        return None if file is None else file.version

    def open_read(self, name: str) -> ReadHandle:
        return BytesReadHandle(bytes(self._file(name).data), self.location(name))

    def open_append(self, name: str) -> AppendHandle:
        file = self._files.setdefault(check_name(name), _MemoryFile())
        return _MemoryAppendHandle(file)

    def write_atomic(self, name: str, data: bytes) -> None:
        self._files[check_name(name)] = _MemoryFile(data, synced=len(data))

    def open_atomic(self, name: str) -> AtomicWriteHandle:
        check_name(name)
        return BytesAtomicWriter(self.location(name), lambda data: self.write_atomic(name, data))

    def remove(self, name: str) -> None:
        self._file(name)
        del self._files[name]

    def acquire_lock(self, name: str) -> LockHandle:
        check_name(name)
        if name in self._held_locks:
            raise StoreLocked(_locked_message(self.location(name), ""))
        self._held_locks.add(name)
        return _MemoryLock(self._held_locks, name)

    # ----- test helpers --------------------------------------------------------------

    def crash_copy(self) -> MemoryDirectory:
        """A new directory holding only durable bytes: each file cut to its synced length.

        Locks are not copied (a crash releases them).
        """
        copy = MemoryDirectory()
        for name, file in self._files.items():
            copy._files[name] = _MemoryFile(bytes(file.data[: file.synced]), file.synced)
        return copy
