"""`Cancellation`: the flag a watchdog sets when long work must stop, and its deadline.

Owns: the one answer to "should this work go on?" that both the tools' reader
(`engine.agent_tools.budgets`, behaviour.md §7.3) and the store's background reconcile
(`engine.store.background`) check between their steps. Must not touch: what the work
is, who sets the flag (each caller starts its own watchdog timer) or what a stop means
to the caller (a reader's timeout is an error; a reconcile run just ends early). It sits
on the bottom layer so that the backends can use it, and the tools above them too.
"""

from __future__ import annotations

import math
import threading
import time


class Cancellation:
    """Set when work is no longer wanted; the work checks it.

    It is cancelled by its watchdog, and also as soon as the clock reaches `deadline`:
    whether the watchdog's thread has run yet must not decide whether work past its
    budget goes on.

    >>> Cancellation(deadline=time.monotonic()).cancelled, Cancellation().cancelled
    (True, False)
    >>> stopped = Cancellation()
    >>> stopped.cancel()
    >>> stopped.cancelled
    True
    """

    def __init__(self, deadline: float = math.inf) -> None:
        self._event = threading.Event()
        self.deadline = deadline

    def cancel(self) -> None:
        """Stop the work at its next check (safe from any thread)."""
        self._event.set()

    @property
    def cancelled(self) -> bool:
        """Whether the work should stop now."""
        return self._event.is_set() or time.monotonic() >= self.deadline

    @property
    def expired(self) -> bool:
        """Whether the deadline has passed (as against a `cancel` before it)."""
        return time.monotonic() >= self.deadline
