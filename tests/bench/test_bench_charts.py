"""The benchmark charts: what each one shows (`chart_data`), that matplotlib draws them as
real PNG files of a readable size (`charts`), and the message when matplotlib is missing.

The report here is a small fake, built by hand: two backends, three query classes whose
medians span three orders of magnitude, an import, a reconcile and a reopen.
"""

from __future__ import annotations

import json
import struct
import sys
from pathlib import Path

import pytest

from engine.bench.chart_data import benchmark_charts, chart_series
from engine.bench.charts import CHARTS_NEED_BENCH_EXTRA, ChartsUnavailable, write_charts
from engine.bench.report import ReportRow
from engine.bench.statistics import Summary
from engine.cli import main

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
#: matplotlib's first two default colours (`C0`, `C1`), the backends' bars.
BLUE, ORANGE = (0x1F, 0x77, 0xB4), (0xFF, 0x7F, 0x0E)


def _row(workload: str, backend: str, seconds: list[float], ratio: float | None,
         **metrics: float) -> ReportRow:
    group = workload.split("/")[0]
    return ReportRow(workload, group, group + " class", backend, "ok", "", Summary.of(seconds),
                     ratio, dict(metrics))


def fake_rows() -> list[ReportRow]:
    return [
        _row("ingest/import", "reference", [2.0, 2.2], 0.5, messages_per_second=5000.0),
        _row("ingest/import", "sqlite", [4.0, 4.4], 1.0, messages_per_second=2500.0),
        _row("reopen/first_query", "reference", [0.06], 0.6, resident_bytes=30 * 2**20),
        _row("reopen/first_query", "sqlite", [0.1], 1.0, resident_bytes=25 * 2**20),
        _row("query/common_word", "reference", [0.09, 0.13], 0.2),
        _row("query/common_word", "sqlite", [0.45, 0.47], 1.0),
        _row("query/rare_word", "reference", [0.0005, 0.0008], 0.3),
        _row("query/rare_word", "sqlite", [0.0016, 0.0017], 1.0),
        _row("query/no_hit", "reference", [0.0002], 4.0),
        _row("query/no_hit", "sqlite", [0.00005], 1.0),
        _row("reconcile/all_windows", "reference", [3.0], 1.5, messages_per_second=3000.0),
        _row("reconcile/all_windows", "sqlite", [2.0], 1.0, messages_per_second=4500.0),
        ReportRow("append/one_message", "append", "append", "reference", "skipped",
                  "cannot create a reference store", None, None, {}),
    ]


BACKENDS = ("reference", "sqlite")


def test_the_latency_chart_is_logarithmic_with_medians_and_p95_ticks() -> None:
    charts = {chart.file_name: chart for chart in benchmark_charts(fake_rows(), BACKENDS)}
    latency = charts["latency_by_query_class.png"]
    assert latency.categories == ("common_word", "rare_word", "no_hit")
    assert latency.logarithmic and "log scale" in latency.axis_label
    assert "(ms" in latency.axis_label
    reference = latency.series[0]
    assert reference.name == "reference"
    assert reference.values == pytest.approx((110.0, 0.65, 0.2))
    assert reference.markers == pytest.approx((130.0, 0.8, 0.2))
    # Throughput and memory spread less than 20 times: linear axes.
    assert not charts["ingest_throughput.png"].logarithmic
    assert charts["ingest_throughput.png"].categories == ("ingest/import",
                                                           "reconcile/all_windows")
    assert charts["memory.png"].series[1].values == pytest.approx((25.0,))


def test_the_ratio_chart_compares_every_other_backend_with_sqlite() -> None:
    charts = {chart.file_name: chart for chart in benchmark_charts(fake_rows(), BACKENDS)}
    ratio = charts["ratio_to_sqlite.png"]
    assert [one.name for one in ratio.series] == ["reference"]
    assert ratio.categories == (
        "ingest/import", "reopen/first_query", "query/common_word", "query/rare_word",
        "query/no_hit", "reconcile/all_windows",
    )
    assert ratio.series[0].values == (0.5, 0.6, 0.2, 0.3, 4.0, 1.5)
    assert ratio.reference_line == 1.0 and ratio.logarithmic
    assert "sqlite" in ratio.axis_label and "×" in ratio.axis_label


def test_a_chart_without_data_is_not_listed() -> None:
    only_sqlite = [row for row in fake_rows() if row.backend == "sqlite"]
    names = [chart.file_name for chart in benchmark_charts(only_sqlite, ("sqlite",))]
    assert names == ["latency_by_query_class.png", "ingest_throughput.png", "memory.png"]
    queries = [row for row in only_sqlite if row.group == "query"]
    assert [chart.file_name for chart in benchmark_charts(queries, ("sqlite",))] == [
        "latency_by_query_class.png"]
    categories, series = chart_series(fake_rows(), ("append",), lambda row: 1.0, BACKENDS)
    assert categories == ("append/one_message",)
    assert series[1].values == (None,)


def _png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk (the first chunk, by the format)."""
    assert data[:8] == PNG_SIGNATURE
    length, kind = struct.unpack(">I4s", data[8:16])
    assert (length, kind) == (13, b"IHDR")
    return struct.unpack(">II", data[16:24])


def _pixels_near(image: object, colour: tuple[int, int, int]) -> int:
    """How many pixels of an RGB(A) float image are within 3/255 of `colour`."""
    import numpy

    rgb = numpy.asarray(image)[:, :, :3]
    wanted = numpy.array(colour) / 255.0
    return int(numpy.all(numpy.abs(rgb - wanted) < 3 / 255, axis=2).sum())


def test_write_charts_draws_readable_png_files(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="charts need the bench extra")
    from matplotlib import image

    written = write_charts(fake_rows(), BACKENDS, tmp_path / "charts", "corpus fake; 1 round")
    assert [path.name for path in written] == [
        "latency_by_query_class.png", "ingest_throughput.png", "memory.png",
        "ratio_to_sqlite.png",
    ]
    for path in written:
        data = path.read_bytes()
        width, height = _png_size(data)
        assert 800 <= width <= 2000 and 300 <= height <= 2000, (path.name, width, height)
        assert 5_000 < len(data) < 1_000_000, (path.name, len(data))
        pixels = image.imread(path)
        assert pixels.shape[:2] == (height, width)
        # Bars were drawn in the backends' colours (the ratio chart has only reference).
        assert _pixels_near(pixels, BLUE) > 500, path.name
        if path.name != "ratio_to_sqlite.png":
            assert _pixels_near(pixels, ORANGE) > 500, path.name


def test_without_matplotlib_the_charts_say_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` now fails
    with pytest.raises(ChartsUnavailable) as raised:
        write_charts(fake_rows(), BACKENDS, tmp_path / "charts")
    assert str(raised.value).startswith(
        "charts need the bench extra: pip install 'session-search[bench]'")
    assert CHARTS_NEED_BENCH_EXTRA in str(raised.value)
    assert not (tmp_path / "charts").exists()


def test_the_command_reports_without_charts_when_matplotlib_is_missing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    document = {
        "schema": "session-search-bench/1", "corpus": {"size": "fake", "seed": 1},
        "rounds": 1, "backends": list(BACKENDS), "cells": [
            {"workload": row.workload, "group": row.group, "queryClass": row.query_class,
             "backend": row.backend, "status": row.status, "reason": row.reason,
             "ratioToBaseline": row.ratio_to_baseline, "metrics": row.metrics,
             "samplesSeconds": [row.summary.median] if row.summary else []}
            for row in fake_rows()
        ],
    }
    saved = tmp_path / "bench.json"
    saved.write_text(json.dumps(document), encoding="utf-8")
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    status = main(["bench", "--from-report", str(saved), "--out", str(tmp_path / "out")])
    captured = capsys.readouterr()
    assert status == 0
    assert "query/common_word" in captured.out and "wrote" not in captured.out
    assert captured.err.startswith("session-search bench: no charts written: charts need "
                                   "the bench extra: pip install 'session-search[bench]'")
    assert not (tmp_path / "out").exists()
