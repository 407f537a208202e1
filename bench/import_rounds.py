"""Whole imports of one corpus by several trees of this engine, side by side with the bare
write path: processor seconds and peak memory of each, in interleaved rounds.

Usage (a tree is a checkout or a `git archive` of one commit; `.` is this one):

    git archive HEAD~3 | tar -x -C /tmp/before
    python bench/import_rounds.py --corpus /work/corpora/100k --rounds 4 \\
        --tree after=. --tree before=/tmp/before [--form state] [--backend sqlite]

Each round runs every variant once, in an order that rotates and reverses every round
(ABBA), so drift on a shared machine hits each alike: `bare` (upstream's write path,
`engine.bench.bare_write`, reading the same files) and, per tree, `python -m engine import
--quiet` into a new store with that tree first on `PYTHONPATH`. Each command is started by
the bench's launcher (`engine.bench.process_ingest.run_measured`), which reads its user +
system seconds and its peak resident memory (`ru_maxrss`) from `wait4`. `--form state`
imports the corpus's OpenClaw state folder (written once, untimed, as the bench does)
with `--openclaw-state`. After the rounds, each tree's last store must answer the rare
word probe with the same hits as the first tree's: a faster import that changed an
answer is reported, not ranked.

Only the import is timed here (the bench's `ingest/*` rows add the first query); ratios
are against `bare` of the same rounds. The figures belong in `bench/RESULTS.md`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from engine.bench.process_ingest import BARE_IMPORT, Measured, run_measured
from engine.bench.state_folder import ensure_state_folder

BARE = "bare"


@dataclass(frozen=True, slots=True)
class ImportVariant:
    """One command that imports the corpus into `store`, with the tree it runs from."""

    name: str
    tree: Path | None
    backend: str


def import_command(variant: ImportVariant, source: Path, store: Path, state: bool) -> list[str]:
    """The command line of one import (the bare path writes the main agent's database)."""
    if variant.tree is None:
        database = store / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
        return [sys.executable, "-c", BARE_IMPORT, str(source), str(database)]
    return [sys.executable, "-m", "engine", "import", "--store", str(store), "--backend",
            variant.backend, "--quiet", *(("--openclaw-state",) if state else ()), str(source)]


def measured_in(tree: Path | None, command: list[str]) -> Measured:
    """`command` run and measured with `tree` first on `PYTHONPATH` (and as its working
    folder, so `-m engine` finds that tree's package before an installed one)."""
    saved_path, saved_folder = os.environ.get("PYTHONPATH"), os.getcwd()
    root = tree if tree is not None else Path(__file__).resolve().parent.parent
    os.environ["PYTHONPATH"] = str(root)
    os.chdir(root)
    try:
        return run_measured(command)
    finally:
        os.chdir(saved_folder)
        if saved_path is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = saved_path


def round_order(variants: list[ImportVariant], number: int) -> list[ImportVariant]:
    """The variants in round `number`'s order: rotated by the round, reversed every other.

    >>> names = lambda order: [variant.name for variant in order]
    >>> variants = [ImportVariant(name, None, "x") for name in "abc"]
    >>> names(round_order(variants, 0)), names(round_order(variants, 1))
    (['a', 'b', 'c'], ['c', 'b', 'a'])
    """
    shift = (number // 2) % len(variants)
    rotated = variants[shift:] + variants[:shift]
    return rotated[::-1] if number % 2 else rotated


def probe_hits(tree: Path, store: Path, query: str) -> list[tuple[str, str]]:
    """The (sessionId, messageId) of each hit `tree`'s engine gives `query` on `store`."""
    answer = measured_in(tree, [sys.executable, "-m", "engine", "search", "--store", str(store),
                                "--json", "--limit", "25", query])
    return [(hit["sessionId"], hit["messageId"]) for hit in json.loads(answer.output)["hits"]]


def main(arguments: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True, help="a generated corpus folder")
    parser.add_argument("--tree", action="append", required=True, metavar="NAME=PATH")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--form", choices=("directory", "state"), default="directory")
    parser.add_argument("--backend", default="reference")
    options = parser.parse_args(arguments)
    variants = [ImportVariant(BARE, None, "bare")]
    for given in options.tree:
        name, _, path = given.partition("=")
        variants.append(ImportVariant(name, Path(path).resolve(), options.backend))
    scratch = Path(tempfile.mkdtemp(prefix="import-rounds-"))
    state = options.form == "state"
    source = ensure_state_folder(options.corpus, scratch / "openclaw-state") if state \
        else options.corpus
    samples: dict[str, list[Measured]] = {variant.name: [] for variant in variants}
    kept: dict[str, Path] = {}
    try:
        for number in range(options.rounds):
            for variant in round_order(variants, number):
                store = scratch / f"store-{variant.name}"
                shutil.rmtree(store, ignore_errors=True)
                samples[variant.name].append(
                    measured_in(variant.tree, import_command(variant, source, store, state)))
                kept[variant.name] = store
                print(f"round {number + 1} {variant.name}: "
                      f"{samples[variant.name][-1].processor_seconds:.2f} s CPU", file=sys.stderr)
        query = json.loads((options.corpus / "manifest.json").read_text())["probes"]["rare_word"]["query"]
        answers = {variant.name: probe_hits(variant.tree, kept[variant.name], query)
                   for variant in variants[1:]}
        report(samples, answers, options, os.getloadavg()[0])
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


def report(samples: dict[str, list[Measured]], answers: dict[str, list[tuple[str, str]]],
           options: argparse.Namespace, load: float) -> None:
    """Print the rounds' medians as a Markdown table, ratios against the bare path."""
    base = statistics.median(sample.processor_seconds for sample in samples[BARE])
    first = next(iter(answers.values()))
    print(f"{options.rounds} rounds, {options.corpus.name} from the "
          f"{'state folder' if options.form == 'state' else 'corpus directory'}, "
          f"backend {options.backend}, load at the end {load:.1f}")
    print("| import | CPU median | CPU min | ratio (CPU) | wall median | peak median |")
    print("|---|---|---|---|---|---|")
    for name, runs in samples.items():
        cpu = statistics.median(run.processor_seconds for run in runs)
        print(f"| {name} | {cpu:.2f} s | {min(run.processor_seconds for run in runs):.2f} s | "
              f"{cpu / base:.2f}× | {statistics.median(run.seconds for run in runs):.2f} s | "
              f"{statistics.median(run.peak_bytes for run in runs) / 2**20:.1f} MiB |")
    print("same probe hits in every tree:", all(hits == first for hits in answers.values()))


if __name__ == "__main__":
    raise SystemExit(main())
