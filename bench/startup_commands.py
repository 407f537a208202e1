"""Fresh `session-search search` commands side by side with the bare search script, each
in its own process: wall time and processor time, installs and commits compared in one run.

Usage (stores imported from the same corpus, e.g. `session-search import --store S1
--backend reference CORPUS` and the same with `--backend sqlite` into S2):

    python bench/startup_commands.py --reference S1 --sqlite S2 --rounds 24 \\
        --install "wheel before=/tmp/wheelenv-before/bin/session-search" \\
        --install "wheel after=/tmp/wheelenv/bin/session-search" \\
        --install "editable before=.venv/bin/session-search:/tmp/before"

Each `--install NAME=SCRIPT[:TREE]` is a console script, run with TREE first on
`PYTHONPATH` when given (an exported commit searched through a development install's
script). Every install runs `search --store S --json --limit 25 QUERY` on each store;
the yardsticks are the bare search script over the SQLite store's databases
(`engine/bench/bare_search_script.py`, `python -S`) and the same after importing the
engine's libraries (`--with-libraries`). Each variant runs twice untimed (bytecode is
cached under `PYTHONPYCACHEPREFIX`, `PYTHONDONTWRITEBYTECODE` unset: the reopen
workload's `probe_environment`), then once a round, in an order that rotates and reverses
every round (ABBA), so that drift hits every variant alike.

Processor time (user + system of the child, from `getrusage`) is printed beside wall
time: on a machine shared with other jobs the wall time stretches with their load, the
work a command does much less. Ratios are against the bare script of the same run. Every
variant must print the same hits (keys, ids, snippets).

`--phases` also splits each install's search into where its processor time goes, in
rounds of their own (ABBA as well): the interpreter and `site`; the libraries the search
loads (every module outside `engine`, imported in the order a warm-up search loaded
them); `engine.cli` and `search`'s module; the other `engine` modules the search loads
(in their order), with the time spent creating dataclasses among them; `main` (parse,
open, search, print), which then imports nothing; and the exit, the child's total from
`getrusage` less the last mark. The probe runs `main` in the install's own interpreter
(the console script's first line). The classes made dataclasses during a search are
listed by name under the table, one line per install and store.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from engine.bench.reopen_workload import probe_environment
from engine.bench.sqlite_kernel import KernelStore, store_databases
from engine.model import SearchRequest


@dataclass(frozen=True, slots=True)
class Variant:
    """One command line to time, with what it adds to the environment."""

    name: str
    command: tuple[str, ...]
    environment: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class Samples:
    """The wall and processor seconds of a variant's runs, and its first answer."""

    wall: list[float] = field(default_factory=list)
    processor: list[float] = field(default_factory=list)
    hits: list[tuple[str, ...]] | None = None


def children_processor_seconds() -> float:
    """User + system seconds of every waited child so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(variant: Variant, environment: dict[str, str]) -> tuple[float, float, list[tuple[str, ...]]]:
    """Run the variant once: (wall seconds, processor seconds, its hits)."""
    processor, started = children_processor_seconds(), time.perf_counter()
    completed = subprocess.run(variant.command, capture_output=True, text=True, check=False,
                               env={**environment, **variant.environment})
    wall = time.perf_counter() - started
    used = children_processor_seconds() - processor
    if completed.returncode != 0:
        raise SystemExit(f"{variant.name} failed: {completed.stderr.strip()[-800:]}")
    hits = [tuple(str(hit.get(key)) for key in ("sessionKey", "sessionId", "messageId", "snippet"))
            for hit in json.loads(completed.stdout)["hits"]]
    return wall, used, hits


def variants(args: argparse.Namespace) -> list[Variant]:
    """The bare scripts first, then every install on every store."""
    request = SearchRequest(query=args.query, limit=25, session_keys=())
    kernel = KernelStore(store_databases(args.sqlite))
    found = [Variant("bare script", tuple(kernel.search_command(request))),
             Variant("bare script + libraries",
                     tuple(kernel.search_command(request, with_libraries=True)))]
    for backend, store in (("reference", args.reference), ("sqlite", args.sqlite)):
        for install in args.install:
            name, _, target = install.partition("=")
            script, _, tree = target.partition(":")
            found.append(Variant(
                f"{backend}, {name}",
                (script, "search", "--store", str(store), "--json", "--limit", "25", args.query),
                {"PYTHONPATH": tree} if tree else {}))
    return found


def main() -> int:
    """Parse arguments, run the rounds, print the table."""
    parser = argparse.ArgumentParser(prog="python bench/startup_commands.py")
    parser.add_argument("--reference", type=Path, required=True, help="a reference store")
    parser.add_argument("--sqlite", type=Path, required=True, help="a sqlite store")
    parser.add_argument("--install", action="append", required=True,
                        metavar="NAME=SCRIPT[:TREE]")
    parser.add_argument("--rounds", type=int, default=16)
    parser.add_argument("--query", default="quokka", help="a one-word query")
    parser.add_argument("--phases", action="store_true",
                        help="also split each install's search into phases (docstring)")
    args = parser.parse_args()
    environment = probe_environment()
    every = variants(args)
    samples = {variant.name: Samples() for variant in every}
    for variant in every:  # bytecode caches, untimed
        for _ in range(2):
            run(variant, environment)
    loads = []
    for round_number in range(args.rounds):
        order = every if round_number % 2 == 0 else every[::-1]
        shift = round_number // 2 % len(order)
        for variant in order[shift:] + order[:shift]:
            wall, used, hits = run(variant, environment)
            sample = samples[variant.name]
            sample.wall.append(wall)
            sample.processor.append(used)
            sample.hits = sample.hits if sample.hits is not None else hits
        loads.append(os.getloadavg()[0])
    base = samples[every[0].name]
    base_wall, base_processor = statistics.median(base.wall), statistics.median(base.processor)
    print(f"{args.rounds} rounds, query {args.query!r}, 1-minute load average "
          f"{min(loads):.1f}-{max(loads):.1f} ({os.cpu_count()} processors)")
    print("| command | wall median | ratio | CPU median | CPU min | ratio (CPU) |")
    print("|---|---|---|---|---|---|")
    for name, sample in samples.items():
        wall, used = statistics.median(sample.wall), statistics.median(sample.processor)
        print(f"| {name} | {wall * 1000:.1f} ms | {wall / base_wall:.2f}× | {used * 1000:.1f} ms "
              f"| {min(sample.processor) * 1000:.1f} ms | {used / base_processor:.2f}× |")
    answers = {tuple(sorted(sample.hits or ())) for sample in samples.values()}
    print("same hits in every variant:", len(answers) == 1)
    if args.phases:
        print_phases(args, environment)
    return 0 if len(answers) == 1 else 1


#: The phase probe, run as `python -c PROBE STORE QUERY LISTING`: with an empty LISTING
#: file it searches and writes the modules it loaded there, in load order; with a full
#: one it imports them phase by phase first, then searches, and prints its marks.
PHASE_PROBE = """
import time
marks = [("interpreter and site", time.process_time())]
import sys
store, query, listing = sys.argv[1:4]
with open(listing) as file:
    listed = file.read().split()
engine_modules = [name for name in listed if name == "engine" or name.startswith("engine.")]
for name in listed:
    if name not in engine_modules:
        __import__(name)
marks.append(("libraries", time.process_time()))
import dataclasses
creation = [0.0, 0, []]
create = dataclasses._process_class
def timed_creation(cls, *arguments, **options):
    started = time.process_time()
    try:
        return create(cls, *arguments, **options)
    finally:
        creation[0] += time.process_time() - started
        creation[1] += 1
        creation[2].append(f"{cls.__module__}.{cls.__qualname__}")
dataclasses._process_class = timed_creation
import engine.cli
import engine.cli.search_commands
marks.append(("engine.cli and search's module", time.process_time()))
for name in engine_modules:
    __import__(name)
marks.append(("the other engine modules", time.process_time()))
import contextlib, io, json
with contextlib.redirect_stdout(io.StringIO()):
    status = engine.cli.main(["search", "--store", store, "--json", "--limit", "25", query])
marks.append(("main: parse, open, search, print", time.process_time()))
if not listed:
    with open(listing, "w") as file:
        file.write(" ".join(sys.modules))
print(json.dumps({"marks": marks, "creation": creation}), file=sys.stderr)
sys.exit(status)
"""


def interpreter_of(script: str) -> str:
    """The interpreter a console script runs under (its `#!` line)."""
    with open(script, encoding="utf-8") as file:
        return file.readline()[2:].strip()


def print_phases(args: argparse.Namespace, environment: dict[str, str]) -> None:
    """Run the phase probe for every install on both stores, in ABBA rounds, and print
    the median processor time of each phase (`--phases` in the module docstring)."""
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="startup-phases-"))
    probes = []
    for backend, store in (("reference", args.reference), ("sqlite", args.sqlite)):
        for install in args.install:
            name, _, target = install.partition("=")
            script, _, tree = target.partition(":")
            listing = folder / f"{len(probes)}.modules"
            listing.write_text("")
            probes.append((f"{backend}, {name}",
                           (interpreter_of(script), "-c", PHASE_PROBE, str(store), args.query,
                            str(listing)),
                           {**environment, **({"PYTHONPATH": tree} if tree else {})}))
    phases: dict[str, dict[str, list[float]]] = {label: {} for label, _, _ in probes}
    created: dict[str, int] = {}
    names: dict[str, list[str]] = {}
    for round_number in range(args.rounds + 2):  # the first two list and warm
        for label, command, variables in probes if round_number % 2 == 0 else probes[::-1]:
            before = children_processor_seconds()
            # run outside the checkout: `python -c` puts the working folder first on the path
            completed = subprocess.run(command, capture_output=True, text=True, check=False,
                                       env=variables, cwd=folder)
            total = children_processor_seconds() - before
            if completed.returncode != 0:
                raise SystemExit(f"{label} probe failed: {completed.stderr.strip()[-800:]}")
            if round_number < 2:
                continue
            report = json.loads(completed.stderr.strip().splitlines()[-1])
            last = 0.0
            for phase, mark in report["marks"]:
                phases[label].setdefault(phase, []).append(mark - last)
                last = mark
            phases[label].setdefault("exit", []).append(total - last)
            phases[label].setdefault("whole process", []).append(total)
            phases[label].setdefault("(creating dataclasses, within the two above)",
                                     []).append(report["creation"][0])
            created[label] = report["creation"][1]
            names[label] = report["creation"][2]
    labels = list(phases)
    print(f"phases, {args.rounds} rounds, processor time (median)")
    print("| phase | " + " | ".join(labels) + " |")
    print("|---|" + "---|" * len(labels))
    for phase in phases[labels[0]]:
        print(f"| {phase} | " + " | ".join(
            f"{statistics.median(phases[label][phase]) * 1000:.1f} ms" for label in labels) + " |")
    print("| dataclasses created | " + " | ".join(str(created[label]) for label in labels) + " |")
    for label in labels:
        print(f"dataclasses created by {label}: {', '.join(names[label]) or 'none'}")


if __name__ == "__main__":
    raise SystemExit(main())
