"""`session-search import` and `stats`: load transcripts into a store and count them.

Owns: these two commands' arguments and outputs.
Must not touch: the import job itself (`engine.ingest.import_into_store`), formats,
storage and indexes (the backends, reached through `engine.backends.registry`: a new
backend added there is a `--backend` choice here at once), search.

Commands:

* `import --store DIR [--backend NAME] [--no-reconcile] SOURCE...` — creates a store for
  the backend when DIR is absent or empty (an existing store keeps its own backend), then
  imports every SOURCE (a corpus directory, a flat `*.jsonl` messages file, or an
  OpenClaw state directory) in one transaction through the backend, so the index is
  written at commit. On any error nothing is imported (exit 2), and a store this command
  had just created is removed again. Then, unless `--no-reconcile`, the windows the
  import left dirty are reconciled (the rules are `engine.ingest.into_store`'s);
* `stats --store DIR` — agents, sessions (keys), windows, events and bytes of a store,
  then whatever index counts the backend adds (`messages_indexed`, ...), summed over the
  agents' partitions, then the same counts per agent (`--json`: `partitions`);

Every command takes `--json`. Errors go to standard error as
`session-search: error: ...` with exit status 2 for bad usage or input, 1 otherwise
(`engine.cli.main` does that mapping).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from engine.backends.registry import (
    BACKEND_NAMES,
    DEFAULT_BACKEND,
    existing_backend,
    open_backend,
)
from engine.cli.output import format_table, print_json
from engine.errors import UsageError
from engine.ingest import ImportReport, import_into_store

STATS_FIELDS = ("agents", "sessions", "windows", "events", "bytes")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `import` and `stats` commands."""
    importer = subparsers.add_parser(
        "import",
        help="import transcripts (corpus, flat messages, OpenClaw state) into a store",
        description="Import every SOURCE into the store at DIR in one transaction: on any "
                    "error nothing is imported. A SOURCE is a corpus directory "
                    "(sessions.jsonl + transcripts/), a flat messages file (*.jsonl) or "
                    "an OpenClaw state directory (agents/<agentId>/sessions/).",
    )
    importer.add_argument("--store", required=True, metavar="DIR", help="store folder")
    importer.add_argument("--backend", choices=BACKEND_NAMES, default=None,
                          help=f"backend of a new store (default: {DEFAULT_BACKEND}; an "
                               "existing store must match)")
    importer.add_argument("--no-reconcile", action="store_true",
                          help="leave windows the import made dirty for a later reconcile")
    importer.add_argument("sources", nargs="+", metavar="SOURCE", help="what to import")
    importer.add_argument("--json", action="store_true", help="print JSON")
    importer.set_defaults(run=run_import)

    stats = subparsers.add_parser(
        "stats", help="count a store's agents, sessions, windows, events and bytes",
        description="Print the counts of the store at DIR.")
    stats.add_argument("--store", required=True, metavar="DIR", help="store folder")
    stats.add_argument("--json", action="store_true", help="print JSON")
    stats.set_defaults(run=run_stats)



def run_import(args: argparse.Namespace) -> int:
    """`import`: load the sources, then print what was added and the store's counts."""
    store_path = Path(args.store)
    outcome = import_into_store(store_path, args.backend, args.sources,
                                reconcile=not args.no_reconcile)
    counts = ordered_stats(outcome.stats)
    if args.json:
        print_json({"store": str(store_path), **outcome.to_json(), "stats": counts})
    else:
        print(describe_import(outcome.imported, store_path, outcome.reconciled))
        print(format_stats(counts))
    return 0


def run_stats(args: argparse.Namespace) -> int:
    """`stats`: print the counts of an existing store."""
    store_path = Path(args.store)
    backend_name = existing_backend(store_path)
    if backend_name is None:
        raise UsageError(f"{store_path}: no session-search store here")
    backend = open_backend(store_path, backend=backend_name)
    try:
        counts = ordered_stats(backend.stats())
        per_agent = {agent_id: ordered_stats(partition_counts)
                     for agent_id, partition_counts in backend.partition_stats().items()}
    finally:
        backend.close()
    if args.json:
        print_json({"store": str(store_path), "backend": backend_name, **counts,
                    "partitions": per_agent})
    else:
        print(f"store {store_path} (backend {backend_name})")
        print(format_stats(counts))
        if per_agent:
            print()
            print(format_partition_stats(per_agent))
    return 0


def format_partition_stats(per_agent: dict[str, dict[str, int]]) -> str:
    """One row of counts per agent's partition.

    >>> print(format_partition_stats({"main": {"windows": 2, "events": 9}}))
    agent  windows  events
    -----  -------  ------
    main   2        9
    """
    names = list(next(iter(per_agent.values())))
    return format_table(["agent", *names],
                        [[agent_id, *(counts.get(name, 0) for name in names)]
                         for agent_id, counts in per_agent.items()])


def ordered_stats(stats: dict[str, int]) -> dict[str, int]:
    """The five store counts in display order, then the backend's other counts.

    >>> ordered_stats({"bytes": 9, "events": 3, "windows": 2, "sessions": 1, "agents": 1,
    ...                "messages_indexed": 2})
    {'agents': 1, 'sessions': 1, 'windows': 2, 'events': 3, 'bytes': 9, 'messages_indexed': 2}
    """
    counts = {name: int(stats[name]) for name in STATS_FIELDS}
    counts.update((name, int(value)) for name, value in stats.items() if name not in counts)
    return counts


def format_stats(counts: dict[str, int]) -> str:
    """The counts as a one-row table.

    >>> print(format_stats({"agents": 2, "sessions": 3, "windows": 4, "events": 9,
    ...                     "bytes": 120}))
    agents  sessions  windows  events  bytes
    ------  --------  -------  ------  -----
    2       3         4        9       120
    """
    return format_table(list(counts), [list(counts.values())])


def describe_import(report: ImportReport, store_path: Path, reconciled: int = 0) -> str:
    """What an import added, one line, then a line per note.

    >>> describe_import(ImportReport((("c", "corpus"),), 2, 5), Path("s"), 1)
    'imported 1 source into s: 2 windows, 5 events (c: corpus); reconciled 1 window'
    """
    sources = ", ".join(f"{path}: {form}" for path, form in report.sources)
    plural = "" if len(report.sources) == 1 else "s"
    summary = (f"imported {len(report.sources)} source{plural} into {store_path}: "
               f"{report.windows} windows, {report.events} events ({sources})")
    if reconciled:
        summary += f"; reconciled {reconciled} window{'' if reconciled == 1 else 's'}"
    return "\n".join([summary, *(f"note: {note}" for note in report.notes)])
