"""The reopen workload: a new process opens the prepared store and runs its first query.

Owns: `ReopenWorkload` (the reopen probe in a fresh process, the real `session-search
search` command beside it, and a comparator's bare search script), the command a user types
(`console_script`) and the probes' environment (`probe_environment`). Must not touch: the
other workload families, the probe's own code (`reopen_probe`, `bare_search_script`), the
order of runs (`schedule`), statistics, printing.
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

from engine.bench.adapters import CapabilityMissing
from engine.bench.workload_protocol import QUERY_LIMIT, BenchTarget, Sample, WorkloadFailed
from engine.model import SearchRequest


def console_script() -> list[str]:
    """The command a user types: the `session-search` console script installed beside
    this interpreter, else (a checkout run without installing) `python -m engine`.

    >>> Path(console_script()[-1]).name in ("session-search", "engine")
    True
    """
    script = Path(sys.executable).with_name("session-search")
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-m", "engine"]


def probe_environment() -> dict[str, str]:
    """The reopen probe's environment: this one, with bytecode caching on and kept under
    the system's temporary folder (`PYTHONPYCACHEPREFIX`), so that after one untimed
    warm-up run a probe's time is opening the store, not compiling modules (a session
    may run with PYTHONDONTWRITEBYTECODE set; every backend is treated alike)."""
    environment = dict(os.environ)
    environment.pop("PYTHONDONTWRITEBYTECODE", None)
    environment.setdefault("PYTHONPYCACHEPREFIX",
                           str(Path(tempfile.gettempdir()) / "session-search-pycache"))
    return environment


@dataclass(frozen=True, slots=True)
class ReopenWorkload:
    """Open the prepared store in a new process and run the first query there.

    The child (`python -m engine.bench.reopen_probe`) reports the open time, the first
    query's time and its resident memory before and after opening, so memory is not
    blurred by this process's own state. The sample is open + first query; the first
    round runs the probe once more, untimed, to cache the modules' bytecode. Each round
    takes `samples` probes (a fresh process each), so that even a one-round run (the 1M
    corpus) has a median rather than one draw of a noisy machine.

    Each probe also runs the real command a user types, `session-search search --store
    DIR --json --limit 25 QUERY` (the console script, `console_script`), in a fresh
    process, and records its whole wall time
    (interpreter start, the command line, imports, open, search, printing) as the metric
    `command_seconds`: what start-up costs outside the engine's own timers. Its hits
    must be the probe's.

    A comparator (`sqlite-kernel`) runs its bare search script instead
    (`ComparatorStore.search_command`): the same query across every agent database with
    upstream's statement and nothing of the engine, a fresh process per sample, run with
    `-S` (no `.pth` file of this environment is its cost,
    `engine.bench.bare_search_script`); the
    sample is the script's own open and first query, the metric `script_seconds` its
    whole wall time, and the report states each `search command` against it
    (`command_ratio`). Each sample also runs the script after importing the libraries
    the engine is written with (`bare_search_script.ENGINE_LIBRARIES`), metric
    `libraries_script_seconds`: the part of the command's start-up that no change to
    the engine's own code can remove.
    """

    #: Default: the corpus's rare-word probe. The sample is the cost of opening the store
    #: until it answers; what the first query of a *common* word costs on top (it reads
    #: and decodes a long posting list) is the p95 of `query/common_word`, whose first
    #: sample of a round is cold.
    query: str | None = None
    name: str = "reopen/first_query"
    group: str = "reopen"
    query_class: str = "reopen: time to first query"
    samples: int = 3
    comparable: bool = True

    def run_round(self, target: BenchTarget) -> list[Sample]:
        query = self.query or target.manifest["probes"]["rare_word"]["query"]
        if target.comparator is not None:
            return self._comparator_round(target, query)
        command = [
            sys.executable, "-m", "engine.bench.reopen_probe",
            "--backend", target.backend_name, "--store", str(target.store_directory),
            "--query", query,
        ]
        search_command = [
            *console_script(), "search", "--store", str(target.store_directory),
            "--json", "--limit", str(QUERY_LIMIT), query,
        ]
        if target.state.get("reopen_warmed") is None:  # compile the modules once, untimed
            for warm_up in (command, search_command):
                subprocess.run(warm_up, capture_output=True, check=False,
                               env=probe_environment())
            target.state["reopen_warmed"] = True
        return [self._probe(command, search_command, query) for _ in range(self.samples)]

    def _comparator_round(self, target: BenchTarget, query: str) -> list[Sample]:
        """The comparator's bare search script, a fresh process per sample (the first
        round runs it once more, untimed, as the backend's commands are)."""
        if target.comparator_store is None:
            raise CapabilityMissing("the comparator is not open")
        request = SearchRequest(query=query, limit=QUERY_LIMIT, session_keys=())
        command = target.comparator_store.search_command(request)
        with_libraries = target.comparator_store.search_command(request, with_libraries=True)
        if target.state.get("reopen_warmed") is None:
            for warm_up in (command, with_libraries):
                subprocess.run(warm_up, capture_output=True, check=False, env=probe_environment())
            target.state["reopen_warmed"] = True
        samples = []
        for _ in range(self.samples):
            seconds, elapsed = self._bare_script(command, query)
            _, libraries_elapsed = self._bare_script(with_libraries, query)
            samples.append(Sample(seconds, {"script_seconds": elapsed,
                                            "libraries_script_seconds": libraries_elapsed}))
        return samples

    def _bare_script(self, command: list[str], query: str) -> tuple[float, float]:
        """One run of a bare search script: (its own open and first query, wall time)."""
        started = time.perf_counter()
        completed = subprocess.run(command, capture_output=True, text=True, check=False,
                                   env=probe_environment())
        elapsed = time.perf_counter() - started
        if completed.returncode != 0:
            raise WorkloadFailed(f"{self.name}: the bare search script failed: "
                                 f"{completed.stderr.strip()[-500:]}")
        report = json.loads(completed.stdout)
        if not report["hits"]:
            raise WorkloadFailed(f"{self.name}: the bare script found no hit for {query!r}")
        return report["seconds"], elapsed

    def _probe(self, command: list[str], search_command: list[str], query: str) -> Sample:
        completed = subprocess.run(
            command, capture_output=True, text=True, check=False, env=probe_environment(),
        )
        if completed.returncode != 0:
            raise WorkloadFailed(f"{self.name}: probe failed: {completed.stderr.strip()[-500:]}")
        report = json.loads(completed.stdout)
        if report["hits"] < 1:
            raise WorkloadFailed(f"{self.name}: first query {query!r} found no hit")
        command_seconds = self._time_search_command(search_command, report["hits"])
        return Sample(report["open_seconds"] + report["first_query_seconds"], {
            "command_seconds": command_seconds,
            "open_seconds": report["open_seconds"],
            "first_query_seconds": report["first_query_seconds"],
            "resident_bytes": float(report["resident_bytes_after_open"]),
            "resident_bytes_opened": float(
                report["resident_bytes_after_open"] - report["resident_bytes_before_open"]
            ),
        })

    def _time_search_command(self, search_command: list[str], expected_hits: int) -> float:
        """The wall time of one fresh `session-search search`; its hits are checked."""
        started = time.perf_counter()
        completed = subprocess.run(
            search_command, capture_output=True, text=True, check=False,
            env=probe_environment(),
        )
        elapsed = time.perf_counter() - started
        if completed.returncode != 0:
            raise WorkloadFailed(f"{self.name}: `search` command failed: "
                                 f"{completed.stderr.strip()[-500:]}")
        hits = len(json.loads(completed.stdout)["hits"])
        if hits != expected_hits:
            raise WorkloadFailed(f"{self.name}: `search` command found {hits} hits, the "
                                 f"probe {expected_hits}")
        return elapsed
