"""A reader's refresh that reads nothing when nothing changed, and still misses no write.

`Directory.stamp` vouches that a file did not change (on disk: inode, size and times,
once its modification time is settled; in memory: a number per content), and a reference
reader's refresh (`TranscriptStore.refresh`, `IndexedStore.refresh`,
`PartitionedSnapshotStore.refresh`, what `serve` runs before each search) compares the
stamps of the files that could tell of a write before reading any. These tests hold the
refreshed reader to a freshly opened one (the clear version) after each kind of write: a
commit, a new agent, a reconcile that only rewrites the index manifest, a merge, a
compaction; both with the written files' times fresh (stamps vouch for nothing) and
aged past the settled time (the stamps decide), and check that a refresh after no write
reads no file at all.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from engine.backends.reference.backend import ReferenceBackend
from engine.directory import STAMP_SETTLED_NANOSECONDS, FileDirectory, MemoryDirectory
from engine.index.loading import manifest_bytes
from engine.model import SearchRequest
from engine.rpc.search_method import sessions_search
from engine.store.partitioned import PartitionedSnapshotStore, PartitionedStore
from engine.store.registry import open_backend
from tests.backends.test_partitioned import put
from tests.tools.stores import dirty

QUERIES = ("saffron", "ledger", "quartz", "saffron ledger")


def age(root: Path) -> None:
    """Set every file's times back past the settled time, as if the writes were old."""
    moment = time.time_ns() - 5 * STAMP_SETTLED_NANOSECONDS
    for folder, _folders, files in os.walk(root):
        for name in files:
            os.utime(Path(folder) / name, ns=(moment, moment))


def answers(store: PartitionedStore) -> dict[str, Any]:
    """What a reader shows: every query's hits and `indexing`, the windows, the events."""
    found = {}
    for query in QUERIES:
        result = store.search(SearchRequest(query, session_keys=()))
        found[query] = ([(hit.session_id, hit.message_id, hit.score) for hit in result.hits],
                        result.indexing)
    windows = [window.session_id for window in store.windows()]
    return {"search": found, "windows": windows,
            "events": {session_id: store.events(session_id) for session_id in windows}}


def check_reader(reader: PartitionedSnapshotStore, root: Path, after: str = "") -> None:
    """`reader`, refreshed, answers as a reader opened now, and every partition's index
    is the one the committed manifest names (`after`: the write, for the message)."""
    reader.refresh()
    with open_backend(root) as fresh:
        assert answers(reader) == answers(fresh), after
        assert list(reader.partitions()) == list(fresh.partitions()), after
    for partition in reader.partitions().values():
        assert isinstance(partition, ReferenceBackend)
        assert partition._loaded_manifest == manifest_bytes(partition.store.directory), after


def merge_main(writer: PartitionedStore) -> None:
    partition = writer.partition("main")
    assert isinstance(partition, ReferenceBackend)
    partition.merge()  # a new manifest, and no commit in the log


def reconcile(writer: PartitionedStore) -> None:
    dirty(writer, "m1")  # a commit: the window needs a rebuild
    writer.reconcile()  # the rebuilt rows reach the reader by the manifest alone


def delete(writer: PartitionedStore) -> None:
    with writer.transaction() as transaction:
        transaction.delete_session("agent:main:beta")


WRITES: dict[str, Callable[[PartitionedStore], None]] = {
    "commit": lambda writer: put(writer, "m3", "agent:main:gamma", "saffron quartz"),
    "commit to the same window": lambda writer: put(writer, "m1", "agent:main:alpha",
                                                    "saffron", "ledger", "quartz ledger"),
    "new agent": lambda writer: put(writer, "w1", "agent:work:main", "saffron ledger work"),
    "reconcile": reconcile,
    "merge": merge_main,
    "delete": delete,
    "compaction": lambda writer: writer.compact(),  # rewrites the log, commits nothing
}


@pytest.fixture
def store_root(tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "store"
    with open_backend(root, backend="reference", create=True) as writer:
        put(writer, "m1", "agent:main:alpha", "saffron ledger", "quartz")
        put(writer, "m2", "agent:main:beta", "ledger of saffron")
        put(writer, "o1", "agent:ops:main", "quartz saffron")
    yield root


def counting_reads(reader: PartitionedSnapshotStore) -> list[str]:
    """Record every read, listing and existence check of the reader's partitions'
    directories from now on (stamps are not counted)."""
    calls: list[str] = []
    for partition in reader.partitions().values():
        assert isinstance(partition, ReferenceBackend)
        directory = partition.store.directory
        for name in ("read_bytes", "list_names", "exists", "size", "open_read"):
            method = getattr(directory, name)

            def counted(*arguments: Any, _method: Any = method, _name: str = name) -> Any:
                calls.append(_name)
                return _method(*arguments)

            setattr(directory, name, counted)
    return calls


@pytest.mark.parametrize("aged", [False, True], ids=["fresh times", "aged times"])
def test_a_refreshed_reader_sees_every_kind_of_write(store_root: Path, aged: bool) -> None:
    reader = open_backend(store_root)
    assert isinstance(reader, PartitionedSnapshotStore)
    try:
        with open_backend(store_root, writer=True) as writer:
            if aged:
                age(store_root)
            check_reader(reader, store_root)
            for name, write in WRITES.items():
                write(writer)
                if aged:
                    age(store_root)
                check_reader(reader, store_root, name)
                check_reader(reader, store_root, name)  # a second look changes nothing
    finally:
        reader.close()


def test_a_refresh_after_no_write_reads_no_file(store_root: Path) -> None:
    age(store_root)
    with open_backend(store_root) as reader:
        assert isinstance(reader, PartitionedSnapshotStore)
        before = answers(reader)
        reader.refresh()
        calls = counting_reads(reader)
        for _ in range(3):
            reader.refresh()
        assert calls == []
        assert answers(reader) == before
        with open_backend(store_root, writer=True) as writer:
            put(writer, "m3", "agent:main:gamma", "saffron quartz")
        reader.refresh()
        assert calls != []  # the commit was read
        assert "m3" in answers(reader)["windows"]


def test_a_served_search_sees_the_writers_commit_after_a_quiet_spell(store_root: Path) -> None:
    """Through `sessions.search` (refresh, then search), as `serve` answers."""
    age(store_root)
    with open_backend(store_root) as reader:
        context: Any = type("Context", (), {"backend": reader})()
        params = {"query": "quartz", "limit": 25, "sessionKeys": []}
        first = sessions_search(context, params)
        assert sessions_search(context, params) == first
        with open_backend(store_root, writer=True) as writer:
            put(writer, "w1", "agent:work:main", "quartz at work")
        age(store_root)
        later = sessions_search(context, params)
        assert {hit["sessionId"] for hit in later["hits"]} == (
            {hit["sessionId"] for hit in first["hits"]} | {"w1"})


def test_a_file_stamp_moves_with_each_change_once_settled(tmp_path: Path) -> None:
    directory = FileDirectory(tmp_path)
    assert directory.stamp("log/file") is None
    with closing(directory.open_append("log/file")) as handle:
        handle.write(b"one")
        handle.flush()
        fresh = directory.stamp("log/file")
        assert fresh != directory.stamp("log/file")  # too recent to vouch for
        age(tmp_path)
        settled = directory.stamp("log/file")
        assert settled == directory.stamp("log/file") and settled is not None
        handle.write(b"two")
        handle.flush()
        age(tmp_path)
        appended = directory.stamp("log/file")
        assert appended not in (settled, None)
    directory.write_atomic("log/file", b"onetwo")  # same size, another file
    age(tmp_path)
    assert directory.stamp("log/file") not in (appended, None)
    directory.remove("log/file")
    assert directory.stamp("log/file") is None


def test_a_memory_stamp_moves_with_each_change() -> None:
    directory = MemoryDirectory()
    assert directory.stamp("file") is None
    handle = directory.open_append("file")
    handle.write(b"one")
    written = directory.stamp("file")
    assert written == directory.stamp("file")
    handle.truncate(0)
    handle.write(b"one")  # the same bytes again: another content all the same
    again = directory.stamp("file")
    assert again != written
    handle.sync()
    assert directory.stamp("file") == again  # durability changes no byte
    directory.write_atomic("file", b"one")
    assert directory.stamp("file") not in (again, None)
    directory.remove("file")
    assert directory.stamp("file") is None
