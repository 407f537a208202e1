"""`session-search import` and `stats`: load transcripts into a store and count them.

Owns: these two commands' arguments and outputs.
Must not touch: the import job itself (`engine.ingest.import_into_store`), formats,
storage and indexes (the backends, reached through `engine.store.registry`: a new
backend added there is a `--backend` choice here at once), search.

Commands:

* `import --store DIR [--backend NAME] [--create] [--no-reconcile] [--replace] [--quiet]
  SOURCE...` —
  creates a store for the backend when DIR is absent or empty (an existing store keeps
  its own backend), then imports every SOURCE (a corpus directory, a flat `*.jsonl`
  messages file, or an OpenClaw state directory) in one transaction through the backend,
  so the index is written at commit. DIR's parent folder must exist: a missing one is
  refused (a mistyped path should not grow a tree of folders) unless `--create` is given,
  which makes it. On any error nothing is imported (exit 2), and a store this command
  had just created is removed again, with the folders `--create` made. Then, unless
  `--no-reconcile`, the windows the import left dirty are reconciled (the rules are
  `engine.ingest.into_store`'s). With `--replace`, a window the store already holds is
  not refused as a duplicate: its transcript is replaced by what the sources give it, in
  the same transaction (behaviour.md §8.2: reindexed at once when small, else marked
  dirty and reconciled). On a terminal a progress bar shows the rows, their rate
  and the time left (`engine.cli.progress_display`); the summary says what was added,
  how long it took, and how many messages have a role that is never searched;
  `--quiet` prints neither (with `--json` the document is still printed);
* `import --store DIR --openclaw-state PATH [...]` — the live import
  (`engine.ingest.live_state`): the store is brought up to date with the OpenClaw state
  folder PATH (what is new since the last run only), one summary line says what was
  added, extended, replaced or unchanged;
* `stats --store DIR [--backend NAME] [--read-only]` — agents, sessions (keys), windows, events and bytes of a store,
  then whatever index counts the backend adds (`messages_indexed`, ...), summed over the
  agents' partitions, then the same counts per agent (`--json`: `partitions`); a warning
  line on standard error for each problem of its files (committed transactions missing
  from a reference partition's log, a checkpoint that disagrees with it: exit status 1),
  and a note for what is only worth knowing (`problems` and `notes` in JSON);
  `--backend NAME` requires the store's backend; `--read-only` also counts a state
  folder the real OpenClaw wrote (`--backend sqlite`), without writing to it;

Stores are opened through `engine.store.registry` (`open_store`,
`open_or_create_store`), which refuses a path the command cannot use with one line
naming it (exit 2).

Every command takes `--json`. Errors go to standard error as
`session-search: error: ...` with exit status 2 for bad usage or input, 1 otherwise
(`engine.cli.main` does that mapping).
"""

from __future__ import annotations

import argparse
import io
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from engine.cli.commands import (
    add_command,
    add_new_store_arguments,
    add_read_only_arguments,
    add_store_argument,
    warn,
)
from engine.cli.json_output import print_json
from engine.cli.output import Column, Output, PlainOutput, format_bytes, open_output
from engine.errors import MissingParentFolder, StorePathError, UsageError
from engine.model import json_key
from engine.store.registry import (
    BACKEND_NAMES,
    DEFAULT_BACKEND,
    open_store,
)

if TYPE_CHECKING:  # the importers are loaded when `import` runs, not for `stats`
    from engine.ingest import ImportReport, LiveReport

STATS_FIELDS = ("agents", "sessions", "windows", "events", "bytes")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `import` and `stats` commands."""
    importer = add_command(
        subparsers, "import",
        description="Import every SOURCE into the store at DIR in one transaction: on any "
                    "error nothing is imported. A SOURCE is a corpus directory "
                    "(sessions.jsonl + transcripts/), a flat messages file (*.jsonl) or "
                    "an OpenClaw state directory (agents/<agentId>/sessions/). The input "
                    "formats are corpora/README.md. With --openclaw-state PATH the import is "
                    "live: run again on the same state, it appends the new lines and adds "
                    "the new files only, replaces a transcript that changed before its "
                    "known end, and reads the agents' openclaw-agent.sqlite databases "
                    "read-only (`session-search watch` repeats it).",
        examples=["session-search import --store demo engine/demo_corpus",
                  ("session-search import --store stores/sqlite --create --backend sqlite "
                  "messages.jsonl"),
                  "session-search import --store demo --quiet --json ~/.openclaw",
                  "session-search import --store demo --replace corrected-corpus",
                  "session-search import --store mine --openclaw-state ~/.openclaw"],
    )
    add_store_argument(importer)
    add_new_store_arguments(importer, BACKEND_NAMES, DEFAULT_BACKEND)
    importer.add_argument("--no-reconcile", action="store_true",
                          help="leave windows the import made dirty for a later reconcile")
    importer.add_argument("--replace", action="store_true",
                          help="a window the store already holds gets the transcript the "
                               "sources give it (replaced in the same transaction) instead "
                               "of failing as a duplicate")
    importer.add_argument("--quiet", "-q", action="store_true",
                          help="no progress bar and no summary (errors are still printed)")
    importer.add_argument("--openclaw-state", metavar="PATH", default=None,
                          help="instead of SOURCEs: bring the store up to date with the "
                               "OpenClaw state folder PATH (its session files and its "
                               "agents' openclaw-agent.sqlite, read-only); re-run, it adds "
                               "only what is new")
    importer.add_argument("sources", nargs="*", metavar="SOURCE", help="what to import")
    importer.add_argument("--json", action="store_true", help="print JSON")
    importer.set_defaults(run=run_import)

    stats = add_command(
        subparsers, "stats",
        description="Print the counts of the store at DIR: agents, sessions (keys), windows, "
                    "events and bytes, then the backend's index counts. A problem with the "
                    "store's files is a warning on standard error (exit status 1).",
        examples=["session-search stats --store demo",
                  "session-search stats --store demo --json",
                  "session-search stats --store ~/.openclaw --backend sqlite --read-only"])
    add_store_argument(stats)
    stats.add_argument("--json", action="store_true", help="print JSON")
    add_read_only_arguments(stats, BACKEND_NAMES)
    stats.set_defaults(run=run_stats)



def run_import(args: argparse.Namespace) -> int:
    """`import`: load the sources (or follow the state of `--openclaw-state`), then
    print what was added and the store's counts."""
    from engine.cli.progress_display import ProgressDisplay
    from engine.ingest import import_into_store, live_import_into_store

    if args.openclaw_state is not None and args.sources:
        raise UsageError("give SOURCEs or --openclaw-state PATH, not both")
    if args.openclaw_state is None and not args.sources:
        raise UsageError("nothing to import: give at least one SOURCE, or --openclaw-state PATH")
    store_path = Path(args.store)
    started = time.perf_counter()
    try:
        if args.openclaw_state is not None:
            outcome = live_import_into_store(
                store_path, args.backend, Path(args.openclaw_state),
                reconcile=not args.no_reconcile, create_parents=args.create, warn=warn)
        else:
            with ProgressDisplay.for_command(args.quiet) as progress:
                outcome = import_into_store(
                    store_path, args.backend, args.sources, reconcile=not args.no_reconcile,
                    create_parents=args.create,
                    progress=progress if progress.enabled else None, replace=args.replace,
                    warn=warn)
    except MissingParentFolder as missing:
        raise StorePathError(missing.path, f"{missing.reason}; pass --create to make it, "
                                           "or check the path") from None
    seconds = time.perf_counter() - started
    counts = ordered_stats(outcome.stats)
    if args.json:
        print_json({"store": str(store_path), **outcome.to_json(), "stats": json_counts(counts)})
    elif not args.quiet:
        output = open_output(colour=args.color)
        describe = describe_live_import if args.openclaw_state is not None else describe_import
        for line in describe(outcome.imported, store_path, outcome.reconciled,
                             seconds).splitlines():
            output.line(line)
        print_stats(output, counts)
    return 0


def describe_live_import(report: LiveReport, store_path: Path, reconciled: int = 0,
                         seconds: float | None = None) -> str:
    """What a live import did, one line, then a line per note.

    >>> from engine.ingest import LiveReport
    >>> print(describe_live_import(LiveReport("st", unchanged=2, notes=("x",)), Path("s")))
    imported into s from state st: nothing new (2 windows unchanged)
    note: x
    """
    line = f"imported into {store_path} from {report.summary()}"
    if seconds is not None:
        line += f" in {seconds:.3g} s"
    if reconciled:
        line += f"; reconciled {reconciled} window{'' if reconciled == 1 else 's'}"
    return "\n".join([line, *(f"note: {note}" for note in report.notes)])


def run_stats(args: argparse.Namespace) -> int:
    """`stats`: print the counts of an existing store, and a warning line (standard error;
    `problems` and `notes` in JSON) for each thing wrong with its files (committed
    transactions missing from the log, a checkpoint that disagrees with it): exit 1 when
    there is one, rather than counts silently smaller. Notes (an unfinished transaction
    at the end of the log) are shown and leave the exit status 0."""
    store_path = Path(args.store)
    # Opened even when committed data is missing from a log, to report it.
    backend = open_store(store_path, "stats", backend=args.backend, read_only=args.read_only,
                         accept_lost_commits=True)
    backend_name = backend.name
    found = backend.problems()
    try:
        counts = ordered_stats(backend.stats())
        per_agent = {agent_id: ordered_stats(partition_counts)
                     for agent_id, partition_counts in backend.partition_stats().items()}
    finally:
        backend.close()
    problems = [problem.with_advice() for problem in found if problem.serious]
    notes = [problem.with_advice() for problem in found if not problem.serious]
    if args.json:
        print_json({"store": str(store_path), "backend": backend_name, **json_counts(counts),
                    "partitions": {agent_id: json_counts(partition_counts)
                                   for agent_id, partition_counts in per_agent.items()},
                    "problems": problems, "notes": notes})
    else:
        output = open_output(colour=args.color)
        output.line(f"store {store_path} (backend {backend_name})")
        print_stats(output, counts)
        if per_agent:
            output.line()
            print_partition_stats(output, per_agent)
    for problem in problems:
        print(f"session-search: warning: {problem}", file=sys.stderr)
    for note in notes:
        print(f"session-search: note: {note}", file=sys.stderr)
    return 1 if problems else 0


#: The counts shown per agent's partition (the store-wide counts come first).
PARTITION_FIELDS = ("sessions", "windows", "events", "bytes", "messages_indexed")


def print_partition_stats(output: Output, per_agent: dict[str, dict[str, int]]) -> None:
    """One row of counts per agent's partition (byte counts readable, numbers right)."""
    names = [name for name in PARTITION_FIELDS
             if any(name in counts for counts in per_agent.values())]
    columns = [Column("agent"), *(Column(name.replace("_", " "), align="right")
                                  for name in names)]
    output.table(columns, [[agent_id, *(format_bytes(counts.get(name, 0)) if name == "bytes"
                                        else str(counts.get(name, 0)) for name in names)]
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


def json_counts(counts: dict[str, int]) -> dict[str, int]:
    """The counts as a JSON document names them (`engine.model.json_key`).

    >>> json_counts({"events": 3, "messages_indexed": 2})
    {'events': 3, 'messagesIndexed': 2}
    """
    return {json_key(name): value for name, value in counts.items()}


def stats_fields(counts: dict[str, int]) -> list[tuple[str, str]]:
    """The counts as (label, value) pairs for people: thousands separated, byte counts
    (`bytes`, `*_bytes`) in binary units.

    >>> stats_fields({"agents": 2, "events": 12345, "bytes": 25339, "index_bytes": 900})
    [('agents', '2'), ('events', '12,345'), ('bytes', '24.7 KiB'), ('index bytes', '900 B')]
    """
    return [(name.replace("_", " "),
             format_bytes(value) if name == "bytes" or name.endswith("_bytes") else f"{value:,}")
            for name, value in counts.items()]


def print_stats(output: Output, counts: dict[str, int]) -> None:
    """The counts, one name and value a line."""
    output.fields(stats_fields(counts))


def format_stats(counts: dict[str, int]) -> str:
    """The counts as plain lines, one name and value a line (as `stats` prints them).

    >>> print(format_stats({"agents": 2, "sessions": 3, "windows": 4, "events": 9,
    ...                     "bytes": 120}))
    agents    2
    sessions  3
    windows   4
    events    9
    bytes     120 B
    """
    text = io.StringIO()
    PlainOutput(text).fields(stats_fields(counts))
    return text.getvalue().rstrip("\n")


def describe_import(report: ImportReport, store_path: Path, reconciled: int = 0,
                    seconds: float | None = None) -> str:
    """What an import added, one line, then a line per note (the first one counts the
    messages whose role is never searched).

    >>> from engine.ingest import ImportReport
    >>> describe_import(ImportReport((("c", "corpus"),), 2, 5), Path("s"), 1)
    'imported 1 source into s: 2 windows, 5 events (c: corpus); reconciled 1 window'
    >>> print(describe_import(ImportReport((("m.jsonl", "flat"),), 1, 3,
    ...     unindexed_roles=(("system", 1), ("toolResult", 2))), Path("s"), seconds=0.25))
    imported 1 source into s: 1 windows, 3 events (m.jsonl: flat) in 0.25 s
    note: 3 messages are stored but never searched (only user and assistant messages are): 1 system, 2 toolResult
    >>> describe_import(ImportReport((("c", "corpus"),), 0, 4, replaced=1), Path("s"))
    'imported 1 source into s: 0 windows, 4 events (c: corpus); replaced the transcript of 1 stored window'
    >>> describe_import(ImportReport((("m.jsonl", "flat"),), 0, 4, extended=2), Path("s"))
    'imported 1 source into s: 0 windows, 4 events (m.jsonl: flat); 2 stored windows continued'
    """
    sources = ", ".join(f"{path}: {form}" for path, form in report.sources)
    plural = "" if len(report.sources) == 1 else "s"
    summary = (f"imported {len(report.sources)} source{plural} into {store_path}: "
               f"{report.windows} windows, {report.events} events ({sources})")
    if report.extended:
        summary += (f"; {report.extended} stored window{'' if report.extended == 1 else 's'} "
                    "continued")
    if report.replaced:
        summary += (f"; replaced the transcript of {report.replaced} stored "
                    f"window{'' if report.replaced == 1 else 's'}")
    if report.reclaimed is not None:
        summary += f" and compacted the store (reclaimed {format_bytes(report.reclaimed)})"
    if seconds is not None:
        summary += f" in {seconds:.3g} s"
    if reconciled:
        summary += f"; reconciled {reconciled} window{'' if reconciled == 1 else 's'}"
    notes = list(report.notes)
    unindexed = sum(count for _, count in report.unindexed_roles)
    if unindexed:
        roles = ", ".join(f"{count} {role}" for role, count in report.unindexed_roles)
        notes.insert(0, f"{unindexed} message{'' if unindexed == 1 else 's'} "
                        f"{'is' if unindexed == 1 else 'are'} stored but never searched "
                        f"(only user and assistant messages are): {roles}")
    return "\n".join([summary, *(f"note: {note}" for note in notes)])
