"""Phrase queries side by side in one process: the reference engine with and without its
token bitmaps, the SQLite backend, and upstream's bare statement (`sqlite-kernel`).

Usage (stores imported from the same corpus, e.g. `session-search import --store S
--backend reference CORPUS` and the same with `--backend sqlite`):

    python bench/phrase_queries.py --reference S1 --sqlite S2 --rounds 16 of-the "of the"

With `--serve`, the same queries go through `sessions.search` of `serve` processes
instead (round trip of one request line), fed in turn: this tree's over the reference
store and over the SQLite store, and, with `--before TREE` (a checkout of an earlier
commit, e.g. `git archive COMMIT | tar -x -C TREE`), that tree's over the reference
store; upstream's bare statement runs beside them in this process:

    python bench/phrase_queries.py --reference S1 --sqlite S2 --serve --before TREE the-the

Each query is a search over every agent (`sessionKeys: []`), limit 25, relevance order.
Per round, the five calls run in ABBA order (the order reverses every round), so every
figure of a query comes from the same seconds of the machine. `reference (rows)` is the
same backend with phrases matched row by row (`top_rows(..., phrase_bitmaps=False)`,
the path before the bitmaps), `reference (walk)` with a query of one phrase walked by
bound to its end (`engine.search.phrases.SEED_ROWS` unbounded: the rows are never counted
in one loop); the three reference answers must be equal. Prints median and p95 (nearest
rank) per variant and the p95 ratio to the kernel's, and the processor time a call took
on average in the process that answered it (`process_seconds`), with its ratio to the
kernel's.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from engine.bench.sqlite_kernel import KernelStore, store_databases
from engine.bench.statistics import p95
from engine.config import EngineConfig
from engine.model import SearchRequest, SearchResult
from engine.rpc.client import RpcClient, engine_command
from engine.search import fast_path, kernel, phrases
from engine.store.registry import open_backend


def timed(call: Callable[[], object]) -> tuple[float, object]:
    started = time.perf_counter()
    answer = call()
    return time.perf_counter() - started, answer


def process_seconds(pid: int | None) -> float:
    """Processor time of process `pid` so far (None: this process), to the nanosecond:
    the sum of its threads' run time in `/proc/PID/task/*/schedstat`. The user and
    system times of `/proc/PID/stat` count whole clock ticks, too coarse for calls of a
    few milliseconds (bench/RESULTS.md, 2026-12-06, says what they misled)."""
    if pid is None:
        return time.process_time()
    folder = Path(f"/proc/{pid}/task")
    try:
        return sum(int((folder / task / "schedstat").read_text().split()[0])
                   for task in os.listdir(folder)) / 1e9
    except (FileNotFoundError, IndexError, ValueError):  # no schedstat: whole ticks
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def compare(name_of_calls: Callable[[str], dict[str, Callable[[], object]]],
            queries: list[str], rounds: int, check: Callable[[str, dict[str, object]], None],
            pids: dict[str, int | None] | None = None) -> None:
    """Time each query's calls in ABBA rounds and print median, p95 and p95 / kernel p95,
    and the processor time a call took on average (`process_seconds` of the process that
    answers it, `pids`: this one when not named; a shared machine's load moves wall
    times much more than these)."""
    pids = pids or {}
    for query in queries:
        calls = name_of_calls(query)
        answers = {name: call() for name, call in calls.items()}  # warm-up, untimed
        check(query, answers)
        samples: dict[str, list[float]] = {name: [] for name in calls}
        spent = dict.fromkeys(calls, 0.0)
        names = list(calls)
        for number in range(rounds):
            for name in names if number % 2 == 0 else names[::-1]:
                before = process_seconds(pids.get(name))
                samples[name].append(timed(calls[name])[0])
                spent[name] += process_seconds(pids.get(name)) - before
        base = p95(samples["sqlite-kernel"])
        base_processor = spent["sqlite-kernel"]
        for name, values in samples.items():
            slowest = p95(values)
            print(f"  {name:17} median {statistics.median(values) * 1e3:8.2f} ms"
                  f"  p95 {slowest * 1e3:8.2f} ms  p95 / kernel p95 {slowest / base:5.2f}x"
                  f"  processor {spent[name] / rounds * 1e3:8.2f} ms a call"
                  f" ({spent[name] / base_processor if base_processor else 0.0:5.2f}x)")


def serve_main(arguments: argparse.Namespace) -> None:
    """The queries through `serve` processes (module docstring)."""
    servers: dict[str, RpcClient] = {}

    def server(tree: Path, store: Path) -> RpcClient:
        command, environment = engine_command("serve", "--store", store.resolve())
        environment["PYTHONPATH"] = str(tree.resolve())
        return RpcClient.spawn(command, env=environment)

    here = Path(__file__).resolve().parent.parent
    servers["serve"] = server(here, arguments.reference)
    if arguments.before is not None:
        servers["serve (before)"] = server(arguments.before, arguments.reference)
    servers["serve sqlite"] = server(here, arguments.sqlite)
    kernel_store = KernelStore(store_databases(arguments.sqlite))

    def calls_of(query: str) -> dict[str, Callable[[], object]]:
        params = {"query": query, "limit": 25, "sessionKeys": []}
        calls: dict[str, Callable[[], object]] = {
            name: partial(client.call, "sessions.search", params)
            for name, client in servers.items()}
        calls["sqlite-kernel"] = kernel_store.prepare_search(
            SearchRequest(query=query, limit=25, session_keys=())).run
        return calls

    def check(query: str, answers: dict[str, object]) -> None:
        if "serve (before)" in answers:
            assert answers["serve"] == answers["serve (before)"], query
        served = answers["serve"]
        assert isinstance(served, dict)
        print(f"{query!r}: {len(served['hits'])} hits, truncated {served['truncated']}")

    try:
        compare(calls_of, arguments.queries, arguments.rounds, check,
                {name: client.process.pid if client.process else None
                 for name, client in servers.items()})
    finally:
        kernel_store.close()
        for client in servers.values():
            client.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", type=Path, required=True)
    parser.add_argument("--sqlite", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=16)
    parser.add_argument("--serve", action="store_true",
                        help="through serve processes instead of in this process")
    parser.add_argument("--before", type=Path,
                        help="with --serve: also serve from this checkout of an earlier commit")
    parser.add_argument("queries", nargs="+")
    arguments = parser.parse_args()
    if arguments.serve:
        serve_main(arguments)
        return
    config = EngineConfig(background_reconcile=False)
    reference = open_backend(arguments.reference, backend="reference", config=config)
    sqlite = open_backend(arguments.sqlite, backend="sqlite", config=config)
    kernel_store = KernelStore(store_databases(arguments.sqlite))
    bitmaps = fast_path.top_rows
    rows = partial(fast_path.top_rows, phrase_bitmaps=False)

    seed_rows = phrases.SEED_ROWS

    def reference_search(top_rows: Callable[..., object], request: SearchRequest,
                         walk: bool = False) -> SearchResult:
        kernel.top_rows = top_rows  # type: ignore[assignment]
        phrases.SEED_ROWS = 1 << 62 if walk else seed_rows
        try:
            return reference.search(request)
        finally:
            phrases.SEED_ROWS = seed_rows

    def calls_of(query: str) -> dict[str, Callable[[], object]]:
        request = SearchRequest(query=query, limit=25, session_keys=())
        return {
            "reference": partial(reference_search, bitmaps, request),
            "reference (walk)": partial(reference_search, bitmaps, request, True),
            "reference (rows)": partial(reference_search, rows, request),
            "sqlite": partial(sqlite.search, request),
            "sqlite-kernel": kernel_store.prepare_search(request).run,
        }

    def check(query: str, answers: dict[str, object]) -> None:
        assert answers["reference"] == answers["reference (rows)"], query
        assert answers["reference"] == answers["reference (walk)"], query
        result = answers["reference"]
        assert isinstance(result, SearchResult)
        print(f"{query!r}: {len(result.hits)} hits, truncated {result.truncated}")

    compare(calls_of, arguments.queries, arguments.rounds, check)
    kernel_store.close()
    reference.close()
    sqlite.close()


if __name__ == "__main__":
    main()
