"""`signals_held()`: Ctrl-C and SIGTERM wait until a commit has finished.

Owns: holding SIGINT and SIGTERM back for the length of a block and delivering the first
one that came once the block is over. Must not touch: what the block does (a store's
commit: `engine.store.transaction`; one window's rebuild in the reference index:
`engine.backends.reference.maintenance`) or what a signal does when it is delivered
(the handlers that were there before: Python's `KeyboardInterrupt`, a command's own).
It sits on the bottom layer so that the backends can use it, and the store too.

Why. A commit (or a window's rebuild) is a sequence of steps (the journal, each partition's commit, each
partition's index brought up to date with it). Every step is safe to cut by a crash,
because what is on disk is always whole; but an exception raised in the middle of a
step by a signal handler leaves the *process's* view half updated (an index in memory
holding half of a transaction), which a later flush would then write out. Holding the
signal until the commit is over makes a Ctrl-C arrive between two transactions, where
the store is whole in memory and on disk. A SIGKILL cannot be held: the journal
(`engine.store.commit_journal`) is what makes that one safe.

Only the main thread can set signal handlers, so elsewhere (a server's worker thread)
the block runs as it is; there Python delivers signals to the main thread anyway.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

#: The signals a user sends to stop a command.
HELD_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def signals_held() -> Iterator[None]:
    """Run the block with SIGINT and SIGTERM held back; deliver the first that came
    (to the handler that was there before) once it is over, whether it raised or not."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []

    def hold(number: int, frame: FrameType | None) -> None:
        received.append(number)

    previous: dict[int, Any] = {}
    try:
        for number in HELD_SIGNALS:
            previous[number] = signal.signal(number, hold)
        yield
    finally:
        for number, handler in previous.items():  # None: a handler not set from Python
            signal.signal(number, signal.SIG_DFL if handler is None else handler)
        if received:
            signal.raise_signal(received[0])
