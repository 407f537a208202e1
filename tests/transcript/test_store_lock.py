"""One writer at a time: a second writer is refused, readers are not."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from engine.directory import FileDirectory, MemoryDirectory
from engine.errors import StoreLocked
from engine.model import SessionWindow
from engine.transcript.store import TranscriptStore

HOLD_LOCK = textwrap.dedent("""
    import sys
    from engine.transcript.store import TranscriptStore
    store = TranscriptStore.open_path(sys.argv[1], writer=True)
    print("locked", flush=True)
    sys.stdin.readline()
    store.close()
    print("released", flush=True)
""")

TRY_LOCK = textwrap.dedent("""
    import sys
    from engine.errors import StoreLocked
    from engine.transcript.store import TranscriptStore
    try:
        TranscriptStore.open_path(sys.argv[1], writer=True).close()
    except StoreLocked as error:
        print("refused:", error)
    else:
        print("opened")
""")


def test_second_writer_in_the_same_process_is_refused(tmp_path: Path) -> None:
    first = TranscriptStore.create(FileDirectory(tmp_path))
    with pytest.raises(StoreLocked, match=r"LOCK: the store is locked by another writer \(pid"):
        TranscriptStore.open(FileDirectory(tmp_path), writer=True)
    with pytest.raises(StoreLocked):
        TranscriptStore.create(FileDirectory(tmp_path))
    with TranscriptStore.open(FileDirectory(tmp_path)) as reader:
        assert reader.generation == 0
    first.close()
    TranscriptStore.open(FileDirectory(tmp_path), writer=True).close()


def test_second_writer_in_another_process_is_refused(tmp_path: Path) -> None:
    TranscriptStore.create(FileDirectory(tmp_path)).close()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(tmp_path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(StoreLocked) as refused:
            TranscriptStore.open(FileDirectory(tmp_path), writer=True)
        assert f"(pid {holder.pid})" in str(refused.value)
        with TranscriptStore.open(FileDirectory(tmp_path)) as reader:  # readers still work
            assert reader.windows() == []
    finally:
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert holder.stdout.readline().strip() == "released"
        holder.wait(timeout=30)
    TranscriptStore.open(FileDirectory(tmp_path), writer=True).close()


def test_a_writer_here_refuses_another_process(tmp_path: Path) -> None:
    with TranscriptStore.create(FileDirectory(tmp_path)) as store:
        with store.transaction() as transaction:
            transaction.put_window(SessionWindow("w", "global"))
        result = subprocess.run(
            [sys.executable, "-c", TRY_LOCK, str(tmp_path)],
            capture_output=True, text=True, timeout=60, check=True,
        )
        assert result.stdout.startswith(f"refused: {tmp_path / 'LOCK'}: the store is locked")
    result = subprocess.run(
        [sys.executable, "-c", TRY_LOCK, str(tmp_path)],
        capture_output=True, text=True, timeout=60, check=True,
    )
    assert result.stdout.strip() == "opened"


def test_second_writer_on_a_memory_directory_is_refused() -> None:
    directory = MemoryDirectory()
    first = TranscriptStore.create(directory)
    with pytest.raises(StoreLocked, match="memory:LOCK: the store is locked by another writer"):
        TranscriptStore.open(directory, writer=True)
    with TranscriptStore.open(directory) as reader:
        assert reader.generation == 0
    first.close()
    first.close()  # idempotent
    TranscriptStore.open(directory, writer=True).close()
