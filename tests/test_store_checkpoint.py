"""The catalog checkpoint: used when it matches the segments, ignored when it does not."""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path

import pytest

from engine.codec.catalog_file import decode_catalog_file, encode_catalog_file
from engine.config import EngineConfig
from engine.directory import Directory, FileDirectory, MemoryDirectory
from engine.errors import CorruptFile
from engine.model import SessionWindow
from engine.transcript.store import CHECKPOINT_NAME, TranscriptStore

TINY = EngineConfig(segment_roll_bytes=700)
NO_CHECKPOINTS = EngineConfig(segment_roll_bytes=700, catalog_checkpoints=False)


@pytest.fixture(params=["file", "memory"])
def directory(request: pytest.FixtureRequest, tmp_path: Path) -> Directory:
    if request.param == "file":
        return FileDirectory(tmp_path / "store")
    return MemoryDirectory()


def observe(store: TranscriptStore) -> tuple[object, ...]:
    return (
        store.generation,
        [(w.session_id, w.session_key, w.title) for w in store.windows()],
        {k: [w.session_id for w in store.windows_of(k)] for k in store.session_keys()},
        {w.session_id: [(e.seq, e.event, e.created_at) for e in store.events(w.session_id)]
         for w in store.windows()},
        {k: v for k, v in store.stats().items() if k != "bytes"},
        list(store.changes_since(0)),
    )


def grow(store: TranscriptStore, rounds: int, start: int = 0) -> None:
    counter = itertools.count(start)
    for round_number in range(rounds):
        with store.transaction() as transaction:
            number = next(counter)
            transaction.put_window(SessionWindow(f"w{number}", f"agent:a{number % 3}:main",
                                                 title=f"t{round_number}"))
            transaction.append_event(f"w{number}", {"id": f"e{number}", "pad": "x" * 40}, 1.0)
            if number % 4 == 3:
                transaction.delete_session(f"agent:a{number % 3}:main")


def test_reopen_from_the_checkpoint_equals_a_full_replay(directory: Directory) -> None:
    store = TranscriptStore.create(directory, config=TINY)
    grow(store, 12)
    with store.transaction() as transaction:  # after the last seal
        transaction.append_event("w10", {"id": "tail"})
    expected = observe(store)
    sealed = decode_catalog_file(directory.read_bytes(CHECKPOINT_NAME), "c")
    assert sealed.sealed and 0 < sealed.transaction_id < 13
    with TranscriptStore.open(directory, config=TINY) as reader:  # the writer is still open
        assert reader.checkpoint_generation == sealed.transaction_id
        assert reader.checkpoint_ignored is None
        assert observe(reader) == expected
        store.close()  # a clean close saves the unsealed tail as well
        closed = decode_catalog_file(directory.read_bytes(CHECKPOINT_NAME), "c")
        assert (closed.sealed, closed.transaction_id) == (False, 13)
        with TranscriptStore.open(directory, writer=True, config=TINY) as writer:
            assert writer.checkpoint_generation == 13
            assert observe(writer) == expected
            grow(writer, 5, start=100)
            after = observe(writer)
        reader.refresh()
        assert observe(reader) == after
    with TranscriptStore.open(directory, config=NO_CHECKPOINTS) as replayed:
        assert replayed.checkpoint_generation is None
        assert observe(replayed) == after
    with TranscriptStore.open(directory, config=TINY) as reopened:
        assert reopened.checkpoint_generation == 18
        assert observe(reopened) == after


def test_a_crash_after_a_close_checkpoint_keeps_later_commits() -> None:
    directory = MemoryDirectory()
    with TranscriptStore.create(directory) as store:  # default size: nothing seals
        grow(store, 3)
    with TranscriptStore.open(directory, writer=True) as writer:
        assert writer.checkpoint_generation == 3
        grow(writer, 2, start=10)
        expected = observe(writer)
        crashed = directory.crash_copy()  # no clean close: the checkpoint still says 3
    with TranscriptStore.open(crashed, writer=True) as reopened:
        assert reopened.checkpoint_generation == 3
        assert observe(reopened) == expected


def test_a_damaged_checkpoint_is_ignored(directory: Directory) -> None:
    with TranscriptStore.create(directory, config=TINY) as store:
        grow(store, 8)
        expected = observe(store)
    data = bytearray(directory.read_bytes(CHECKPOINT_NAME))
    data[40] ^= 0x10
    directory.write_atomic(CHECKPOINT_NAME, bytes(data))
    with TranscriptStore.open(directory, writer=True, config=TINY) as reopened:
        assert reopened.checkpoint_generation is None
        assert "catalog.ckpt: corrupt at byte offset" in reopened.checkpoint_ignored
        assert observe(reopened) == expected


def test_a_stale_checkpoint_still_gives_the_latest_state(directory: Directory) -> None:
    with TranscriptStore.create(directory, config=TINY) as store:
        grow(store, 4)
        stale = directory.read_bytes(CHECKPOINT_NAME)
        grow(store, 8, start=10)
        expected = observe(store)
    directory.write_atomic(CHECKPOINT_NAME, stale)
    with TranscriptStore.open(directory, config=TINY) as reopened:
        assert reopened.checkpoint_generation == decode_catalog_file(stale, "c").transaction_id
        assert observe(reopened) == expected


@pytest.mark.parametrize(("config", "change", "problem"), [
    (EngineConfig(), {"record_count": 1}, "record count does not match the checkpoint"),
    (EngineConfig(), {"records_crc": 1}, "records do not match the expected CRC"),
    (EngineConfig(), {"offset": 10**6}, "shorter than the checkpoint says"),
    (EngineConfig(), {"sealed": True}, "not sealed"),
    (EngineConfig(segment_roll_bytes=1), {"record_count": 1},
     "footer does not match the checkpoint"),
    (EngineConfig(segment_roll_bytes=1), {"sealed": False, "offset": -24},
     "record count does not match the checkpoint"),
])
def test_a_checkpoint_that_disagrees_with_its_segment_is_ignored(
    directory: Directory, config: EngineConfig, change: dict[str, object], problem: str,
) -> None:
    with TranscriptStore.create(directory, config=config) as store:
        grow(store, 6)
        expected = observe(store)
    checkpoint = decode_catalog_file(directory.read_bytes(CHECKPOINT_NAME), "c")
    assert checkpoint.sealed == (config.segment_roll_bytes == 1)
    shifted = {name: value + getattr(checkpoint, name) if isinstance(value, int)
               and not isinstance(value, bool) else value for name, value in change.items()}
    forged = dataclasses.replace(checkpoint, **shifted)
    directory.write_atomic(CHECKPOINT_NAME, encode_catalog_file(forged))
    segment = directory.location(f"transcripts/segment-{checkpoint.segment:06d}.log")
    with TranscriptStore.open(directory, config=config) as reopened:
        assert reopened.checkpoint_ignored == f"{segment}: {problem}"
        assert observe(reopened) == expected


def test_damage_under_a_checkpoint_is_still_found_at_open(directory: Directory) -> None:
    with TranscriptStore.create(directory, config=TINY) as store:
        grow(store, 6)
    name = "transcripts/segment-000001.log"
    data = bytearray(directory.read_bytes(name))
    data[30] ^= 0x01
    directory.write_atomic(name, bytes(data))
    with pytest.raises(CorruptFile) as refused:
        TranscriptStore.open(directory, config=TINY)
    assert refused.value.path == directory.location(name)
    assert refused.value.offset == 16
