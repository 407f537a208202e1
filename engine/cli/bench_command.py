"""`session-search bench`: time every backend on a generated corpus and report.

Owns: the command's arguments and its output (progress on stderr, the table or JSON on
stdout, `bench.json` and PNG charts in `--out`). Must not touch: what is measured or how
(`engine.bench`).

    session-search bench [--size tiny|10k|100k|1m] [--seed N] [--backends a,b]
                         [--rounds N] [--repeats N] [--only GROUP,...] [--corpus DIR]
                         [--cache DIR] [--real-text] [--out DIR] [--no-progress]
                         [--markdown] [--json]
    session-search bench --from-report bench.json [--out DIR] [--markdown]

The corpus is generated once into the cache and reused: `--cache DIR`, else
`$SESSION_SEARCH_CACHE`, else `./corpora/cache` when run from a checkout, else
`~/.cache/session-search/corpora` (`engine.bench.corpus_generator.default_cache_root`).
`--corpus DIR` benchmarks an existing corpus directory that has a `manifest.json` (one
written by the generator); `--real-text` uses the dialogs the `chatterbot-corpus`
package ships (`engine.bench.real_text`). The charts need matplotlib (the `bench`
extra); without it the command still measures and writes `bench.json`, and says so.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from engine.bench.adapters import CapabilityMissing, default_services
from engine.bench.charts import ChartsUnavailable, write_charts
from engine.bench.corpus_generator import (
    CORPUS_SIZES,
    DEFAULT_SEED,
    corpus_size,
    ensure_corpus,
    read_manifest,
)
from engine.bench.progress import ProgressBar
from engine.bench.real_text import ensure_chatterbot_corpus
from engine.bench.report import (
    BASELINE_BACKEND,
    ReportRow,
    format_markdown_table,
    report_document,
    report_rows,
    rows_from_document,
    table_cells,
    table_headers,
    write_report,
)
from engine.bench.runner import run_benchmark
from engine.bench.workloads import standard_workloads
from engine.cli.commands import add_command
from engine.cli.json_output import print_json
from engine.cli.output import format_table
from engine.errors import EngineError, InputError, UsageError

CACHE_HELP = (
    "where generated corpora are kept and reused (default: $SESSION_SEARCH_CACHE, else "
    "./corpora/cache when run from a checkout, else ~/.cache/session-search/corpora)"
)


def register(subparsers: Any) -> None:
    """Add the `bench` command."""
    parser = add_command(
        subparsers, "bench",
        description="Run the benchmark workloads on every backend in interleaved rounds, "
                    "print medians and p95 with ratios against SQLite FTS5, and write "
                    "bench.json plus PNG charts (the charts need the bench extra: "
                    "pip install 'session-search[bench]'). The corpus is generated once "
                    "into the cache and reused; see --cache.",
        examples=["session-search bench --size tiny",
                  "session-search bench --size 10k --backends reference,sqlite --out /tmp/bench"],
    )
    parser.add_argument("--size", default="10k", choices=list(CORPUS_SIZES),
                        help="generated corpus size (default 10k)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="corpus seed")
    parser.add_argument("--corpus", type=Path, help="an existing generated corpus directory")
    parser.add_argument("--cache", type=Path, metavar="DIR", help=CACHE_HELP)
    parser.add_argument("--real-text", action="store_true",
                        help="use the dialogs of the chatterbot-corpus package (real text; "
                             "needs chatterbot-corpus and pyyaml installed)")
    parser.add_argument("--backends", help="comma-separated backend names (default: all)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    parser.add_argument("--repeats", type=int, default=5,
                        help="timed calls per query workload per round (default 5)")
    parser.add_argument("--only", help="comma-separated workload groups to run "
                        "(ingest, reopen, query, history, agent, ui, append, reconcile)")
    parser.add_argument("--out", type=Path, default=Path("bench/out"),
                        help="output directory for bench.json and charts (default bench/out)")
    parser.add_argument("--from-report", type=Path, metavar="BENCH_JSON",
                        help="measure nothing: re-print the table of a saved bench.json and "
                             "redraw its charts into --out")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--markdown", action="store_true",
                        help="print the table in Markdown (for the README)")
    parser.add_argument("--json", action="store_true", help="print the JSON report")
    parser.set_defaults(run=run)


def _backends(requested: str | None, available: tuple[str, ...]) -> tuple[str, ...]:
    if not requested:
        return available
    names = tuple(name.strip() for name in requested.split(",") if name.strip())
    unknown = [name for name in names if name not in available]
    if unknown:
        raise UsageError(
            f"unknown backend {unknown[0]!r}; choose from: {', '.join(available)}"
        )
    return names


def format_report_table(rows: list[ReportRow], baseline: str = BASELINE_BACKEND) -> str:
    """The plain-text table the command prints."""
    return format_table(table_headers(baseline), table_cells(rows))


def _caption(corpus: dict[str, Any], rounds: int) -> str:
    """The line under each chart's title: which corpus, how many rounds.

    >>> _caption({"size": "10k", "seed": 7, "counts": {"messages": 10000}}, 3)
    'corpus 10k (seed 7), 10,000 messages; 3 interleaved rounds'
    """
    messages = corpus.get("counts", {}).get("messages")
    counted = f", {messages:,} messages" if isinstance(messages, int) else ""
    plural = "round" if rounds == 1 else "rounds"
    return f"corpus {corpus.get('size')} (seed {corpus.get('seed')}){counted}; " \
           f"{rounds} interleaved {plural}"


def _write_charts(rows: list[ReportRow], backends: Sequence[str], directory: Path,
                  caption: str) -> list[Path]:
    """The charts written, or none (said on stderr) when matplotlib is missing."""
    try:
        return write_charts(rows, backends, directory, caption)
    except ChartsUnavailable as missing:
        print(f"session-search bench: no charts written: {missing}", file=sys.stderr)
        return []


def rerender(args: argparse.Namespace) -> int:
    """Print the table of a saved report and redraw its charts (`--from-report`)."""
    try:
        document = json.loads(args.from_report.read_text(encoding="utf-8"))
        rows = rows_from_document(document)
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise InputError(f"{args.from_report}: cannot read a bench report: {error}") from None
    charts = _write_charts(rows, document["backends"], args.out,
                           _caption(document.get("corpus", {}), document.get("rounds", 0)))
    if args.json:
        print_json(document)
    else:
        print(format_markdown_table(rows) if args.markdown else format_report_table(rows))
        if charts:
            print(f"wrote {', '.join(str(path) for path in charts)}")
    return 0


def run(args: argparse.Namespace) -> int:
    """Generate or find the corpus, run the benchmark, print and write the report."""
    if args.from_report is not None:
        return rerender(args)
    if args.rounds < 1 or args.repeats < 1:
        raise UsageError("--rounds and --repeats must be at least 1")
    services = default_services()
    try:
        available = services.backend_names()
    except CapabilityMissing as missing:
        raise EngineError(f"cannot benchmark: {missing}") from None
    backends = _backends(args.backends, available)
    show_progress = not args.no_progress
    if args.real_text:
        try:
            corpus = ensure_chatterbot_corpus(args.cache)
        except CapabilityMissing as missing:
            raise EngineError(str(missing)) from None
    elif args.corpus is not None:
        corpus = args.corpus
        if not (corpus / "manifest.json").is_file():
            raise UsageError(f"{corpus}: not a generated corpus (no manifest.json)")
    else:
        size = corpus_size(args.size)
        generation = ProgressBar(size.messages, f"corpus {size.name}", enabled=show_progress)
        corpus = ensure_corpus(size, args.seed, cache_root=args.cache,
                               progress=lambda done, _: generation.update(done))
        generation.close()
    manifest = read_manifest(corpus)
    workloads = standard_workloads(manifest, query_repeats=args.repeats)
    if args.only:
        groups = {group.strip() for group in args.only.split(",")}
        workloads = [workload for workload in workloads if workload.group in groups]
        if not workloads:
            raise UsageError(f"--only {args.only!r} selects no workload")
    progress = ProgressBar(0, "bench", enabled=show_progress)
    work_directory = Path(tempfile.mkdtemp(prefix="session-search-bench-"))
    try:
        bench_run = run_benchmark(
            corpus, manifest, backends, workloads, work_directory, services,
            rounds=args.rounds, progress=progress,
        )
    finally:
        from engine.bench.adapters import remove_store

        stores = work_directory / "stores"
        for store in sorted(stores.iterdir()) if stores.is_dir() else ():
            remove_store(store, ignore_errors=True)  # with a postgres store's schemas
        shutil.rmtree(work_directory, ignore_errors=True)
    rows = report_rows(bench_run)
    document = report_document(bench_run, rows)
    report_path = write_report(document, args.out)
    charts = _write_charts(rows, backends, args.out,
                           _caption(document["corpus"], args.rounds))
    document["files"] = [str(report_path)] + [str(path) for path in charts]
    if args.json:
        print_json(document)
    else:
        counts = manifest["counts"]
        print(f"corpus {manifest['size']} (seed {manifest['seed']}): {counts['messages']:,} "
              f"messages, {counts['sessionKeys']:,} session keys, {counts['windows']:,} windows; "
              f"{args.rounds} interleaved rounds")
        print(format_markdown_table(rows) if args.markdown else format_report_table(rows))
        print(f"wrote {', '.join(document['files'])}")
    failed = sorted({f"{row.workload} ({row.backend})" for row in rows if row.status == "failed"})
    if failed:
        # A wrong answer is a bug, not a slow result: say so and fail the command.
        print(f"session-search bench: wrong answers in {len(failed)} cell(s): "
              f"{', '.join(failed)}", file=sys.stderr)
        return 1
    return 0
