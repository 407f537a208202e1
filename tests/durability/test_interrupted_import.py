"""An import into a store of several agents, interrupted with SIGINT, SIGTERM or SIGKILL
at a random moment, many times on each backend: the store holds all of the import or
none of it, `verify` finds nothing wrong, and the same import run again succeeds.

The store already holds three agents (`main`, `ops`, `work`); the import adds windows of
all three and of a fourth (`new`, whose partition it makes), through the command a user
runs (`python -m engine import`, a child process). The signal lands at a random moment
of its run: while it reads the file, in its one transaction, in the commit across the
four partitions (a Ctrl-C or SIGTERM is held until that is over; a SIGKILL is not, and
the store's commit journal finishes the commit at the next open), in the reconcile
after it, or after it ended. After each, in this process:

* `session-search verify` (the first command to open the store after the kill) exits 0;
* either every window of the import is there with all of its messages, or none is (the
  agent `new` then has no partition holding anything), and the windows that were there
  before are untouched;
* when none is there, the same import run again succeeds and leaves all of it;
* then a search for the import's word, scoped to each of its four agents, finds that
  agent's messages.

The delays are fractions (5% to 110%) of one whole import timed first, so that they
fall in every phase on a machine of any speed, but never before the interpreter has
reached the program's first line (`python -c "import engine"`, timed too): a Ctrl-C
while Python itself is still starting (its `site` module) is the interpreter's to
report, with its own traceback, and no program can catch it; on a machine slowed by
other work it can still land there, so a traceback that ends in `KeyboardInterrupt`
with no frame of `engine.cli` is the interpreter's too. From the loading of the
command line on, a SIGINT must end the command without one. The seed is fixed, so the schedule of
signals and fractions repeats; where each lands
depends on the machine's speed, never what is checked. The tally (how many landed
before, during and after the commit) is in the Durability section of the summary.
"""

from __future__ import annotations

import json
import random
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from engine.cli import main
from engine.model import SearchRequest
from engine.store.registry import open_backend

ROOT = Path(__file__).resolve().parents[2]
AGENTS_BEFORE = ("main", "ops", "work")
AGENTS_IMPORTED = (*AGENTS_BEFORE, "new")
#: Messages of the import: enough that it runs for about a second here, so that the
#: random delays below land in every phase of it.
IMPORT_MESSAGES = 12_000
INTERRUPTS = 12
SLOW_INTERRUPTS = 36
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGKILL)
WORDS = ("alpha", "beta", "gamma", "delta", "deploy", "failed", "friday", "kernel", "panic",
         "café", "crème", "会议", "review")


def write_messages(path: Path, prefix: str, count: int, agents: tuple[str, ...]) -> None:
    """A flat chat log: `count` messages of 7 windows per agent, each holding `prefix`."""
    generator = random.Random(prefix)
    with path.open("w", encoding="utf-8") as file:
        for number in range(count):
            agent = agents[number % len(agents)]
            window = number // len(agents) % 7
            text = " ".join(generator.choice(WORDS) for _ in range(12))
            file.write(json.dumps({
                "sessionKey": f"agent:{agent}:{prefix}{window}",
                "sessionId": f"{prefix}-{agent}-{window}", "messageId": f"{prefix}-{number}",
                "role": "user" if number % 2 == 0 else "assistant",
                "timestamp": 1_772_359_260_000 + number * 1000,
                "text": f"{text} word{prefix}"}) + "\n")


def expected_counts(path: Path) -> Counter[str]:
    """Messages per window of a flat chat log."""
    return Counter(json.loads(line)["sessionId"] for line in path.open(encoding="utf-8"))


def window_counts(store_path: Path, session_ids: set[str]) -> dict[str, int]:
    """Messages per window of `session_ids` that the store holds (readers' view)."""
    with open_backend(store_path) as store:
        held = {window.session_id for window in store.windows()} & session_ids
        return {session_id: store.event_count(session_id) for session_id in held}


def run_quietly(*argv: str) -> int:
    """The command line's exit status, its output swallowed."""
    with open("/dev/null", "w") as sink:
        saved = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = sink
        try:
            return main(list(argv))
        finally:
            sys.stdout, sys.stderr = saved


def interrupt_import(store: Path, source: Path, number: signal.Signals, delay: float) -> str:
    """Run `import` in a child process and send it `number` after `delay` seconds; how
    it ended: `done` (before the signal) or `interrupted`."""
    child = subprocess.Popen(
        [sys.executable, "-m", "engine", "import", "--store", str(store), "--quiet", str(source)],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        child.wait(timeout=delay)
        ended = "done"
    except subprocess.TimeoutExpired:
        child.send_signal(number)
        ended = "interrupted"
    _, error = child.communicate(timeout=120)
    if ended == "done":
        assert child.returncode == 0, error.decode()
    assert b"Traceback" not in error or landed_before_the_command_line(error), error.decode()
    return ended


def landed_before_the_command_line(error: bytes) -> bool:
    """Whether a traceback is a Ctrl-C's that came before the command line began to load
    (no frame of `engine.cli`: Python's start-up or the package's own imports, where a
    machine slowed by other work can still be past the timed floor): the interpreter's to
    report. From `engine.cli`'s first line on, the program must end without one."""
    lines = error.decode(errors="replace").replace("\\", "/").splitlines()
    return (bool(lines) and lines[-1].strip() == "KeyboardInterrupt"
            and not any("/engine/cli/" in line for line in lines))


def test_a_traceback_counts_only_from_the_command_line_on() -> None:
    before = b'Traceback:\n  File "/x/engine/__init__.py", line 3\nKeyboardInterrupt\n'
    during = b'Traceback:\n  File "/x/engine/cli/__init__.py", line 9\nKeyboardInterrupt\n'
    assert landed_before_the_command_line(before)
    assert not landed_before_the_command_line(during)
    assert not landed_before_the_command_line(before.replace(b"KeyboardInterrupt", b"OSError"))


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("sources")
    write_messages(folder / "before.jsonl", "before", 300, AGENTS_BEFORE)
    write_messages(folder / "import.jsonl", "imported", IMPORT_MESSAGES, AGENTS_IMPORTED)
    return folder / "before.jsonl", folder / "import.jsonl"


def time_one_import(folder: Path, base: Path, imported: Path) -> float:
    """Seconds one whole import takes here (the random delays are fractions of it, so
    that they fall in every phase of an import on a machine of any speed)."""
    store = folder / "timed"
    shutil.copytree(base, store)
    started = time.monotonic()
    interrupt_import(store, imported, signal.SIGKILL, 600)
    elapsed = time.monotonic() - started
    shutil.rmtree(store)
    return elapsed


def interpreter_start() -> float:
    """Seconds from starting `python` to its first line of the engine here (the
    slowest of three), below which a signal lands in the interpreter's own start-up."""
    timings = []
    for _ in range(3):
        started = time.monotonic()
        subprocess.run([sys.executable, "-c", "import engine"], cwd=ROOT, check=True)
        timings.append(time.monotonic() - started)
    return max(timings)


def interrupt_repeatedly(folder: Path, backend: str, sources: tuple[Path, Path],
                         interrupts: int, report_figure) -> None:
    before, imported = sources
    base = folder / "base"
    assert run_quietly("import", "--store", str(base), "--backend", backend, "--quiet",
                       str(before)) == 0
    before_counts = dict(expected_counts(before))
    wanted = dict(expected_counts(imported))
    generator = random.Random(f"interrupted-import-{backend}")
    outcomes: Counter[str] = Counter()
    whole = time_one_import(folder, base, imported)
    earliest = interpreter_start()
    for interrupt in range(interrupts):
        store = folder / f"store-{interrupt}"
        shutil.copytree(base, store)
        number = SIGNALS[interrupt % len(SIGNALS)]
        delay = max(generator.uniform(0.05, 1.1) * whole, earliest)
        ended = interrupt_import(store, imported, number, delay)
        where = f"{number.name} after {delay:.2f} s"
        if (store / "commit.journal").exists():
            outcomes["journal left behind"] += 1
        assert run_quietly("verify", "--store", str(store)) == 0, where
        assert not (store / "commit.journal").exists(), where
        held = window_counts(store, set(wanted))
        assert window_counts(store, set(before_counts)) == before_counts, where
        if held:
            assert held == wanted, f"{where}: part of the import was kept"
            outcomes[f"{ended}, all kept"] += 1
        else:
            outcomes[f"{ended}, nothing kept"] += 1
            assert run_quietly("import", "--store", str(store), "--quiet", str(imported)) == 0
            assert window_counts(store, set(wanted)) == wanted, where
        with open_backend(store) as opened:
            for agent in AGENTS_IMPORTED:
                hits = opened.search(SearchRequest("wordimported", agent_id=agent)).hits
                assert hits and {hit.session_key.split(":")[1] for hit in hits} == {agent}, (
                    f"{where}: {agent}")
        shutil.rmtree(store)
    assert sum(count for name, count in outcomes.items() if "kept" in name) == interrupts
    report_figure(f"interrupted import, {backend}: {interrupts} interrupts of a "
                  f"{IMPORT_MESSAGES}-message import into 4 agents "
                  f"({', '.join(f'{count} {name}' for name, count in sorted(outcomes.items()))})")


@pytest.mark.parametrize("backend", ["reference", "sqlite"])
def test_an_interrupted_import_keeps_all_of_it_or_none(
        store_folder: Path, backend: str, sources: tuple[Path, Path], report_figure) -> None:
    interrupt_repeatedly(store_folder, backend, sources, INTERRUPTS, report_figure)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["reference", "sqlite"])
def test_an_interrupted_import_keeps_all_of_it_or_none_many_times(
        store_folder: Path, backend: str, sources: tuple[Path, Path], report_figure) -> None:
    interrupt_repeatedly(store_folder, backend, sources, SLOW_INTERRUPTS, report_figure)



#: Runs an import and prints the peak of the memory Python allocated for it (tracemalloc):
#: SQLite's own caches and the allocator's reuse are not counted, only what the engine
#: holds.
TRACED_IMPORT = r"""
import sys, tracemalloc
tracemalloc.start()
from engine.cli import main
status = main(sys.argv[1:])
print(tracemalloc.get_traced_memory()[1])
sys.exit(status)
"""


def traced_peak(arguments: list[str]) -> int:
    completed = subprocess.run([sys.executable, "-c", TRACED_IMPORT, *arguments], cwd=ROOT,
                               capture_output=True, text=True, timeout=600, check=False)
    assert completed.returncode == 0, completed.stderr
    return int(completed.stdout.split()[-1])


@pytest.mark.slow
def test_an_import_across_agents_keeps_its_writes_out_of_memory(tmp_path: Path) -> None:
    """The writes a commit across agents may need again wait on disk, not in memory: the
    memory the engine allocates for a four-agent import of 2.4 times as many messages
    peaks at about the same height (it once grew by every event held for the journal:
    about 20 MiB more here). In both imports each agent's partition gets more than the
    SQLite write path's own buffer of 4,096 events, so that buffer is full in both."""
    peaks = []
    for count in (17_000, 40_000):
        source = tmp_path / f"m{count}.jsonl"
        with source.open("w", encoding="utf-8") as file:
            for number in range(count):
                agent = AGENTS_IMPORTED[number % len(AGENTS_IMPORTED)]
                window = number // 80
                file.write(json.dumps({
                    "sessionKey": f"agent:{agent}:long{window}",
                    "sessionId": f"long-{agent}-{window}", "messageId": f"m{number}",
                    "role": "user", "timestamp": 1_772_359_260_000 + number,
                    "text": f"long message {number} " + "padding words " * 20}) + "\n")
        peaks.append(traced_peak(["import", "--store", str(tmp_path / f"s{count}"),
                                  "--backend", "sqlite", "--quiet", "--no-reconcile",
                                  str(source)]))
    assert peaks[1] - peaks[0] < 10 * 2**20, peaks
