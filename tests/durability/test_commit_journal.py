"""The commit journal of a transaction across agents, crashed at each of its steps.

A child process opens a store of three agents as the writer and commits one
transaction that writes to four partitions (`a`, `b`, `c` and `d`, whose partition it
makes), in a given order of agents: the first it writes to is the decider. It dies
(`os._exit`, as a SIGKILL would leave it) right after a chosen step: the journal
written, the decider's commit, each later partition's commit, or the journal's removal. Then, whoever opens the store next (a writer, or a reader that can
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

#: The child: a transaction over four agents, `d` (new) the biggest, written to in the
#: order `argv[4]` (the first decides; "0bcd": `a` decides by deleting a key it does not
#: hold); `os._exit` right after step `argv[3]` (a count of partition commits, or
#: "journal").
CHILD = r'''
import os
import sys

from engine.model import SessionWindow
from engine.store import partitioned
from engine.store.registry import open_backend

store_path, backend, crash_after, order = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
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
    if order.startswith("0"):  # a decides with a write that changes nothing
        transaction.delete_session("agent:a:none")
    for agent in order.lstrip("0"):
        session_id = f"new-{agent}"
        transaction.put_window(SessionWindow(session_id, f"agent:{agent}:fresh"))
        for number in range(5 if agent == "d" else 2):
            transaction.append_event(session_id, message(f"{agent}{number}", f"late {agent}"))
    if "a" in order:
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


def run_child(store: Path, backend: str, crash_after: str, order: str = "dabc") -> None:
    """Run the child's transaction over `store`, its agents written to in `order`, and
    check that it died right after step `crash_after`."""
    child = subprocess.run([sys.executable, "-c", CHILD, str(store), backend, crash_after, order],
                           cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert child.returncode == 9, child.stderr


STEPS = [
    ("journal", BEFORE),  # the journal is written, nothing committed
    ("1", AFTER),         # the decider committed: the commit point is passed
    ("2", AFTER),         # the decider and the first other agent (in agent order)
    ("3", AFTER),         # the decider and two others
    ("4", AFTER),         # every partition; the journal is still there
    ("removal", AFTER),   # the journal removed, the process dies before it returns
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("crash_after", "expected"), STEPS)
@pytest.mark.parametrize("opener", ["writer", "reader"])
@pytest.mark.parametrize("order", [
    "dabc",  # d decides: the partition the transaction makes, with the most writes
    "abcd",  # a decides, with the fewest writes: d's new partition is finished from the journal
])
def test_a_crash_at_each_step_leaves_all_of_the_transaction_or_none(
        tmp_path: Path, backend: str, crash_after: str, expected: dict[str, int],
        opener: str, order: str) -> None:
    store = tmp_path / "store"
    make_store(store, backend)
    run_child(store, backend, crash_after, order)
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
    run_child(store, backend, "2")
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


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("order", ["dabc", "abcd", "cdab"])
def test_the_first_agent_written_to_decides_and_its_writes_stay_out_of_the_journal(
        tmp_path: Path, backend: str, order: str) -> None:
    from engine.store.commit_journal import read_journal

    store = tmp_path / "store"
    make_store(store, backend)
    run_child(store, backend, "journal", order)
    journal = read_journal(store)
    decider = order[0]
    assert journal.decider == decider
    assert sorted(journal.generations) == list("abcd")
    assert journal.created == ("d",)
    written = {agent: 1 + (5 if agent == "d" else 2) + (agent == "a") for agent in "abcd"}
    assert {agent: sum(operation.agent_id == agent for operation in journal.operations)
            for agent in "abcd" if agent != decider} == {
        agent: count for agent, count in written.items() if agent != decider}
    assert contents(store) == BEFORE


def test_only_the_writes_of_agents_other_than_the_first_are_recorded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from engine.store import commit_journal

    recorded: list[str] = []
    add = commit_journal.OperationSpill.add

    def recording(self: commit_journal.OperationSpill, agent_id: str, kind: str,
                  arguments: tuple) -> None:
        recorded.append(agent_id)
        add(self, agent_id, kind, arguments)

    monkeypatch.setattr(commit_journal.OperationSpill, "add", recording)
    store = tmp_path / "store"
    make_store(store, "reference")
    assert recorded == ["b"] * 4 + ["c"] * 4  # a was written first: its writes are not
    recorded.clear()
    with open_backend(store, writer=True) as writer:
        with writer.transaction() as transaction:  # one agent: nothing is recorded
            transaction.append_event("kept-b", message("b-1", "only b"))
        assert recorded == []
        with writer.transaction() as transaction:
            transaction.put_window(SessionWindow("t-c", "agent:c:t"))
            transaction.append_transcript("t-c", [message("c-1", "x"), message("c-2", "y")],
                                          [None, None])
            transaction.put_window(SessionWindow("t-a", "agent:a:t"))
            transaction.append_transcript("t-a", [message("a-1", "z"), message("a-2", "w")],
                                          [None, None])
            transaction.delete_session("agent:b:old")
        assert recorded == ["a", "a", "a", "b"]
    expected = {**BEFORE, "kept-b": 2, "t-c": 2, "t-a": 2}
    del expected["old-b"]
    assert contents(store) == expected


UNCHANGED_DECIDER = {**BEFORE, "new-b": 2, "new-c": 2, "new-d": 5}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("crash_after", ["journal", "1", "2", "3", "4", "removal"])
def test_a_decider_whose_share_changes_nothing_still_commits_all_or_nothing(
        tmp_path: Path, backend: str, crash_after: str) -> None:
    """The first write of the transaction deletes a key agent `a` does not hold, so `a`
    decides and its commit may change nothing: the journal then says `decided` before
    the others commit. A crash right after `a`'s commit keeps all or nothing; from the
    second partition's commit on, all."""
    store = tmp_path / "store"
    make_store(store, backend)
    run_child(store, backend, crash_after, "0bcd")
    with open_backend(store, writer=True):
        pass
    found = contents(store)
    if crash_after == "journal":
        assert found == BEFORE
    elif crash_after == "1":
        assert found in (BEFORE, UNCHANGED_DECIDER)
    else:
        assert found == UNCHANGED_DECIDER
    assert not (store / "commit.journal").exists()
