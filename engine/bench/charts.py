"""The report's PNG charts, drawn with matplotlib (the `bench` extra).

Owns: drawing each `chart_data.Chart` as horizontal grouped bars with matplotlib's
non-interactive Agg canvas, and the message when matplotlib is not installed. Must not
touch: what a chart shows (`chart_data`), statistics (`report`), timing.

matplotlib is imported when charts are drawn, not when this module is imported, so the
rest of the benchmark (and `session-search bench` without charts) runs without it. The
figures are built on `matplotlib.figure.Figure` with an Agg canvas attached, never
through `pyplot`: no screen is needed and the process's matplotlib backend is left as
it was. Each backend keeps its colour in every chart (its position in `backends`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from engine.bench.chart_data import BarSeries, Chart, benchmark_charts, charted_backends, value_text
from engine.bench.report import ReportRow

CHARTS_NEED_BENCH_EXTRA = "charts need the bench extra: pip install 'session-search[bench]'"

#: Font sizes (points) and the output resolution.
TEXT_POINTS, TITLE_POINTS, SMALL_POINTS = 11, 14, 9
DOTS_PER_INCH = 110


class ChartsUnavailable(RuntimeError):
    """matplotlib is not installed; the message says how to install it."""


def _matplotlib() -> Any:
    """The `matplotlib` package with the modules drawing needs imported, or
    ChartsUnavailable."""
    try:
        import matplotlib
        import matplotlib.backends.backend_agg
        import matplotlib.figure
        import matplotlib.ticker
    except ImportError as error:
        raise ChartsUnavailable(f"{CHARTS_NEED_BENCH_EXTRA} ({error})") from None
    return matplotlib


def _plain_number(value: float, _position: int) -> str:
    """An axis tick as a plain number with thousands separators (`0.1`, `10`, `2,000`),
    never `10^k`.

    >>> _plain_number(0.1, 0), _plain_number(2000.0, 0)
    ('0.1', '2,000')
    """
    return f"{value:,.10g}"


def _bar_positions(category_count: int, series_count: int, number: int) -> list[float]:
    """The centre of bar `number` of each category's group (categories one unit apart)."""
    height = 0.8 / series_count
    return [index - 0.4 + height * (number + 0.5) for index in range(category_count)]


def _draw_series(axes: Any, chart: Chart, one: BarSeries, number: int, colour: str) -> None:
    """One backend's bars, its value written beside each bar, and its tick marks."""
    height = 0.8 / len(chart.series)
    positions = _bar_positions(len(chart.categories), len(chart.series), number)
    markers = one.markers or (None,) * len(one.values)
    bars = [(position, value, marker)
            for position, value, marker in zip(positions, one.values, markers)
            if value is not None]
    if not bars:
        return
    # A ratio's bar grows from its reference line (1.0×): to the left when faster.
    base = chart.reference_line or 0.0
    axes.barh([position for position, _, _ in bars], [value - base for _, value, _ in bars],
              left=base, height=height * 0.92, color=colour, label=one.name, zorder=2)
    for position, value, marker in bars:
        end, text = value, value_text(value, chart.unit)
        if marker is not None:
            end = max(value, marker)
            text += f" · {chart.marker_label} {value_text(marker, chart.unit)}"
        leftward = value < base
        axes.annotate(text, xy=(end, position), xytext=(-5 if leftward else 5, 0),
                      textcoords="offset points", va="center",
                      ha="right" if leftward else "left", fontsize=SMALL_POINTS)
    ticks = [(position, marker) for position, _, marker in bars if marker is not None]
    if ticks:
        axes.scatter([marker for _, marker in ticks], [position for position, _ in ticks],
                     marker="|", s=(height * 60) ** 2, linewidths=2, color="black", zorder=3,
                     label=chart.marker_label if number == 0 else None)


def _value_limits(chart: Chart) -> tuple[float, float]:
    """The value axis's range: every bar, tick and reference line, with room for labels."""
    values = [value for one in chart.series for value in (*one.values, *one.markers)
              if value is not None and value > 0]
    if chart.reference_line is not None:
        values.append(chart.reference_line)
    smallest, largest = min(values), max(values)
    if chart.logarithmic:
        # Room beside the longest bars for the values written there.
        return smallest / (4 if chart.reference_line is not None else 2), largest * 4
    return 0.0, largest * 1.25


def _label_axes(axes: Any, chart: Chart, backends: Sequence[str], caption: str,
                ticker: Any) -> None:
    """Scale, ticks, labels, title, caption and legend of a chart whose bars are drawn."""
    if chart.logarithmic:
        axes.set_xscale("log")
    axes.xaxis.set_major_formatter(ticker.FuncFormatter(_plain_number))
    axes.set_xlim(*_value_limits(chart))
    axes.set_yticks(range(len(chart.categories)), chart.categories)
    axes.set_ylim(len(chart.categories) - 0.5, -0.5)  # the first category on top
    axes.set_xlabel(chart.axis_label)
    axes.grid(axis="x", which="major", color="0.85", zorder=0)
    axes.spines[["top", "right"]].set_visible(False)
    axes.set_title(chart.title, loc="left", fontweight="bold", pad=22 if caption else 8)
    if caption:
        axes.text(0.0, 1.012, caption, transform=axes.transAxes, ha="left", va="bottom",
                  fontsize=SMALL_POINTS, color="0.35")
    handles, labels = axes.get_legend_handles_labels()
    # Backends first, in their order, then the tick and reference-line entries.
    order = sorted(range(len(labels)), key=lambda index: labels[index] not in backends)
    axes.legend([handles[index] for index in order], [labels[index] for index in order],
                loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)


def draw_chart(chart: Chart, backends: Sequence[str], path: Path, caption: str = "") -> None:
    """Write one chart as a PNG file at `path`; a backend's colour is `C<its position in
    backends>`, so it is the same in every chart."""
    matplotlib = _matplotlib()
    bar_rows = len(chart.categories) * max(1, len(chart.series))
    fonts = {"font.size": TEXT_POINTS, "axes.titlesize": TITLE_POINTS,
             "axes.labelsize": TEXT_POINTS, "legend.fontsize": TEXT_POINTS - 1}
    with matplotlib.rc_context(fonts):
        figure = matplotlib.figure.Figure(figsize=(10.0, max(3.6, 0.3 * bar_rows + 2.0)),
                                          layout="constrained")
        matplotlib.backends.backend_agg.FigureCanvasAgg(figure)
        axes = figure.subplots()
        for number, one in enumerate(chart.series):
            colour = f"C{backends.index(one.name) if one.name in backends else number}"
            _draw_series(axes, chart, one, number, colour)
        if chart.reference_line is not None:
            axes.axvline(chart.reference_line, color="0.25", linestyle="--", linewidth=1.3,
                         zorder=1, label=chart.reference_label)
        _label_axes(axes, chart, backends, caption, matplotlib.ticker)
        figure.savefig(path, dpi=DOTS_PER_INCH, metadata={"Software": None})


def write_charts(rows: Sequence[ReportRow], backends: Sequence[str], directory: Path,
                 caption: str = "") -> list[Path]:
    """Write every chart that has data into `directory`; return the paths written.

    Raises ChartsUnavailable (before writing anything) when matplotlib is missing.
    A backend the rows have but `backends` does not name (a comparator measured beside
    one, e.g. `sqlite-kernel`) is drawn after the named ones.
    """
    backends = charted_backends(rows, backends)
    charts = benchmark_charts(rows, backends)
    if not charts:
        return []
    _matplotlib()
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for chart in charts:
        path = directory / chart.file_name
        draw_chart(chart, backends, path, caption)
        written.append(path)
    return written
