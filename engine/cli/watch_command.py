"""`session-search watch`: keep a store in step with an OpenClaw state until interrupted.

Owns: the watch loop's arguments, its pacing and what it prints. Must not touch: what
one pass imports (`engine.ingest.live_import_into_store`, the same live import as
`import --openclaw-state`), formats, storage.

`watch --openclaw-state PATH --store DIR [--backend NAME] [--create] [--interval SECONDS]`
runs one live import, sleeps SECONDS (default 2), and again, until Ctrl-C (SIGINT) or
SIGTERM: then it prints one summary line (passes, events imported, windows added,
extended and replaced) and exits 0. Each pass opens the store, imports what is new,
commits, and closes it, so the writer's lock is held only while a pass runs (a search
or another command can use the store between passes). A pass that wrote something
prints its line; a pass that found nothing prints nothing (a note is printed once).

A problem with the source (a malformed line, a line still being written) or a store
busy with another writer is a warning line on standard error for that pass and the
watch goes on (the next pass retries: the writer may finish the line); nothing of a
failed pass is written, and what earlier passes committed stays. A problem that no
retry can fix (the store folder or the state folder cannot be used) ends the watch
with the usual error and exit status. An interrupt during a pass rolls that pass back
if it came before the pass's commit; one that came after it (while the marks are
written or the store closed: `InterruptedAfterCommit`) leaves the pass committed, and
the summary counts it (its own line is not printed). One that lands within the commit
itself is delivered when the commit ends (`engine.held_signals`), before its counts are
made: that pass is not in the summary, and it stays committed, except on the pass that
created the store, which is then removed as an unfinished import's is.
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from dataclasses import replace
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from engine.cli.commands import add_command, add_new_store_arguments, add_store_argument, warn
from engine.cli.json_output import print_json
from engine.errors import InputError, MalformedInput, StoreLocked, StorePathError, UsageError
from engine.store.registry import BACKEND_NAMES, DEFAULT_BACKEND

if TYPE_CHECKING:
    from engine.ingest.live_report import LiveReport

DEFAULT_INTERVAL = 2.0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `watch` command."""
    watch = add_command(
        subparsers, "watch",
        description="Keep the store at DIR in step with the OpenClaw state folder PATH until "
                    "interrupted: every SECONDS, import what is new (appended lines, new "
                    "files, new events of the agents' openclaw-agent.sqlite, read-only), as "
                    "`import --openclaw-state` does. Ctrl-C stops it with a summary line "
                    "(exit status 0). A bad source line is a warning and is retried on the "
                    "next pass.",
        examples=["session-search watch --openclaw-state ~/.openclaw --store mine",
                  ("session-search watch --openclaw-state ~/.openclaw --store mine "
                   "--backend sqlite --create --interval 10")])
    watch.add_argument("--openclaw-state", required=True, metavar="PATH",
                       help="the OpenClaw state folder to follow (never written)")
    add_store_argument(watch)
    add_new_store_arguments(watch, BACKEND_NAMES, DEFAULT_BACKEND)
    watch.add_argument("--interval", type=positive_seconds, default=DEFAULT_INTERVAL,
                       metavar="SECONDS",
                       help=f"seconds between two passes (default {DEFAULT_INTERVAL:g})")
    watch.add_argument("--json", action="store_true",
                       help="print each pass that wrote something, and the summary, as JSON")
    watch.set_defaults(run=run_watch)


def positive_seconds(text: str) -> float:
    """An `--interval` value: a number of seconds above 0.

    >>> positive_seconds("0.5")
    0.5
    >>> positive_seconds("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a number of seconds above 0, not '0'
    """
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number of seconds above 0, not {text!r}")
    return value


class _Totals:
    """What the passes of one watch did, summed."""

    def __init__(self) -> None:
        self.passes = 0
        self.failed = 0
        self.events = 0
        self.added = 0
        self.extended = 0
        self.replaced = 0

    def count(self, report: LiveReport) -> None:
        """Add one pass that committed `report`."""
        self.passes += 1
        self.events += report.events
        self.added += report.added
        self.extended += report.extended
        self.replaced += report.replaced

    def line(self, store: str, state: str) -> str:
        """The summary line printed when the watch stops.

        >>> _Totals().line("s", "st")
        'watched st into s: 0 passes (0 failed), 0 events imported; windows: 0 added, 0 extended, 0 replaced'
        """
        return (f"watched {state} into {store}: {self.passes} passes ({self.failed} failed), "
                f"{self.events} events imported; windows: {self.added} added, "
                f"{self.extended} extended, {self.replaced} replaced")

    def to_json(self) -> dict[str, int]:
        """The totals as the summary's JSON."""
        return {"passes": self.passes, "failed": self.failed, "events": self.events,
                "added": self.added, "extended": self.extended, "replaced": self.replaced}


def _interrupt(signal_number: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def run_watch(args: argparse.Namespace) -> int:
    """`watch`: live imports every `--interval` seconds until interrupted (exit 0)."""
    from engine.cli.store_commands import describe_live_import
    from engine.ingest import live_import_into_store
    from engine.ingest.into_store import InterruptedAfterCommit
    from engine.ingest.live_state import NOT_A_STATE, is_live_state

    store_path, state = Path(args.store), Path(args.openclaw_state)
    if not is_live_state(state):
        raise MalformedInput(str(state), None, NOT_A_STATE)
    totals = _Totals()
    shown_notes: set[str] = set()

    def warn_once(message: str) -> None:
        if message not in shown_notes:
            shown_notes.add(message)
            warn(message)

    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        while True:
            started = time.perf_counter()
            try:
                outcome = live_import_into_store(store_path, args.backend, state,
                                                 create_parents=args.create, warn=warn_once)
            except (StorePathError, UsageError):
                raise
            except (InputError, StoreLocked) as error:
                totals.passes += 1
                totals.failed += 1
                print(f"session-search: warning: {error} (retried in {args.interval:g} s)",
                      file=sys.stderr, flush=True)
            except InterruptedAfterCommit as interrupted:
                totals.count(interrupted.report)  # committed: counted, then the watch stops
                raise
            else:
                report = outcome.imported
                totals.count(report)
                new_notes = [note for note in report.notes if note not in shown_notes]
                shown_notes.update(new_notes)
                if report.changed or new_notes:
                    if args.json:
                        print_json({"pass": totals.passes, **outcome.to_json()})
                    else:
                        print(describe_live_import(
                            replace(report, notes=tuple(new_notes)), store_path,
                            outcome.reconciled, time.perf_counter() - started))
                    sys.stdout.flush()
            time.sleep(args.interval)
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
    if args.json:
        print_json({"store": str(store_path), "state": str(state), **totals.to_json()})
    else:
        print(totals.line(str(store_path), str(state)), flush=True)
    return 0
