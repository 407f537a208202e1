"""The benchmark harness: statistics, interleaving, the runner's bookkeeping, the report,
and the `bench` command end to end on the tiny corpus (charts: `test_bench_charts.py`).

The runner tests use `RecordingBackend`, a fake that exists only here to observe call
order and to give right or wrong answers on purpose; it never produces a benchmark result.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.bench.adapters import BenchServices, CapabilityMissing
from engine.bench.feature_workloads import HistoryWorkload
from engine.bench.progress import ProgressBar, render_bar
from engine.bench.query_workloads import QueryWorkload
from engine.bench.report import (
    format_markdown_table,
    report_document,
    report_rows,
    rows_from_document,
    write_report,
)
from engine.bench.runner import FAILED, NOT_BUILT, OK, SKIPPED, run_benchmark
from engine.bench.schedule import interleaved_schedule, rotated
from engine.bench.statistics import Summary, median, p95, percentile, ratio
from engine.bench.workload_protocol import BenchTarget, HitExpectation, Sample
from engine.cli import main
from engine.cli.bench_command import format_report_table
from engine.model import SearchHit, SearchRequest, SearchResult, SessionWindow, StoredEvent

# ---- statistics ------------------------------------------------------------------------


def test_median_and_p95_by_hand() -> None:
    samples = [float(value) for value in (9, 1, 8, 2, 7, 3, 6, 4, 5, 10)]
    assert median(samples) == 5.5
    assert p95(samples) == 10.0
    twenty = [float(value) for value in range(1, 21)]
    assert p95(twenty) == 19.0
    assert percentile(twenty, 0.05) == 1.0
    assert percentile([4.0], 0.95) == 4.0


def test_ratio_against_the_baseline() -> None:
    assert ratio(0.3, 0.1) == pytest.approx(3.0)
    assert ratio(0.05, 0.1) == pytest.approx(0.5)
    assert ratio(1.0, None) is None
    assert ratio(1.0, 0.0) is None


def test_empty_samples_and_bad_fractions_are_errors() -> None:
    with pytest.raises(ValueError, match="no samples"):
        median([])
    with pytest.raises(ValueError, match="no samples"):
        p95([])
    with pytest.raises(ValueError, match="fraction"):
        percentile([1.0], 0.0)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(min_value=0, max_value=1e6, allow_nan=False), min_size=1, max_size=60))
def test_p95_is_an_observed_sample_at_or_above_the_median(samples: list[float]) -> None:
    summary = Summary.of(samples)
    assert summary.p95 in samples
    assert summary.minimum <= summary.median <= summary.p95 <= summary.maximum
    below = sum(1 for sample in samples if sample <= summary.p95)
    assert below >= 0.95 * len(samples)


# ---- interleaving ----------------------------------------------------------------------


def test_schedule_runs_every_cell_once_per_round() -> None:
    slots = interleaved_schedule(["a", "b", "c"], ["sqlite", "reference", "postgres"], 4)
    cells = [(slot.round_number, slot.workload, slot.backend) for slot in slots]
    assert len(cells) == len(set(cells)) == 4 * 3 * 3


def test_each_backend_goes_first_equally_often() -> None:
    backends = ["sqlite", "reference", "postgres"]
    slots = interleaved_schedule(["q"], backends, 6)
    firsts = [slots[index].backend for index in range(0, len(slots), 3)]
    assert firsts == ["sqlite", "reference", "postgres"] * 2


def test_workload_order_is_kept_inside_a_round() -> None:
    slots = interleaved_schedule(["ingest", "query"], ["x", "y"], 2)
    assert [slot.workload for slot in slots] == ["ingest"] * 2 + ["query"] * 2 + \
        ["ingest"] * 2 + ["query"] * 2
    assert rotated(["x", "y"], 1) == ["y", "x"]
    with pytest.raises(ValueError, match="rounds"):
        interleaved_schedule(["q"], ["x"], 0)


# ---- the runner, with a fake backend ---------------------------------------------------


class _Transaction:
    def put_window(self, window: Any) -> None:
        pass

    def append_event(self, session_id: str, event: dict[str, Any],
                     created_at: float | None = None) -> int:
        return 0

    def delete_session(self, session_key: str) -> int:
        return 0


class RecordingBackend:
    """Answers `hits` hits to every query and logs (backend, query) in `log`."""

    def __init__(self, name: str, log: list[tuple[str, str]], hits: int) -> None:
        self.name = name
        self.log = log
        self.hits = hits

    @contextmanager
    def transaction(self) -> Iterator[_Transaction]:
        yield _Transaction()

    def search(self, request: SearchRequest) -> SearchResult:
        self.log.append((self.name, request.query))
        hit = SearchHit("agent:main:main", "s", "m", "user", 1.0, "text", 1.0)
        count = min(self.hits, request.limit or 10)
        return SearchResult((hit,) * count, truncated=self.hits > (request.limit or 10))

    def stats(self) -> dict[str, int]:
        return {}

    def close(self) -> None:
        pass


def _services(log: list[tuple[str, str]], hits: dict[str, int],
              missing: frozenset[str] = frozenset()) -> BenchServices:
    def open_store(name: str, path: Path, create: bool, writer: bool) -> RecordingBackend:
        if name in missing:
            raise CapabilityMissing(f"no backend {name}")
        return RecordingBackend(name, log, hits[name])

    return BenchServices(open_store, lambda backend, corpus: None, lambda: tuple(hits))


def _query(name: str, matching: int, repeats: int = 2) -> QueryWorkload:
    request = SearchRequest(query=name, limit=5, session_keys=())
    return QueryWorkload(f"query/{name}", "class " + name, request,
                         HitExpectation(matching, limit=5), repeats)


MANIFEST = {"size": "fake", "seed": 0, "counts": {"messages": 10}}


def test_runner_interleaves_and_collects_rounds_times_repeats(tmp_path: Path) -> None:
    log: list[tuple[str, str]] = []
    run = run_benchmark(
        tmp_path / "corpus", MANIFEST, ("sqlite", "reference"),
        [_query("alpha", 7), _query("beta", 7)], tmp_path / "work",
        _services(log, {"sqlite": 7, "reference": 7}), rounds=2,
    )
    assert [cell.status for cell in run.cells] == [OK] * 4
    assert [len(cell.samples) for cell in run.cells] == [4] * 4
    assert log == [
        ("sqlite", "alpha"), ("sqlite", "alpha"), ("reference", "alpha"), ("reference", "alpha"),
        ("sqlite", "beta"), ("sqlite", "beta"), ("reference", "beta"), ("reference", "beta"),
        ("reference", "alpha"), ("reference", "alpha"), ("sqlite", "alpha"), ("sqlite", "alpha"),
        ("reference", "beta"), ("reference", "beta"), ("sqlite", "beta"), ("sqlite", "beta"),
    ]


def test_a_wrong_answer_fails_the_cell_and_drops_its_samples(tmp_path: Path) -> None:
    log: list[tuple[str, str]] = []
    run = run_benchmark(
        tmp_path / "corpus", MANIFEST, ("sqlite", "reference"), [_query("alpha", 7)],
        tmp_path / "work", _services(log, {"sqlite": 7, "reference": 3}), rounds=3,
    )
    by_backend = {cell.backend: cell for cell in run.cells}
    assert by_backend["sqlite"].status == OK and len(by_backend["sqlite"].samples) == 6
    failed = by_backend["reference"]
    assert failed.status == FAILED and failed.samples == []
    assert "expected 5 hits, got 3" in failed.reason
    assert "expected truncated=True, got False" in failed.reason
    # A failed cell is not retried in later rounds.
    assert log.count(("reference", "alpha")) == 1


def test_a_backend_that_cannot_open_is_skipped_with_its_reason(tmp_path: Path) -> None:
    log: list[tuple[str, str]] = []
    run = run_benchmark(
        tmp_path / "corpus", MANIFEST, ("sqlite", "postgres"), [_query("alpha", 1)],
        tmp_path / "work", _services(log, {"sqlite": 1, "postgres": 1}, frozenset({"postgres"})),
        rounds=1,
    )
    skipped = [cell for cell in run.cells if cell.backend == "postgres"]
    assert [(cell.status, cell.reason) for cell in skipped] == [
        (SKIPPED, "cannot create a postgres store: no backend postgres")
    ]
    assert all(backend == "sqlite" for backend, _ in log)


def test_report_ratios_use_the_sqlite_median_of_the_same_run(tmp_path: Path) -> None:
    run = run_benchmark(
        tmp_path / "corpus", MANIFEST, ("sqlite", "reference"), [_query("alpha", 1)],
        tmp_path / "work", _services([], {"sqlite": 1, "reference": 1}), rounds=1,
    )
    for cell in run.cells:
        seconds = 0.002 if cell.backend == "sqlite" else 0.006
        cell.samples = [Sample(seconds), Sample(seconds * 2), Sample(seconds * 3)]
    rows = {row.backend: row for row in report_rows(run)}
    assert rows["sqlite"].ratio_to_baseline == pytest.approx(1.0)
    assert rows["reference"].ratio_to_baseline == pytest.approx(3.0)
    assert rows["reference"].summary is not None
    assert rows["reference"].summary.median == pytest.approx(0.012)
    assert rows["reference"].summary.p95 == pytest.approx(0.018)
    table = format_report_table(list(rows.values()))
    assert "3.00×" in table and "12 ms" in table and "18 ms" in table
    markdown = format_markdown_table(list(rows.values())).splitlines()
    assert markdown[2:] == [
        "| query/alpha | sqlite | 3 | 4 ms | 6 ms | 1.00× | sqlite |  |",
        "| query/alpha | reference | 3 | 12 ms | 18 ms | 3.00× | sqlite |  |",
    ]
    document = report_document(run, report_rows(run))
    path = write_report(document, tmp_path / "out")
    saved = json.loads(path.read_text(encoding="utf-8"))
    reference = next(cell for cell in saved["cells"] if cell["backend"] == "reference")
    assert reference["ratioToBaseline"] == pytest.approx(3.0)
    assert reference["samplesSeconds"] == pytest.approx([0.006, 0.012, 0.018])
    assert saved["baseline"] == "sqlite" and saved["rounds"] == 1
    assert rows_from_document(saved) == report_rows(run)
    with pytest.raises(ValueError, match="not a session-search-bench/1 report"):
        rows_from_document({"schema": "other"})


class HistoryBackend(RecordingBackend):
    """A RecordingBackend that also reads its transcripts: one window of one message."""

    WINDOW = SessionWindow("long", "agent:main:long")

    def windows(self) -> list[SessionWindow]:
        return [self.WINDOW]

    def window(self, session_id: str) -> SessionWindow:
        return self.WINDOW

    def windows_of(self, session_key: str) -> list[SessionWindow]:
        self.log.append((self.name, f"history {session_key}"))
        return [self.WINDOW] if session_key == self.WINDOW.session_key else []

    def session_keys(self) -> list[str]:
        return [self.WINDOW.session_key]

    def events(self, session_id: str) -> list[StoredEvent]:
        return [StoredEvent("long", 0, {"type": "message", "id": "m", "parentId": None,
                                        "message": {"role": "user", "content": "hello"}})]

    def event_count(self, session_id: str) -> int:
        return 1


HISTORY_MANIFEST = {
    **MANIFEST,
    "longSession": {"sessionKey": "agent:main:long", "sessionId": "long",
                    "anchorMessageId": "m"},
    "probes": {"common_word": {"query": "alpha"}},
}


def test_rows_of_features_not_built_are_left_out_of_every_output(tmp_path: Path) -> None:
    workloads = [_query("alpha", 1), HistoryWorkload(anchored=False)]
    run = run_benchmark(
        tmp_path / "corpus", HISTORY_MANIFEST, ("sqlite", "reference"), workloads,
        tmp_path / "work", _services([], {"sqlite": 1, "reference": 1}), rounds=2,
    )
    statuses = {(cell.workload, cell.backend): (cell.status, cell.reason) for cell in run.cells}
    assert statuses[("history/tail", "sqlite")] == (
        NOT_BUILT, "history reads: backend 'sqlite' has no transcript reader")
    rows = report_rows(run)
    assert [(row.workload, row.backend) for row in rows] == [
        ("query/alpha", "sqlite"), ("query/alpha", "reference")]
    for text in (format_report_table(rows), format_markdown_table(rows),
                 json.dumps(report_document(run, rows))):
        assert "history" not in text and "agent/" not in text and "not built" not in text


def test_a_built_feature_is_measured_and_a_skip_is_still_reported(tmp_path: Path) -> None:
    services = _services([], {"sqlite": 1, "reference": 1}, frozenset({"reference"}))

    def open_store(name: str, path: Path, create: bool, writer: bool) -> RecordingBackend:
        services.open_store(name, path, create, writer)  # raises for "reference"
        return HistoryBackend(name, [], 1)

    run = run_benchmark(
        tmp_path / "corpus", HISTORY_MANIFEST, ("sqlite", "reference"),
        [HistoryWorkload(anchored=True, repeats=2)], tmp_path / "work",
        BenchServices(open_store, services.import_corpus, services.backend_names), rounds=1,
    )
    rows = {row.backend: row for row in report_rows(run)}
    assert rows["sqlite"].status == OK and rows["sqlite"].summary is not None
    assert rows["sqlite"].summary.count == 2
    # A backend that cannot open is a real gap, not a missing feature: its row stays.
    assert rows["reference"].status == SKIPPED
    assert "- `history/anchored`: cannot create a reference store" in format_markdown_table(
        list(rows.values()))


def test_bench_command_rerenders_a_saved_report(capsys: pytest.CaptureFixture[str],
                                                tmp_path: Path) -> None:
    run = run_benchmark(
        tmp_path / "corpus", MANIFEST, ("sqlite",), [_query("alpha", 1)],
        tmp_path / "work", _services([], {"sqlite": 1}), rounds=1,
    )
    saved = write_report(report_document(run, report_rows(run)), tmp_path / "saved")
    status = main(["bench", "--from-report", str(saved), "--markdown",
                   "--out", str(tmp_path / "charts")])
    printed = capsys.readouterr().out
    assert status == 0
    assert "| query/alpha | sqlite | 2 |" in printed
    assert (tmp_path / "charts" / "latency_by_query_class.png").is_file()
    assert main(["bench", "--from-report", str(tmp_path / "missing.json")]) == 2
    assert "cannot read a bench report" in capsys.readouterr().err


def test_hit_expectation_checks_recent_order() -> None:
    older = SearchHit("k", "s", "a", "user", 1.0, "x", 1.0)
    newer = SearchHit("k", "s", "b", "user", 2.0, "x", 1.0)
    expectation = HitExpectation(2, limit=5)
    assert expectation.problems(SearchResult((newer, older)), "recent") == []
    assert expectation.problems(SearchResult((older, newer)), "recent") == [
        "recent order: timestamps are not newest first"
    ]


def test_query_workload_without_a_prepared_store_is_skipped(tmp_path: Path) -> None:
    target = BenchTarget("x", tmp_path, MANIFEST, tmp_path, tmp_path,
                         _services([], {"x": 0}))
    with pytest.raises(CapabilityMissing, match="prepared store"):
        _query("alpha", 0).run_round(target)


# ---- progress bar ----------------------------------------------------------------------


def test_progress_bar_prints_each_tenth_when_not_a_terminal() -> None:
    stream = io.StringIO()
    bar = ProgressBar(20, "bench", stream=stream)
    for _ in range(20):
        bar.advance()
    bar.close()
    lines = stream.getvalue().splitlines()
    # One line per decile reached: 0% (at the first step), 10%, …, 100%.
    assert len(lines) == 11
    assert lines[0] == "bench " + render_bar(1, 20)
    assert lines[-1] == "bench " + render_bar(20, 20)
    assert render_bar(5, 20, width=4) == "[#...]   5/20"


# ---- the command -----------------------------------------------------------------------


def test_bench_command_rejects_an_unknown_backend(capsys: pytest.CaptureFixture[str],
                                                  tmp_path: Path) -> None:
    status = main(["bench", "--size", "tiny", "--backends", "nope", "--out", str(tmp_path)])
    assert status == 2
    assert "unknown backend 'nope'" in capsys.readouterr().err


def test_bench_command_runs_the_tiny_corpus_on_real_backends(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SESSION_SEARCH_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "out"
    status = main([
        "bench", "--size", "tiny", "--backends", "sqlite,reference", "--only", "query",
        "--rounds", "1", "--repeats", "1", "--out", str(out), "--no-progress", "--json",
    ])
    assert status == 0
    printed = json.loads(capsys.readouterr().out)
    saved = json.loads((out / "bench.json").read_text(encoding="utf-8"))
    assert printed["cells"] == saved["cells"]
    statuses = {(cell["workload"], cell["backend"]): cell["status"] for cell in saved["cells"]}
    # Both backends, and sqlite-kernel beside sqlite on every query but the CJK retry
    # (upstream's kernel has none: not applicable, so no row).
    assert len(statuses) == 3 * 12 - 1
    assert ("query/cjk_retry", "sqlite-kernel") not in statuses
    assert {backend for _, backend in statuses} == {"sqlite", "sqlite-kernel", "reference"}
    assert set(statuses.values()) == {"ok"}, [c for c in saved["cells"] if c["status"] != "ok"]
    for cell in saved["cells"]:  # every ratio is against the faster SQLite figure
        assert cell["ratioBase"] in ("sqlite", "sqlite-kernel")
    assert (out / "latency_by_query_class.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bench_command_write_and_lifecycle_workloads_on_real_backends(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SESSION_SEARCH_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "out"
    status = main([
        "bench", "--size", "tiny", "--backends", "sqlite,reference",
        "--only", "ingest,reopen,append,reconcile", "--rounds", "1", "--out", str(out),
        "--no-progress",
    ])
    assert status == 0
    saved = json.loads((out / "bench.json").read_text(encoding="utf-8"))
    cells = {(cell["workload"], cell["backend"]): cell for cell in saved["cells"]}
    assert {workload for workload, _ in cells} == {
        "ingest/import", "ingest/file_to_answer", "ingest/state_to_answer", "reopen/first_query",
        "append/one_message", "reconcile/all_windows", "reconcile/background",
    }
    assert [key for key, cell in cells.items() if cell["status"] != "ok"] == []
    for backend in ("sqlite", "reference"):
        assert cells[("ingest/import", backend)]["metrics"]["messages_per_second"] > 0
        for whole_process in ("ingest/file_to_answer", "ingest/state_to_answer"):
            assert cells[(whole_process, backend)]["metrics"]["peak_resident_bytes"] > 0
        background = cells[("reconcile/background", backend)]["metrics"]
        assert background["messages_per_second"] > 0 and background["first_search_seconds"] > 0
        assert background["windows_rebuilt"] == cells[("reconcile/all_windows", backend)][
            "metrics"]["windows_rebuilt"]
        assert cells[("reopen/first_query", backend)]["metrics"]["resident_bytes"] > 2**20
        assert cells[("append/one_message", backend)]["count"] == 20
    # The fresh `search` command is stated against the bare search script, which the
    # kernel runs in a fresh process of its own.
    kernel_metrics = cells[("reopen/first_query", "sqlite-kernel")]["metrics"]
    script = kernel_metrics["script_seconds"]
    assert kernel_metrics["libraries_script_seconds"] > 0
    for backend in ("sqlite", "reference"):
        metrics = cells[("reopen/first_query", backend)]["metrics"]
        assert metrics["command_ratio"] == pytest.approx(metrics["command_seconds"] / script)
    printed = capsys.readouterr().out
    assert "ingest/import" in printed and "with the engine's libraries" in printed
    assert (out / "ingest_throughput.png").is_file() and (out / "memory.png").is_file()


def test_bench_command_fails_when_an_answer_is_wrong(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from engine.cli import bench_command

    monkeypatch.setenv("SESSION_SEARCH_CACHE", str(tmp_path / "cache"))
    wrong = _services([], {"sqlite": 0, "reference": 0})
    monkeypatch.setattr(bench_command, "default_services", lambda: wrong)
    status = main(["bench", "--size", "tiny", "--only", "query", "--rounds", "1",
                   "--repeats", "1", "--out", str(tmp_path / "out"), "--no-progress"])
    captured = capsys.readouterr()
    assert status == 1
    assert "wrong answers in" in captured.err and "query/common_word (sqlite)" in captured.err
    saved = json.loads((tmp_path / "out" / "bench.json").read_text(encoding="utf-8"))
    statuses = {(cell["workload"], cell["status"]) for cell in saved["cells"]}
    assert ("query/common_word", "failed") in statuses
    assert ("query/no_hit", "ok") in statuses
