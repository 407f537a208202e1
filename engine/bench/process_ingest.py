"""The whole-process ingest workload: from the file to the first answer, as a user waits.

Owns: `ProcessIngestWorkload` (`ingest/file_to_answer`): a fresh process imports the
corpus file into a new store the way a user does (`session-search import`), then another
fresh process answers the corpus's rare-word probe (`session-search search`); the
comparator does the same job its bare way (a fresh process reads the same file and writes
upstream's tables and FTS5 index in one transaction, `bare_write.bare_import`; then the
bare search script answers the probe). Its sample is the wall time of both processes; its
metrics are each part and the import process's peak resident memory. Must not touch:
`IngestWorkload` (the in-process import kept for history), the probes' code, the order of
runs, statistics, printing.

Why whole processes: what a user waits for is the command, and that includes reading and
checking the file, building events and trees, the reconcile after the import, closing
(an index flush), and the interpreter's start-up, none of which an in-process timer of
the write path sees. Both sides start from the same file and end with the same answer
checked (the probe's known hit count), so neither can win by skipping work.

Peak memory is the import child's `ru_maxrss` (`os.wait4`), the high-water mark of its
resident memory, in bytes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from engine.bench.adapters import CapabilityMissing, remove_store
from engine.bench.reopen_workload import console_script, probe_environment
from engine.bench.workload_protocol import QUERY_LIMIT, BenchTarget, Sample, WorkloadFailed
from engine.model import SearchRequest

#: The comparator's import, a fresh interpreter running the bare write path.
BARE_IMPORT = ("import sys; from pathlib import Path; "
               "from engine.bench.bare_write import bare_import; "
               "bare_import(Path(sys.argv[1]), Path(sys.argv[2]))")


def run_measured(command: list[str]) -> tuple[float, int, str]:
    """Run `command` to its end: (wall seconds, peak resident bytes, standard output);
    `WorkloadFailed` when it fails. The child is reaped with `os.wait4`, which gives its
    own resource usage (its output goes to temporary files, so nothing waits on a pipe)."""
    with tempfile.TemporaryFile() as output, tempfile.TemporaryFile() as errors:
        started = time.perf_counter()
        child = subprocess.Popen(command, stdout=output, stderr=errors,
                                 env=probe_environment())
        _, status, usage = os.wait4(child.pid, 0)
        elapsed = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        output.seek(0)
        errors.seek(0)
        text, problem = output.read().decode("utf-8", "replace"), errors.read()
    if child.returncode != 0:
        raise WorkloadFailed(f"{' '.join(command[:4])}... failed: "
                             f"{problem.decode('utf-8', 'replace').strip()[-500:]}")
    return elapsed, usage.ru_maxrss * 1024, text


@dataclass(frozen=True, slots=True)
class ProcessIngestWorkload:
    """Import the corpus file in a fresh process, then answer the rare-word probe in
    another (one sample per round); see the module docstring."""

    name: str = "ingest/file_to_answer"
    group: str = "ingest"
    query_class: str = "whole process: file to first answer"
    comparable: bool = True

    def run_round(self, target: BenchTarget) -> list[Sample]:
        probe = target.manifest["probes"]["rare_word"]
        directory = target.scratch_directory / f"process-ingest-{target.backend_name}"
        if directory.exists():
            remove_store(directory)
        if target.comparator is not None:
            import_command = [sys.executable, "-c", BARE_IMPORT, str(target.corpus_directory),
                              str(directory / "agents" / "main" / "agent" / "openclaw-agent.sqlite")]
        else:
            import_command = [*console_script(), "import", "--store", str(directory),
                              "--backend", target.backend_name, "--quiet",
                              str(target.corpus_directory)]
        try:
            import_seconds, peak, _ = run_measured(import_command)
            search_seconds, hits = self._first_answer(target, directory, probe["query"])
        finally:
            remove_store(directory, ignore_errors=True)
        expected = min(int(probe["matchingMessages"]), QUERY_LIMIT)
        if hits != expected:
            raise WorkloadFailed(f"{self.name}: the first query found {hits} hits, "
                                 f"expected {expected}")
        return [Sample(import_seconds + search_seconds, {
            "import_seconds": import_seconds, "first_query_seconds": search_seconds,
            "peak_resident_bytes": float(peak),
        })]

    def _first_answer(self, target: BenchTarget, directory: Path, query: str
                      ) -> tuple[float, int]:
        """The wall time of a fresh process answering `query` on the new store; its hits."""
        if target.comparator is not None:
            store = target.comparator.open(directory)
            try:
                command = store.search_command(SearchRequest(query, limit=QUERY_LIMIT,
                                                             session_keys=()))
            finally:
                store.close()
            seconds, _, output = run_measured(command)
            return seconds, len(json.loads(output)["hits"])
        if target.backend is None:
            raise CapabilityMissing("no backend")
        command = [*console_script(), "search", "--store", str(directory), "--json",
                   "--limit", str(QUERY_LIMIT), query]
        seconds, _, output = run_measured(command)
        return seconds, len(json.loads(output)["hits"])

