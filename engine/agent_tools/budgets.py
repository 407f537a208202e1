"""The time budgets of a transcript search request (behaviour.md §7.3, seed-only).

Owns: `TimeBudgets` (a request has 90 s; its reader 60 s, waiting for admission
included), `ReaderGate` (the admission of readers: one reader at a time per gate, so a
slow search delays the next one instead of multiplying the load), `run_reader` (runs the
reader stage in a worker thread under both deadlines) and `SearchTimedOut` with the one
message a timeout gives. Must not touch: what the reader does (the tool hands it a
function) or any store.

The design, since upstream has none: the request's clock starts when the tool is called;
the reader's when it asks for admission (so waiting to be admitted counts). The reader
runs in the caller's thread, because a store's connections belong to the thread that
opened them; a watchdog thread fires at the earlier deadline, sets the reader's
`Cancellation` and interrupts the kernel call running then (SQLite stops its statement;
the reference backend's call runs to its end). The reader checks the cancellation (which
also reads the clock, so the deadline holds however late the watchdog's thread runs)
before each kernel call, so it stops there: a slow reader is cancelled, not left running on, and
whatever it found is thrown away. A timeout is an error, not an empty answer, because a
timeout does not mean that no matching conversation exists.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from engine.cancellation import Cancellation
from engine.errors import EngineError

Value = TypeVar("Value")

TIMEOUT_ADVICE = ("A timeout does not mean that no matching conversation exists. Retry "
                  "sessions_search with a sessionKey to search one session, or with more "
                  "specific query keywords.")


@dataclass(frozen=True, slots=True)
class TimeBudgets:
    """Seconds a request and its reader may take (the seed's 90 and 60)."""

    request_seconds: float = 90.0
    reader_seconds: float = 60.0


class SearchTimedOut(EngineError):
    """A search request or its reader ran out of time.

    >>> str(SearchTimedOut("reader", 60.0)).split(". ")[0]
    'sessions_search timed out: the transcript reader took more than 60 s'
    """

    def __init__(self, stage: str, seconds: float) -> None:
        self.stage = stage
        self.seconds = seconds
        what = "the transcript reader" if stage == "reader" else "the request"
        super().__init__(f"sessions_search timed out: {what} took more than "
                         f"{seconds:g} s. {TIMEOUT_ADVICE}")


class ReaderCancelled(Exception):
    """Raised inside a cancelled reader at its next check, to unwind it."""


def check(cancellation: Cancellation) -> None:
    """Stop a reader whose answer is no longer wanted."""
    if cancellation.cancelled:
        raise ReaderCancelled()


class ReaderGate:
    """Admission of readers: `slots` readers at a time."""

    def __init__(self, slots: int = 1) -> None:
        self._slots = threading.Semaphore(slots)

    def admit(self, timeout: float) -> bool:
        return self._slots.acquire(timeout=max(0.0, timeout))

    def release(self) -> None:
        self._slots.release()


def run_reader(reader: Callable[[Cancellation], Value], *, budgets: TimeBudgets,
               request_started: float, gate: ReaderGate,
               interrupt: Callable[[], None] | None = None) -> Value:
    """Run `reader` within both budgets, or raise `SearchTimedOut`.

    `request_started` is the request's `time.monotonic()` start; `interrupt`, when given,
    stops a kernel call that is running (SQLite's), called from the watchdog's thread.
    """
    reader_started = time.monotonic()
    request_deadline = request_started + budgets.request_seconds
    reader_deadline = reader_started + budgets.reader_seconds
    if request_deadline <= reader_deadline:
        deadline, stage, seconds = request_deadline, "request", budgets.request_seconds
    else:
        deadline, stage, seconds = reader_deadline, "reader", budgets.reader_seconds
    if not gate.admit(deadline - time.monotonic()):
        raise SearchTimedOut(stage, seconds)
    cancellation = Cancellation(deadline)

    def expire() -> None:
        cancellation.cancel()
        if interrupt is not None:
            interrupt()

    watchdog = threading.Timer(max(0.0, deadline - time.monotonic()), expire)
    watchdog.daemon = True
    watchdog.start()
    try:
        value = reader(cancellation)
    except ReaderCancelled:
        raise SearchTimedOut(stage, seconds) from None
    except EngineError:
        if cancellation.cancelled:  # the interrupted kernel call's own failure
            raise SearchTimedOut(stage, seconds) from None
        raise
    finally:
        watchdog.cancel()
        watchdog.join()  # a watchdog already firing must not interrupt the next search
        gate.release()
    if cancellation.cancelled:
        raise SearchTimedOut(stage, seconds)
    return value
