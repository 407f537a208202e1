"""Issue 17 items 2 and 3 on the per-agent layout, through the command line.

* A second writer is refused the same way on both backends: while one process holds a
  store as its writer, `import`, `reconcile` and `compact` exit 1 with one line naming the store's
  `LOCK` (the partitioned store takes one root lock for its single writer, whatever the
  partitions are), and readers go on answering.
* A SQLite writer killed inside a large transaction leaves its agent database's `-wal`
  and `-shm` files behind: readers (`search`, `stats`, `serve`) still answer with what was
  committed and never call the store corrupt, and the next writer goes on where the
  last commit left off, without the killed transaction's rows.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "engine" / "demo_corpus"
DEMO_EVENTS = 73

HOLD_WRITER = """
import sys
from engine.store.registry import open_backend
backend = open_backend(sys.argv[1], writer=True)
print("held", flush=True)
sys.stdin.read()
backend.close()
"""

KILLED_IN_A_LARGE_TRANSACTION = """
import sys, time
from engine.store.registry import open_backend
from engine.model import SessionWindow
backend = open_backend(sys.argv[1], writer=True)
with backend.transaction() as transaction:
    transaction.put_window(SessionWindow("big", "agent:main:big"))
    parent = None
    for number in range(6000):
        transaction.append_event("big", {
            "type": "message", "id": f"x{number}", "parentId": parent,
            "timestamp": 1767225600000 + number,
            "message": {"role": "user", "content": f"uncommitted words {number} " * 20}})
        parent = f"x{number}"
        if number == 5000:
            print("inside", flush=True)
            time.sleep(120)
"""


def engine(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "engine", *argv], cwd=ROOT, text=True,
                          capture_output=True, timeout=120, check=False)


def imported(tmp_path: Path, backend: str) -> Path:
    store = tmp_path / "store"
    completed = engine("import", "--quiet", "--backend", backend, "--store", str(store), str(DEMO))
    assert completed.returncode == 0, completed.stderr
    return store


def flat_file(tmp_path: Path) -> Path:
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps({"sessionKey": "agent:main:later", "sessionId": "later",
                                "messageId": "l1", "role": "user", "timestamp": 1767225600000,
                                "text": "written after the crash"}) + "\n", encoding="utf-8")
    return path


def events(store: Path) -> int:
    completed = engine("stats", "--store", str(store), "--json")
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)["events"]


@pytest.mark.parametrize("backend", ["reference", "sqlite"])
def test_a_second_writer_is_refused_the_same_way_on_both_backends(
        tmp_path: Path, backend: str) -> None:
    store = imported(tmp_path, backend)
    holder = subprocess.Popen([sys.executable, "-c", HOLD_WRITER, str(store)], cwd=ROOT,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        expected = (f"session-search: error: {store / 'LOCK'}: the store is locked by another "
                    f"writer (pid {holder.pid})\n")
        for argv in (("import", "--store", str(store), str(flat_file(tmp_path))),
                     ("reconcile", "--store", str(store)), ("compact", "--store", str(store))):
            refused = engine(*argv)
            assert (refused.returncode, refused.stdout, refused.stderr) == (1, "", expected)
        searched = engine("search", "--store", str(store), "--json", "cafe")
        assert searched.returncode == 0 and json.loads(searched.stdout)["hits"]
    finally:
        holder.communicate("", timeout=60)
    assert events(store) == DEMO_EVENTS  # the refused import wrote nothing


def test_a_sqlite_writer_killed_in_a_large_transaction_leaves_readers_working(
        tmp_path: Path) -> None:
    store = imported(tmp_path, "sqlite")
    writer = subprocess.Popen([sys.executable, "-c", KILLED_IN_A_LARGE_TRANSACTION, str(store)],
                              cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout is not None and writer.stdout.readline() == "inside\n"
    finally:
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait(timeout=60)
    database = store / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
    leftovers = sorted(path.name for path in database.parent.iterdir())
    assert leftovers == [database.name, database.name + "-shm", database.name + "-wal"]
    for argv in (("search", "--store", str(store), "--json", "cafe"),
                 ("search", "--store", str(store), "--json", "uncommitted"),
                 ("stats", "--store", str(store), "--json")):
        completed = engine(*argv)
        assert completed.returncode == 0, completed.stderr
        assert "corrupt" not in completed.stderr and "Traceback" not in completed.stderr
    served = subprocess.run(
        [sys.executable, "-m", "engine", "serve", "--quiet", "--store", str(store)], cwd=ROOT,
        input=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "sessions.search",
                          "params": {"agentId": "main", "query": "cafe"}}) + "\n",
        text=True, capture_output=True, timeout=120, check=False)
    assert served.returncode == 0 and "corrupt" not in served.stderr, served.stderr
    assert json.loads(served.stdout.splitlines()[0])["result"]["hits"]
    uncommitted = engine("search", "--store", str(store), "--json", "uncommitted")
    assert json.loads(uncommitted.stdout)["hits"] == []
    assert events(store) == DEMO_EVENTS
    later = engine("import", "--store", str(store), str(flat_file(tmp_path)))
    assert later.returncode == 0, later.stderr
    assert events(store) == DEMO_EVENTS + 1
    found = engine("search", "--store", str(store), "--json", "crash")
    assert [hit["messageId"] for hit in json.loads(found.stdout)["hits"]] == ["l1"]
