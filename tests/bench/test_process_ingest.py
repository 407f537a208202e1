"""The whole-process ingest workloads' inputs and measures: the OpenClaw state folder made
of a corpus, the bare path reading it, and a child's peak memory.

Checked here: the engine's importer of state folders finds, in the folder made of the tiny
corpus, every probe's exact answer of the corpus manifest; the bare write path reads the
same folder into the rows the engine's import holds (windows, keys, events, FTS rows); a
measured child's peak memory is its own, not the benchmark process's.
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import pytest

from engine.bench.bare_write import bare_import
from engine.bench.corpus_generator import generate_corpus, read_manifest
from engine.bench.corpus_plan import corpus_size
from engine.bench.process_ingest import run_measured
from engine.bench.query_workloads import query_workloads
from engine.bench.workload_protocol import WorkloadFailed
from engine.bench.state_folder import ensure_state_folder, write_state_folder
from engine.ingest.into_store import live_import_into_store
from engine.store.registry import open_store


@pytest.fixture(scope="module")
def state_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """(corpus, its state folder, a sqlite store the engine imported the folder into)."""
    root = tmp_path_factory.mktemp("state")
    corpus = root / "tiny"
    generate_corpus(corpus_size("tiny"), 11, corpus)
    state = ensure_state_folder(corpus, root / "openclaw-state")
    live_import_into_store(root / "store", "sqlite", state)
    return corpus, state, root / "store"


def test_the_state_folder_holds_every_probe_answer(state_store: tuple[Path, Path, Path]) -> None:
    corpus, state, store_path = state_store
    assert (state / "agents" / "main" / "sessions" / "sessions.json").is_file()
    assert any(".jsonl.reset." in path.name for path in state.glob("agents/*/sessions/*"))
    store = open_store(store_path, "search")
    try:
        for workload in query_workloads(read_manifest(corpus)):
            result = store.search(workload.request)
            assert workload.expectation.problems(result, workload.request.order) == [], workload.name
    finally:
        store.close()
    with pytest.raises(FileExistsError):
        write_state_folder(corpus, state)
    assert ensure_state_folder(corpus, state) == state  # a whole folder is reused


def _rows(databases: list[Path], sql: str) -> list[tuple]:
    rows: list[tuple] = []
    for database in databases:
        connection = sqlite3.connect(database.resolve().as_uri() + "?mode=ro", uri=True)
        try:
            rows.extend(connection.execute(sql).fetchall())
        finally:
            connection.close()
    return sorted(rows, key=repr)


def test_the_bare_path_reads_the_state_folder_as_the_importer_does(
        state_store: tuple[Path, Path, Path], tmp_path: Path) -> None:
    _, state, store_path = state_store
    bare = tmp_path / "bare.sqlite"
    counts = bare_import(state, bare)
    imported = sorted(store_path.glob("agents/*/agent/openclaw-agent.sqlite"))
    assert counts["windows"] == len(_rows(imported, "SELECT session_id FROM session_windows"))
    for sql in (
        "SELECT session_id, session_key FROM session_windows",
        "SELECT session_id, seq, event_json FROM transcript_events",
        ("SELECT r.session_id, r.message_id, f.text, f.role, f.timestamp FROM "
         "session_transcript_fts_rows AS r JOIN session_transcript_fts AS f ON f.rowid = r.id"),
    ):
        assert _rows([bare], sql) == _rows(imported, sql), sql


def test_a_measured_child_reports_its_own_peak_memory() -> None:
    """Linux keeps the peak resident size across `exec`: a child forked straight from a
    large process reports the parent's size. Through the launcher it reports its own."""
    ballast = bytearray(256 * 2**20)
    ballast[:: 4096] = b"\x01" * len(ballast[:: 4096])  # touched, so resident
    small = run_measured([sys.executable, "-S", "-c", "pass"])
    large = run_measured(
        [sys.executable, "-S", "-c", "held = bytearray(96 * 2**20); print(len(held))"])
    assert small.seconds > 0 and small.processor_seconds > 0
    assert large.output == f"{96 * 2**20}\n"
    assert small.peak_bytes < 64 * 2**20 < 96 * 2**20 < large.peak_bytes < len(ballast)
    del ballast
    with pytest.raises(WorkloadFailed, match="failed"):
        run_measured([sys.executable, "-S", "-c", "raise SystemExit(3)"])
    with pytest.raises(WorkloadFailed, match="could not be measured"):
        run_measured([str(Path(sys.executable).with_name("no-such-program"))])
