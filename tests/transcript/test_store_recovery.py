"""Crash recovery and corruption: torn tails are cut, damaged committed data is refused.

Every test body runs on `FileDirectory` and on `MemoryDirectory`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.codec.framing import HEADER_SIZE, Footer, Frame, encode_header, iter_frames
from engine.codec.log_file import EventRecord, decode_log_payload
from engine.config import EngineConfig
from engine.directory import Directory, FileDirectory, MemoryDirectory
from engine.errors import CorruptFile, StoreError
from engine.model import SessionWindow
from engine.transcript.checkpoint import CHECKPOINT_NAME
from engine.transcript.log_files import LOG_MAGIC, log_file_name
from engine.transcript.store import TranscriptStore
from tests.durability.faulty_directory import EIO, Fault, FaultyDirectory

LOG_FILE = log_file_name(1)
LOG_FILE_PREFIX = "transcripts/segment-"
TINY = EngineConfig(log_roll_bytes=120)
NO_CHECKPOINTS = EngineConfig(catalog_checkpoints=False)


@pytest.fixture(params=["file", "memory"])
def make_directory(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], Directory]:
    counter = itertools.count()
    if request.param == "file":
        return lambda: FileDirectory(tmp_path / f"store-{next(counter)}")
    return MemoryDirectory


def clone(source: Directory, target: Directory, edits: dict[str, bytes | None]) -> Directory:
    """Copy every store file into `target`, replacing (or, with None, dropping) some."""
    for name in source.list_names():
        if name == "LOCK":
            continue
        data = edits.get(name, source.read_bytes(name))
        if data is None:
            continue
        if isinstance(target, FileDirectory):  # plain writes: no fsync needed in a test copy
            (target.path / name).parent.mkdir(parents=True, exist_ok=True)
            (target.path / name).write_bytes(data)
        else:
            target.write_atomic(name, data)
    return target


def observe(store: TranscriptStore) -> tuple[object, ...]:
    return (
        store.generation,
        [(w.session_id, w.session_key) for w in store.windows()],
        {w.session_id: [e.event for e in store.events(w.session_id)] for w in store.windows()},
    )


def build_store(directory: Directory, config: EngineConfig | None = None) -> TranscriptStore:
    store = TranscriptStore.create(directory, config=config)
    with store.transaction() as transaction:
        transaction.put_window(SessionWindow("w1", "agent:main:main"))
        transaction.append_event("w1", {"id": "a", "text": "hello"}, 1.0)
    with store.transaction() as transaction:
        transaction.put_window(SessionWindow("w2", "agent:main:cron:1"))
        transaction.append_event("w2", {"id": "b"}, 2.0)
        transaction.append_event("w1", {"id": "c"}, 3.0)
    return store


def saved_checkpoint(directory: Directory) -> bytes | None:
    """The checkpoint on disk now (None: none), for `clone`: a crash in the next
    transaction leaves this one, since a checkpoint is saved only after its commits."""
    return directory.read_bytes(CHECKPOINT_NAME) if directory.exists(CHECKPOINT_NAME) else None


def frames_of(data: bytes) -> list[Frame]:
    return [item for item in iter_frames(data) if isinstance(item, Frame)]


def test_torn_tail_at_every_offset_of_the_last_transaction(
    make_directory: Callable[[], Directory],
) -> None:
    source = make_directory()
    store = build_store(source)
    expected = observe(store)
    committed_size = source.size(LOG_FILE)
    before = saved_checkpoint(source)
    with store.transaction() as transaction:
        transaction.append_event("w2", {"id": "torn", "text": "x" * 20}, 4.0)
    full = source.read_bytes(LOG_FILE)
    store.close()
    last_two = frames_of(full)[-2:]
    assert last_two[0].offset == committed_size  # the event record, then its commit record
    assert last_two[1].end == len(full)
    for cut in range(committed_size, len(full)):
        directory = clone(source, make_directory(), {LOG_FILE: full[:cut], CHECKPOINT_NAME: before})
        with TranscriptStore.open(directory, writer=True) as recovered:
            assert observe(recovered) == expected, cut
            cut_bytes = recovered.recovered_tail.cut_bytes if recovered.recovered_tail else 0
            assert cut_bytes == cut - committed_size
            assert directory.size(LOG_FILE) == committed_size
            with recovered.transaction() as transaction:
                assert transaction.append_event("w2", {"id": "after"}) == 1
        with TranscriptStore.open(directory) as reader:
            assert reader.generation == 3
            assert [e.event["id"] for e in reader.events("w2")] == ["b", "after"]


def test_torn_tail_in_a_fresh_log_file_including_its_header(
    make_directory: Callable[[], Directory],
) -> None:
    source = make_directory()
    store = build_store(source, TINY)
    expected = observe(store)
    before = source.list_names(LOG_FILE_PREFIX)
    checkpoint = saved_checkpoint(source)
    with store.transaction() as transaction:
        transaction.append_event("w1", {"id": "torn"}, 4.0)
    new_names = [n for n in source.list_names(LOG_FILE_PREFIX) if n not in before]
    assert len(new_names) == 1  # the previous log file was sealed: a fresh one holds it all
    last = new_names[0]
    full = source.read_bytes(last)
    store.close()
    for cut in range(len(full)):  # from inside the header to inside the commit record
        directory = clone(source, make_directory(), {last: full[:cut], CHECKPOINT_NAME: checkpoint})
        with TranscriptStore.open(directory, writer=True, config=TINY) as recovered:
            assert observe(recovered) == expected, cut
            with recovered.transaction() as transaction:
                transaction.append_event("w1", {"id": "after"}, 5.0)
        with TranscriptStore.open(directory) as reader:
            assert [e.event["id"] for e in reader.events("w1")] == ["a", "c", "after"]


def test_uncommitted_records_are_dropped_on_reopen(make_directory: Callable[[], Directory]) -> None:
    source = make_directory()
    store = build_store(source)
    expected = observe(store)
    with store.transaction() as transaction:
        transaction.append_event("w1", {"id": "u1"})
        transaction.append_event("w1", {"id": "u2"})
        transaction.events("w1")  # flush the records to the file
        directory = clone(source, make_directory(), {})
        with TranscriptStore.open(directory) as reader:  # readers ignore the tail
            assert observe(reader) == expected
        with TranscriptStore.open(directory, writer=True) as recovered:
            assert observe(recovered) == expected
            assert recovered.recovered_tail is not None
            assert recovered.recovered_tail.reason == "2 uncommitted records"
    store.close()


def test_memory_crash_mid_transaction_keeps_every_commit() -> None:
    directory = MemoryDirectory()
    store = build_store(directory, TINY)
    expected = observe(store)
    with store.transaction() as transaction:
        for number in range(10):
            transaction.append_event("w1", {"n": number})
        crashed = directory.crash_copy()
    with TranscriptStore.open(crashed, writer=True, config=TINY) as recovered:
        assert observe(recovered) == expected
    after_commit = directory.crash_copy()
    with TranscriptStore.open(after_commit) as reader:
        assert reader.event_count("w1") == 12
    store.close()


def record_at(frames: list[Frame], position: int) -> Frame:
    """The frame holding byte `position`."""
    return max((f for f in frames if f.offset <= position), key=lambda f: f.offset)


def assert_found_on_read(store: TranscriptStore, location: str, frame: Frame) -> None:
    """Damage in `frame`, under the checkpoint `store` opened from, is CorruptFile naming
    `location` and the frame's offset when its record is read, and verify reports it."""
    record = decode_log_payload(frame.payload)  # the payload of the intact copy
    readers = [lambda: list(store.changes_since(0))]
    if isinstance(record, EventRecord):
        readers.append(lambda: store.event(record.session_id, record.seq))
    for read in readers:
        with pytest.raises(CorruptFile) as refused:
            read()
        assert (refused.value.path, refused.value.offset) == (location, frame.offset)
    assert store.verify_log().startswith(
        f"{location}: corrupt at byte offset {frame.offset}: ")


def test_a_flipped_byte_in_committed_data_raises_corrupt_file(
    make_directory: Callable[[], Directory],
) -> None:
    """Without a checkpoint, open finds it; under one, open checks only the header and
    the last commit, and the damaged record is reported when read and by verify."""
    source = make_directory()
    build_store(source).close()
    data = source.read_bytes(LOG_FILE)
    frames = frames_of(data)
    last_commit = frames[-1]
    checked = 0
    for position in range(last_commit.offset):
        damaged = bytearray(data)
        damaged[position] ^= 0x5A
        directory = clone(source, make_directory(), {LOG_FILE: bytes(damaged)})
        expected_offset = 0 if position < HEADER_SIZE else record_at(frames, position).offset
        for writer in (False, True):
            with pytest.raises(CorruptFile) as refused:
                TranscriptStore.open(directory, writer=writer, config=NO_CHECKPOINTS)
            assert refused.value.path == directory.location(LOG_FILE)
            assert refused.value.offset == expected_offset, position
            if position < HEADER_SIZE:  # the header is checked at open: the replay names it
                with pytest.raises(CorruptFile) as refused:
                    TranscriptStore.open(directory, writer=writer)
                assert refused.value.offset == 0
                continue
            with TranscriptStore.open(directory, writer=writer) as store:
                assert store.checkpoint_generation == 2
                assert_found_on_read(store, directory.location(LOG_FILE),
                                     record_at(frames, position))
        assert directory.read_bytes(LOG_FILE) == bytes(damaged)  # nothing was truncated
        checked += 1
    assert checked == last_commit.offset


def test_corrupt_file_message_names_file_and_offset(tmp_path: Path) -> None:
    source = FileDirectory(tmp_path / "s")
    build_store(source).close()
    data = bytearray(source.read_bytes(LOG_FILE))
    second = frames_of(bytes(data))[1]
    data[second.offset + 12] ^= 1
    source.write_atomic(LOG_FILE, bytes(data))
    with pytest.raises(CorruptFile) as refused:
        TranscriptStore.open(source, writer=True, config=NO_CHECKPOINTS)
    assert str(refused.value).startswith(
        f"{tmp_path / 's' / LOG_FILE}: corrupt at byte offset {second.offset}: record CRC mismatch")
    assert "committed data follows" in str(refused.value)
    with TranscriptStore.open(source, writer=True) as store, \
            pytest.raises(CorruptFile) as on_read:
        store.event("w1", 0)
    assert str(on_read.value) == (
        f"{tmp_path / 's' / LOG_FILE}: corrupt at byte offset {second.offset}: record CRC mismatch")


def test_the_last_commit_damaged_in_place_is_dropped_and_reported(
    make_directory: Callable[[], Directory],
) -> None:
    """The documented limit: a damaged final commit that no checkpoint covers looks like
    an unfinished one (`test_store_lost_commits` shows one that a checkpoint covers)."""
    source = make_directory()
    store = build_store(source)
    data = source.read_bytes(LOG_FILE)
    store.close()
    last_commit = frames_of(data)[-1]
    damaged = bytearray(data)
    damaged[last_commit.offset + 9] ^= 1
    directory = clone(source, make_directory(), {LOG_FILE: bytes(damaged), CHECKPOINT_NAME: None})
    with TranscriptStore.open(directory, writer=True) as recovered:
        assert recovered.generation == 1
        assert recovered.recovered_tail is not None
        assert recovered.recovered_tail.reason.startswith("record CRC mismatch")


def test_log_files_roll_and_sealed_footers_verify(make_directory: Callable[[], Directory]) -> None:
    directory = make_directory()
    store = build_store(directory, TINY)
    for number in range(6):
        with store.transaction() as transaction:
            transaction.append_event("w2", {"n": number, "pad": "p" * 30})
    expected = observe(store)
    names = directory.list_names(LOG_FILE_PREFIX)
    assert len(names) >= 4
    for name in names[:-1]:
        data = directory.read_bytes(name)
        items = list(iter_frames(data))
        footer = items[-1]
        assert isinstance(footer, Footer)
        assert footer.record_count == len(items) - 1
        assert data[:8] == LOG_MAGIC
    store.close()
    with TranscriptStore.open(directory, writer=True, config=TINY) as reopened:
        assert observe(reopened) == expected
        with reopened.transaction() as transaction:
            transaction.append_event("w1", {"id": "z"})
    with TranscriptStore.open(directory) as reader:
        assert reader.generation == expected[0] + 1


def test_any_damage_in_a_sealed_log_file_is_corruption(
    make_directory: Callable[[], Directory],
) -> None:
    """Refused at open without a checkpoint; under one, damage to the header or footer is
    found at open (the checkpoint is ignored and the replay refuses), damage to a record
    when it is read and by verify."""
    source = make_directory()
    build_store(source, TINY).close()
    names = source.list_names(LOG_FILE_PREFIX)
    assert len(names) >= 2
    sealed = source.read_bytes(names[0])
    frames = frames_of(sealed)
    records_end = len(sealed) - 24
    for position in range(len(sealed)):
        damaged = bytearray(sealed)
        damaged[position] ^= 0x21
        directory = clone(source, make_directory(), {names[0]: bytes(damaged)})
        location = directory.location(names[0])
        with pytest.raises(CorruptFile) as refused:
            TranscriptStore.open(directory, writer=True, config=NO_CHECKPOINTS)
        assert refused.value.path == location
        if position < HEADER_SIZE or position >= records_end:
            with pytest.raises(CorruptFile) as refused:
                TranscriptStore.open(directory, writer=True)
            assert refused.value.path == location
            continue
        with TranscriptStore.open(directory, writer=True) as store:
            assert store.checkpoint_ignored is None
            assert_found_on_read(store, location, record_at(frames, position))


def test_missing_or_unsealed_log_files_are_corruption(
    make_directory: Callable[[], Directory],
) -> None:
    source = make_directory()
    store = build_store(source, TINY)
    with store.transaction() as transaction:
        transaction.append_event("w1", {"id": "more"})
    store.close()
    names = source.list_names(LOG_FILE_PREFIX)
    assert len(names) >= 3
    missing = clone(source, make_directory(), {names[1]: None})
    with pytest.raises(CorruptFile, match="segment file missing"):
        TranscriptStore.open(missing)
    first = source.read_bytes(names[0])
    unsealed = clone(source, make_directory(), {names[0]: first[:-24]})
    with pytest.raises(CorruptFile, match="not sealed although a later segment exists"):
        TranscriptStore.open(unsealed, writer=True)


def test_another_format_version_is_a_clear_store_error(
    make_directory: Callable[[], Directory],
) -> None:
    source = make_directory()
    build_store(source).close()
    data = source.read_bytes(LOG_FILE)
    newer = encode_header(LOG_MAGIC, version=3) + data[HEADER_SIZE:]
    directory = clone(source, make_directory(), {LOG_FILE: newer})
    with pytest.raises(StoreError, match="unsupported version 3 of a segment file") as refused:
        TranscriptStore.open(directory)
    assert not isinstance(refused.value, CorruptFile)
    meta = source.read_bytes("store.meta")
    meta_newer = encode_header(b"SS.STORE", version=7) + meta[HEADER_SIZE:]
    directory = clone(source, make_directory(), {"store.meta": meta_newer})
    with pytest.raises(StoreError, match="unsupported version 7 of a store file"):
        TranscriptStore.open(directory, writer=True)
    with pytest.raises(StoreError, match="unsupported version 7"):  # the writer lock was released
        TranscriptStore.open(directory, writer=True)


def test_a_failed_fsync_fails_the_commit_and_the_writer() -> None:
    directory = FaultyDirectory(MemoryDirectory())
    store = build_store(directory)
    expected = observe(store)
    directory.faults = (Fault("sync", directory.counts["sync"] + 1, EIO),)
    with pytest.raises(StoreError, match="segment-000001.log: cannot sync: Input/output error"), \
            store.transaction() as transaction:
        transaction.append_event("w1", {"id": "not durable"})
    assert observe(store) == expected
    with pytest.raises(StoreError, match="failed earlier .*reopen the store"), \
            store.transaction():
        pass
    store.close()
    assert isinstance(directory.inner, MemoryDirectory)
    with TranscriptStore.open(directory.inner.crash_copy(), writer=True) as reopened:
        assert observe(reopened) == expected
