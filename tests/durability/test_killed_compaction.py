"""A compaction killed with SIGKILL at many points loses nothing committed.

The store is a partitioned reference store (agents `main` and `ops`) written with small
log files (32 KiB, so a compaction rewrites many of them one after another) holding
windows of which every third was deleted. Each round copies it, starts
`session-search compact` on the copy in a child process and kills the child after a
delay spread over the time one whole compaction takes (measured first, in the same
way): while it plans, after it marked the compaction begun, between two file rewrites,
during one, while it saves the checkpoint, before it clears the mark. Every kill then
shows, in the test's process (half the kills land at a time spread over the whole run,
half at a time after a partition's compaction state first said one began, which the
zygote watches for):

* a reader opens the store without error, with exactly the committed windows, every
  one with all its events (read back and compared), and searches answer as before;
* `verify` of each partition finds no problem (an interrupted compaction is a note);
* a writer opens it (which clears an interrupted compaction's mark and saves a fresh
  checkpoint), compacts to the end, and the same holds again.

The child is forked from a zygote that imported the engine once (as in
`test_killed_writer`), and the store lives on `/dev/shm` when there is room: a process
killed with SIGKILL loses no byte it wrote, so this tests the order of the steps and the
open after them, not fsync (the crash copies of `tests/transcript/test_compaction.py`
test that). The seed is fixed; where each kill lands depends on the machine's speed,
never what is checked.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from engine.config import EngineConfig
from engine.diagnostics.verify import verify_backend
from engine.directory import FileDirectory
from engine.model import SearchRequest, SessionWindow
from engine.store.registry import open_backend
from engine.transcript.compaction import read_compaction_state

ROOT = Path(__file__).resolve().parents[2]
KILLS = 12
WINDOWS = 60
WORDS = ("deployment", "friday", "garden", "rollback", "window7", "window30")

ZYGOTE = r'''
import os
import signal
import sys
import time

import engine.store.partitioned
import engine.backends.reference.backend
import engine.cli.compact_command
from engine.cli import main
from engine.directory import FileDirectory
from engine.transcript.compaction import read_compaction_state

def compaction_begun(store):
    """Whether a partition's compaction state says one is running."""
    for agent in os.listdir(os.path.join(store, "agents")):
        if read_compaction_state(FileDirectory(os.path.join(store, "agents", agent))).in_progress:
            return True
    return False


for line in sys.stdin:
    store, mode, delay = line.split()
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        try:
            status = main(["compact", "--store", store])
        except BaseException:
            import traceback

            traceback.print_exc()
            status = 3
        os._exit(status)
    finished = 0
    if mode != "never":
        while mode == "begun" and not compaction_begun(store):
            finished, status = os.waitpid(pid, os.WNOHANG)
            if finished:
                break
            time.sleep(0.0005)
        if not finished:
            time.sleep(float(delay))
            finished, status = os.waitpid(pid, os.WNOHANG)
        if not finished:  # still running, and not reaped: the pid is still this child's
            os.kill(pid, signal.SIGKILL)
    if not finished:
        _, status = os.waitpid(pid, 0)
    os.write(1, f"done {status}\n".encode())
'''


@contextmanager
def zygote() -> Iterator[subprocess.Popen[str]]:
    process = subprocess.Popen([sys.executable, "-c", ZYGOTE], cwd=ROOT, text=True,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=60)


def line_of(process: subprocess.Popen[str]) -> str:
    assert process.stdout is not None
    text = process.stdout.readline()
    if not text:
        process.kill()
        raise AssertionError(f"the zygote ended: {process.communicate(timeout=60)[1]}")
    return text.strip()


def run_compaction(process: subprocess.Popen[str], store: Path, mode: str,
                   delay: float = 0.0) -> bool:
    """Compact `store` in a child the zygote forks and kills with SIGKILL, if it is still
    running, `delay` seconds after it started (`mode` "time") or after a partition's
    compaction state first said one began ("begun"); "never" lets it finish. The zygote
    kills before it reaps the child, so the pid is the child's. Whether it was killed."""
    assert process.stdin is not None
    process.stdin.write(f"{store} {mode} {delay}\n")
    process.stdin.flush()
    done, status = line_of(process).split()
    assert done == "done"
    if os.WIFSIGNALED(int(status)):
        assert os.WTERMSIG(int(status)) == signal.SIGKILL
        return True
    assert os.WEXITSTATUS(int(status)) == 0, "the compaction failed by itself"
    return False


def build_store(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The store of the module docstring (its partitions written with 32 KiB log files)."""
    small = EngineConfig(log_roll_bytes=1 << 15)
    monkeypatch.setattr("engine.transcript.store.EngineConfig", lambda: small)
    with open_backend(path, backend="reference", create=True, writer=True) as store:
        for number in range(WINDOWS):
            agent = "main" if number % 2 == 0 else "ops"
            with store.transaction() as transaction:
                transaction.put_window(SessionWindow(f"w{number}", f"agent:{agent}:k{number}"))
                parent = None
                for part in range(12):
                    message_id = f"w{number}-{part}"
                    word = WORDS[(number + part) % 4]
                    transaction.append_event(f"w{number}", {
                        "type": "message", "id": message_id, "parentId": parent,
                        "timestamp": 1767225600000 + number * 100 + part,
                        "message": {"role": "user", "content":
                                    f"{word} window{number} part{part} " + "filler " * 60}})
                    parent = message_id
            if number % 3 == 2:
                gone = number - 2
                with store.transaction() as transaction:
                    transaction.delete_session(
                        f"agent:{'main' if gone % 2 == 0 else 'ops'}:k{gone}")
    monkeypatch.undo()


def committed_state(path: Path) -> dict:
    """What a reader sees: every window's events, and the answers to a few searches."""
    with open_backend(path) as reader:
        events = {window.session_id: [(event.seq, event.event) for event in
                                      reader.events(window.session_id)]
                  for window in reader.windows()}
        answers = {word: [(hit.session_id, hit.message_id) for hit in
                          reader.search(SearchRequest(word, session_keys=())).hits]
                   for word in WORDS}
        for partition in reader.partitions().values():
            report = verify_backend(partition)  # type: ignore[arg-type]
            assert report.problems == [], report.problems
    return {"events": events, "answers": answers}


def log_bytes(path: Path) -> int:
    return sum(file.stat().st_size for file in path.glob("agents/*/transcripts/segment-*.log"))


def test_a_compaction_killed_at_many_points_loses_nothing_committed(
        store_folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = store_folder / "base"
    build_store(base, monkeypatch)
    expected = committed_state(base)
    assert len(list(base.glob("agents/main/transcripts/segment-*.log"))) >= 4
    generator = random.Random(29)
    with zygote() as process:
        warm = store_folder / "warm"  # the first request also waits for the zygote's imports
        shutil.copytree(base, warm)
        assert not run_compaction(process, warm, "never")
        timed = store_folder / "timed"
        shutil.copytree(base, timed)
        started = time.perf_counter()
        assert not run_compaction(process, timed, "never")
        duration = time.perf_counter() - started
        assert log_bytes(timed) < log_bytes(base)
        assert committed_state(timed) == expected
        killed = interrupted = 0
        for round_number in range(KILLS):
            store = store_folder / f"round-{round_number}"
            shutil.copytree(base, store)
            if round_number % 2 == 0:  # anywhere, from the start
                delay = duration * (round_number + generator.random()) / KILLS
                killed += run_compaction(process, store, "time", delay)
            else:  # once a partition's compaction began: rewrites, checkpoint, the mark
                # the first such kill at once (it lands while the mark is there however
                # slow the machine is: the mark stays until that partition is done)
                delay = 0.0 if round_number == 1 else generator.uniform(0.0, duration / 4)
                killed += run_compaction(process, store, "begun", delay)
            interrupted += any(read_compaction_state(FileDirectory(partition)).in_progress
                               for partition in store.glob("agents/*"))
            assert committed_state(store) == expected
            with open_backend(store, writer=True) as writer:  # clears an interrupted mark
                writer.compact()
            for partition in store.glob("agents/*"):
                assert not read_compaction_state(FileDirectory(partition)).in_progress
            if round_number % 2:
                assert committed_state(store) == expected
            assert log_bytes(store) == log_bytes(timed)
            shutil.rmtree(store)
    assert killed >= KILLS // 2, "most kills should land before the compaction finished"
    assert interrupted >= 1, "some kill should land after the compaction was marked begun"
