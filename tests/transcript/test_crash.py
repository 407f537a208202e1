"""Crash safety of the reference backend: a child process appending messages is killed
(SIGKILL) at random moments, then the store is reopened and checked.

After every kill:
* every message the store holds is searchable (a search for its unique word returns it);
* no index row points at a message the store lacks (`index.check` with a row source);
* every commit the child acknowledged (printed after its transaction returned) is there;
* `verify` (rebuild from transcripts and compare) reports no difference.

The child flushes the index every 3 rows and merges every 3 segments, so kills also land
inside segment and manifest writes. The random seed is fixed, so a failure repeats.
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from engine.backends.reference.backend import ReferenceBackend
from engine.diagnostics.verify import verify_backend
from engine.directory import FileDirectory
from engine.errors import UnknownSession
from engine.index.check import check_index
from engine.model import SearchRequest
from engine.transcript.projection import extract_index_entry

CHILD = r"""
import sys
from engine.backends.reference.backend import ReferenceBackend
from engine.directory import FileDirectory
from engine.config import EngineConfig
from engine.model import SessionWindow

path, start = sys.argv[1], int(sys.argv[2])
settings = EngineConfig(index_flush_documents=3, index_merge_segments=3,
                        log_roll_bytes=4096)
directory = FileDirectory(path)
if directory.exists("store.meta"):
    backend = ReferenceBackend.open_in(directory, writer=True, config=settings)
else:
    backend = ReferenceBackend.create_in(directory, config=settings)
number = start
while True:
    window = f"w{number // 5}"
    with backend.transaction() as transaction:
        if number % 5 == 0:
            transaction.put_window(SessionWindow(window, f"agent:main:{window}"))
        parent = None if number % 5 == 0 else f"m{number - 1}"
        transaction.append_event(window, {
            "type": "message", "id": f"m{number}", "parentId": parent, "timestamp": number,
            "message": {"role": "user" if number % 2 else "assistant",
                        "content": f"unique{number} common words"},
        })
        if number % 17 == 16:
            transaction.delete_session(f"agent:main:w{number // 5 - 2}")
    print(number, flush=True)
    number += 1
"""


def stored_messages(backend: ReferenceBackend) -> dict[str, str]:
    """message id -> session id of every stored message event."""
    found = {}
    for window in backend.store.windows():
        for stored in backend.store.events(window.session_id):
            found[stored.event["id"]] = window.session_id
    return found


def row_source(backend: ReferenceBackend):
    def lookup(session_id: str, seq: int):
        try:
            stored = backend.store.event(session_id, seq)
        except UnknownSession:
            return False, None
        return True, extract_index_entry(stored)

    return lookup


def test_killed_writer_leaves_every_stored_message_searchable(tmp_path: Path):
    store = tmp_path / "store"
    generator = random.Random(4)
    start = 0
    acknowledged: list[int] = []
    for _round in range(4):
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(store), str(start)],
            stdout=subprocess.PIPE, text=True,
        )
        assert child.stdout is not None
        first = child.stdout.readline()  # kill a writer that is writing, however slow
        time.sleep(generator.uniform(0.0, 1.0))  # then at a random moment of its run
        child.send_signal(signal.SIGKILL)
        output, _ = child.communicate()
        acknowledged.extend(int(line) for line in (first + output).split())
        backend = ReferenceBackend.open_in(FileDirectory(store), writer=True)
        try:
            messages = stored_messages(backend)
            assert len(messages) >= 1
            # Transactions commit in number order, and no transaction deletes the window
            # of a later number, so the newest stored number is the last commit; every
            # commit up to it ran its delete (acknowledged or not: a kill may land after
            # the commit and before the acknowledgement).
            last_commit = max(int(message_id[1:]) for message_id in messages)
            assert last_commit >= max(acknowledged, default=-1)
            deleted_windows = {f"w{n // 5 - 2}" for n in range(last_commit + 1) if n % 17 == 16}
            expected = {f"m{n}" for n in range(last_commit + 1) if f"w{n // 5}" not in deleted_windows}
            assert set(messages) == expected  # every commit kept, nothing half-applied
            assert {f"m{n}" for n in acknowledged} - expected == {
                f"m{n}" for n in acknowledged if f"w{n // 5}" in deleted_windows
            }
            for message_id, session_id in messages.items():
                hits = backend.search(SearchRequest(f"unique{message_id[1:]}", agent_id="main"))
                assert [(hit.message_id, hit.session_id) for hit in hits.hits] == [(message_id, session_id)]
            assert check_index(backend.index, row_source(backend)) == []
            report = verify_backend(backend)
            assert report.problems == []
            start = last_commit + 1
        finally:
            backend.close()
