"""The commit journal of a transaction across agents, crashed at each of its steps.

A child process opens a store of three agents as the writer and commits one
transaction that writes to four partitions (`a`, `b`, `c` and `d`, whose partition it
makes); it dies (`os._exit`, as a SIGKILL would leave it) right after a chosen step:
the journal written, the decider's commit, each later partition's commit, or the
journal's removal. Then, whoever opens the store next (a writer, or a reader that can
take the writer's lock) finds all of the transaction or none of it, by the step:
none before the decider committed, all from then on. A damaged journal is never
guessed at: opening for writing refuses, naming the file.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from engine.errors import CorruptFile
from engine.model import SessionWindow
from engine.store.registry import open_backend

ROOT = Path(__file__).resolve().parents[2]
BACKENDS = ("reference", "sqlite", "postgres")

#: The child: a transaction over four agents, `d` (new) the biggest, so it decides;
#: `os._exit` right after step `argv[3]` (a count of partition commits, or "journal").
CHILD = r'''
import os
import sys

from engine.model import SessionWindow
from engine.store import partitioned
from engine.store.registry import open_backend

store_path, backend, crash_after = sys.argv[1], sys.argv[2], sys.argv[3]
commits = 0

if crash_after == "journal":
    written = partitioned.PartitionedStore.write_journal
    def write_then_die(self, journal):
        written(self, journal)
        os._exit(9)
    partitioned.PartitionedStore.write_journal = write_then_die
if crash_after == "removal":
    removed = partitioned.PartitionedStore.remove_journal
    def remove_then_die(self):
        removed(self)
        os._exit(9)
    partitioned.PartitionedStore.remove_journal = remove_then_die

store = open_backend(store_path, backend=backend, writer=True)


def message(ident, text):
    return {"type": "message", "id": ident, "timestamp": 5,
            "message": {"role": "user", "content": text}}


original_for_writing = partitioned.PartitionedStore.partition_for_writing
def counting_partition(self, agent_id, created):
    partition = original_for_writing(self, agent_id, created)
    if getattr(partition, "_counted", False) or not crash_after.isdigit():
        return partition
    opened = partition.transaction
    def transaction():
        context = opened()
        class Counted:
            def __enter__(self):
                return context.__enter__()
            def __exit__(self, *exception):
                global commits
                result = context.__exit__(*exception)
                if exception[0] is None:
                    commits += 1
                    if commits == int(crash_after):
                        os._exit(9)
                return result
        return Counted()
    partition.transaction = transaction
    partition._counted = True
    return partition
partitioned.PartitionedStore.partition_for_writing = counting_partition

with store.transaction() as transaction:
    for agent in ("a", "b", "c", "d"):
        session_id = f"new-{agent}"
        transaction.put_window(SessionWindow(session_id, f"agent:{agent}:fresh"))
        for number in range(5 if agent == "d" else 2):
            transaction.append_event(session_id, message(f"{agent}{number}", f"late {agent}"))
    transaction.delete_session("agent:a:old")
store.close()
print("finished")
'''


def message(ident: str, text: str) -> dict:
    return {"type": "message", "id": ident, "timestamp": 5,
            "message": {"role": "user", "content": text}}


def make_store(path: Path, backend: str) -> None:
    with open_backend(path, backend=backend, create=True) as store, \
            store.transaction() as transaction:
        for agent in ("a", "b", "c"):
            for name in ("old", "kept"):
                session_id = f"{name}-{agent}"
                transaction.put_window(SessionWindow(session_id, f"agent:{agent}:{name}"))
                transaction.append_event(session_id, message(f"{agent}-{name}", "early"))


def contents(path: Path) -> dict[str, int]:
    with open_backend(path) as store:
        return {window.session_id: store.event_count(window.session_id)
                for window in store.windows()}


BEFORE = {f"{name}-{agent}": 1 for agent in "abc" for name in ("old", "kept")}
AFTER = {**{key: value for key, value in BEFORE.items() if key != "old-a"},
         "new-a": 2, "new-b": 2, "new-c": 2, "new-d": 5}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("crash_after", "expected"), [
    ("journal", BEFORE),  # the journal is written, nothing committed
    ("1", AFTER),         # the decider (d) committed: the commit point is passed
    ("2", AFTER),         # d and a
    ("3", AFTER),         # d, a and b
    ("4", AFTER),         # every partition; the journal is still there
    ("removal", AFTER),   # the journal removed, the process dies before it returns
])
@pytest.mark.parametrize("opener", ["writer", "reader"])
def test_a_crash_at_each_step_leaves_all_of_the_transaction_or_none(
        tmp_path: Path, backend: str, crash_after: str, expected: dict[str, int],
        opener: str) -> None:
    store = tmp_path / "store"
    make_store(store, backend)
    child = subprocess.run([sys.executable, "-c", CHILD, str(store), backend, crash_after],
                           cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert child.returncode == 9, child.stderr
    journal_left = (store / "commit.journal").exists()
    assert journal_left == (crash_after not in ("removal",)), crash_after
    if opener == "writer":
        with open_backend(store, writer=True) as writer:
            assert (writer.finished_commit is not None) == journal_left
    assert contents(store) == expected
    assert not (store / "commit.journal").exists()
    if expected == BEFORE:
        assert sorted(path.name for path in (store / "agents").iterdir()) == ["a", "b", "c"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_damaged_journal_refuses_writes_naming_it_until_repair_sets_it_aside(
        tmp_path: Path, backend: str, capsys: pytest.CaptureFixture) -> None:
    from engine.cli import main

    store = tmp_path / "store"
    make_store(store, backend)
    child = subprocess.run([sys.executable, "-c", CHILD, str(store), backend, "2"],
                           cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert child.returncode == 9, child.stderr
    journal = store / "commit.journal"
    data = bytearray(journal.read_bytes())
    data[len(data) // 2] ^= 0xFF
    journal.write_bytes(bytes(data))
    with open_backend(store, writer=True) as writer:
        with pytest.raises(CorruptFile, match=str(journal)), writer.transaction():
            pass
        assert writer.window("new-a")  # reads go on: a and d committed, b and c not yet
    with open_backend(store) as reader:
        assert [problem.location for problem in reader.problems()] == [str(journal)]
    assert main(["verify", "--store", str(store), "--json"]) == 1
    assert str(journal) in capsys.readouterr().out
    assert main(["verify", "--store", str(store), "--repair"]) == 0
    assert "set the damaged commit journal aside" in capsys.readouterr().out
    assert not journal.exists()
    assert [path.name.startswith("commit.journal.damaged-") for path in store.iterdir()
            if path.name.startswith("commit.")] == [True]
    assert main(["verify", "--store", str(store)]) == 0
    with open_backend(store, writer=True) as writer, writer.transaction() as transaction:
        transaction.append_event("new-a", message("a-after", "after the repair"))
