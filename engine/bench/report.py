"""The benchmark report: rows of medians and p95 with ratios, as table cells and as JSON.

Owns: turning a `BenchRun` into report rows (statistics per cell, the ratio against the
faster SQLite figure from the same run), the table's headers and cells, the Markdown table
and the JSON document. Must not touch: timing, backends, files other than the ones
`write_report` is asked to write, or printing (the `bench` command aligns the plain-text
table with the command line's own table format).

A cell whose feature the engine has not built yet (status `not built`, e.g. history reads
before `sessions_history` exists) has no row: the table, the JSON and the charts show
what was measured or could have been, not a list of future work.

A comparator's `not applicable` cells (`engine.bench.comparators`) have no row either.

Ratios are stated against SQLite FTS5 (the engine the product ships), and against its
faster figure: per workload, the base is whichever of `RATIO_BASES` — the `sqlite` backend
and `sqlite-kernel`, upstream's bare statement on the same database — has the lower
median in the same run, and each row says which one it was (column `base`, JSON
`ratioBase`). A ratio is `median(backend) / median(base)`, so 2.0 means twice as slow as
the fastest SQLite answer there, and no ratio can flatter a backend because the SQLite
backend adds overhead of its own. Throughput and memory metrics are reported as the
median over their samples.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.bench.runner import NOT_APPLICABLE, NOT_BUILT, OK, SKIPPED, BenchRun, CellResult
from engine.bench.statistics import Summary, median, ratio

BASELINE_BACKEND = "sqlite"
#: The SQLite figures a ratio may be stated against: per workload, the faster one.
RATIO_BASES = ("sqlite", "sqlite-kernel")
REPORT_SCHEMA = "session-search-bench/1"


@dataclass(frozen=True, slots=True)
class ReportRow:
    """One (workload, backend) line of the report."""

    workload: str
    group: str
    query_class: str
    backend: str
    status: str
    reason: str
    summary: Summary | None
    ratio_to_baseline: float | None
    metrics: dict[str, float]
    ratio_base: str | None = None


def _metric_medians(cell: CellResult) -> dict[str, float]:
    names = sorted({name for sample in cell.samples for name in sample.metrics})
    return {
        name: median([sample.metrics[name] for sample in cell.samples if name in sample.metrics])
        for name in names
    }


def ratio_bases(run: BenchRun, candidates: tuple[str, ...] = RATIO_BASES) -> dict[str, tuple[str, float]]:
    """Per workload, the faster of the `candidates` measured: (its name, its median)."""
    bases: dict[str, tuple[str, float]] = {}
    for cell in run.cells:
        if cell.backend in candidates and cell.status == OK and cell.samples:
            cell_median = median([sample.seconds for sample in cell.samples])
            if cell.workload not in bases or cell_median < bases[cell.workload][1]:
                bases[cell.workload] = (cell.backend, cell_median)
    return bases


def report_rows(run: BenchRun, candidates: tuple[str, ...] = RATIO_BASES) -> list[ReportRow]:
    """Summarise every cell but the `not built` and `not applicable` ones; a ratio uses
    the faster base's median for the same workload (`ratio_bases`)."""
    bases = ratio_bases(run, candidates)
    scripts = _script_medians(run)
    rows = []
    for cell in run.cells:
        if cell.status in (NOT_BUILT, NOT_APPLICABLE):
            continue
        summary = None
        cell_ratio = None
        base_name = None
        if cell.status == OK and cell.samples:
            summary = Summary.of([sample.seconds for sample in cell.samples])
            if cell.workload in bases:
                base_name, base_median = bases[cell.workload]
                cell_ratio = ratio(summary.median, base_median)
        metrics = _metric_medians(cell)
        command_ratio = ratio(metrics.get("command_seconds", 0.0), scripts.get(cell.workload))
        if "command_seconds" in metrics and command_ratio is not None:
            metrics["command_ratio"] = command_ratio
        rows.append(ReportRow(
            cell.workload, cell.group, cell.query_class, cell.backend,
            cell.status if cell.samples or cell.status != OK else "no samples",
            cell.reason, summary, cell_ratio, metrics,
            base_name if cell_ratio is not None else None,
        ))
    return rows


def _script_medians(run: BenchRun) -> dict[str, float]:
    """Per workload, the median wall time of a comparator's bare search script (metric
    `script_seconds`): what a backend's `search` command (`command_seconds`) is stated
    against, as `command_ratio`."""
    scripts = {}
    for cell in run.cells:
        times = [sample.metrics["script_seconds"] for sample in cell.samples
                 if "script_seconds" in sample.metrics]
        if cell.status == OK and times:
            scripts[cell.workload] = median(times)
    return scripts


def format_seconds(seconds: float) -> str:
    """A duration with a unit that keeps three significant digits.

    >>> format_seconds(0.0000123), format_seconds(0.01234), format_seconds(12.3456)
    ('12.3 µs', '12.3 ms', '12.3 s')
    """
    if seconds < 1e-3:
        return f"{seconds * 1e6:.3g} µs"
    if seconds < 1.0:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds:.3g} s"


def format_metrics(metrics: dict[str, float]) -> str:
    """The metrics worth a column: throughput, memory, the `search` command's time, the
    first search that starts a background reconcile.

    >>> format_metrics({"messages_per_second": 12345.6, "resident_bytes": 5.5e7})
    '12,346 msg/s; RSS 52.5 MiB'
    >>> format_metrics({"resident_bytes": 3e7, "command_seconds": 0.0921})
    'RSS 28.6 MiB; search command 92.1 ms'
    >>> format_metrics({"messages_per_second": 9000.0, "first_search_seconds": 0.0042})
    '9,000 msg/s; first search 4.2 ms'
    >>> format_metrics({"command_seconds": 0.0921, "command_ratio": 2.31})
    'search command 92.1 ms (2.31× the bare script)'
    >>> format_metrics({"script_seconds": 0.0399})
    'bare script 39.9 ms'
    >>> format_metrics({"script_seconds": 0.08, "libraries_script_seconds": 0.12})
    "bare script 80 ms; with the engine's libraries 120 ms (1.50×)"
    >>> format_metrics({"import_seconds": 1.2, "first_query_seconds": 0.25,
    ...                 "peak_resident_bytes": 6.2e7})
    'import 1.2 s, first query 250 ms; peak RSS 59.1 MiB'
    >>> format_metrics({"import_seconds": 1.2, "first_query_seconds": 0.25,
    ...                 "peak_resident_bytes": 6.2e7, "processor_seconds": 1.3})
    'import 1.2 s, first query 250 ms; peak RSS 59.1 MiB; CPU 1.3 s'
    """
    parts = []
    if "messages_per_second" in metrics:
        parts.append(f"{metrics['messages_per_second']:,.0f} msg/s")
    if "resident_bytes" in metrics:
        parts.append(f"RSS {metrics['resident_bytes'] / 2**20:.1f} MiB")
    if "command_seconds" in metrics:
        against = (f" ({metrics['command_ratio']:.2f}× the bare script)"
                   if "command_ratio" in metrics else "")
        parts.append(f"search command {format_seconds(metrics['command_seconds'])}{against}")
    if "script_seconds" in metrics:
        parts.append(f"bare script {format_seconds(metrics['script_seconds'])}")
        if "libraries_script_seconds" in metrics and metrics["script_seconds"] > 0:
            libraries = metrics["libraries_script_seconds"]
            parts.append(f"with the engine's libraries {format_seconds(libraries)} "
                         f"({libraries / metrics['script_seconds']:.2f}×)")
    if "first_search_seconds" in metrics:
        parts.append(f"first search {format_seconds(metrics['first_search_seconds'])}")
    if "peak_resident_bytes" in metrics:  # the whole-process ingest
        parts.append(f"import {format_seconds(metrics['import_seconds'])}, first query "
                     f"{format_seconds(metrics['first_query_seconds'])}")
        parts.append(f"peak RSS {metrics['peak_resident_bytes'] / 2**20:.1f} MiB")
        if "processor_seconds" in metrics:
            parts.append(f"CPU {format_seconds(metrics['processor_seconds'])}")
    return "; ".join(parts)


def table_cells(rows: list[ReportRow]) -> list[list[str]]:
    """One list of cells per row: workload, backend, n, median, p95, ratio, its base, notes."""
    table_rows = []
    for row in rows:
        if row.summary is None:
            note = f"{row.status}: {row.reason}" if row.reason else row.status
            table_rows.append([row.workload, row.backend, "", "", "", "", "", note[:90]])
            continue
        shown_ratio = "" if row.ratio_to_baseline is None else f"{row.ratio_to_baseline:.2f}×"
        table_rows.append([
            row.workload, row.backend, str(row.summary.count),
            format_seconds(row.summary.median), format_seconds(row.summary.p95),
            shown_ratio, row.ratio_base or "", format_metrics(row.metrics),
        ])
    return table_rows


def table_headers(baseline: str = BASELINE_BACKEND) -> list[str]:
    """The table's column names: the ratio is against the faster SQLite figure, `base`
    names it.

    >>> table_headers()
    ['workload', 'backend', 'n', 'median', 'p95', 'vs sqlite', 'base', 'notes']
    """
    return ["workload", "backend", "n", "median", "p95", f"vs {baseline}", "base", "notes"]


def format_markdown_table(rows: list[ReportRow], baseline: str = BASELINE_BACKEND) -> str:
    """The table in Markdown (for the README): measured and failed cells as rows, then
    one line per skipped workload with its reason (`|` in cells is escaped).

    >>> print(format_markdown_table([]))
    | workload | backend | n | median | p95 | vs sqlite | base | notes |
    |---|---|---|---|---|---|---|---|
    """
    headers = table_headers(baseline)
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    shown = [row for row in rows if row.status != SKIPPED]
    for cells in table_cells(shown):
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    skipped: dict[str, list[str]] = {}
    for row in rows:
        if row.status == SKIPPED:
            skipped.setdefault(row.workload, [])
            if row.reason not in skipped[row.workload]:
                skipped[row.workload].append(row.reason)
    if skipped:
        lines.append("")
        lines.append("Not measured (skipped):")
        lines.extend(f"- `{workload}`: {'; '.join(reasons)}"
                     for workload, reasons in skipped.items())
    return "\n".join(lines)


def report_document(run: BenchRun, rows: list[ReportRow],
                    baseline: str = BASELINE_BACKEND) -> dict[str, Any]:
    """The JSON report: corpus, machine, settings and every cell with its raw samples."""
    samples_by_cell = {(cell.workload, cell.backend): cell.samples for cell in run.cells}
    return {
        "schema": REPORT_SCHEMA,
        "corpus": {
            "directory": str(run.corpus_directory),
            "size": run.manifest.get("size"),
            "seed": run.manifest.get("seed"),
            "counts": run.manifest.get("counts", {}),
        },
        "environment": run.environment,
        "rounds": run.rounds,
        "backends": list(run.backends),
        "baseline": baseline,
        "ratioBases": list(RATIO_BASES),
        "setupSeconds": run.setup_seconds,
        "cells": [
            {
                "workload": row.workload,
                "group": row.group,
                "queryClass": row.query_class,
                "backend": row.backend,
                "status": row.status,
                "reason": row.reason,
                "count": row.summary.count if row.summary else 0,
                "medianSeconds": row.summary.median if row.summary else None,
                "p95Seconds": row.summary.p95 if row.summary else None,
                "ratioToBaseline": row.ratio_to_baseline,
                "ratioBase": row.ratio_base,
                "metrics": row.metrics,
                "samplesSeconds": [
                    sample.seconds for sample in samples_by_cell[(row.workload, row.backend)]
                ],
            }
            for row in rows
        ],
    }


def rows_from_document(document: dict[str, Any]) -> list[ReportRow]:
    """Rebuild report rows from a saved `bench.json` (to re-render tables and charts)."""
    if document.get("schema") != REPORT_SCHEMA:
        raise ValueError(f"not a {REPORT_SCHEMA} report (schema {document.get('schema')!r})")
    rows = []
    for cell in document["cells"]:
        samples = cell["samplesSeconds"]
        rows.append(ReportRow(
            cell["workload"], cell["group"], cell["queryClass"], cell["backend"],
            cell["status"], cell["reason"], Summary.of(samples) if samples else None,
            cell["ratioToBaseline"], dict(cell["metrics"]), cell.get("ratioBase"),
        ))
    return rows


def write_report(document: dict[str, Any], directory: Path) -> Path:
    """Write `bench.json` into `directory` (created); return its path."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "bench.json"
    path.write_text(json.dumps(document, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return path
