"""A writer killed with SIGKILL at random points, many times, on each backend's
partitioned store (what `import` writes): nothing acknowledged is ever lost.

The writer is a child process that opens the store as the writer, commits one to three
transactions, closes it (the reference flushes its index and saves checkpoints then),
and starts over, forever. Transaction `n` puts window `w<n>` of agent `main` (even `n`)
or `ops` (odd: that agent's partition is made by the first one) with `size(n)` messages
(1 to 40) holding the word `unique<n>`; every seventh also deletes the window four
before it (same agent). After each commit it writes `ack <n>` to a pipe. It is killed
at a random moment after a random number of acknowledgements: inside a transaction, a
commit, an index flush or merge, a checkpoint, a partition's creation, a close.

After each kill, in the test's process: the store opens as a reader and holds exactly
the windows of the acknowledged transactions (deletions applied), or those plus the
transaction in flight (a kill can land after a commit and before its acknowledgement);
every window has all of its messages (no transaction half there); a search for the word
of each window the killed writer wrote finds that window's messages and no other's; and
every eighth kill, the same for every window, and `verify` of each reference partition
finds nothing wrong. The next writer then recovers
the store and goes on where the last commit left off.

Kills are cheap: a zygote process imports the engine once and forks one writer per kill
(`ZYGOTE`), and the store lives on a tmpfs (`/dev/shm`) when there is one with room,
where an fsync costs nothing: a process killed with SIGKILL loses no byte it wrote, so
what fsync guards against (a power cut) is not what this test looks at (the fault layer
and the crash copies of `test_write_faults` are). So the default run makes `KILLS` kills
per backend in seconds; the `slow` run makes `SLOW_KILLS`. The random seed is fixed, so the kill schedule repeats; where
each kill lands depends on the machine's speed, never what is checked.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from engine.diagnostics.verify import verify_backend
from engine.model import SearchRequest
from engine.store.registry import open_backend

ROOT = Path(__file__).resolve().parents[2]
KILLS = 32
SLOW_KILLS = 150

#: The writer's rules, shared with the checks below (the zygote runs this source too).
WORKLOAD = r'''
def size(number):
    return 1 + (number * 7919) % 40


def agent(number):
    return "main" if number % 2 == 0 else "ops"


def deleted_by(number):
    return number - 4 if number % 7 == 6 and number >= 4 else None
'''

ZYGOTE = WORKLOAD + r'''
import os
import sys

from engine.store.registry import open_backend
from engine.model import SessionWindow


def acknowledge(text):
    os.write(1, (text + "\n").encode())


def write_forever(store, backend, number):
    created = os.path.exists(os.path.join(store, "store.meta"))
    while True:
        handle = open_backend(store, backend=backend, create=not created, writer=True)
        created = True
        for _ in range(1 + number % 3):
            with handle.transaction() as transaction:
                key = f"agent:{agent(number)}:w{number}"
                transaction.put_window(SessionWindow(f"w{number}", key))
                parent = None
                for part in range(size(number)):
                    message_id = f"n{number}-{part}"
                    transaction.append_event(f"w{number}", {
                        "type": "message", "id": message_id, "parentId": parent,
                        "timestamp": 1767225600000 + number * 1000 + part,
                        "message": {"role": "user" if part % 2 == 0 else "assistant",
                                    "content": f"unique{number} shared words part{part}"}})
                    parent = message_id
                gone = deleted_by(number)
                if gone is not None:
                    transaction.delete_session(f"agent:{agent(gone)}:w{gone}")
            acknowledge(f"ack {number}")
            number += 1
        handle.close()


def warm_up():
    """Write a throwaway store of each backend once, so that every module and table a
    writer loads lazily is loaded here, before the forks, and not again in each one."""
    import shutil
    import tempfile

    folder = tempfile.mkdtemp(prefix="zygote-")
    try:
        for name in ("reference", "sqlite"):
            handle = open_backend(os.path.join(folder, name), backend=name, create=True,
                                  writer=True)
            with handle.transaction() as transaction:
                transaction.put_window(SessionWindow("w", "agent:main:w"))
                transaction.append_event("w", {
                    "type": "message", "id": "m", "parentId": None, "timestamp": 1,
                    "message": {"role": "user", "content": "warm words"}})
            handle.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


warm_up()
for line in sys.stdin:
    store, backend, start = line.split()
    pid = os.fork()
    if pid == 0:
        try:
            write_forever(store, backend, int(start))
        except BaseException:
            import traceback

            traceback.print_exc()
            sys.stderr.flush()
        os._exit(3)
    acknowledge(f"started {pid}")
    _, status = os.waitpid(pid, 0)
    acknowledge(f"done {pid} {status}")
'''

namespace: dict[str, object] = {}
exec(WORKLOAD, namespace)  # noqa: S102 - the writer's own rules, checked against
size = namespace["size"]
agent = namespace["agent"]
deleted_by = namespace["deleted_by"]


def windows_after(committed: list[int]) -> dict[str, int]:
    """Window -> message count after the transactions `committed`, in order."""
    windows: dict[str, int] = {}
    for number in committed:
        windows[f"w{number}"] = size(number)  # type: ignore[operator]
        gone = deleted_by(number)  # type: ignore[operator]
        if gone is not None:
            windows.pop(f"w{gone}", None)
    return windows


@dataclass
class Zygote:
    """The forking parent of the writers, and what it reported."""

    process: subprocess.Popen[str]
    log: list[str] = field(default_factory=list)

    def line(self) -> str:
        assert self.process.stdout is not None
        text = self.process.stdout.readline()
        assert text, f"the zygote ended: {self.stderr()}"
        return text.strip()

    def stderr(self) -> str:
        self.process.kill()
        _, err = self.process.communicate(timeout=60)
        return err

    def start_writer(self, store: Path, backend: str, first: int) -> int:
        assert self.process.stdin is not None
        self.process.stdin.write(f"{store} {backend} {first}\n")
        self.process.stdin.flush()
        started = self.line().split()
        assert started[0] == "started", started
        return int(started[1])


@contextmanager
def zygote() -> Iterator[Zygote]:
    process = subprocess.Popen([sys.executable, "-c", ZYGOTE], cwd=ROOT, text=True,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    try:
        yield Zygote(process)
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=60)


def kill_at_random(forks: Zygote, store: Path, backend: str, first: int,
                   generator: random.Random) -> list[int]:
    """Start a writer at transaction `first`, kill it after a random number of
    acknowledgements and a random delay; return the transactions it acknowledged."""
    pid = forks.start_writer(store, backend, first)
    acknowledged: list[int] = []
    wanted = generator.choice([0, 0, 1, 1, 2, 3])
    while len(acknowledged) < wanted:
        text = forks.line()
        assert text.startswith("ack "), f"{text}: {forks.stderr()}"
        acknowledged.append(int(text.split()[1]))
    time.sleep(generator.uniform(0.0, 0.06))
    os.kill(pid, signal.SIGKILL)
    while True:
        text = forks.line()
        if text.startswith("ack "):
            acknowledged.append(int(text.split()[1]))
            continue
        done, done_pid, status = text.split()
        assert (done, int(done_pid)) == ("done", pid), text
        assert os.WIFSIGNALED(int(status)) and os.WTERMSIG(int(status)) == signal.SIGKILL, (
            f"the writer ended by itself ({status}) instead of being killed: "
            f"{forks.stderr()}")
        return acknowledged


def check_after_kill(store: Path, acknowledged: list[int], in_flight: int, first: int,
                     verify: bool) -> list[int]:
    """The checks of the module docstring; returns the committed transactions. The
    windows searched are those of this writer (from transaction `first` on), and on a
    `verify` round every window."""
    expected = windows_after(acknowledged)
    with_in_flight = windows_after([*acknowledged, in_flight])
    reader = open_backend(store)
    try:
        present = {window.session_id: reader.event_count(window.session_id)
                   for window in reader.windows()}
        assert present in (expected, with_in_flight), (
            f"after acknowledging up to {acknowledged[-1:]}: missing "
            f"{sorted(set(expected) - set(present))}, unexpected "
            f"{sorted(set(present) - set(with_in_flight))}, counts differ "
            f"{sorted(w for w in present if w in expected and present[w] != expected[w])}")
        committed = acknowledged if present == expected else [*acknowledged, in_flight]
        for session_id in present:
            number = int(session_id[1:])
            if number < first and not verify:
                continue
            found = reader.search(SearchRequest(f"unique{number}", agent_id=agent(number)))
            assert found.hits and {hit.session_id for hit in found.hits} == {session_id}
        if verify and reader.name == "reference":
            for partition in reader.partitions().values():
                report = verify_backend(partition)  # type: ignore[arg-type]
                assert report.problems == [], report.problems
    finally:
        reader.close()
    return committed


@dataclass
class KillTally:
    """What the kills of one run did: how many, the transactions acknowledged, and the
    kills that landed after a commit and before its acknowledgement."""

    kills: int = 0
    acknowledged: int = 0
    committed_unacknowledged: int = 0


def kill_repeatedly(folder: Path, backend: str, kills: int, seed: int) -> KillTally:
    store = folder / "store"
    generator = random.Random(seed)
    committed: list[int] = []
    tally = KillTally()
    with zygote() as forks:
        for kill in range(kills):
            first = committed[-1] + 1 if committed else 0
            acknowledged = kill_at_random(forks, store, backend, first, generator)
            tally.kills += 1
            tally.acknowledged += len(acknowledged)
            if not (store / "store.meta").exists():
                assert committed == acknowledged == [], "a store that acknowledged vanished"
                continue
            before = len(committed) + len(acknowledged)
            committed = check_after_kill(
                store, [*committed, *acknowledged],
                acknowledged[-1] + 1 if acknowledged else first, first, verify=kill % 8 == 7)
            tally.committed_unacknowledged += len(committed) - before
    assert committed, "no writer ever committed: the kills all landed before a commit"
    return tally


@pytest.mark.parametrize("backend", ["reference", "sqlite"])
def test_a_writer_killed_at_random_points_loses_nothing_acknowledged(
        store_folder: Path, backend: str, report_figure) -> None:
    report_figure(describe("killed writer", backend,
                           kill_repeatedly(store_folder, backend, KILLS, seed=17)))


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["reference", "sqlite"])
def test_a_writer_killed_many_more_times_loses_nothing_acknowledged(
        store_folder: Path, backend: str, report_figure) -> None:
    report_figure(describe("killed writer, slow run", backend,
                           kill_repeatedly(store_folder, backend, SLOW_KILLS, seed=1717)))


def describe(run: str, backend: str, tally: KillTally) -> str:
    """One summary line of a kill run (every check passed when it is written)."""
    return (f"{run} ({backend}): {tally.kills} SIGKILLs, {tally.acknowledged} acknowledged "
            f"transactions all present, {tally.committed_unacknowledged} committed before "
            "the kill but unacknowledged (present too), nothing else")
