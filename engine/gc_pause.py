"""Pausing CPython's cyclic garbage collector around bulk work.

Owns: `paused_garbage_collection`, used by the store's transactions, the reference
backend's replay, reconcile and rebuilds, and the kernel's queries. Must not touch:
anything else; it lives at the top of the package so that `transcript` and `index` (which
do not import each other) can both use it.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

#: Objects left alive by a paused block above which they are frozen (see below). The
#: catalog and window states of a 1M-message store are about 33,000 objects: under the
#: earlier 50,000 they stayed collectable, and every generation-1 collection during
#: later queries walked them (12.5 ms, finding nothing).
FREEZE_AFTER_OBJECTS = 20_000


@contextmanager
def paused_garbage_collection() -> Iterator[None]:
    """Suspend CPython's cyclic garbage collector inside the block (restored after).

    A bulk write (a large transaction, an index rebuild) allocates millions of small
    acyclic objects (records, changes, posting columns) that stay alive; every cycle
    collection would walk the whole growing heap and free nothing, which measured as a
    third of an import's time. Reference counting still frees everything as usual;
    only cyclic garbage made inside the block waits for the next collection after it.

    When the block leaves more than `FREEZE_AFTER_OBJECTS` new container objects alive
    (the index of a 100k-message import leaves 1.3 million), they are moved to the
    permanent generation (`gc.freeze`) before collection resumes: otherwise the first
    collection after the block walks them all (0.7 s at 100k) and later full collections
    walk them again, to find nothing. They are still freed by reference counting; the
    cost is that a reference cycle made inside such a block is never collected.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if gc.get_count()[0] > FREEZE_AFTER_OBJECTS:
                gc.freeze()
            gc.enable()
