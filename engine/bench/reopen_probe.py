"""Child process of the reopen workload: open a store, run one query, report as JSON.

Owns: measuring time to first query and resident memory in a clean process, so the
numbers are not blurred by the harness's own heap. Must not touch: the store (it opens
it read-only).

Run: `python -m engine.bench.reopen_probe --backend sqlite --store DIR --query the`.
Prints one JSON object: `open_seconds`, `first_query_seconds`, `hits`,
`modules_seconds` (importing the backend's modules, the partitioned store's and the
tokenizer module its analyzer imports lazily, before the clock starts: a server has them loaded, and without cached bytecode, e.g. under PYTHONDONTWRITEBYTECODE, it is
compile time, not open time), `resident_bytes_before_open` (after imports),
`resident_bytes_after_open` (after the first query). Resident memory is `VmRSS` from `/proc/self/status` (Linux); elsewhere
the peak from `resource.getrusage`, which is an upper bound.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def resident_bytes() -> int:
    """The current resident set size of this process, in bytes."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    import resource

    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, measure, print the JSON report."""
    parser = argparse.ArgumentParser(prog="python -m engine.bench.reopen_probe")
    parser.add_argument("--backend", required=True)
    parser.add_argument("--store", required=True, type=Path)
    parser.add_argument("--query", required=True)
    args = parser.parse_args(argv)
    from engine.gc_policy import use_bulk_work_policy

    use_bulk_work_policy()  # a program's policy, as the command line sets it
    modules_started = time.perf_counter()
    from engine.bench.adapters import registry_open_store
    from engine.model import SearchRequest
    from engine.store.registry import backend_class

    backend_class(args.backend)  # import the backend's modules
    import engine.analysis.unicode61  # (the analyzer's, imported lazily)
    import engine.store.opening  # noqa: F401  (the store's, imported by the open)
    modules_seconds = time.perf_counter() - modules_started
    before = resident_bytes()
    started = time.perf_counter()
    backend = registry_open_store(args.backend, args.store, False, False)
    opened = time.perf_counter()
    result = backend.search(SearchRequest(query=args.query, limit=25, session_keys=()))
    finished = time.perf_counter()
    after = resident_bytes()
    backend.close()
    json.dump({
        "open_seconds": opened - started,
        "first_query_seconds": finished - opened,
        "hits": len(result.hits),
        "modules_seconds": modules_seconds,
        "resident_bytes_before_open": before,
        "resident_bytes_after_open": after,
    }, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
