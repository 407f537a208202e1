"""`session-search compact`: reclaim the space deleted sessions still take in a store.

Owns: the `compact` command's arguments and output. Must not touch: how a backend
compacts (its `Compactable.compact`: the reference store's transcript log compaction,
`engine.transcript.compaction`; SQLite's `VACUUM`) or the store's files.

    session-search compact --store DIR           compacted N log files, reclaimed 1.2 MiB
    session-search compact --store DIR --json    {"filesCompacted", "bytesReclaimed",
                                                  "recordsDropped", "kind"}

The store is opened as its writer (`engine.store.registry.open_store`, so a bad path
is refused as every command refuses it) and every agent's partition is compacted in
turn. Readers may go on searching meanwhile. A failure (a full disk) is an error (exit
status 1) that leaves the store as whole as before.
"""

from __future__ import annotations

import argparse

from engine import Compactable, require_capability
from engine.cli.commands import add_command, add_store_argument, warn
from engine.cli.json_output import print_json
from engine.cli.output import format_bytes
from engine.store.registry import open_store


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `compact` command."""
    parser = add_command(
        subparsers, "compact",
        description="Reclaim the space that deleted sessions still take: a reference "
        "store rewrites the transcript log files holding their records (online and "
        "crash-safe: readers go on, a kill loses nothing committed); a SQLite store runs "
        "VACUUM. Nothing a search or a read sees changes. Takes the store's writer lock.",
        examples=["session-search compact --store demo",
                  "session-search compact --store demo --json"])
    add_store_argument(parser)
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Compact every partition; print the summary line (or the JSON document)."""
    backend = open_store(args.store, "compact", writer=True, warn=warn)
    try:
        outcome = require_capability(backend, Compactable, "compact").compact()
    finally:
        backend.close()
    if args.json:
        print_json(outcome.to_json())
    else:
        print(compact_summary(outcome.files_compacted, outcome.kind,
                              outcome.bytes_reclaimed))
    return 0


def compact_summary(files: int, kind: str, reclaimed: int) -> str:
    """The line `compact` prints: the files rewritten (of `kind`), and the bytes
    reclaimed in binary units, as every readable byte count.

    >>> compact_summary(2, "log", 25339), compact_summary(1, "database", 0)
    ('compacted 2 log files, reclaimed 24.7 KiB', 'compacted 1 database file, reclaimed 0 B')
    """
    return (f"compacted {files} {kind} file{'' if files == 1 else 's'}, "
            f"reclaimed {format_bytes(reclaimed)}")
