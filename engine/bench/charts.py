"""The report's PNG charts: latency by query class, ingest throughput, memory.

Owns: choosing what each chart shows from the report rows, and drawing it with
matplotlib when it is installed, else with the dependency-free `bar_chart` canvas.
Must not touch: statistics (`report` computes them) or timing.

Charts written into the output directory:
* `latency_by_query_class.png`: median query latency (ms, logarithmic axis) per query
  class, one bar per backend;
* `ingest_throughput.png`: bulk import and reconcile throughput (messages per second)
  per backend;
* `memory.png`: resident memory after reopening the store (MiB) per backend.
A chart with no data (e.g. every cell skipped) is not written.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from engine.bench.bar_chart import BarSeries, grouped_bar_chart
from engine.bench.report import ReportRow

ChartWriter = Callable[[Path, str, Sequence[str], Sequence[BarSeries], str, bool], None]


def _matplotlib_writer() -> ChartWriter | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        from matplotlib import pyplot
    except ImportError:
        return None

    def write(path: Path, title: str, categories: Sequence[str],
              series: Sequence[BarSeries], unit: str, logarithmic: bool) -> None:
        figure, axes = pyplot.subplots(figsize=(max(6.0, 0.9 * len(categories) + 2), 4.5))
        width = 0.8 / max(1, len(series))
        for number, one in enumerate(series):
            positions = [index + number * width for index in range(len(categories))]
            heights = [value if value is not None else 0.0 for value in one.values]
            axes.bar(positions, heights, width=width, label=one.name)
        axes.set_xticks([index + width * (len(series) - 1) / 2 for index in range(len(categories))])
        axes.set_xticklabels(categories, rotation=30, ha="right", fontsize=8)
        axes.set_ylabel(unit)
        if logarithmic:
            axes.set_yscale("log")
        axes.set_title(title)
        axes.legend()
        figure.tight_layout()
        figure.savefig(path, dpi=100)
        pyplot.close(figure)

    return write


def _pure_writer(path: Path, title: str, categories: Sequence[str],
                 series: Sequence[BarSeries], unit: str, logarithmic: bool) -> None:
    canvas = grouped_bar_chart(title, categories, series, unit, logarithmic)
    path.write_bytes(canvas.to_png())


def _label(row: ReportRow, groups: Sequence[str]) -> str:
    """A workload's name, without its group prefix when the chart shows one group."""
    return row.workload.split("/", 1)[-1] if len(groups) == 1 else row.workload


def chart_data(
    rows: Sequence[ReportRow], groups: Sequence[str],
    value: Callable[[ReportRow], float | None], backends: Sequence[str],
) -> tuple[list[str], list[BarSeries]]:
    """Categories (the workloads of `groups`; `query/rare_word` is shown as `rare_word` in
    a one-group chart) and one series per backend."""
    categories: list[str] = []
    for row in rows:
        if row.group in groups and _label(row, groups) not in categories:
            categories.append(_label(row, groups))
    series = []
    for backend in backends:
        values: list[float | None] = []
        for category in categories:
            found = [row for row in rows if row.group in groups and row.backend == backend
                     and _label(row, groups) == category]
            values.append(value(found[0]) if found else None)
        series.append(BarSeries(backend, tuple(values)))
    return categories, series


def _median_ms(row: ReportRow) -> float | None:
    return row.summary.median * 1e3 if row.summary else None


def _metric(name: str, scale: float = 1.0) -> Callable[[ReportRow], float | None]:
    def value(row: ReportRow) -> float | None:
        return row.metrics[name] * scale if row.summary and name in row.metrics else None

    return value


def write_charts(rows: Sequence[ReportRow], backends: Sequence[str], directory: Path,
                 use_matplotlib: bool = True) -> list[Path]:
    """Write every chart that has data; return the paths written."""
    writer = (_matplotlib_writer() if use_matplotlib else None) or _pure_writer
    directory.mkdir(parents=True, exist_ok=True)
    specifications = (
        ("latency_by_query_class.png", "Query latency (median)", ("query",), _median_ms, "ms",
         True),
        ("ingest_throughput.png", "Import and reconcile throughput", ("ingest", "reconcile"),
         _metric("messages_per_second"), "msg/s", False),
        ("memory.png", "Resident memory after reopen", ("reopen",),
         _metric("resident_bytes", 1 / 2**20), "MiB", False),
    )
    written = []
    for file_name, title, groups, value, unit, logarithmic in specifications:
        categories, series = chart_data(rows, groups, value, backends)
        if not any(v is not None for one in series for v in one.values):
            continue
        path = directory / file_name
        writer(path, title, categories, series, unit, logarithmic)
        written.append(path)
    return written
