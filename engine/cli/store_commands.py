"""`session-search import` and `stats`: load transcripts into a store and count them.

Owns: these two commands' arguments and outputs, and where the demo corpus is found
(`demo_corpus_path`, used by `engine.cli.demo_command`).
Must not touch: formats (`engine.ingest`), storage and indexes (the backends, reached
through `engine.backends.registry`: a new backend added there is a `--backend` choice
here at once), search.

Commands:

* `import --store DIR [--backend NAME] [--no-reconcile] SOURCE...` — creates a store for
  the backend when DIR is absent or empty (an existing store keeps its own backend), then
  imports every SOURCE (a corpus directory, a flat `*.jsonl` messages file, or an
  OpenClaw state directory) in one transaction through the backend, so the index is
  written at commit. On any error nothing is imported (exit 2), and a store this command
  had just created is removed again. Then, unless `--no-reconcile`, the backend's
  `reconcile()` rebuilds the windows the import left dirty (behaviour.md §8.1: imported
  history and rewinds are indexed by reconcile, as `openclaw doctor` imports are);
* `stats --store DIR` — agents, sessions (keys), windows, events and bytes of a store,
  then whatever index counts the backend adds (`messages_indexed`, ...); a warning line
  on standard error for each problem of its files (committed transactions missing from
  a reference store's log, a checkpoint that disagrees with it: exit status 1), and a
  note for what is only worth knowing (`problems` and `notes` in JSON);

Every command takes `--json`. Errors go to standard error as
`session-search: error: ...` with exit status 2 for bad usage or input, 1 otherwise
(`engine.cli.main` does that mapping).
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import engine
from engine.backends.registry import BACKEND_NAMES, detect_backend, open_backend
from engine.cli.output import format_table, print_json
from engine.errors import StoreError, UsageError
from engine.ingest import ImportReport, detect_form, import_sources

STATS_FIELDS = ("agents", "sessions", "windows", "events", "bytes")
DEFAULT_BACKEND = "reference"


def demo_corpus_path() -> Path:
    """`corpora/demo` of the checkout the package runs from (installed editable)."""
    return Path(engine.__file__).resolve().parent.parent / "corpora" / "demo"


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
    outcome = import_into(store_path, args.backend, args.sources,
                          reconcile=not args.no_reconcile)
    if args.json:
        print_json({"store": str(store_path), **outcome_json(outcome)})
    else:
        print(describe_import(outcome["imported"], store_path, outcome["reconciled"]))
        print(format_stats(outcome["stats"]))
    return 0


def run_stats(args: argparse.Namespace) -> int:
    """`stats`: print the counts of an existing store, and a warning line (standard error;
    `problems` and `notes` in JSON) for each thing wrong with its files (committed
    transactions missing from the log, a checkpoint that disagrees with it): exit 1 when
    there is one, rather than counts silently smaller. Notes (an unfinished transaction
    at the end of the log) are shown and leave the exit status 0."""
    store_path = Path(args.store)
    backend_name = _existing_backend(store_path)
    if backend_name is None:
        raise UsageError(f"{store_path}: no session-search store here")
    if backend_name == "reference":  # open even when committed data is missing: report it
        from engine.backends.reference import ReferenceBackend
        from engine.directory import FileDirectory

        backend: Any = ReferenceBackend.open_in(FileDirectory(store_path),
                                                accept_lost_commits=True)
        found = backend.store.problems()
    else:
        backend, found = open_backend(store_path, backend=backend_name), []
    try:
        counts = ordered_stats(backend.stats())
    finally:
        backend.close()
    problems = [problem.with_advice() for problem in found if problem.serious]
    notes = [problem.with_advice() for problem in found if not problem.serious]
    if args.json:
        print_json({"store": str(store_path), "backend": backend_name, **counts,
                    "problems": problems, "notes": notes})
    else:
        print(f"store {store_path} (backend {backend_name})")
        print(format_stats(counts))
    for problem in problems:
        print(f"session-search: warning: {problem}", file=sys.stderr)
    for note in notes:
        print(f"session-search: note: {note}", file=sys.stderr)
    return 1 if problems else 0


def import_into(
    store_path: Path,
    backend_name: str | None,
    sources: Sequence[str | Path],
    *,
    reconcile: bool = True,
) -> dict[str, Any]:
    """Open (or create) the store at `store_path`, import `sources`, maybe reconcile.

    Returns `{"backend", "imported": ImportReport, "reconciled": int, "stats": counts}`.
    The sources' forms are checked first, so a wrong SOURCE never leaves a new store.
    """
    for source in sources:
        detect_form(Path(source))
    existing = _existing_backend(store_path)
    if existing is not None and backend_name is not None and existing != backend_name:
        raise UsageError(f"{store_path}: store was created for backend {existing!r}, "
                         f"not {backend_name!r}")
    name = existing or backend_name or DEFAULT_BACKEND
    create = existing is None
    folder_existed = store_path.exists()
    backend = open_backend(store_path, backend=name, create=create, writer=True)
    try:
        report = import_sources(backend, sources)
        reconciled = _reconcile(backend) if reconcile else 0
        counts = ordered_stats(backend.stats())
    except BaseException:
        backend.close()
        if create:
            _remove_new_store(store_path, folder_existed)
        raise
    backend.close()
    return {"backend": name, "imported": report, "reconciled": reconciled, "stats": counts}


def outcome_json(outcome: dict[str, Any]) -> dict[str, Any]:
    """An `import_into` outcome as JSON: the report becomes its JSON object."""
    return {**outcome, "imported": outcome["imported"].to_json()}


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


def _reconcile(backend: Any) -> int:
    """Run the backend's `reconcile()` when it has one; the number of windows rebuilt."""
    method = getattr(backend, "reconcile", None)
    return int(method()) if callable(method) else 0


def _existing_backend(store_path: Path) -> str | None:
    """The backend of the store at `store_path`; None for an absent or empty folder.

    A file, or a non-empty folder holding no store, is a usage error.
    """
    if not store_path.exists():
        return None
    if not store_path.is_dir():
        raise UsageError(f"{store_path}: not a folder")
    if not any(store_path.iterdir()):
        return None
    try:
        return detect_backend(store_path)
    except StoreError:
        raise UsageError(f"{store_path}: folder is not empty and holds no store") from None


def _remove_new_store(store_path: Path, folder_existed: bool) -> None:
    """Undo the creation of a store whose first import failed (the folder was empty)."""
    if not folder_existed:
        shutil.rmtree(store_path, ignore_errors=True)
        return
    for child in store_path.iterdir():
        if child.is_dir():
            shutil.rmtree(child)
        else:
            child.unlink()
