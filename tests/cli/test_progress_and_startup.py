"""Progress on long work (a bar on a terminal, one summary line otherwise, `--quiet`) and
start-up (`-V`/`--version`, a command imports only its own modules), in fresh processes."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from engine import __version__
from tests.cli.conftest import CHECKOUT, read_until_closed

ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
DEMO = CHECKOUT / "engine" / "demo_corpus"


def flat_source(path: Path, messages: int = 600) -> Path:
    """`messages` user messages in windows of 50."""
    path.write_text("".join(json.dumps({
        "sessionKey": "agent:main:main", "sessionId": f"s{number // 50:03d}",
        "messageId": f"m{number}", "role": "user", "timestamp": 1772359200000 + number,
        "text": f"message {number} about saffron"}) + "\n" for number in range(messages)),
        encoding="utf-8")
    return path


def on_terminal(*argv: str) -> tuple[int, str, str]:
    """Run `python -m engine ARGV` with standard error on a pseudo-terminal; return the
    exit status, standard output and what the terminal showed (escapes removed)."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    environment = {**os.environ, "TERM": "xterm-256color"}
    environment.pop("COLUMNS", None)
    process = subprocess.Popen([sys.executable, "-m", "engine", *argv], cwd=CHECKOUT,
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=follower, env=environment)
    os.close(follower)
    shown = read_until_closed(leader)
    out = process.stdout.read().decode("utf-8") if process.stdout else ""
    status = process.wait(timeout=120)
    return status, out, ESCAPES.sub("", shown.decode("utf-8", "replace"))


def test_import_on_a_terminal_draws_rows_rate_and_time_left(tmp_path: Path) -> None:
    source = flat_source(tmp_path / "m.jsonl")
    status, out, shown = on_terminal("import", "--store", str(tmp_path / "s"), str(source))
    assert status == 0
    # the last drawing: every phase complete, with its rows, its rate and the time left
    last = shown.rsplit("reading records", 1)[1].splitlines()
    assert re.fullmatch(r" +━+ 600/600 +[\d,]+ rows/s +0:00:00 *", last[0]), shown
    assert re.fullmatch(r"writing the index +━+ +0:00:00 *", last[1]), shown
    assert "reconciling" not in shown  # linear windows: nothing to reconcile, no bar
    assert out.startswith(f"imported 1 source into {tmp_path / 's'}: 12 windows, 600 events")


def test_reconcile_on_a_terminal_draws_windows(tmp_path: Path, session_search) -> None:
    store = str(tmp_path / "s")  # the demo corpus has rewound windows to reconcile
    assert session_search("import", "--store", store, "--no-reconcile", "--quiet",
                          str(DEMO)).status == 0
    status, out, shown = on_terminal("reconcile", "--store", store)
    assert status == 0
    reconciled = re.fullmatch(r"reconciled (\d+) window\(s\), (\d+) row\(s\), 0 orphaned "
                              r"window\(s\) swept in [\d.e-]+ s; indexing complete\n", out)
    assert reconciled is not None and int(reconciled[1]) >= 1 and int(reconciled[2]) >= 1, out
    count = reconciled[1]
    assert re.search(rf"reconciling windows +━+ {count}/{count} +[\d,]+ windows/s", shown), shown


def test_quiet_silences_the_bar_and_the_summary(tmp_path: Path, session_search) -> None:
    source = flat_source(tmp_path / "m.jsonl")
    assert on_terminal("import", "--quiet", "--store", str(tmp_path / "s"), "--no-reconcile",
                       str(source)) == (0, "", "")
    assert on_terminal("reconcile", "--store", str(tmp_path / "s"), "-q") == (0, "", "")
    found = session_search("search", "--store", str(tmp_path / "s"), "--json", "saffron")
    assert len(json.loads(found.out)["hits"]) == 10  # quiet, but the work was done


def test_without_a_terminal_one_summary_line_and_nothing_on_stderr(
        tmp_path: Path, session_search) -> None:
    source = flat_source(tmp_path / "m.jsonl")
    imported = session_search("import", "--store", str(tmp_path / "s"), str(source))
    assert (imported.status, imported.err) == (0, "")
    summary, *table = imported.out.splitlines()
    assert re.fullmatch(rf"imported 1 source into {re.escape(str(tmp_path / 's'))}: 12 "
                        rf"windows, 600 events \({re.escape(str(source))}: flat\) in "
                        r"[\d.e-]+ s", summary)
    assert [line.split()[0] for line in table[:5]] == [
        "agents", "sessions", "windows", "events", "bytes"]  # the counts, one a line
    reconciled = session_search("reconcile", "--store", str(tmp_path / "s"))
    assert (reconciled.err, len(reconciled.out.splitlines())) == ("", 1)


@pytest.mark.parametrize("option", ["-V", "--version"])
def test_version(session_search, option: str) -> None:
    outcome = session_search(option)
    assert (outcome.status, outcome.out, outcome.err) == (0, f"session-search {__version__}\n", "")


def engine_modules_after(*argv: str) -> set[str]:
    """The `engine` modules, and the top-level name of every other package (`icu`,
    `rich`, `sortedcontainers`), a fresh process has loaded after `main(ARGV)`."""
    program = ("import sys; from engine.cli import main; status = main(sys.argv[1:]); "
               "print(' '.join(sorted({m for m in sys.modules if m.startswith('engine.')} | "
               "{m.split('.')[0] for m in sys.modules})), file=sys.stderr); sys.exit(status)")
    completed = subprocess.run([sys.executable, "-c", program, *argv], cwd=CHECKOUT,
                               capture_output=True, text=True, timeout=120, check=False)
    assert completed.returncode == 0, completed.stderr
    return set(completed.stderr.split())


def test_version_and_help_import_no_command_module() -> None:
    completed = subprocess.run(
        [sys.executable, "-c", ("import sys; from engine.cli import main\n"
         "try:\n main(['--version'])\nexcept SystemExit:\n pass\n"
         "print(' '.join(sorted(m for m in sys.modules if m.startswith('engine'))))")],
        cwd=CHECKOUT, capture_output=True, text=True, timeout=120, check=False)
    assert completed.stdout.splitlines()[-1].split() == [
        "engine", "engine.cli", "engine.cli.commands", "engine.errors", "engine.gc_policy"]


#: Modules of values a one-word search never makes, split from the modules it loads so
#: that their frozen dataclasses are not defined at start-up: `explain`'s records of a
#: score and of an excerpt window, a CJK term's substring, a writing command's store.
EXPLAIN_AND_WRITE_VALUES = frozenset({
    "engine.score.bm25_explanation", "engine.results.snippet_explanation",
    "engine.query.substring_term", "engine.store.opened_store"})

#: The same for a reference store's upkeep and problems: a reconcile's batch, a
#: compaction's outcome, a problem with a store's files (a store that opens whole has
#: none). Their old modules still offer the names (PEP 562).
UPKEEP_AND_PROBLEM_VALUES = frozenset({
    "engine.backends.reconcile_batch", "engine.transcript.compaction_outcome",
    "engine.transcript.store_problem"})


def test_search_imports_its_backend_and_not_the_other_commands(tmp_path: Path,
                                                               session_search) -> None:
    source = flat_source(tmp_path / "m.jsonl", messages=5)
    store = str(tmp_path / "s")
    assert session_search("import", "--store", store, "--backend", "sqlite", "--quiet",
                          str(source)).status == 0
    loaded = engine_modules_after("search", "--store", store, "--json", "saffron")
    assert "engine.backends.sqlite.backend" in loaded
    unwanted = {"engine.backends.reference.backend", "engine.ingest", "engine.bench", "engine.rpc.server",
                "engine.diagnostics", "engine.cli.store_commands", "engine.cli.bench_command",
                "engine.cli.progress_display"}
    assert loaded & unwanted == set()
    # Start-up: a search that only reads loads neither the write path and the transcript
    # layer under it, nor the highlighting of readable output, nor ICU (a merge without
    # ties needs no collation key).
    for_writes = {"engine.backends.sqlite.writes", "engine.transcript.clock",
                  *(f"engine.transcript.log_{part}" for part in (
                      "files", "positions", "tail", "reader", "writer", "checks")),
                  "engine.transcript.validation", "engine.transcript.evidence",
                  "engine.cli.highlight", "icu"}
    assert loaded & for_writes == set()
    # Nor, printing JSON, the readable output and its value classes, nor the values of
    # `explain`, nor the analyzers' module (the query is planned with annotations only
    # naming the analyzer type; the SQLite partitions tokenize in SQL).
    not_shown = {"engine.cli.output", "engine.cli.search_view",
                 "engine.store.explanation", "engine.analysis.token"}
    assert loaded & not_shown == set()
    assert "engine.cli.json_output" in loaded
    # Nor the background reconcile worker: a store makes it when a writer's search first
    # finds work pending, and a command's store is a reader.
    assert "engine.store.background" not in loaded
    assert "engine.store.lock" in loaded
    # Nor a writer's transaction across partitions, nor the RPC layer's framing (JSON
    # without a lone surrogate is printed as it is).
    assert loaded & {"engine.store.transaction", "engine.rpc", "engine.rpc.framing"} == set()
    assert loaded & EXPLAIN_AND_WRITE_VALUES == set()


def test_reference_search_loads_neither_postgres_mode_nor_the_write_path(
        tmp_path: Path, session_search) -> None:
    source = flat_source(tmp_path / "m.jsonl", messages=5)
    store = str(tmp_path / "s")
    assert session_search("import", "--store", store, "--quiet", str(source)).status == 0
    loaded = engine_modules_after("search", "--store", store, "--json", "saffron")
    assert "engine.backends.reference.backend" in loaded
    # The postgres expectation's parser and tsquery, the write transaction and a
    # writer's streaming follower, the in-memory term dictionary's sorted map (a
    # reader's terms come from files), the readable output, ICU, and the other
    # commands' worlds.
    unwanted = {"engine.search.postgres_mode", "engine.query.pg_tsquery",
                "engine.analysis.pg_parser", "engine.analysis.pg_query",
                "engine.backends.reference.transaction",
                "engine.backends.reference.streaming", "sortedcontainers",
                "engine.cli.output", "engine.cli.search_view", "rich", "icu",
                "engine.explorer", "engine.bench", "engine.ingest", "engine.rpc.server",
                "engine.backends.sqlite.backend", "engine.backends.postgres"}
    assert loaded & unwanted == set()
    # A one-word query reads its term's columns only: not the phrases' instances and
    # bitmaps, nor the clear path (the fast path's oracle), nor the RPC layer's framing,
    # nor a writer's transaction across partitions, nor what a rebuild holds signals with.
    one_word_never = {"engine.index.token_bitmaps", "engine.search.phrases",
                      "engine.search.clear_path", "engine.rpc", "engine.rpc.framing",
                      "engine.store.transaction", "engine.held_signals"}
    assert loaded & one_word_never == set()
    assert loaded & EXPLAIN_AND_WRITE_VALUES == set()
    # The transcript store opens for reading: not a writer's transaction (and the checks
    # of what it stores), its log writer, the plan and rewrite of a compaction, the
    # finding of lost commits (the log holds what the claims name) nor a torn tail's
    # values (the log ends at a commit), nor the pieces a checkpoint is saved with, nor
    # the index's flushes and merges (it loads the index's files: `engine.index.loading`).
    transcript_writes = {"engine.transcript.transaction", "engine.transcript.validation",
                         "engine.codec.catalog_file_pieces", "engine.index.writer",
                         "engine.codec.terms_stream", "engine.index.merged_lists",
                         "engine.progress",
                         "engine.transcript.windows", "engine.transcript.log_writer",
                         "engine.transcript.compaction_plan", "engine.transcript.lost_commits",
                         "engine.transcript.log_tail"}
    assert loaded & transcript_writes == set()
    assert loaded & UPKEEP_AND_PROBLEM_VALUES == set()


def test_import_without_a_terminal_does_not_load_rich(tmp_path: Path) -> None:
    program = ("import sys; from engine.cli import main; status = main(sys.argv[1:]); "
               "print('rich' in sys.modules, file=sys.stderr); sys.exit(status)")
    completed = subprocess.run(
        [sys.executable, "-c", program, "import", "--store", str(tmp_path / "s"),
         str(flat_source(tmp_path / "m.jsonl", messages=5))],
        cwd=CHECKOUT, capture_output=True, text=True, timeout=120, check=False)
    assert (completed.returncode, completed.stderr) == (0, "False\n")


def test_a_reference_import_loads_neither_sqlite_nor_openssl(tmp_path: Path) -> None:
    """A reference import of a file loads no part of SQLite (an OpenClaw state's
    database is opened where one is found) nor `hashlib`, whose OpenSSL library alone
    adds to the import's resident memory (only a state's marks hash)."""
    loaded = engine_modules_after("import", "--store", str(tmp_path / "s"), "--quiet",
                                  str(flat_source(tmp_path / "m.jsonl", messages=5)))
    assert "engine.ingest.live_state" in loaded
    assert loaded & {"sqlite3", "_sqlite3", "hashlib", "_hashlib", "engine.backends.sqlite"} \
        == set()


def test_a_reference_stores_problems_and_upkeep_load_their_values(tmp_path: Path,
                                                                   session_search) -> None:
    """What the search leaves out is loaded where it is made: `verify` reports the
    store's problems, `reconcile` and `compact` make their values."""
    source = flat_source(tmp_path / "m.jsonl", messages=5)
    store = str(tmp_path / "s")
    assert session_search("import", "--store", store, "--quiet", str(source)).status == 0
    assert "engine.transcript.compaction_outcome" in engine_modules_after(
        "compact", "--store", store)
    assert "engine.transcript.store_problem" in engine_modules_after("verify", "--store", store)


def test_old_modules_still_offer_the_moved_names() -> None:
    from engine.backends import protocol, reconcile_batch
    from engine.transcript import compaction, compaction_outcome, evidence, store_problem

    assert protocol.ReconcileBatch is reconcile_batch.ReconcileBatch
    assert compaction.CompactionOutcome is compaction_outcome.CompactionOutcome
    assert evidence.StoreProblem is store_problem.StoreProblem
    with pytest.raises(AttributeError):
        protocol.NoSuchName  # noqa: B018
