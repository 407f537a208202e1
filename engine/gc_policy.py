"""The garbage-collector policy of a session-search *process*, chosen at its edge.

Owns: `use_bulk_work_policy`, the one place that changes CPython's cyclic garbage
collector, and the thresholds it sets. Must not touch: anything else. Library code (every
package under `engine/` but the programs' entry points) never calls it, never disables,
freezes or collects: a host application that imports the engine keeps its own policy, and
garbage it creates around a transaction or a search is collected exactly as it would be
without us. Only the programs call it, once, before they work: the command line
(`engine.cli.main`, which also runs `serve` and `bench`), the benchmark's fresh-process
probes and the pytest-benchmark suite, so the benchmark measures what a user's command
runs.

Why a policy at all. Importing, replaying or indexing a store allocates millions of small
acyclic containers (records, changes, posting columns) that stay alive. With CPython's
default thresholds (700, 10, 10) the collector runs a young collection every 700 net
allocations and, as the heap grows, full collections that walk the whole growing heap and
free nothing: a large share of the time of a bulk import. Raising the thresholds keeps
the collector on, only rarer: reference counting still frees everything at once, and a
cycle is collected at the next (rarer) collection instead of soon. In an interleaved A/B
(import and reconcile of the bench corpus), the work ran much faster with these
thresholds than with the default ones, and about as fast as with the former in-library
pause, so the policy at the edge keeps the speed the pause bought.

And at the program's exit, the heap is frozen (`gc.freeze`, an `atexit` handler) before
the interpreter tears it down: its last collections would otherwise walk every object a
command made (the modules, the classes, an opened store's catalog and index) only to
free them, as tearing the modules down frees them anyway by reference counting. That
walk is a noticeable part of a short command such as a fresh `search` (bench/RESULTS.md,
"Start-up"). What a frozen heap leaves out at exit is the finalizer of an object caught
in a reference cycle, which CPython does not promise to run at exit anyway; a command
closes the store it opened (files, connections, lock) before it returns, and `atexit`
handlers and the flush of standard streams run as before.

>>> import gc
>>> saved = gc.get_threshold()
>>> use_bulk_work_policy() == BULK_WORK_THRESHOLDS == gc.get_threshold()
True
>>> gc.set_threshold(*saved)
"""

from __future__ import annotations

import atexit
import gc

#: (young, middle, old) collection thresholds: a young collection every 100,000 net
#: allocations, a middle one every 50 young ones, a full one every 100 middle ones (and,
#: as always in CPython, only when the survivors since the last full one reach a quarter
#: of the old generation).
BULK_WORK_THRESHOLDS = (100_000, 50, 100)


def use_bulk_work_policy() -> tuple[int, int, int]:
    """Set the collector's thresholds for a program that does bulk work, and have its heap
    frozen at exit (registered once, however often this is called); return the thresholds.

    For programs only (see the module docstring); the collector stays enabled.
    """
    gc.set_threshold(*BULK_WORK_THRESHOLDS)
    atexit.unregister(gc.freeze)
    atexit.register(gc.freeze)
    return gc.get_threshold()
