"""When a reader's refresh may skip looking at its files: `ChangeGate`, over inotify.

Owns: `ChangeGate`, which tells a snapshot reader (`PartitionedSnapshotStore.refresh`)
that nothing under the store's folder changed since its last whole look, from the
kernel's change events (Linux inotify, one watch per folder of the store), so that a
long-running reader (`serve`) answers each search without the three `os.stat` a
partition (and the listing of `agents/`) that the look costs. Must not touch: what a
look reads or how a partition refreshes (`engine.store.partitioned` and the partitions'
own `refresh`), the store's files or their format (nothing is written).

Why it is exact. Linux queues a watched folder's event (a file in it written, truncated,
created, removed, renamed, its times or modes set) inside the system call that made the
change, before that call returns. So a change that landed before a search started, in
this process or any other on this machine, is in the queue when the search reads it,
and a gate that reads an empty queue knows that nothing changed since it last drained
it. The order that keeps it so: drain the queue and watch every folder (new ones
included) first, then look at the files (`unchanged()` returns False), and only once
that look ended without an error trust the queue again (`looked()`). A change made
during a look is either read by it or queued for the next refresh, which then looks.

When it does not watch (every refresh looks, as before): a refresh before the second
(a command that refreshes once pays nothing), a store folder on a file system whose
changes other machines may make unseen or that does not report them (only `LOCAL_KINDS`
are watched), a folder of the store on another device, a symbolic link anywhere in the
store (a change made through its target's own path is reported to the target's folder,
which is not watched), a platform without inotify, or a failure to watch (no instance or
watch left: the gate gives up for good). An overflowing queue holds an event of its own,
so it reads as a change. A folder that vanishes while the gate walks the store (a
partition renamed into place or removed) is skipped: its parent's watch has queued that
change, so the next refresh looks again.

After a fork the child shares the parent's queue (the descriptor survives until an
exec), and whichever reads first would take the other's events: a gate in a process
other than the one that started it drops its copy unread and starts its own watch.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

#: File systems whose every change is made through this machine's kernel (so reported
#: to its watches): not network, FUSE or union file systems.
LOCAL_KINDS = frozenset({"ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "f2fs"})

#: The refresh from which the gate watches (the first one always looks, unwatched).
WATCH_FROM_REFRESH = 2

# inotify(7): the changes watched, and the flags of `inotify_init1`.
_IN_MODIFY, _IN_ATTRIB, _IN_CLOSE_WRITE = 0x2, 0x4, 0x8
_IN_MOVED_FROM, _IN_MOVED_TO, _IN_CREATE, _IN_DELETE = 0x40, 0x80, 0x100, 0x200
_IN_DELETE_SELF, _IN_MOVE_SELF, _IN_ONLYDIR = 0x400, 0x800, 0x01000000
_CHANGES = (_IN_MODIFY | _IN_ATTRIB | _IN_CLOSE_WRITE | _IN_MOVED_FROM | _IN_MOVED_TO
            | _IN_CREATE | _IN_DELETE | _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_ONLYDIR)
_IN_NONBLOCK, _IN_CLOEXEC = os.O_NONBLOCK, os.O_CLOEXEC
#: What `read` asks for at a time: many events (each 16 bytes and a name).
_READ_BYTES = 1 << 16


class ChangeGate:
    """Whether a reader's refresh may skip its look (module docstring): call
    `unchanged()` before the look (True: skip it), `looked()` after a look that ended
    without an error, `close()` with the store.

    >>> gate = ChangeGate(None)
    >>> gate.unchanged(), gate.unchanged(), gate.watching
    (False, False, False)
    """

    __slots__ = ("_add", "_fd", "_gave_up", "_process", "_refreshes", "_trusted", "root")

    def __init__(self, root: Path | None) -> None:
        #: The store folder (None: nothing to watch, as for a store in memory).
        self.root = root
        self._refreshes = 0
        self._fd: int | None = None
        #: The queue was drained before a look that ended without an error.
        self._trusted = False
        self._gave_up = root is None
        self._add: Callable[[int, bytes, int], None] | None = None
        #: The process that started the watch (a forked child must not read its queue).
        self._process = 0

    @property
    def watching(self) -> bool:
        """Whether the gate watches the store's folders now."""
        return self._fd is not None

    def unchanged(self) -> bool:
        """Whether nothing under the store's folder changed since the last look
        (`looked`); when something may have, the queue is drained and every folder
        watched before this returns False, and the caller looks."""
        fd = self._fd
        if fd is not None and self._process != os.getpid():  # a forked child: not its queue
            self._fd, self._trusted = None, False
            os.close(fd)
            self._start()
            return False
        if fd is None:
            self._refreshes += 1
            if not self._gave_up and self._refreshes >= WATCH_FROM_REFRESH:
                self._start()
            return False
        try:
            data = os.read(fd, _READ_BYTES)
        except BlockingIOError:
            if self._trusted:
                return True
            data = b""
        except OSError:
            self._give_up()
            return False
        self._trusted = False
        try:
            while data:  # drain: every change so far is read by the coming look
                data = os.read(fd, _READ_BYTES)
        except BlockingIOError:
            pass
        except OSError:
            self._give_up()
            return False
        if not self._watch_folders():
            self._give_up()
        return False

    def looked(self) -> None:
        """A look that `unchanged()` asked for ended without an error."""
        if self._fd is not None:
            self._trusted = True

    def close(self) -> None:
        """Stop watching (the store closes); the gate then never skips a look."""
        self._give_up()

    # ----- watching ---------------------------------------------------------------------

    def _start(self) -> None:
        root = self.root
        if root is None or _file_system_kind(root) not in LOCAL_KINDS:
            self._gave_up = True
            return
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            init, add = libc.inotify_init1, libc.inotify_add_watch
        except (OSError, AttributeError):  # not Linux, or no inotify
            self._gave_up = True
            return
        add.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32)
        fd = init(_IN_NONBLOCK | _IN_CLOEXEC)
        if fd < 0:
            self._gave_up = True
            return

        def add_watch(fd: int, folder: bytes, changes: int) -> None:
            if add(fd, folder, changes) < 0:  # OSError: FileNotFoundError for ENOENT
                number = ctypes.get_errno()
                raise OSError(number, os.strerror(number), folder)

        self._fd, self._add, self._process = fd, add_watch, os.getpid()
        if not self._watch_folders():
            self._give_up()

    def _watch_folders(self) -> bool:
        """Watch every folder under the root (again: a folder watched already keeps its
        watch); False when one cannot be watched or is on another device, or when the
        store holds a symbolic link (its changes might go unseen). A folder that vanished
        during the walk is skipped (its parent's watch queued its going)."""
        assert self.root is not None and self._fd is not None and self._add is not None
        try:
            root = os.fsencode(self.root)
            device = os.stat(root).st_dev
            pending = [root]
            while pending:
                folder = pending.pop()
                try:
                    if not self._watch_folder(folder, device, pending):
                        return False
                except FileNotFoundError:
                    if folder == root:
                        return False
        except OSError:
            return False
        return True

    def _watch_folder(self, folder: bytes, device: int, pending: list[bytes]) -> bool:
        """Watch `folder` and put its subfolders on `pending`; False when it is on another
        device or holds a symbolic link. Raises FileNotFoundError when it vanished."""
        assert self._fd is not None and self._add is not None
        if os.stat(folder).st_dev != device:
            return False
        self._add(self._fd, folder, _CHANGES)
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.is_symlink():
                    return False
                if entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)
        return True

    def _give_up(self) -> None:
        fd, self._fd, self._trusted, self._gave_up = self._fd, None, False, True
        if fd is not None:
            os.close(fd)

    def __del__(self) -> None:
        fd = getattr(self, "_fd", None)
        if fd is not None:
            os.close(fd)


def _file_system_kind(path: Path) -> str | None:
    """The kind of file system `path` is on (`/proc/self/mountinfo`: the mount with the
    longest mount point holding it), or None when it cannot be told."""
    try:
        real = os.path.realpath(path)
        with open("/proc/self/mountinfo", "rb") as file:
            lines = file.read().decode("utf-8", "surrogateescape").splitlines()
    except OSError:
        return None
    found, found_length = None, -1
    for line in lines:
        fields = line.split(" ")
        try:
            mount = _unescaped(fields[4])
            kind = fields[fields.index("-", 6) + 1]
        except (IndexError, ValueError):
            continue
        inside = real == mount or real.startswith(mount.rstrip("/") + "/")
        if inside and len(mount) >= found_length:
            found, found_length = kind, len(mount)
    return found


def _unescaped(field: str) -> str:
    r"""A mount point of `mountinfo`, whose spaces and like are written `\040`.

    >>> _unescaped(r"/mnt/my\040disk")
    '/mnt/my disk'
    """
    return re.sub(r"\\([0-7]{3})", lambda match: chr(int(match.group(1), 8)), field)
