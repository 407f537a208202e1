"""The clock of the transcript: the time stamps its records and events carry.

Owns: `now_milliseconds`, the one clock that stamps commit records, the store metadata's
creation time and events written without a `created_at` of their own. Must not touch:
the records or files it stamps (`store_writes`, `transaction` and `store` stamp them,
`log_writer` writes the log). Why apart: the stamp is JavaScript's `Date.now()`
everywhere a store writes one, and a caller that only needs the time (a partitioned
store's root metadata) loads no part of the log to get it.
"""

from __future__ import annotations

import time


def now_milliseconds() -> float:
    """The current time in whole epoch milliseconds, as JavaScript's `Date.now()` gives
    it (what log records and events without a given `created_at` are stamped with: an
    event whose own timestamp is unusable is shown with this stamp, as upstream does).

    >>> stamp = now_milliseconds()
    >>> stamp == int(stamp) > 1.7e12
    True
    """
    return float(int(time.time() * 1000))
