"""The lock every use of an open store takes: application calls first, then the
background worker's batches.

Owns: `StoreLock` and the `serialized` decorator that makes a store's public method hold
it. Must not touch: what the worker does (`engine.store.background`) or the writer's
lock file between processes (`engine.directory`); this is one process's lock between its
threads. Kept apart from the worker so that a store, which takes the lock in every call,
loads the worker's module only when it starts one.

The lock is a re-entrant lock plus a count of application callers waiting for it. The
stores were written for one thread, so the simplest correct rule is that every public
call of the store holds the lock for its whole length (a transaction for its whole
`with` block); only the batches of the worker run in another thread, and only while
holding it.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar


class StoreLock:
    """One store's lock: application calls (`application`) before the worker's batches
    (`background`). Re-entrant for the thread holding it."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._state = threading.Condition()
        self._waiting = 0

    @contextmanager
    def application(self) -> Iterator[None]:
        """Hold the lock for an application call (waiting for at most one batch)."""
        with self._state:
            self._waiting += 1
        try:
            self._lock.acquire()
        finally:
            with self._state:
                self._waiting -= 1
                if not self._waiting:
                    self._state.notify_all()
        try:
            yield
        finally:
            self._lock.release()

    def acquire_at_once(self) -> bool:
        """Take the lock for an application call if that needs no wait (it is free, or
        this thread holds it already); whether it was taken (then `release` it). A call
        that did not wait kept no batch waiting, so it needs no turn of `application`."""
        return self._lock.acquire(blocking=False)

    def release(self) -> None:
        """Release what `acquire_at_once` took."""
        self._lock.release()

    @contextmanager
    def background(self) -> Iterator[None]:
        """Hold the lock for one batch of the worker, once no application call waits."""
        with self._state:
            while self._waiting:
                self._state.wait()
        self._lock.acquire()
        try:
            yield
        finally:
            self._lock.release()


Method = TypeVar("Method", bound=Callable[..., Any])


def serialized(method: Method) -> Method:
    """A method of a store that holds `self.lock` (a `StoreLock`) while it runs."""
    @functools.wraps(method)
    def locked(self: Any, *arguments: Any, **options: Any) -> Any:
        lock = self.lock
        if lock.acquire_at_once():  # the common case: free, or held by this thread already
            try:
                return method(self, *arguments, **options)
            finally:
                lock.release()
        with lock.application():
            return method(self, *arguments, **options)

    return locked  # type: ignore[return-value]
