"""`session-search import`, `stats` and `demo`: load transcripts into a store and count them.

Owns: these three commands' arguments and outputs, the lookup from a `--backend` name to
the function that opens an import target, and where the demo corpus is found. Must not
touch: formats (`engine.ingest`), storage (`engine.transcript.store`), search.

Commands:

* `import --store DIR [--backend reference] SOURCE...` — creates the store when DIR is
  absent or empty, then imports every SOURCE (a corpus directory, a flat `*.jsonl`
  messages file, or an OpenClaw state directory) in one transaction; on any error nothing is imported (exit 2), and a
  store this command had just created is removed again;
* `stats --store DIR` — agents, sessions (keys), windows, events and bytes of a store;
* `demo [--store DIR]` — imports `corpora/demo` of the source checkout into a temporary
  store (or into DIR, kept) and prints its stats.

Every command takes `--json`. Errors go to standard error as
`session-search: error: ...` with exit status 2 for bad usage or input, 1 otherwise
(`engine.cli.main` does that mapping).
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import engine
from engine.cli.output import format_table, print_json
from engine.errors import EngineError, UsageError
from engine.ingest import ImportReport, ImportTarget, detect_form, import_sources
from engine.transcript.store import TranscriptStore

STATS_FIELDS = ("agents", "sessions", "windows", "events", "bytes")


def _open_reference_store(path: Path, create: bool) -> TranscriptStore:
    """The reference backend's import target: the transcript store itself."""
    return TranscriptStore.open_path(path, writer=True, create=create, backend="reference")


#: Backend name -> opener `(store folder, create) -> import target with .close()`.
#: A new backend is one more line here.
STORE_OPENERS: dict[str, Callable[[Path, bool], Any]] = {
    "reference": _open_reference_store,
}


def demo_corpus_path() -> Path:
    """`corpora/demo` of the checkout the package runs from (installed editable)."""
    return Path(engine.__file__).resolve().parent.parent / "corpora" / "demo"


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `import`, `stats` and `demo` commands."""
    importer = subparsers.add_parser(
        "import",
        help="import transcripts (corpus, flat messages, OpenClaw state) into a store",
        description="Import every SOURCE into the store at DIR in one transaction: on any "
                    "error nothing is imported. A SOURCE is a corpus directory "
                    "(sessions.jsonl + transcripts/), a flat messages file (*.jsonl) or "
                    "an OpenClaw state directory (agents/<agentId>/sessions/).",
    )
    importer.add_argument("--store", required=True, metavar="DIR", help="store folder")
    importer.add_argument("--backend", choices=tuple(STORE_OPENERS), default="reference",
                          help="backend of a new store (default: reference)")
    importer.add_argument("sources", nargs="+", metavar="SOURCE", help="what to import")
    importer.add_argument("--json", action="store_true", help="print JSON")
    importer.set_defaults(run=run_import)

    stats = subparsers.add_parser(
        "stats", help="count a store's agents, sessions, windows, events and bytes",
        description="Print the counts of the store at DIR.")
    stats.add_argument("--store", required=True, metavar="DIR", help="store folder")
    stats.add_argument("--json", action="store_true", help="print JSON")
    stats.set_defaults(run=run_stats)

    demo = subparsers.add_parser(
        "demo", help="import the demo corpus into a temporary store and show its stats",
        description="Import corpora/demo (from the source checkout) into a temporary store, "
                    "or into DIR with --store (kept), and print the store's stats.")
    demo.add_argument("--store", metavar="DIR", help="keep the demo store in DIR")
    demo.add_argument("--json", action="store_true", help="print JSON")
    demo.set_defaults(run=run_demo)


def run_import(args: argparse.Namespace) -> int:
    """`import`: load the sources, then print what was added and the store's counts."""
    store_path = Path(args.store)
    report, counts = import_into(store_path, args.backend, args.sources)
    if args.json:
        print_json({"store": str(store_path), "imported": report.to_json(), "stats": counts})
    else:
        print(describe_import(report, store_path))
        print(format_stats(counts))
    return 0


def run_stats(args: argparse.Namespace) -> int:
    """`stats`: print the counts of an existing store."""
    store_path = Path(args.store)
    if not (store_path / "store.meta").is_file():
        raise UsageError(f"{store_path}: no session-search store here")
    with TranscriptStore.open_path(store_path) as store:
        counts = ordered_stats(store.stats())
        backend = store.backend
    if args.json:
        print_json({"store": str(store_path), "backend": backend, **counts})
    else:
        print(f"store {store_path} (backend {backend})")
        print(format_stats(counts))
    return 0


def run_demo(args: argparse.Namespace) -> int:
    """`demo`: import the demo corpus into a temporary (or given) store; print its stats."""
    corpus = demo_corpus_path()
    if not (corpus / "sessions.jsonl").is_file():
        raise EngineError(f"the demo corpus is not at {corpus}; the demo needs the source "
                          "checkout (pip install -e . from the repository)")
    if args.store:
        report, counts = import_into(Path(args.store), "reference", [corpus])
        kept: str | None = args.store
    else:
        with tempfile.TemporaryDirectory(prefix="session-search-demo-") as folder:
            report, counts = import_into(Path(folder) / "store", "reference", [corpus])
        kept = None
    if args.json:
        print_json({"corpus": str(corpus), "store": kept, "imported": report.to_json(),
                    "stats": counts})
    else:
        where = f"into {kept}" if kept else "into a temporary store (removed afterwards)"
        print(f"imported the demo corpus {corpus} {where}")
        print(format_stats(counts))
    return 0


def import_into(
    store_path: Path, backend: str, sources: list[str] | list[Path]
) -> tuple[ImportReport, dict[str, int]]:
    """Open (or create) the store at `store_path`, import `sources`, return the outcome.

    The sources' forms are checked first, so a wrong SOURCE never leaves a new empty store.
    """
    for source in sources:
        detect_form(Path(source))
    create = _needs_creating(store_path)
    folder_existed = store_path.exists()
    target: ImportTarget = STORE_OPENERS[backend](store_path, create)
    try:
        existing = getattr(target, "backend", backend)
        if not create and existing != backend:
            raise UsageError(f"{store_path}: store was created for backend {existing!r}, "
                             f"not {backend!r}")
        report = import_sources(target, sources)
        counts = ordered_stats(target.stats())
    except BaseException:
        target.close()
        if create:
            _remove_new_store(store_path, folder_existed)
        raise
    target.close()
    return report, counts


def ordered_stats(stats: dict[str, int]) -> dict[str, int]:
    """The five counts in their display order."""
    return {name: int(stats[name]) for name in STATS_FIELDS}


def format_stats(counts: dict[str, int]) -> str:
    """The counts as a one-row table.

    >>> print(format_stats({"agents": 2, "sessions": 3, "windows": 4, "events": 9,
    ...                     "bytes": 120}))
    agents  sessions  windows  events  bytes
    ------  --------  -------  ------  -----
    2       3         4        9       120
    """
    return format_table(STATS_FIELDS, [[counts[name] for name in STATS_FIELDS]])


def describe_import(report: ImportReport, store_path: Path) -> str:
    """One line saying what an import added.

    >>> describe_import(ImportReport((("c", "corpus"),), 2, 5), Path("s"))
    'imported 1 source into s: 2 windows, 5 events (c: corpus)'
    """
    sources = ", ".join(f"{path}: {form}" for path, form in report.sources)
    plural = "" if len(report.sources) == 1 else "s"
    summary = (f"imported {len(report.sources)} source{plural} into {store_path}: "
               f"{report.windows} windows, {report.events} events ({sources})")
    lines = [summary]
    lines.extend(f"note: {note}" for note in report.notes)
    return "\n".join(lines)


def _remove_new_store(store_path: Path, folder_existed: bool) -> None:
    """Undo the creation of a store whose first import failed (the folder was empty)."""
    if folder_existed:
        for child in store_path.iterdir():
            if child.is_dir():
                shutil.rmtree(child)
            else:
                child.unlink()
    else:
        shutil.rmtree(store_path, ignore_errors=True)


def _needs_creating(store_path: Path) -> bool:
    """True for an absent or empty folder; a non-empty folder must already be a store."""
    if not store_path.exists():
        return True
    if not store_path.is_dir():
        raise UsageError(f"{store_path}: not a folder")
    if (store_path / "store.meta").is_file():
        return False
    if any(store_path.iterdir()):
        raise UsageError(f"{store_path}: folder is not empty and holds no store")
    return True
