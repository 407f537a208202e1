"""A served reader that skips the look of a refresh while no file of its store changed
(`engine.store.change_watch.ChangeGate`), and still misses no write.

The clear version is the look itself (`PartitionedSnapshotStore.watch_changes = False`,
or a reader freshly opened): after each kind of write, made in this process or another,
a watched reader answers as a freshly opened one; a refresh after no write runs no
partition's refresh; a look that failed is made again; a closed store stops watching.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from engine.model import SearchRequest
from engine.rpc.search_method import sessions_search
from engine.store.change_watch import LOCAL_KINDS, ChangeGate, _file_system_kind
from engine.store.partitioned import PartitionedSnapshotStore
from engine.store.registry import open_backend
from tests.backends import test_refresh_stamps
from tests.backends.test_refresh_stamps import WRITES, age, answers, check_reader

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the gate watches with Linux inotify")


#: A store of two agents (main, ops), written and closed.
store_root = test_refresh_stamps.store_root


@pytest.fixture(autouse=True)
def _watched_file_system(tmp_path: Path) -> None:
    if _file_system_kind(tmp_path) not in LOCAL_KINDS:
        pytest.skip("the temporary folder is on a file system the gate does not watch")


def watched_reader(root: Path) -> PartitionedSnapshotStore:
    """A reader whose gate watches and trusts its queue (two refreshes, as `serve`'s
    first two searches)."""
    reader = open_backend(root)
    assert isinstance(reader, PartitionedSnapshotStore)
    reader.partitions()  # every partition opened, as after a search across agents
    reader.refresh()
    reader.refresh()
    assert reader._changes is not None and reader._changes.watching
    assert reader._changes.unchanged()
    return reader


def counting_looks(reader: PartitionedSnapshotStore) -> list[str]:
    """Record every partition refresh of `reader` from now on."""
    looks: list[str] = []
    for agent_id, partition in reader.partitions().items():
        refresh = partition.refresh

        def counted(_refresh: Any = refresh, _agent: str = agent_id) -> None:
            looks.append(_agent)
            _refresh()

        partition.refresh = counted  # type: ignore[method-assign]
    return looks


@pytest.mark.parametrize("aged", [False, True], ids=["fresh times", "aged times"])
def test_a_watched_reader_sees_every_kind_of_write(store_root: Path, aged: bool) -> None:
    reader = watched_reader(store_root)
    try:
        with open_backend(store_root, writer=True) as writer:
            for name, write in WRITES.items():
                write(writer)
                if aged:  # the stamps' rule for old files (aging queues events itself)
                    age(store_root)
                for _look in range(2):  # the second changes nothing
                    check_reader(reader, store_root, name)
                    assert reader._changes is not None and reader._changes.watching, name
    finally:
        reader.close()


def test_a_refresh_after_no_write_looks_at_no_partition(store_root: Path) -> None:
    reader = watched_reader(store_root)
    try:
        before = answers(reader)
        looks = counting_looks(reader)
        for _ in range(3):
            reader.refresh()
        assert looks == []
        assert answers(reader) == before
        (store_root / "agents" / "ops" / "store.meta").touch()  # a change, not a commit
        reader.refresh()
        assert sorted(looks) == ["main", "ops"]
        reader.refresh()
        assert sorted(looks) == ["main", "ops"]  # looked once
    finally:
        reader.close()


def test_a_commit_by_another_process_is_seen_at_the_next_search(store_root: Path) -> None:
    reader = watched_reader(store_root)
    try:
        context: Any = type("Context", (), {"backend": reader})()
        params = {"query": "quartz", "limit": 25, "sessionKeys": []}
        first = sessions_search(context, params)
        assert sessions_search(context, params) == first
        script = textwrap.dedent(f"""
            from engine.store.registry import open_backend
            from tests.backends.test_partitioned import put
            with open_backend({str(store_root)!r}, writer=True) as writer:
                put(writer, "m9", "agent:main:delta", "quartz from elsewhere")
        """)
        subprocess.run([sys.executable, "-c", script], check=True,
                       cwd=Path(__file__).resolve().parents[2])
        later = sessions_search(context, params)
        assert {hit["sessionId"] for hit in later["hits"]} == (
            {hit["sessionId"] for hit in first["hits"]} | {"m9"})
    finally:
        reader.close()


def test_a_look_that_failed_is_made_again(store_root: Path) -> None:
    reader = watched_reader(store_root)
    try:
        (store_root / "agents" / "main" / "store.meta").touch()
        partition = reader.partitions()["main"]
        refresh = partition.refresh

        def failing() -> None:
            partition.refresh = refresh  # type: ignore[method-assign]
            raise OSError("the look failed")

        partition.refresh = failing  # type: ignore[method-assign]
        with pytest.raises(OSError):
            reader.refresh()
        looks = counting_looks(reader)
        reader.refresh()  # no change since, but the last look did not end
        assert sorted(looks) == ["main", "ops"]
        reader.refresh()
        assert sorted(looks) == ["main", "ops"]
    finally:
        reader.close()


def test_a_closed_store_stops_watching(store_root: Path) -> None:
    reader = watched_reader(store_root)
    gate = reader._changes
    reader.close()
    assert gate is not None and not gate.watching and not gate.unchanged()


def test_the_gate_can_be_turned_off_and_a_writer_never_skips(store_root: Path) -> None:
    reader = open_backend(store_root)
    assert isinstance(reader, PartitionedSnapshotStore)
    reader.watch_changes = False
    with reader, open_backend(store_root, writer=True) as writer:
        assert isinstance(writer, PartitionedSnapshotStore)
        for store in (reader, writer):
            for _ in range(3):
                store.refresh()
            assert store._changes is not None and not store._changes.watching


def test_a_gate_over_no_folder_or_another_file_system_never_skips(tmp_path: Path) -> None:
    assert _file_system_kind(Path("/proc/self")) == "proc"
    for gate in (ChangeGate(None), ChangeGate(Path("/proc/self"))):
        assert [gate.unchanged() for _ in range(4)] == [False] * 4
        assert not gate.watching


def test_a_folder_reached_through_a_link_is_not_trusted(store_root: Path,
                                                        tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (store_root / "linked").symlink_to(tmp_path / "elsewhere")
    gate = ChangeGate(store_root)
    assert [gate.unchanged() for _ in range(4)] == [False] * 4
    assert not gate.watching


def test_a_link_to_a_file_is_not_trusted_either(store_root: Path, tmp_path: Path) -> None:
    (tmp_path / "elsewhere.meta").write_bytes(b"")
    (store_root / "agents" / "main" / "linked.meta").symlink_to(tmp_path / "elsewhere.meta")
    gate = ChangeGate(store_root)
    assert [gate.unchanged() for _ in range(4)] == [False] * 4
    assert not gate.watching


def test_a_folder_that_vanishes_during_the_walk_is_skipped(store_root: Path,
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           ) -> None:
    """A partition folder removed between its listing and its watch: the gate keeps
    watching (its parent's watch queued the removal), and the next refresh looks."""
    from engine.store import change_watch

    going = store_root / "agents" / "going"
    going.mkdir()
    real_stat, removed = change_watch.os.stat, []

    def stat_after_removal(path: Any, *arguments: Any, **options: Any) -> Any:
        if not removed and os.fsdecode(path) == str(going):
            removed.append(going)
            going.rmdir()
        return real_stat(path, *arguments, **options)

    gate = ChangeGate(store_root)
    assert not gate.unchanged()  # the first refresh looks, unwatched
    monkeypatch.setattr(change_watch.os, "stat", stat_after_removal)
    assert not gate.unchanged()  # starts watching; the walk meets the removed folder
    monkeypatch.undo()
    assert removed and gate.watching and not going.exists()
    gate.looked()
    assert not gate.unchanged()  # the removal was queued: look again
    gate.looked()
    assert gate.unchanged()
    gate.close()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_does_not_take_the_parents_changes(store_root: Path) -> None:
    """After a fork both processes hold the same queue: a child's refresh must not read
    the change events its parent's next refresh needs."""
    reader = watched_reader(store_root)
    try:
        go_read, go_write = os.pipe()
        child = os.fork()
        if child == 0:  # the child: wait for the commit, refresh, report whether it watches
            status = 1
            try:
                os.read(go_read, 1)
                reader.refresh()
                status = 0
            finally:
                os._exit(status)
        script = textwrap.dedent(f"""
            from engine.store.registry import open_backend
            from tests.backends.test_partitioned import put
            with open_backend({str(store_root)!r}, writer=True) as writer:
                put(writer, "m9", "agent:main:delta", "quartz from elsewhere")
        """)
        subprocess.run([sys.executable, "-c", script], check=True,
                       cwd=Path(__file__).resolve().parents[2])
        os.write(go_write, b"x")
        _pid, status = os.waitpid(child, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        check_reader(reader, store_root, "a commit while a forked child refreshed")
        found = reader.search(SearchRequest("quartz", session_keys=()))
        assert "m9" in {hit.session_id for hit in found.hits}
    finally:
        reader.close()
