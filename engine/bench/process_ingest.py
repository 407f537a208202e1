"""The whole-process ingest workload: from the file to the first answer, as a user waits.

Owns: `ProcessIngestWorkload` in its two forms: `ingest/file_to_answer`, a fresh process
imports the corpus file into a new store the way a user does (`session-search import`),
and `ingest/state_to_answer`, the same from the OpenClaw state folder made of the corpus
(`engine.bench.state_folder`, written once per run before the first round, untimed) with
`session-search import --openclaw-state`; then another fresh process answers the
corpus's rare-word probe (`session-search search`). The comparator does the same job its
bare way (a fresh process reads the same files and writes upstream's tables and FTS5
index in one transaction, `bare_write.bare_import`; then the bare search script answers
the probe). Its sample is the wall time of both processes; its metrics are each part,
the import process's peak resident memory, and the processor seconds of both (user and
system: the work done, which other jobs competing for the cores stretch far less than
the wall time). Also how a child process is timed and its
peak memory read (`run_measured`). Must not touch: `IngestWorkload` (the in-process
import kept for history), the probes' code, the order of runs, statistics, printing.

Why whole processes: what a user waits for is the command, and that includes reading and
checking the file, building events and trees, the reconcile after the import, closing
(an index flush), and the interpreter's start-up, none of which an in-process timer of
the write path sees. Both sides start from the same file and end with the same answer
checked (the probe's known hit count), so neither can win by skipping work.

Peak memory is the import child's `ru_maxrss`, the high-water mark of its resident
memory, in bytes. Linux keeps that mark across `exec`, so a child forked from the
benchmark's own process would report at least the benchmark's size (its prepared stores
and corpus); each measured command is therefore started by a small launcher
(`LAUNCHER`: the interpreter without `site`, the standard library only), which forks it,
times it and reads its `ru_maxrss` with `os.wait4`: the mark starts from the launcher's
few megabytes.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from engine.bench.adapters import CapabilityMissing, remove_store
from engine.bench.reopen_workload import console_script, probe_environment
from engine.bench.state_folder import ensure_state_folder
from engine.bench.workload_protocol import QUERY_LIMIT, BenchTarget, Sample, WorkloadFailed
from engine.model import SearchRequest

#: The comparator's import, a fresh interpreter running the bare write path.
BARE_IMPORT = ("import sys; from pathlib import Path; "
               "from engine.bench.bare_write import bare_import; "
               "bare_import(Path(sys.argv[1]), Path(sys.argv[2]))")
#: The launcher of a measured command (`python -S -c LAUNCHER COMMAND...`): it runs the
#: command as its child, with its own standard streams, and prints on its standard error,
#: last, the child's wall seconds, exit code, `ru_maxrss` (KiB) and processor seconds
#: (user and system).
LAUNCHER = ("import os, sys, time; started = time.perf_counter(); "
            "child = os.posix_spawnp(sys.argv[1], sys.argv[1:], os.environ); "
            "_, status, usage = os.wait4(child, 0); "
            "elapsed = time.perf_counter() - started; "
            "print('\\nmeasured', elapsed, os.waitstatus_to_exitcode(status), usage.ru_maxrss, "
            "usage.ru_utime + usage.ru_stime, file=sys.stderr)")
#: The import's source, per form of the workload.
FILE, STATE = "file", "openclaw-state"
#: Where the state folder of a run's corpus is written, under its scratch folder.
STATE_FOLDER = "openclaw-state"


@dataclass(frozen=True, slots=True)
class Measured:
    """What one measured command did: wall and processor seconds, peak resident bytes,
    its standard output."""

    seconds: float
    processor_seconds: float
    peak_bytes: int
    output: str


def run_measured(command: list[str]) -> Measured:
    """Run `command` to its end through the launcher (see the module docstring);
    `WorkloadFailed` when it fails. Its output goes to temporary files, so nothing waits
    on a pipe."""
    with tempfile.TemporaryFile() as output, tempfile.TemporaryFile() as errors:
        subprocess.run([sys.executable, "-S", "-c", LAUNCHER, *command], stdout=output,
                       stderr=errors, env=probe_environment(), check=False)
        output.seek(0)
        errors.seek(0)
        text = output.read().decode("utf-8", "replace")
        problem = errors.read().decode("utf-8", "replace")
    *said, report = problem.rstrip("\n").rsplit("\n", 1) if problem.strip() else ("", "")
    fields = report.split()
    if len(fields) != 5 or fields[0] != "measured":
        raise WorkloadFailed(f"{' '.join(command[:4])}... could not be measured: "
                             f"{problem.strip()[-500:]}")
    if int(fields[2]) != 0:
        raise WorkloadFailed(f"{' '.join(command[:4])}... failed: "
                             f"{''.join(said).strip()[-500:]}")
    return Measured(float(fields[1]), float(fields[4]), int(fields[3]) * 1024, text)


@dataclass(frozen=True, slots=True)
class ProcessIngestWorkload:
    """Import the corpus file (`source` `FILE`) or its OpenClaw state folder (`STATE`:
    use `state_ingest_workload()`) in a fresh process, then answer the rare-word probe in
    another (one sample per round); see the module docstring."""

    name: str = "ingest/file_to_answer"
    group: str = "ingest"
    query_class: str = "whole process: file to first answer"
    comparable: bool = True
    source: str = FILE

    def run_round(self, target: BenchTarget) -> list[Sample]:
        probe = target.manifest["probes"]["rare_word"]
        directory = target.scratch_directory / f"process-ingest-{target.backend_name}"
        if directory.exists():
            remove_store(directory)
        source = target.corpus_directory
        if self.source == STATE:
            source = ensure_state_folder(source, target.scratch_directory / STATE_FOLDER)
        if target.comparator is not None:
            import_command = [sys.executable, "-c", BARE_IMPORT, str(source),
                              str(directory / "agents" / "main" / "agent" / "openclaw-agent.sqlite")]
        else:
            import_command = [*console_script(), "import", "--store", str(directory),
                              "--backend", target.backend_name, "--quiet",
                              *(("--openclaw-state",) if self.source == STATE else ()), str(source)]
        try:
            imported = run_measured(import_command)
            search = self._first_answer(target, directory, probe["query"])
        finally:
            remove_store(directory, ignore_errors=True)
        hits = len(json.loads(search.output)["hits"])
        expected = min(int(probe["matchingMessages"]), QUERY_LIMIT)
        if hits != expected:
            raise WorkloadFailed(f"{self.name}: the first query found {hits} hits, "
                                 f"expected {expected}")
        return [Sample(imported.seconds + search.seconds, {
            "import_seconds": imported.seconds, "first_query_seconds": search.seconds,
            "peak_resident_bytes": float(imported.peak_bytes),
            "processor_seconds": imported.processor_seconds + search.processor_seconds,
        })]

    def _first_answer(self, target: BenchTarget, directory: Path, query: str) -> Measured:
        """A fresh process answering `query` on the new store, measured (JSON output)."""
        if target.comparator is not None:
            store = target.comparator.open(directory)
            try:
                command = store.search_command(SearchRequest(query, limit=QUERY_LIMIT,
                                                             session_keys=()))
            finally:
                store.close()
            return run_measured(command)
        if target.backend is None:
            raise CapabilityMissing("no backend")
        return run_measured([*console_script(), "search", "--store", str(directory), "--json",
                             "--limit", str(QUERY_LIMIT), query])


def state_ingest_workload() -> ProcessIngestWorkload:
    """`ingest/state_to_answer`: the whole-process ingest from the OpenClaw state folder."""
    return ProcessIngestWorkload("ingest/state_to_answer",
                                 query_class="whole process: OpenClaw state folder to first answer",
                                 source=STATE)
