"""`sqlite-kernel`: upstream's bare statement and write path, beside the SQLite backend.

Checked here: the kernel answers every probe of the tiny corpus exactly as the SQLite
backend does, on the backend's own database (and refuses the CJK retry it does not have);
the bare write path writes the rows the backend holds after its import and reconcile;
several agents' databases are searched and merged; and the runner measures a comparator
beside its backend, leaves its inapplicable cells out, and states every ratio against the
faster SQLite figure of each workload.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from engine.backends.sqlite.backend import SqliteBackend
from engine.bench.adapters import BenchServices
from engine.bench.corpus_generator import generate_corpus, read_manifest
from engine.bench.corpus_plan import corpus_size
from engine.bench.process_ingest import ProcessIngestWorkload, state_ingest_workload
from engine.bench.query_workloads import QueryWorkload, query_workloads
from engine.bench.report import format_markdown_table, report_rows
from engine.bench.runner import NOT_APPLICABLE, OK, import_source, run_benchmark
from engine.bench.signals import NotApplicable
from engine.bench.sqlite_kernel import SqliteKernel, store_databases
from engine.bench.workload_protocol import BenchTarget, HitExpectation, Sample, WorkloadFailed
from engine.bench.write_workloads import AppendWorkload, IngestWorkload
from engine.ingest import import_sources
from engine.model import SearchHit, SearchRequest, SearchResult, SessionWindow


@pytest.fixture(scope="module")
def tiny_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("corpus") / "tiny"
    generate_corpus(corpus_size("tiny"), 11, directory)
    return directory


@pytest.fixture(scope="module")
def imported(tiny_corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> SqliteBackend:
    backend = SqliteBackend.create(tmp_path_factory.mktemp("stores") / "sqlite")
    import_sources(backend, [tiny_corpus])
    backend.reconcile()
    yield backend
    backend.close()


def test_the_kernel_answers_every_probe_as_the_backend_does(tiny_corpus: Path,
                                                            imported: SqliteBackend) -> None:
    kernel = SqliteKernel().open(imported.directory)
    try:
        for workload in query_workloads(read_manifest(tiny_corpus)):
            for limit in (1, 25):
                request = replace(workload.request, limit=limit)
                if workload.name == "query/cjk_retry":
                    with pytest.raises(NotApplicable, match="no CJK retry"):
                        kernel.prepare_search(request)
                    continue
                prepared = kernel.prepare_search(request)
                expected = imported.search(request)
                got = prepared.result(prepared.run())
                assert (got.hits, got.truncated) == (expected.hits, expected.truncated), workload.name
    finally:
        kernel.close()


def _rows(database: Path, sql: str) -> list[tuple]:
    connection = sqlite3.connect(database.resolve().as_uri() + "?mode=ro", uri=True)
    try:
        return sorted(connection.execute(sql).fetchall(), key=repr)
    finally:
        connection.close()


def test_the_bare_write_path_writes_the_rows_of_an_import(tiny_corpus: Path, imported: SqliteBackend,
                                                          tmp_path: Path) -> None:
    counts = SqliteKernel().bare_import(tiny_corpus, tmp_path / "bare")
    bare = tmp_path / "bare" / "openclaw-agent.sqlite"
    stats = imported.stats()
    assert counts == {name: stats[name] for name in ("windows", "events", "messages_indexed")}
    for sql in (
        "SELECT session_id, session_key FROM session_windows",
        "SELECT session_id, seq, event_json FROM transcript_events",
        "SELECT session_id, event_id, seq, event_type, parent_id FROM transcript_event_identities",
        "SELECT * FROM session_transcript_active_events",
        ("SELECT session_id, indexed_seq, leaf_event_id, needs_rebuild, active_event_count, "
        "active_message_count FROM session_transcript_index_state"),
        ("SELECT r.session_id, r.message_id, f.text, f.role, f.timestamp FROM session_transcript_fts_rows "
        "AS r JOIN session_transcript_fts AS f ON f.rowid = r.id"),
    ):
        assert _rows(bare, sql) == _rows(imported.path, sql), sql


def test_the_kernel_merges_the_databases_of_several_agents(tmp_path: Path) -> None:
    store = tmp_path / "store"
    for agent in ("main", "work"):
        backend = SqliteBackend.create_file(store / "agents" / agent / "agent" / "openclaw-agent.sqlite")
        with backend.transaction() as transaction:
            transaction.put_window(SessionWindow(f"{agent}-w", f"agent:{agent}:k"))
            for number in range(3):
                transaction.append_event(f"{agent}-w", {
                    "type": "message", "id": f"{agent}-{number}", "timestamp": number,
                    "message": {"role": "user", "content": "saffron " * (number + 1)}})
        backend.close()
    assert sorted(store_databases(store)) == ["main", "work"]
    kernel = SqliteKernel().open(store)
    try:
        everywhere = kernel.prepare_search(SearchRequest("saffron", limit=4, session_keys=()))
        assert len(everywhere.statements) == 2
        result = everywhere.result(everywhere.run())
        assert len(result.hits) == 4 and result.truncated
        assert {hit.session_key for hit in result.hits} == {"agent:main:k", "agent:work:k"}
        one_agent = kernel.prepare_search(SearchRequest("saffron", agent_id="work"))
        assert len(one_agent.statements) == 1
        assert {hit.session_id for hit in one_agent.result(one_agent.run()).hits} == {"work-w"}
        # The bare search script (a fresh process, nothing of the engine) finds the same
        # hits in the same order as the kernel's merge.
        command = kernel.search_command(SearchRequest("saffron", limit=4, session_keys=()))
        assert command[1] == "-S"  # no .pth file of this environment is its cost
        completed = subprocess.run(command, capture_output=True, text=True, check=True)
        printed = json.loads(completed.stdout)
        assert [(hit["sessionId"], hit["messageId"], hit["score"]) for hit in printed["hits"]] \
            == [(hit.session_id, hit.message_id, hit.score) for hit in result.hits]
        assert printed["seconds"] > 0 and printed["libraries"] == []
        # With the engine's libraries imported first: the same hits, and the libraries
        # really loaded in that process.
        libraries = kernel.search_command(SearchRequest("saffron", limit=4, session_keys=()),
                                          with_libraries=True)
        assert "--with-libraries" in libraries and "-S" in libraries
        loaded = json.loads(subprocess.run(libraries, capture_output=True, text=True,
                                           check=True).stdout)
        assert loaded["hits"] == printed["hits"]
        assert loaded["libraries"] == ["dataclasses", "typing", "argparse", "msgpack"]
        with pytest.raises(NotApplicable):
            kernel.search_command(SearchRequest("saffron", agent_id="work"))
    finally:
        kernel.close()


# ---- the runner: a comparator beside its backend ---------------------------------------


class FakeBackend:
    name = "sqlite"

    def __init__(self) -> None:
        self.searches = 0

    def search(self, request: SearchRequest) -> SearchResult:
        self.searches += 1
        return SearchResult((SearchHit("k", "s", "m", "user", 1.0, "x", 1.0),))

    def close(self) -> None:
        pass


class FakeComparator:
    """Answers right, counts what it was asked; refuses the query `refused`."""

    name = "sqlite-kernel"
    compared_backend = "sqlite"

    def __init__(self) -> None:
        self.opened: list[Path] = []
        self.runs = 0

    def open(self, store_directory: Path) -> FakeComparator:
        self.opened.append(store_directory)
        return self

    def prepare_search(self, request: SearchRequest) -> FakeComparator:
        if request.query == "refused":
            raise NotApplicable("no such statement")
        return self

    def run(self) -> list[str]:
        self.runs += 1
        return ["row"]

    def result(self, rows: list[str]) -> SearchResult:
        return SearchResult((SearchHit("k", "s", "m", "user", 1.0, "x", 1.0),))

    def bare_import(self, corpus: Path, directory: Path) -> dict[str, int]:
        directory.mkdir(parents=True)
        return {"windows": 1, "events": 1, "messages_indexed": 1}

    def close(self) -> None:
        pass


def test_the_runner_measures_a_comparator_beside_its_backend(tmp_path: Path) -> None:
    comparator = FakeComparator()
    backend = FakeBackend()
    services = BenchServices(lambda name, path, create, writer: backend, lambda store, corpus: None,
                             lambda: ("sqlite",), (comparator,))
    manifest = {"size": "fake", "seed": 0,
                "counts": {"messages": 1, "windows": 1, "events": 1, "searchableMessages": 1}}

    def query(name: str) -> QueryWorkload:
        request = SearchRequest(query=name, limit=5, session_keys=())
        return QueryWorkload(f"query/{name}", name, request, HitExpectation(1, limit=5), 2)

    run = run_benchmark(tmp_path / "corpus", manifest, ("sqlite",),
                        [IngestWorkload(), query("alpha"), query("refused"), AppendWorkload(repeats=1)],
                        tmp_path / "work", services, rounds=2)
    assert run.backends == ("sqlite", "sqlite-kernel")
    statuses = {(cell.workload, cell.backend): cell.status for cell in run.cells}
    assert statuses[("query/alpha", "sqlite-kernel")] == OK
    assert statuses[("ingest/import", "sqlite-kernel")] == OK
    assert statuses[("query/refused", "sqlite-kernel")] == NOT_APPLICABLE
    assert statuses[("append/one_message", "sqlite-kernel")] == NOT_APPLICABLE
    assert comparator.opened == [tmp_path / "work" / "stores" / "sqlite"]
    assert comparator.runs == 2 * 2  # rounds × repeats, only for the comparable query
    # The faster SQLite figure is each workload's base; inapplicable cells have no row.
    for cell in run.cells:
        if cell.workload == "query/alpha":
            cell.samples = [Sample(0.004 if cell.backend == "sqlite" else 0.002)]
        if cell.workload == "query/refused" and cell.backend == "sqlite":
            cell.samples = [Sample(0.003)]
    rows = {(row.workload, row.backend): row for row in report_rows(run)}
    assert ("append/one_message", "sqlite-kernel") not in rows
    assert ("query/refused", "sqlite-kernel") not in rows
    alpha = rows[("query/alpha", "sqlite")]
    assert (alpha.ratio_to_baseline, alpha.ratio_base) == (pytest.approx(2.0), "sqlite-kernel")
    refused = rows[("query/refused", "sqlite")]
    assert (refused.ratio_to_baseline, refused.ratio_base) == (pytest.approx(1.0), "sqlite")
    assert "| query/alpha | sqlite | 1 | 4 ms | 4 ms | 2.00× | sqlite-kernel |  |" in \
        format_markdown_table(list(rows.values()))


class LoggingBackend(FakeBackend):
    def __init__(self, log: list[str]) -> None:
        super().__init__()
        self.log = log

    def search(self, request: SearchRequest) -> SearchResult:
        self.log.append("backend")
        return super().search(request)


class LoggingComparator(FakeComparator):
    def __init__(self, log: list[str]) -> None:
        super().__init__()
        self.log = log

    def run(self) -> list[str]:
        self.log.append("kernel")
        return super().run()


def _paired_run(tmp_path: Path, log: list[str], workload: QueryWorkload, rounds: int):
    services = BenchServices(lambda name, path, create, writer: LoggingBackend(log),
                             lambda store, corpus: None, lambda: ("sqlite",),
                             (LoggingComparator(log),))
    manifest = {"size": "fake", "seed": 0, "counts": {"messages": 1}}
    return run_benchmark(tmp_path / "corpus", manifest, ("sqlite",), [workload],
                         tmp_path / "work", services, rounds=rounds)


def test_a_query_and_its_comparator_alternate_call_by_call(tmp_path: Path) -> None:
    """Inside each round the backend's and the kernel's calls alternate in ABBA order,
    whichever of the two the schedule put first."""
    log: list[str] = []
    request = SearchRequest(query="alpha", limit=5, session_keys=())
    run = _paired_run(tmp_path, log, QueryWorkload("query/alpha", "alpha", request,
                                                   HitExpectation(1, limit=5), 4), rounds=2)
    assert log == ["backend", "kernel", "kernel", "backend"] * 4
    assert [(cell.backend, cell.status, len(cell.samples)) for cell in run.cells] == [
        ("sqlite", OK, 8), ("sqlite-kernel", OK, 8)]


def test_a_wrong_comparator_answer_fails_only_its_own_cell(tmp_path: Path) -> None:
    log: list[str] = []
    request = SearchRequest(query="alpha", limit=5, session_keys=())
    wrong = QueryWorkload("query/alpha", "alpha", request, HitExpectation(1, limit=5), 2)

    class WrongComparator(LoggingComparator):
        def result(self, rows: list[str]) -> SearchResult:
            return SearchResult(())

    services = BenchServices(lambda name, path, create, writer: LoggingBackend(log),
                             lambda store, corpus: None, lambda: ("sqlite",),
                             (WrongComparator(log),))
    run = run_benchmark(tmp_path / "corpus", {"size": "fake", "seed": 0, "counts": {}},
                        ("sqlite",), [wrong], tmp_path / "work", services, rounds=2)
    cells = {cell.backend: cell for cell in run.cells}
    assert cells["sqlite"].status == OK and len(cells["sqlite"].samples) == 4
    assert cells["sqlite-kernel"].status == "failed"
    assert "expected 1 hits, got 0" in cells["sqlite-kernel"].reason


def test_a_fast_query_is_called_until_its_round_has_lasted_long_enough(tmp_path: Path) -> None:
    """`min_round_seconds` adds calls beyond `repeats`, up to `max_repeats`; without it a
    round makes exactly `repeats` calls."""
    request = SearchRequest(query="alpha", limit=5, session_keys=())
    long_round = QueryWorkload("query/alpha", "alpha", request, HitExpectation(1, limit=5), 3,
                               min_round_seconds=3600.0, max_repeats=40)
    log: list[str] = []
    run = _paired_run(tmp_path / "long", log, long_round, rounds=1)
    assert [len(cell.samples) for cell in run.cells] == [40, 40]
    assert log.count("backend") == log.count("kernel") == 40
    log.clear()
    run = _paired_run(tmp_path / "short", log, replace(long_round, min_round_seconds=0.0), rounds=1)
    assert [len(cell.samples) for cell in run.cells] == [3, 3]


@pytest.mark.parametrize("workload", [ProcessIngestWorkload(), state_ingest_workload()],
                         ids=lambda workload: workload.name)
@pytest.mark.parametrize("name", ["reference", "sqlite", "sqlite-kernel"])
def test_the_whole_process_ingest_imports_the_file_and_answers_the_probe(
        tiny_corpus: Path, tmp_path: Path, name: str, workload: ProcessIngestWorkload) -> None:
    """`ingest/file_to_answer` and `ingest/state_to_answer` on each side: two real
    processes, the probe's hits checked (a wrong count fails the cell), each part and the
    import's peak memory reported."""
    manifest = read_manifest(tiny_corpus)
    target = BenchTarget(name, import_source(tiny_corpus, manifest), manifest,
                         tmp_path / "store", tmp_path, None,  # type: ignore[arg-type]
                         backend=object() if name != "sqlite-kernel" else None,  # type: ignore[arg-type]
                         comparator=SqliteKernel() if name == "sqlite-kernel" else None)
    [sample] = workload.run_round(target)
    metrics = sample.metrics
    assert sample.seconds == pytest.approx(metrics["import_seconds"]
                                           + metrics["first_query_seconds"])
    assert metrics["peak_resident_bytes"] > 10 * 2**20  # a Python process that imported
    assert metrics["processor_seconds"] > 0
    assert not (tmp_path / f"process-ingest-{name}").exists()
    wrong = {**manifest, "probes": {**manifest["probes"], "rare_word": {
        **manifest["probes"]["rare_word"], "matchingMessages": 1}}}
    found = min(manifest["probes"]["rare_word"]["matchingMessages"], 25)
    with pytest.raises(WorkloadFailed, match=f"found {found} hits, expected 1"):
        workload.run_round(replace(target, manifest=wrong))
