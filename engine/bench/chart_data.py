"""What each benchmark chart shows, read off the report rows; no drawing.

Owns: the list of charts, each one's categories (workloads) and one series of values per
backend, its axis label with the unit, whether its axis needs a logarithmic scale, and
how a value is written beside its bar. Must not touch: drawing (`charts`, the only module
that needs matplotlib), statistics (`report` computes them), timing.

The charts, each written only when it has at least one value:

| file                         | one bar per backend and workload                      |
|------------------------------|-------------------------------------------------------|
| `latency_by_query_class.png` | median search latency (ms), with the p95 as a tick    |
| `ingest_throughput.png`      | import and reconcile throughput (messages per second) |
| `memory.png`                 | resident memory after reopening the store (MiB)       |
| `ratio_to_sqlite.png`        | median time ÷ the faster SQLite figure's median (the |
|                              | row's `ratio_base`: `sqlite` or `sqlite-kernel`), 1.0× line |

The ratio chart has a series for every backend that is not the base of every workload it
has a ratio for (the base's bar would be 1.0× everywhere): with `sqlite-kernel` measured,
that includes `sqlite`, against the kernel where the kernel is faster.

A ratio is drawn on a logarithmic axis (0.5× and 2× lie equally far from 1.0×); the other
axes turn logarithmic when their values spread over more than `LOGARITHMIC_SPREAD` times.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from engine.bench.report import BASELINE_BACKEND, RATIO_BASES, ReportRow, format_seconds

#: Largest ÷ smallest value above which a linear axis would flatten the small bars.
LOGARITHMIC_SPREAD = 20.0

MILLISECONDS, MESSAGES_PER_SECOND, MEBIBYTES, TIMES = "ms", "msg/s", "MiB", "×"


@dataclass(frozen=True, slots=True)
class BarSeries:
    """One backend's values, one per category (None: nothing measured there), and
    optional tick marks (`markers`, e.g. the p95) in the same order."""

    name: str
    values: tuple[float | None, ...]
    markers: tuple[float | None, ...] = ()


@dataclass(frozen=True, slots=True)
class Chart:
    """One chart: horizontal bars, one group of bars per category."""

    file_name: str
    title: str
    axis_label: str
    unit: str
    categories: tuple[str, ...]
    series: tuple[BarSeries, ...]
    logarithmic: bool
    marker_label: str = ""
    reference_line: float | None = None
    reference_label: str = ""

    @property
    def has_data(self) -> bool:
        """Whether any bar has a value."""
        return any(value is not None for one in self.series for value in one.values)


def value_text(value: float, unit: str) -> str:
    """A bar's value as written beside it, in the chart's unit.

    >>> value_text(0.0123, MILLISECONDS), value_text(412.0, MILLISECONDS)
    ('12.3 µs', '412 ms')
    >>> value_text(5566.4, MESSAGES_PER_SECOND), value_text(31.62, MEBIBYTES)
    ('5,566 msg/s', '31.6 MiB')
    >>> value_text(0.2104, TIMES)
    '0.21×'
    """
    if unit == MILLISECONDS:
        return format_seconds(value / 1e3)
    if unit == MESSAGES_PER_SECOND:
        return f"{value:,.0f} msg/s"
    if unit == TIMES:
        return f"{value:.2f}×"
    return f"{value:.1f} {unit}"


def needs_logarithmic_axis(values: Sequence[float | None],
                           spread: float = LOGARITHMIC_SPREAD) -> bool:
    """Whether the positive values span more than `spread` times (largest ÷ smallest).

    >>> needs_logarithmic_axis([0.2, 1.5, 90.0]), needs_logarithmic_axis([4000.0, 6000.0])
    (True, False)
    >>> needs_logarithmic_axis([None, 3.0])
    False
    """
    positive = [value for value in values if value is not None and value > 0]
    return bool(positive) and max(positive) > spread * min(positive)


def chart_series(
    rows: Sequence[ReportRow], groups: Sequence[str] | None,
    value: Callable[[ReportRow], float | None], backends: Sequence[str],
    marker: Callable[[ReportRow], float | None] | None = None, short_labels: bool = False,
) -> tuple[tuple[str, ...], tuple[BarSeries, ...]]:
    """Categories (the workloads of `groups` where one of `backends` has a value, in
    report order; `groups=None` takes every group; with `short_labels`, `query/rare_word`
    is shown as `rare_word`) and one series per backend."""
    chosen = [row for row in rows
              if row.backend in backends and (groups is None or row.group in groups)]

    def label(row: ReportRow) -> str:
        return row.workload.split("/", 1)[-1] if short_labels else row.workload

    categories: list[str] = []
    for row in chosen:
        if value(row) is not None and label(row) not in categories:
            categories.append(label(row))
    found = {(row.backend, label(row)): row for row in chosen}
    series = []
    for backend in backends:
        cells = [found.get((backend, category)) for category in categories]
        series.append(BarSeries(
            backend,
            tuple(value(row) if row else None for row in cells),
            tuple(marker(row) if row else None for row in cells) if marker else (),
        ))
    return tuple(categories), tuple(series)


def _median_ms(row: ReportRow) -> float | None:
    return row.summary.median * 1e3 if row.summary else None


def _p95_ms(row: ReportRow) -> float | None:
    return row.summary.p95 * 1e3 if row.summary else None


def _ratio(row: ReportRow) -> float | None:
    return row.ratio_to_baseline if row.summary else None


def _metric(name: str, scale: float = 1.0) -> Callable[[ReportRow], float | None]:
    def value(row: ReportRow) -> float | None:
        return row.metrics[name] * scale if row.summary and name in row.metrics else None

    return value


def _axis_label(quantity: str, logarithmic: bool) -> str:
    return f"{quantity}, log scale" if logarithmic else quantity


def _values(series: Sequence[BarSeries]) -> list[float | None]:
    return [value for one in series for value in (*one.values, *one.markers)]


def benchmark_charts(rows: Sequence[ReportRow], backends: Sequence[str],
                     baseline: str = BASELINE_BACKEND) -> list[Chart]:
    """Every chart of the module's table that has data, in that order."""
    charts = []
    categories, series = chart_series(rows, ("query",), _median_ms, backends, _p95_ms,
                                      short_labels=True)
    logarithmic = needs_logarithmic_axis(_values(series))
    charts.append(Chart(
        "latency_by_query_class.png", "Search latency by query class: median (bar), p95 (tick)",
        _axis_label("time per search (ms)", logarithmic), MILLISECONDS, categories, series,
        logarithmic, marker_label="p95",
    ))
    for file_name, title, groups, value, quantity, unit in (
        ("ingest_throughput.png", "Import and reconcile throughput (higher is better)",
         ("ingest", "reconcile"), _metric("messages_per_second"), "messages per second",
         MESSAGES_PER_SECOND),
        ("memory.png", "Resident memory after reopening the store",
         ("reopen",), _metric("resident_bytes", 1 / 2**20), "resident set size (MiB)",
         MEBIBYTES),
    ):
        categories, series = chart_series(rows, groups, value, backends)
        logarithmic = needs_logarithmic_axis(_values(series))
        charts.append(Chart(file_name, title, _axis_label(quantity, logarithmic), unit,
                            categories, series, logarithmic))
    categories, series = chart_series(rows, None, _ratio, ratio_series_backends(rows, backends, baseline))
    charts.append(Chart(
        f"ratio_to_{baseline}.png",
        f"Median time ÷ the faster {baseline} median (left of 1.0× is faster)",
        f"median time ÷ the faster of {' and '.join(RATIO_BASES)} in the same run (×, log scale)",
        TIMES,
        categories, series, True, reference_line=1.0, reference_label=f"faster {baseline} = 1.0×",
    ))
    return [chart for chart in charts if chart.has_data]


def charted_backends(rows: Sequence[ReportRow], backends: Sequence[str]) -> list[str]:
    """`backends`, then every other backend the rows have, in row order (a comparator
    such as `sqlite-kernel` runs beside a backend without being named on the command line).

    >>> from engine.bench.report import ReportRow
    >>> rows = [ReportRow("q", "query", "c", name, "ok", "", None, None, {})
    ...         for name in ("sqlite", "sqlite-kernel", "reference")]
    >>> charted_backends(rows, ["reference", "sqlite"])
    ['reference', 'sqlite', 'sqlite-kernel']
    """
    names = list(backends)
    for row in rows:
        if row.backend not in names:
            names.append(row.backend)
    return names


def ratio_series_backends(rows: Sequence[ReportRow], backends: Sequence[str],
                          baseline: str = BASELINE_BACKEND) -> list[str]:
    """The backends the ratio chart shows: those that are not the ratio base of every
    workload they have a ratio for (a row without a recorded base, from an older report,
    was stated against `baseline`)."""
    return [
        backend for backend in backends
        if any((row.ratio_base or baseline) != backend for row in rows
               if row.backend == backend and row.ratio_to_baseline is not None)
    ]
