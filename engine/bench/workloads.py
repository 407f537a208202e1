"""Benchmark workloads, defined as data, each checking its own answer.

Owns: what is measured and what a correct answer is. Must not touch: the order of runs
(`schedule`), statistics, printing.

A workload runs one *round* against one backend target and returns its samples (seconds
of the timed call, plus named metrics such as messages per second or resident bytes).
Only the call under test is timed; checking the answer happens after the clock stops,
and a wrong answer raises `WorkloadFailed`, so a fast wrong backend cannot win.

The query workloads are pure data: a `SearchRequest` plus the number of messages the
corpus holds for it (from the corpus manifest, counted while the corpus was written),
which fixes the answer exactly: `min(n, limit)` hits and `truncated == (n > limit)`.

| group     | workload                  | timed call                                   |
|-----------|---------------------------|----------------------------------------------|
| ingest    | `ingest/import`           | create a store + import the whole corpus     |
| append    | `append/one_message`      | one message in its own durable transaction   |
| reopen    | `reopen/first_query`      | new process: open the store + first query    |
|           | (metric `command_seconds`) | new process: the whole `session-search search` |
| query     | `query/<probe>`           | `Backend.search` for one probe               |
| history   | `history/tail`, `/anchored` | a history page of the long session         |
| agent     | `agent/sessions_search_all`, `_agent` | the agent tool as `agent:main:main` under visibility `all` (every agent) and `agent` |
| ui        | `ui/search_per_keystroke` | `ui.search` for one keystroke: each prefix of a 3-word query from its 2nd character |
| reconcile | `reconcile/all_windows`   | `reconcile()` with every window dirty        |
|           | `reconcile/background`    | the first search on a writer with every window dirty, and the background run it starts, to its end (metric `first_search_seconds`: that search alone) |

A comparator (`engine.bench.comparators`, e.g. `sqlite-kernel`) runs the three workloads
marked `comparable`: a query workload times its prepared statements (`PreparedSearch.run`)
and checks `PreparedSearch.result` like a backend's answer; the ingest workload times its
bare write path into a fresh database and checks the same counts; the reopen workload
runs its bare search script in a fresh process (`engine.bench.bare_search_script`: the
sample is the script's own open and first query, metric `script_seconds` its whole wall
time, the yardstick of the `search` command's `command_seconds`; `libraries_script_seconds`
the same script after importing the engine's libraries).

A workload a backend cannot run at all (history reads of a backend without a transcript
reader) raises `FeatureNotBuilt`, and the report leaves its rows out.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from engine.backends.protocol import Backend
from engine.bench.adapters import (
    BenchServices,
    CapabilityMissing,
    agent_sessions_search,
    backend_method,
    finish_indexing,
    history_page,
    palette_ui_search,
)
from engine.bench.comparators import Comparator, ComparatorStore, PreparedSearch
from engine.bench.corpus_generator import iter_window_leaves
from engine.model import SearchRequest, SearchResult, SessionWindow

#: The store-level limit every query workload uses (the agent tool always sends 25).
QUERY_LIMIT = 25


class WorkloadFailed(AssertionError):
    """A workload's answer was wrong; the message says what was expected and seen."""


@dataclass(frozen=True, slots=True)
class Sample:
    """One timed call: wall seconds and any named metrics it reports."""

    seconds: float
    metrics: dict[str, float] = field(default_factory=dict)


@dataclass(slots=True)
class BenchTarget:
    """One backend under test: its prepared store and scratch space for fresh stores.

    `backend` is the store prepared once (corpus imported) and shared by the read
    workloads; `state` holds what a workload carries between rounds (e.g. the append
    chain's last id). A comparator's target has `comparator` instead, and
    `comparator_store` opened over its compared backend's prepared store.
    """

    backend_name: str
    corpus_directory: Path  # what the importer reads: the corpus folder or its flat file
    manifest: dict[str, Any]
    store_directory: Path
    scratch_directory: Path
    services: BenchServices
    backend: Backend | None = None
    state: dict[str, Any] = field(default_factory=dict)
    comparator: Comparator | None = None
    comparator_store: ComparatorStore | None = None


class Workload(Protocol):
    """What the runner needs from a workload."""

    name: str
    group: str
    query_class: str

    def run_round(self, target: BenchTarget) -> list[Sample]:
        """Run one round; raise WorkloadFailed on a wrong answer, CapabilityMissing to skip."""
        ...


# ------------------------------------------------------------------------------------
# Query workloads
# ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HitExpectation:
    """The exact answer for a query whose corpus holds `matching` messages."""

    matching: int
    limit: int = QUERY_LIMIT

    def problems(self, result: SearchResult, order: str) -> list[str]:
        """What is wrong with `result` (empty when it is right).

        >>> from engine.model import SearchHit
        >>> hit = SearchHit("k", "s", "m", "user", 1.0, "x", 1.0)
        >>> full = SearchResult((hit, hit), truncated=True)
        >>> HitExpectation(3, limit=2).problems(full, "relevance")
        []
        >>> HitExpectation(3, limit=2).problems(SearchResult((hit,)), "relevance")
        ['expected 2 hits, got 1', 'expected truncated=True, got False']
        """
        problems = []
        expected_hits = min(self.matching, self.limit)
        if len(result.hits) != expected_hits:
            problems.append(f"expected {expected_hits} hits, got {len(result.hits)}")
        if result.truncated != (self.matching > self.limit):
            problems.append(
                f"expected truncated={self.matching > self.limit}, got {result.truncated}"
            )
        if order == "recent":
            stamps = [hit.timestamp for hit in result.hits]
            if stamps != sorted(stamps, reverse=True):
                problems.append("recent order: timestamps are not newest first")
        return problems


#: How long one round of a query workload lasts at least: a query that answers in
#: microseconds is called until then (at most `QueryWorkload.max_repeats` times), so its
#: median rests on hundreds of calls instead of five.
QUERY_ROUND_SECONDS = 0.2


class PairedWorkload(Workload, Protocol):
    """A workload that can time a backend and its comparator call by call."""

    def run_paired_round(self, target: BenchTarget,
                         comparator_target: BenchTarget) -> tuple[list[Sample], list[Sample]]:
        """One round of both, alternating calls; (the backend's, the comparator's)."""
        ...


@dataclass(frozen=True, slots=True)
class QueryWorkload:
    """One search request against the prepared store: per round, at least `repeats`
    timed calls, and more until the round has lasted `min_round_seconds` (at most
    `max_repeats` calls).

    Beside a comparator it runs paired (`run_paired_round`): the backend's and the
    comparator's calls alternate in ABBA order inside one round, so both medians come
    from the same seconds of the machine's life. Run one after the other, two cells of a
    microsecond query drift apart between runs on a shared machine by more than the
    difference the ratio is there to show.
    """

    name: str
    query_class: str
    request: SearchRequest
    expectation: HitExpectation
    repeats: int = 5
    group: str = "query"
    comparable: bool = True
    min_round_seconds: float = 0.0
    max_repeats: int = 1000

    def run_round(self, target: BenchTarget) -> list[Sample]:
        if target.comparator is not None:
            return self._comparator_round(target)
        backend = _prepared(target)
        samples: list[Sample] = []
        round_started = time.perf_counter()
        while self._more(len(samples), round_started):
            samples.append(self._backend_call(backend))
        return samples

    def run_paired_round(self, target: BenchTarget,
                         comparator_target: BenchTarget) -> tuple[list[Sample], list[Sample]]:
        backend = _prepared(target)
        prepared = self._comparator_prepared(comparator_target)
        ours: list[Sample] = []
        theirs: list[Sample] = []
        round_started = time.perf_counter()
        while self._more(len(ours), round_started, paired=True):
            if len(ours) % 2 == 0:
                ours.append(self._backend_call(backend))
                theirs.append(self._comparator_call(prepared))
            else:
                theirs.append(self._comparator_call(prepared))
                ours.append(self._backend_call(backend))
        return ours, theirs

    def _more(self, calls: int, round_started: float, paired: bool = False) -> bool:
        """Whether a round that has made `calls` calls (pairs, when `paired`: a pair
        round lasts twice as long) goes on."""
        if calls < self.repeats:
            return True
        lasted = time.perf_counter() - round_started
        return calls < self.max_repeats and lasted < self.min_round_seconds * (2 if paired else 1)

    def _backend_call(self, backend: Backend) -> Sample:
        started = time.perf_counter()
        result = backend.search(self.request)
        elapsed = time.perf_counter() - started
        self._check(result)
        return Sample(elapsed)

    def _comparator_prepared(self, target: BenchTarget) -> PreparedSearch:
        if target.comparator_store is None:
            raise CapabilityMissing("the comparator is not open")
        return target.comparator_store.prepare_search(self.request)

    def _comparator_call(self, prepared: PreparedSearch) -> Sample:
        started = time.perf_counter()
        rows = prepared.run()
        elapsed = time.perf_counter() - started
        self._check(prepared.result(rows))
        return Sample(elapsed)

    def _comparator_round(self, target: BenchTarget) -> list[Sample]:
        prepared = self._comparator_prepared(target)
        samples: list[Sample] = []
        round_started = time.perf_counter()
        while self._more(len(samples), round_started):
            samples.append(self._comparator_call(prepared))
        return samples

    def _check(self, result: SearchResult) -> None:
        problems = self.expectation.problems(result, self.request.order)
        if problems:
            query = self.request.query
            raise WorkloadFailed(f"{self.name} ({query!r}): " + "; ".join(problems))


def _prepared(target: BenchTarget) -> Backend:
    if target.backend is None:
        raise CapabilityMissing("the prepared store is not open")
    return target.backend


def query_workloads(manifest: dict[str, Any], repeats: int = 5) -> list[QueryWorkload]:
    """One workload per probe of the manifest, plus an agent-namespace scoped query."""
    workloads = []
    for name, probe in manifest["probes"].items():
        request = SearchRequest(
            query=probe["query"], limit=QUERY_LIMIT, session_keys=(),
            match=probe["match"], order=probe["order"],
        )
        workloads.append(QueryWorkload(
            f"query/{name}", probe["queryClass"], request,
            HitExpectation(probe["matchingMessages"]), repeats,
            min_round_seconds=QUERY_ROUND_SECONDS,
        ))
    common = manifest["probes"]["common_word"]
    by_agent = common["matchingMessagesByAgent"]
    # An omitted key filter means the agent's partition (behaviour.md §5.3): its own
    # namespace; `global` and `unknown` (filed under the agent "" by the generator) live
    # in the default agent's partition, `main`, not in work_team's (engine.model).
    scoped = by_agent.get("work_team", 0)
    workloads.append(QueryWorkload(
        "query/agent_scope", "agent namespace scope",
        SearchRequest(query=common["query"], agent_id="work_team", limit=QUERY_LIMIT),
        HitExpectation(scoped), repeats, min_round_seconds=QUERY_ROUND_SECONDS,
    ))
    return workloads


# ------------------------------------------------------------------------------------
# Write and lifecycle workloads
# ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class IngestWorkload:
    """Create a fresh store, import the whole corpus and reconcile what the import left
    dirty (one sample per round): the time until every message is searchable. A
    comparator writes the corpus its bare way instead (`Comparator.bare_import`)."""

    name: str = "ingest/import"
    group: str = "ingest"
    query_class: str = "bulk import and indexing"
    comparable: bool = True

    def run_round(self, target: BenchTarget) -> list[Sample]:
        directory = target.scratch_directory / f"ingest-{target.backend_name}"
        if directory.exists():
            shutil.rmtree(directory)
        started = time.perf_counter()
        if target.comparator is not None:
            stats: dict[str, Any] = target.comparator.bare_import(target.corpus_directory, directory)
            imported = finished = time.perf_counter()
            reconciled_windows = 0
        else:
            backend = target.services.open_store(target.backend_name, directory, True, True)
            try:
                target.services.import_corpus(backend, target.corpus_directory)
                imported = time.perf_counter()
                reconciled_windows = finish_indexing(backend)
                finished = time.perf_counter()
                stats = backend.stats()
            finally:
                backend.close()
        elapsed = finished - started
        counts = target.manifest["counts"]
        checks = [("windows", "windows"), ("events", "events")]
        if "messages_indexed" in stats:
            checks.append(("messages_indexed", "searchableMessages"))
        problems = [
            f"expected {counts[key]} {name}, got {stats.get(name)}"
            for name, key in checks
            if stats.get(name) != counts[key]
        ]
        size_bytes = _directory_bytes(directory)
        shutil.rmtree(directory)
        if problems:
            raise WorkloadFailed(f"{self.name}: " + "; ".join(problems))
        return [Sample(elapsed, {
            "messages_per_second": counts["messages"] / elapsed if elapsed > 0 else 0.0,
            "import_seconds": imported - started,
            "reconcile_seconds": finished - imported,
            "reconciled_windows": float(reconciled_windows),
            "store_bytes": float(size_bytes),
        })]


def _directory_bytes(directory: Path) -> int:
    return sum(path.stat().st_size for path in directory.rglob("*") if path.is_file())


APPEND_SESSION_KEY = "agent:ops:bench:append"


@dataclass(frozen=True, slots=True)
class AppendWorkload:
    """Append single messages, each in its own durable transaction, to a linear window.

    The window (`agent:ops:bench:append`, one per backend) is created untimed on first
    use; each message's `parentId` is the previous one, so the index never goes dirty.
    The text holds no probe word, so the query answers do not change.
    """

    repeats: int = 20
    name: str = "append/one_message"
    group: str = "append"
    query_class: str = "single-message append (fsync)"

    def run_round(self, target: BenchTarget) -> list[Sample]:
        backend = _prepared(target)
        session_id = f"bench-append-{target.backend_name}"
        if "append_parent" not in target.state:
            with backend.transaction() as transaction:
                transaction.put_window(SessionWindow(session_id, APPEND_SESSION_KEY, kind="system"))
            target.state["append_parent"] = None
            target.state["append_count"] = 0
        samples = []
        for _ in range(self.repeats):
            number = target.state["append_count"] + 1
            event = {
                "type": "message", "id": f"append-{number:08d}",
                "parentId": target.state["append_parent"],
                "timestamp": 1_800_000_000_000 + number,
                "message": {"role": "user", "content": f"Benchmark append number {number}"},
            }
            started = time.perf_counter()
            with backend.transaction() as transaction:
                transaction.append_event(session_id, event)
            samples.append(Sample(time.perf_counter() - started))
            target.state["append_parent"] = event["id"]
            target.state["append_count"] = number
        return samples


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


# ------------------------------------------------------------------------------------
# Workloads of the history, agent-tool and palette features (on backends with a
# transcript reader)
# ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HistoryWorkload:
    """A history page of the long session: the tail, or a window around an anchor."""

    anchored: bool
    limit: int = 20
    repeats: int = 5
    group: str = "history"

    @property
    def name(self) -> str:
        return "history/anchored" if self.anchored else "history/tail"

    @property
    def query_class(self) -> str:
        return "anchored history read" if self.anchored else "tail history read"

    def run_round(self, target: BenchTarget) -> list[Sample]:
        backend = _prepared(target)
        long_session = target.manifest["longSession"]
        arguments: dict[str, Any] = {"session_key": long_session["sessionKey"], "limit": self.limit}
        if self.anchored:
            arguments["message_id"] = long_session["anchorMessageId"]
            arguments["session_id"] = long_session["sessionId"]
        samples = []
        for _ in range(self.repeats):
            started = time.perf_counter()
            page = history_page(backend, **arguments)
            elapsed = time.perf_counter() - started
            messages = page.messages
            if not 1 <= len(messages) <= self.limit:
                raise WorkloadFailed(f"{self.name}: expected 1..{self.limit} messages, got "
                                     f"{len(messages)}")
            samples.append(Sample(elapsed))
        return samples


@dataclass(frozen=True, slots=True)
class AgentToolWorkload:
    """`sessions_search` as `agent:main:main` under `visibility`: `all` covers every
    agent's sessions (the manifest has 200+ keys, so several kernel calls), `agent` the
    main agent's. Timed: the whole tool call (roster, row checks, kernel calls, merge,
    budgets). Checked: at least one result, never more than the limit."""

    visibility: str = "all"
    repeats: int = 3
    group: str = "agent"

    @property
    def name(self) -> str:
        return f"agent/sessions_search_{self.visibility}"

    @property
    def query_class(self) -> str:
        return f"agent tool, visibility {self.visibility}"

    def run_round(self, target: BenchTarget) -> list[Sample]:
        backend = _prepared(target)
        common = target.manifest["probes"]["common_word"]
        samples = []
        for _ in range(self.repeats):
            started = time.perf_counter()
            output = agent_sessions_search(backend, common["query"], 10, self.visibility)
            elapsed = time.perf_counter() - started
            results = output.get("results", [])
            if not 1 <= len(results) <= 10:
                raise WorkloadFailed(f"{self.name}: {len(results)} results for "
                                     f"{common['query']!r}, expected 1 to 10")
            samples.append(Sample(elapsed))
        return samples


def keystrokes(query: str) -> list[str]:
    """What the palette's search box holds after each keystroke, from the second character
    (the palette searches from 2 characters on).

    >>> keystrokes("ab c")
    ['ab', 'ab ', 'ab c']
    """
    return [query[:length] for length in range(2, len(query) + 1)]


@dataclass(frozen=True, slots=True)
class UiSearchWorkload:
    """`ui.search` as the command palette sends it while a person types a 3-word query
    (the first three words of the corpus's `multi_words` probe), one call per keystroke
    from the second character, every agent's sessions in scope. Timed: each call (the
    palette scope over the roster, the title matches, the transcript calls in prefix mode
    over 200-key chunks, the merge). Checked: every answer was searched; at most 25
    sessions in each group; every Messages session is a chat (no subagent run, cron job
    or incognito session); no transcript failure."""

    repeats: int = 1
    group: str = "ui"
    name: str = "ui/search_per_keystroke"
    query_class: str = "Control UI search, per keystroke"

    def query(self, manifest: dict[str, Any]) -> str:
        return " ".join(manifest["probes"]["multi_words"]["query"].split()[:3])

    def run_round(self, target: BenchTarget) -> list[Sample]:
        from engine.access.session_keys import is_incognito, kind_by_shape

        backend = _prepared(target)
        samples = []
        for _ in range(self.repeats):
            for typed in keystrokes(self.query(target.manifest)):
                started = time.perf_counter()
                answer = palette_ui_search(backend, typed)
                elapsed = time.perf_counter() - started
                problems = []
                if not answer["searched"] or answer.get("transcriptSearchUnavailable"):
                    problems.append("not searched, or transcript search unavailable")
                if len(answer["sessions"]) > 25 or len(answer["messages"]) > 25:
                    problems.append("more than 25 sessions in a group")
                for entry in answer["messages"]:
                    key = entry["sessionKey"]
                    if entry["kind"] != "chat" or kind_by_shape(key) or is_incognito(key):
                        problems.append(f"{key} is outside the palette's scope")
                if problems:
                    raise WorkloadFailed(f"{self.name} {typed!r}: " + "; ".join(problems))
                samples.append(Sample(elapsed, {"characters": float(len(typed))}))
        return samples


@dataclass(frozen=True, slots=True)
class ReconcileWorkload:
    """Reconciliation throughput: every window dirty, then one `reconcile()` (timed).

    Untimed setup per round: a fresh store with the corpus imported and reconciled, then
    one transaction appending to every window a `leaf` event that points at the window's
    own leaf. The active paths do not change, but a leaf-control event marks its window
    dirty (behaviour.md §8.1), so the timed `reconcile()` rebuilds every window from its
    transcript. Checked: every window was rebuilt, the index holds exactly the corpus's
    searchable messages again, and the common-word probe answers right.
    """

    name: str = "reconcile/all_windows"
    group: str = "reconcile"
    query_class: str = "reconciliation throughput"

    def run_round(self, target: BenchTarget) -> list[Sample]:
        directory = target.scratch_directory / f"reconcile-{target.backend_name}"
        if directory.exists():
            shutil.rmtree(directory)
        backend = target.services.open_store(target.backend_name, directory, True, True)
        try:
            reconcile = backend_method(backend, "reconcile", "reconciliation")
            windows = dirty_every_window(target, backend)
            started = time.perf_counter()
            rebuilt = int(reconcile())
            elapsed = time.perf_counter() - started
            indexed = backend.stats().get("messages_indexed")
            common = target.manifest["probes"]["common_word"]
            result = backend.search(SearchRequest(query=common["query"], limit=QUERY_LIMIT,
                                                  session_keys=()))
        finally:
            backend.close()
            shutil.rmtree(directory, ignore_errors=True)
        return rebuilt_samples(self.name, target, result, rebuilt=rebuilt, windows=windows,
                               indexed=indexed, elapsed=elapsed, after="reconcile")


def dirty_every_window(target: BenchTarget, backend: Backend) -> int:
    """Untimed setup of the reconcile workloads, on a fresh store: the corpus imported
    and reconciled, then one transaction appending to every window a `leaf` event that
    points at its own leaf (every window dirty, the active paths unchanged; see
    `ReconcileWorkload`). The number of windows."""
    target.services.import_corpus(backend, target.corpus_directory)
    finish_indexing(backend)
    leaves = list(iter_window_leaves(target.corpus_directory))
    with backend.transaction() as transaction:
        for number, (session_id, leaf) in enumerate(leaves, 1):
            transaction.append_event(session_id, {
                "type": "leaf", "id": f"bench-leaf-{number}", "parentId": leaf,
                "targetId": leaf, "timestamp": 1_800_000_000_000 + number,
            })
    return len(leaves)


@dataclass(frozen=True, slots=True)
class BackgroundReconcileWorkload:
    """Background reconciliation: the first search on a store whose every window is
    dirty (it answers `indexing: true` and starts the store's reconcile worker), then the
    worker's run to its end; the whole is timed, and that first search alone is the
    metric `first_search_seconds`.

    Untimed setup per round: `dirty_every_window` on a fresh store, closed, then opened
    again as the writer with background reconcile on (`BenchServices.open_reconciling_store`). Checked: the
    first search answered `indexing: true`; the run finished (not stopped by its budget)
    having rebuilt every window; afterwards the index holds exactly the corpus's
    searchable messages and the common-word probe answers right with `indexing: false`.
    """

    name: str = "reconcile/background"
    group: str = "reconcile"
    query_class: str = "background reconciliation"

    def run_round(self, target: BenchTarget) -> list[Sample]:
        opener = target.services.open_reconciling_store
        if opener is None:
            raise CapabilityMissing(f"{self.name}: these services open no store that "
                                    "reconciles in the background")
        directory = target.scratch_directory / f"background-{target.backend_name}"
        if directory.exists():
            shutil.rmtree(directory)
        try:
            written = target.services.open_store(target.backend_name, directory, True, True)
            try:
                windows = dirty_every_window(target, written)
            finally:
                written.close()
            backend = opener(target.backend_name, directory)
            try:
                wait = backend_method(backend, "wait_for_reconcile", "background reconcile")
                common = target.manifest["probes"]["common_word"]
                request = SearchRequest(query=common["query"], limit=QUERY_LIMIT,
                                        session_keys=())
                started = time.perf_counter()
                first = backend.search(request)
                searched = time.perf_counter()
                ended = wait(None)
                elapsed = time.perf_counter() - started
                run = getattr(backend, "background_run", None)
                indexed = backend.stats().get("messages_indexed")
                result = backend.search(request)
            finally:
                backend.close()
        finally:
            shutil.rmtree(directory, ignore_errors=True)
        problems = [] if first.indexing else ["the first search did not report indexing"]
        if not ended or run is None or run.ending != "finished":
            raise WorkloadFailed(f"{self.name}: the background run did not finish: {run}")
        return rebuilt_samples(self.name, target, result, rebuilt=run.windows, windows=windows,
                               indexed=indexed, elapsed=elapsed, after="the background run",
                               problems=problems,
                               metrics={"first_search_seconds": searched - started})


def rebuilt_samples(name: str, target: BenchTarget, result: SearchResult, *, rebuilt: int,
                    windows: int, indexed: int | None, elapsed: float, after: str,
                    problems: list[str] | None = None,
                    metrics: dict[str, float] | None = None) -> list[Sample]:
    """The checks of the reconcile workloads after their rebuild (every one of the
    `windows` rebuilt, the corpus's searchable messages indexed, the common-word probe's
    `result` right and not `indexing`; `WorkloadFailed` naming `name` otherwise), and the
    round's sample: `elapsed` with the throughput, windows rebuilt and `metrics`."""
    searchable = target.manifest["counts"]["searchableMessages"]
    common = target.manifest["probes"]["common_word"]
    problems = [*(problems or []),
                *HitExpectation(common["matchingMessages"]).problems(result, "relevance")]
    if rebuilt < windows:
        problems.append(f"expected {windows} windows rebuilt, got {rebuilt}")
    if indexed is not None and indexed != searchable:
        problems.append(f"expected {searchable} messages indexed, got {indexed}")
    if result.indexing:
        problems.append(f"the index still reports indexing after {after}")
    if problems:
        raise WorkloadFailed(f"{name}: " + "; ".join(problems))
    return [Sample(elapsed, {
        "messages_per_second": searchable / elapsed if elapsed > 0 else 0.0,
        "windows_rebuilt": float(rebuilt), **(metrics or {}),
    })]


def standard_workloads(manifest: dict[str, Any], query_repeats: int = 5) -> list[Workload]:
    """Every workload of the benchmark for one corpus, in running order.

    Ingest first (fresh stores), then reads of the prepared store, then the writes
    and rebuilds that change it.
    """
    workloads: list[Workload] = [IngestWorkload(), ReopenWorkload()]
    workloads.extend(query_workloads(manifest, query_repeats))
    workloads.extend([
        HistoryWorkload(anchored=False), HistoryWorkload(anchored=True),
        AgentToolWorkload("all"), AgentToolWorkload("agent"), UiSearchWorkload(),
        AppendWorkload(),
        ReconcileWorkload(), BackgroundReconcileWorkload(),
    ])
    return workloads
