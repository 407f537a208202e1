"""Crash safety of a replaced transcript (issue 14, item 1): a child process replacing one
window's transcript over and over, small (rebuilt in the transaction) and large (left to
reconcile) in turn, is killed (SIGKILL) at random moments; the store is reopened and
checked. Both backends: the reference store (its log is the write-ahead log) and the
SQLite database (one `BEGIN IMMEDIATE ... COMMIT`).

After every kill the window holds exactly one generation's transcript, whole (the log is
the write-ahead log: a replacement is there with its commit or not at all), at least the
last one the child acknowledged; a small one is searchable at once, a large one hidden
with `indexing` true until reconcile; after reconcile only that generation's words are
found and the index equals a rebuild (`verify`, and on SQLite the FTS rows against the
window's active path). The seed is fixed, so a failure repeats.
"""

from __future__ import annotations

import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.backends.reference.backend import ReferenceBackend
from engine.backends.sqlite.backend import SqliteBackend
from engine.config import EngineConfig
from engine.diagnostics.verify import verify_partition
from engine.directory import FileDirectory
from engine.model import SearchRequest
from engine.transcript.projection import index_entries

#: A generation of more than 3 events is a large replacement.
SETTINGS = EngineConfig(sync_rebuild_max_events=3, index_flush_documents=3,
                        index_merge_segments=3, log_roll_bytes=4096)

CHILD = r"""
import sys
from engine.backends.reference.backend import ReferenceBackend
from engine.directory import FileDirectory
from engine.config import EngineConfig
from engine.model import SessionWindow

from engine.backends.sqlite.backend import SqliteBackend

path, start, kind = sys.argv[1], int(sys.argv[2]), sys.argv[3]
settings = EngineConfig(sync_rebuild_max_events=3, index_flush_documents=3,
                        index_merge_segments=3, log_roll_bytes=4096)
directory = FileDirectory(path)
if kind == "sqlite":
    if SqliteBackend.claims(path):
        backend = SqliteBackend.open(path, writer=True)
    else:
        backend = SqliteBackend.create(path)
    backend.config = settings
elif directory.exists("store.meta"):
    backend = ReferenceBackend.open_in(directory, writer=True, config=settings)
else:
    backend = ReferenceBackend.create_in(directory, config=settings)
if not start:
    with backend.transaction() as transaction:
        transaction.put_window(SessionWindow("w", "agent:main:main"))
generation = start
while True:
    count = 2 if generation % 2 else 5
    events = [{"type": "message", "id": f"g{generation}m{i}",
               "parentId": f"g{generation}m{i - 1}" if i else None, "timestamp": i,
               "message": {"role": "user", "content": f"gen{generation} words {i}"}}
              for i in range(count)]
    with backend.transaction() as transaction:
        transaction.replace_transcript("w", events, float(generation))
    print(generation, flush=True)
    generation += 1
"""


def events_per_generation(generation: int) -> int:
    return 2 if generation % 2 else 5


def open_writer(store: Path, kind: str):
    if kind == "sqlite":
        backend = SqliteBackend.open(store, writer=True)
        backend.config = SETTINGS
        return backend
    return ReferenceBackend.open_in(FileDirectory(store), writer=True, config=SETTINGS)


def check_rebuilt(backend, kind: str) -> None:
    """The index equals a rebuild from the transcripts (`verify`; on SQLite also the FTS
    rows read directly)."""
    assert verify_partition(backend).problems == []
    if kind == "reference":
        return
    connection = sqlite3.connect(backend.path)
    try:
        rows = sorted(connection.execute(
            "SELECT session_id, message_id FROM session_transcript_fts_rows"))
    finally:
        connection.close()
    assert rows == sorted((entry.session_id, entry.message_id)
                          for entry in index_entries(backend.events("w")))


@pytest.mark.parametrize("kind", ["reference", "sqlite"])
def test_a_killed_writer_leaves_one_whole_replacement(tmp_path: Path, kind: str) -> None:
    store = tmp_path / "store"
    generator = random.Random(14)
    start = 0
    acknowledged: list[int] = []
    for _round in range(3):
        child = subprocess.Popen([sys.executable, "-c", CHILD, str(store), str(start), kind],
                                 stdout=subprocess.PIPE, text=True)
        assert child.stdout is not None
        first = child.stdout.readline()
        time.sleep(generator.uniform(0.0, 0.6))
        child.send_signal(signal.SIGKILL)
        output, _ = child.communicate()
        acknowledged.extend(int(line) for line in (first + output).split())
        backend = open_writer(store, kind)
        try:
            events = backend.events("w")
            generations = {event.event["id"].split("m")[0] for event in events}
            assert len(generations) == 1  # one whole transcript, never a mix
            last = int(generations.pop()[1:])
            assert last >= max(acknowledged)
            assert [event.event["id"] for event in events] == [
                f"g{last}m{i}" for i in range(events_per_generation(last))]
            result = backend.search(SearchRequest(f"gen{last}", agent_id="main"))
            large = events_per_generation(last) > SETTINGS.sync_rebuild_max_events
            assert (len(result.hits), result.indexing) == ((0, True) if large else (2, False))
            backend.reconcile()
            result = backend.search(SearchRequest(f"gen{last}", agent_id="main"))
            assert (len(result.hits), result.indexing) == (events_per_generation(last), False)
            for other in (last - 1, last - 2):
                assert backend.search(SearchRequest(f"gen{other}", agent_id="main")).hits == ()
            check_rebuilt(backend, kind)
            start = last + 1
        finally:
            backend.close()
