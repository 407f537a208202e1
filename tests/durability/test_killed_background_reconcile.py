"""A writer killed with SIGKILL while its store's background reconcile runs, on both
backends: nothing committed is lost, and the next open reconciles the rest.

Each round, the test's process adds rewound windows for the worker to rebuild (see
`tests/backends/background_stores.py`) and closes the store. A child process opens it as
the writer with one window a batch, searches (which starts the run), says so, and then
appends messages `omega<n>` to the window `clean`, one transaction each, writing `ack <n>`
after each commit. It is killed after a number of acknowledgements that grows from round
to round (0, 1, 2, 4, 8), so the kill lands before, in and after batches of the run.

After each kill: the store opens as the writer (without a background run); every
acknowledged message is in the window (a commit in flight may be too); no search finds
"beta" (a window the run had not rebuilt is still left out, one it rebuilt has lost the
row); after `reconcile`, every window's rows are a rebuild from its transcript and every
acknowledged message is found. The kill timing depends on the machine, never what is
checked.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from engine.store.registry import open_backend
from tests.backends.background_stores import (
    BACKENDS,
    QUIET,
    assert_index_equals_a_rebuild,
    make_store,
    search,
    write_clean,
    write_rewound,
)

ROOT = Path(__file__).resolve().parents[2]
ACKNOWLEDGEMENTS = (0, 1, 2, 4, 8)
WINDOWS_A_ROUND = 24

CHILD = r'''
import os
import sys

from engine.store.registry import open_backend
from engine.config import EngineConfig
from engine.model import SearchRequest
from tests.backends.background_stores import clean_message


def say(text):
    os.write(1, (text + "\n").encode())


store = open_backend(sys.argv[1], writer=True, config=EngineConfig(reconcile_batch_events=1))
result = store.search(SearchRequest(query="alpha", session_keys=()))
say(f"searched {int(result.indexing)} {int(store.reconciling)}")
number = store.event_count("clean")
while True:
    with store.transaction() as transaction:
        transaction.append_event("clean", clean_message(number, f"omega{number}"))
    say(f"ack {number}")
    number += 1
'''


def run_and_kill(store: Path, acknowledgements: int) -> list[int]:
    """Start the child on `store`, kill it after `acknowledgements` acks; the acked ones."""
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(store)], cwd=ROOT, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert child.stdout is not None
    try:
        searched = child.stdout.readline().split()
        assert searched == ["searched", "1", "1"], child.communicate(timeout=60)
        acknowledged: list[int] = []
        while len(acknowledged) < acknowledgements:
            line = child.stdout.readline().split()
            assert line and line[0] == "ack", child.communicate(timeout=60)
            acknowledged.append(int(line[1]))
        os.kill(child.pid, signal.SIGKILL)
        for line in child.stdout:  # acks written before the kill landed
            acknowledged.append(int(line.split()[1]))
    finally:
        if child.poll() is None:
            child.kill()
        child.communicate(timeout=60)
    assert child.returncode == -signal.SIGKILL
    return acknowledged


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_kill_during_a_background_rebuild_loses_nothing_committed(
        tmp_path: Path, backend: str) -> None:
    store = make_store(tmp_path, backend, QUIET)
    write_clean(store, "clean", ["omega0"])
    store.close()
    acknowledged_all = [0]
    for round_number, acknowledgements in enumerate(ACKNOWLEDGEMENTS):
        store = open_backend(tmp_path / backend, writer=True, config=QUIET)
        rewound = write_rewound(store, ("main", "ops"), WINDOWS_A_ROUND,
                                start=round_number * WINDOWS_A_ROUND)
        store.close()
        acknowledged_all += run_and_kill(tmp_path / backend, acknowledgements)
        store = open_backend(tmp_path / backend, writer=True, config=QUIET)
        try:
            count = store.event_count("clean")
            assert count >= max(acknowledged_all) + 1  # every acknowledged commit is there
            assert search(store, "beta")[0] == set()
            store.reconcile()
            assert_index_equals_a_rebuild(store)
            for session_id in rewound:  # "alpha origin <n>" in window r<n>
                assert search(store, f"origin {int(session_id[1:])}") == ({session_id}, False)
            for number in acknowledged_all:
                assert search(store, f"omega{number}") == ({"clean"}, False)
            acknowledged_all = list(range(count))
        finally:
            store.close()
