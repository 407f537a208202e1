"""The catalog checkpoint: used when it matches the log, ignored when it does not."""

from __future__ import annotations

import dataclasses
import itertools
from array import array
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.codec import FILE_KINDS, catalog_file
from engine.codec.catalog_file import (
    MAGIC,
    CatalogCheckpoint,
    decode_catalog_file,
    encode_catalog_file,
    read_catalog_file,
    read_catalog_positions,
)
from engine.codec.framing import (
    HEADER_SIZE,
    Frame,
    decode_footer_at_end,
    decode_header,
    decode_payload,
    encode_footer,
    encode_header,
    encode_record,
    iter_frames,
    update_crc,
)
from engine.codec.log_file import CommitRecord, EventRecord, decode_log_payload
from engine.config import EngineConfig
from engine.directory import Directory, FileDirectory, MemoryDirectory
from engine.errors import CorruptFile
from engine.model import SessionWindow
from engine.transcript.checkpoint import CHECKPOINT_NAME
from engine.transcript.log_files import log_file_name
from engine.transcript.store import TranscriptStore

TINY = EngineConfig(log_roll_bytes=700)
NO_CHECKPOINTS = EngineConfig(log_roll_bytes=700, catalog_checkpoints=False)


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


def log_file_location(directory: Directory, number: int) -> str:
    return directory.location(f"transcripts/segment-{number:06d}.log")


def commit_frames(directory: Directory, number: int) -> list[Frame]:
    """The commit records of one log file, in file order."""
    data = directory.read_bytes(f"transcripts/segment-{number:06d}.log")
    return [item for item in iter_frames(data) if isinstance(item, Frame)
            and isinstance(decode_log_payload(item.payload), CommitRecord)]


def forge(directory: Directory, **changes: object) -> CatalogCheckpoint:
    """Rewrite the checkpoint with some head fields replaced; return the original."""
    checkpoint = decode_catalog_file(directory.read_bytes(CHECKPOINT_NAME), "c")
    forged = dataclasses.replace(checkpoint, **changes)
    directory.write_atomic(CHECKPOINT_NAME, encode_catalog_file(forged))
    return checkpoint


def shifted(checkpoint: CatalogCheckpoint, name: str, amount: int) -> dict[str, object]:
    return {name: getattr(checkpoint, name) + amount}


def earlier_commit(directory: Directory, checkpoint: CatalogCheckpoint) -> dict[str, object]:
    """Point the checkpoint at the commit before its own (intact, but of transaction 5)."""
    before_last = commit_frames(directory, checkpoint.segment)[-2]
    return {"commit_offset": before_last.offset, "offset": before_last.end}


def sealed_entry(checkpoint: CatalogCheckpoint, index: int, field: int) -> dict[str, object]:
    entries = [list(item) for item in checkpoint.sealed_segments]
    entries[index][field] += 1
    return {"sealed_segments": tuple(tuple(item) for item in entries)}


UNSEALED, SEALED_EACH_COMMIT = EngineConfig(), EngineConfig(log_roll_bytes=1)


@pytest.mark.parametrize(("config", "change", "problem"), [
    (UNSEALED, lambda d, c: shifted(c, "offset", 10**6),
     lambda d, c: f"{log_file_location(d, 1)}: shorter than the checkpoint says"),
    (UNSEALED, lambda d, c: shifted(c, "offset", -1),
     lambda d, c: f"{log_file_location(d, 1)}: the last commit the checkpoint covers, at byte "
                  f"{c.commit_offset}: record of "),
    (UNSEALED, lambda d, c: shifted(c, "commit_offset", 1),
     lambda d, c: f"{log_file_location(d, 1)}: the last commit the checkpoint covers, at byte "
                  f"{c.commit_offset + 1}: "),
    (UNSEALED, earlier_commit,
     lambda d, c: f"{log_file_location(d, 1)}: the record at byte "
                  f"{commit_frames(d, 1)[-2].offset} is not the commit of transaction 6"),
    (UNSEALED, lambda d, c: {"sealed": True},
     lambda d, c: "the checkpoint lists 0 sealed segments, expected 1"),
    (SEALED_EACH_COMMIT, lambda d, c: shifted(c, "record_count", 1),
     lambda d, c: f"{log_file_location(d, 6)}: footer does not match the checkpoint"),
    (SEALED_EACH_COMMIT, lambda d, c: {"sealed": False, **shifted(c, "offset", -24)},
     lambda d, c: "the checkpoint lists 6 sealed segments, expected 5"),
    (SEALED_EACH_COMMIT, lambda d, c: sealed_entry(c, 0, 0),
     lambda d, c: f"{log_file_location(d, 1)}: {d.size(log_file_name(1))} bytes, the checkpoint "
                  f"says {d.size(log_file_name(1)) + 1}"),
    (SEALED_EACH_COMMIT, lambda d, c: sealed_entry(c, 2, 2),
     lambda d, c: f"{log_file_location(d, 3)}: footer does not match the checkpoint"),
    (SEALED_EACH_COMMIT, lambda d, c: sealed_entry(c, 4, 1),
     lambda d, c: f"{log_file_location(d, 5)}: footer does not match the checkpoint"),
])
def test_a_checkpoint_that_disagrees_with_its_log_files_is_ignored(
    directory: Directory, config: EngineConfig, change: Callable[..., dict[str, object]],
    problem: Callable[..., str],
) -> None:
    with TranscriptStore.create(directory, config=config) as store:
        grow(store, 6)
        expected = observe(store)
    checkpoint = decode_catalog_file(directory.read_bytes(CHECKPOINT_NAME), "c")
    assert checkpoint.sealed == (config is SEALED_EACH_COMMIT)
    assert checkpoint.transaction_id == 6
    forge(directory, **change(directory, checkpoint))
    with TranscriptStore.open(directory, config=config) as reopened:
        assert reopened.checkpoint_generation is None
        assert reopened.checkpoint_ignored.startswith(problem(directory, checkpoint))
        assert observe(reopened) == expected


@pytest.mark.parametrize(("field", "problem"), [
    ("record_count", "record count does not match the checkpoint"),
    ("records_crc", "records do not match the expected CRC"),
])
def test_a_wrong_running_count_or_crc_is_found_by_verify_not_at_open(
    directory: Directory, field: str, problem: str,
) -> None:
    """Open does not read the covered records, so it cannot check the count or CRC the
    checkpoint saved for the open log file; `verify_log` does."""
    with TranscriptStore.create(directory) as store:
        grow(store, 6)
        expected = observe(store)
    checkpoint = decode_catalog_file(directory.read_bytes(CHECKPOINT_NAME), "c")
    with TranscriptStore.open(directory) as intact:
        assert intact.verify_log() is None
    forge(directory, **shifted(checkpoint, field, 1))
    with TranscriptStore.open(directory) as reopened:
        assert reopened.checkpoint_generation == 6
        assert observe(reopened) == expected
        assert reopened.verify_log() == f"{log_file_location(directory, 1)}: {problem}"


def reopen_ignoring_the_checkpoint(directory: Directory, problem: str, expected: object) -> None:
    """A writer opens by full replay, says why, and sees `expected` (its close then saves
    a current checkpoint)."""
    with TranscriptStore.open(directory, writer=True, config=TINY) as reopened:
        assert reopened.checkpoint_generation is None
        assert reopened.checkpoint_ignored == f"{directory.location(CHECKPOINT_NAME)}: {problem}"
        assert observe(reopened) == expected


@pytest.mark.parametrize(("version", "written_by"), [
    (1, "an earlier build of session-search: re-import the store"),
    (3, "a newer build of session-search")])
def test_a_checkpoint_of_another_version_is_ignored(
    directory: Directory, version: int, written_by: str,
) -> None:
    with TranscriptStore.create(directory, config=TINY) as store:
        grow(store, 8)
        expected = observe(store)
    data = directory.read_bytes(CHECKPOINT_NAME)
    assert decode_header(data, "c").version == FILE_KINDS["catalog"].version == 2
    directory.write_atomic(CHECKPOINT_NAME,
                           encode_header(MAGIC, version=version) + data[HEADER_SIZE:])
    reopen_ignoring_the_checkpoint(
        directory, f"unsupported version {version} of a catalog file (this build reads "
                   f"version 2); it was written by {written_by}", expected)
    with TranscriptStore.open(directory, config=TINY) as after_close:  # the close rewrote it
        assert after_close.checkpoint_generation == 8
        assert observe(after_close) == expected
    assert decode_header(directory.read_bytes(CHECKPOINT_NAME), "c").version == 2


def event_frames(directory: Directory, name: str) -> list[tuple[Frame, EventRecord]]:
    data = directory.read_bytes(name)
    pairs = [(item, decode_log_payload(item.payload)) for item in iter_frames(data)
             if isinstance(item, Frame)]
    return [(frame, record) for frame, record in pairs if isinstance(record, EventRecord)]


def flip(directory: Directory, name: str, offset: int) -> None:
    data = bytearray(directory.read_bytes(name))
    data[offset] ^= 0x01
    directory.write_atomic(name, bytes(data))


@pytest.mark.parametrize("sealed", [True, False])
def test_damage_under_a_checkpoint_is_found_on_read_and_by_verify(
    directory: Directory, sealed: bool,
) -> None:
    with TranscriptStore.create(directory, config=TINY) as store:
        grow(store, 6)
    names = directory.list_names("transcripts/segment-")
    assert len(names) >= 2
    name = names[0] if sealed else names[-1]
    frame, record = event_frames(directory, name)[-1]
    flip(directory, name, frame.offset + 12)
    with pytest.raises(CorruptFile) as refused:  # without the checkpoint: at open
        TranscriptStore.open(directory, config=NO_CHECKPOINTS)
    assert (refused.value.path, refused.value.offset) == (directory.location(name), frame.offset)
    with TranscriptStore.open(directory, config=TINY) as reopened:  # with it: on read
        assert reopened.checkpoint_generation == 6
        with pytest.raises(CorruptFile) as on_read:
            reopened.events(record.session_id)
        assert (on_read.value.path, on_read.value.offset) == (directory.location(name),
                                                              frame.offset)
        assert on_read.value.reason == "record CRC mismatch"
        with pytest.raises(CorruptFile) as in_feed:
            list(reopened.changes_since(0))
        assert (in_feed.value.path, in_feed.value.offset) == (directory.location(name),
                                                              frame.offset)
        assert reopened.verify_log() == (
            f"{directory.location(name)}: corrupt at byte offset {frame.offset}: "
            "record CRC mismatch")


def test_a_position_that_points_at_the_wrong_event_is_corruption_on_read(
    directory: Directory,
) -> None:
    with TranscriptStore.create(directory) as store:
        grow(store, 3)
    checkpoint = decode_catalog_file(directory.read_bytes(CHECKPOINT_NAME), "c")
    offsets = array("q", checkpoint.event_offsets)
    lengths = array("i", checkpoint.event_lengths)
    offsets[0], offsets[1] = offsets[1], offsets[0]
    lengths[0], lengths[1] = lengths[1], lengths[0]
    forge(directory, event_offsets=offsets, event_lengths=lengths)
    with TranscriptStore.open(directory) as reopened:
        assert reopened.checkpoint_generation == 3
        with pytest.raises(CorruptFile, match="expected event 0 of window 'w0', found event 0 "
                                              "of window 'w1'") as refused:
            reopened.events("w0")
        assert refused.value.offset == offsets[0]
        assert reopened.verify_log() is None  # the log file's bytes are intact


def test_every_window_field_and_position_survives_the_checkpoint(directory: Directory) -> None:
    two_a_record = EngineConfig(checkpoint_windows_per_record=2)  # several windows records
    windows = [
        SessionWindow("a", "agent:a:main", title="Café", extra={"x": [1, {"y": None}]},
                      created_at=5.5, group="g", incognito=True),
        SessionWindow("b", "agent:a:cron:1", previous_session_id="a", reason="reset",
                      current=False, kind="subagent", spawned_by="a", archived=True),
        SessionWindow("c", "global"),
        SessionWindow("d", "agent:b:main", owner_session_key="agent:a:main",
                      parent_session_key="agent:a:main"),
        SessionWindow("e", "agent:b:main"),
    ]
    with TranscriptStore.create(directory, config=two_a_record) as store:
        for number, window in enumerate(windows):
            with store.transaction() as transaction:
                transaction.put_window(window)
                for seq in range(number):  # 0, 1, 2, 3, 4 events
                    transaction.append_event(window.session_id, {"n": seq}, float(seq))
        expected = observe(store)
    data = directory.read_bytes(CHECKPOINT_NAME)
    checkpoint = decode_catalog_file(data, "c")
    assert list(checkpoint.event_counts) == [0, 1, 2, 3, 4]
    assert [decode_payload(frame.payload)[0] for frame in frames_of(data)].count("windows") == 3
    with TranscriptStore.open(directory, writer=True, config=two_a_record) as reopened:
        assert reopened.checkpoint_generation == 5
        assert reopened.windows() == windows
        assert [w.extra for w in reopened.windows()] == [w.extra for w in windows]
        assert observe(reopened) == expected
        with reopened.transaction() as transaction:  # appending to a loaded window copies
            transaction.append_event("d", {"n": 3}, 3.0)
        assert [e.event for e in reopened.events("d")] == [{"n": 0}, {"n": 1}, {"n": 2},
                                                            {"n": 3}]
        assert [e.event for e in reopened.events("e")] == [{"n": seq} for seq in range(4)]
        after = observe(reopened)
    with TranscriptStore.open(directory) as again:
        assert again.checkpoint_generation == 6
        assert observe(again) == after


def test_a_writer_verifies_what_it_committed_across_seals(directory: Directory) -> None:
    with TranscriptStore.create(directory, config=TINY) as store:
        grow(store, 12)
        assert store.verify_log() is None
        names = directory.list_names("transcripts/segment-")
        assert len(names) >= 3
        for name in (names[1], names[-1]):  # a sealed log file, the open one
            frame, _record = event_frames(directory, name)[0]
            flip(directory, name, frame.offset + 10)
            assert store.verify_log() == (
                f"{directory.location(name)}: corrupt at byte offset {frame.offset}: "
                "record CRC mismatch")
            flip(directory, name, frame.offset + 10)
            assert store.verify_log() is None


def test_a_writer_whose_last_commit_sealed_saves_at_close_after_a_replay(
    directory: Directory,
) -> None:
    sealing = EngineConfig(log_roll_bytes=1)
    with TranscriptStore.create(directory, config=sealing) as store:
        grow(store, 3)
        expected = observe(store)
    directory.remove(CHECKPOINT_NAME)
    TranscriptStore.open(directory, writer=True, config=sealing).close()  # replays, saves
    saved = decode_catalog_file(directory.read_bytes(CHECKPOINT_NAME), "c")
    assert (saved.sealed, saved.transaction_id, len(saved.sealed_segments)) == (True, 3, 3)
    with TranscriptStore.open(directory, config=sealing) as reopened:
        assert observe(reopened) == expected


def test_verify_names_a_footer_that_no_longer_matches_its_records(directory: Directory) -> None:
    with TranscriptStore.create(directory, config=TINY) as store:
        grow(store, 6)
        name = directory.list_names("transcripts/segment-")[0]
        data = directory.read_bytes(name)
        footer = decode_footer_at_end(data)
        forged = encode_footer(footer.record_count, footer.records_crc ^ 1)
        directory.write_atomic(name, data[: footer.offset] + forged)
        assert store.verify_log() == (
            f"{directory.location(name)}: corrupt at byte offset {footer.offset}: "
            "footer does not match the records")


def test_verify_of_a_store_without_commits_finds_nothing(directory: Directory) -> None:
    with TranscriptStore.create(directory) as store:
        assert store.verify_log() is None
        with pytest.raises(RuntimeError), store.transaction() as transaction:
            transaction.put_window(SessionWindow("w", "global"))
            raise RuntimeError("abort")  # the log file now exists, holding its header only
        assert store.verify_log() is None
    with TranscriptStore.open(directory) as reader:
        assert reader.verify_log() is None
    directory.remove("transcripts/segment-000001.log")
    with TranscriptStore.open(directory) as reader:
        assert reader.verify_log() is None


# --------------------------------------------------------------------------------------
# The event positions apart, read on first need
# --------------------------------------------------------------------------------------


def frames_of(data: bytes) -> list[Frame]:
    return [item for item in iter_frames(data) if isinstance(item, Frame)]


def test_opening_reads_no_position_and_checks_each_byte_once(
    directory: Directory, monkeypatch: pytest.MonkeyPatch,
) -> None:
    with TranscriptStore.create(directory, config=TINY) as store:
        grow(store, 12)
    data = directory.read_bytes(CHECKPOINT_NAME)
    head_end = frames_of(data)[0].end
    reads: list[tuple[int, int]] = []
    checked: list[int] = []

    def read(offset: int, length: int) -> bytes:
        reads.append((offset, length))
        return data[offset: offset + length]

    def counting_crc(crc: int, chunk: bytes) -> int:
        checked.append(len(chunk))
        return update_crc(crc, chunk)

    monkeypatch.setattr(catalog_file, "update_crc", counting_crc)
    checkpoint = read_catalog_file(read, len(data), "c")
    region = checkpoint.positions_region
    assert region is not None and checkpoint.event_offsets is None
    assert 0 < region.length and region.offset + region.length + 24 == len(data)
    assert max(offset + length for offset, length in reads) <= region.offset
    assert checked == [region.offset - head_end]  # the index, in one call
    reads.clear()
    checked.clear()
    positions = read_catalog_positions(read, region, "c")
    assert reads == [(region.offset, len(data) - region.offset)]  # the positions and footer
    assert checked == [region.length]
    whole = decode_catalog_file(data, "c")
    assert positions == (whole.event_segments, whole.event_offsets, whole.event_lengths)
    assert dataclasses.replace(checkpoint, event_segments=positions[0],
                               event_offsets=positions[1], event_lengths=positions[2],
                               positions_region=None) == whole
    reads.clear()
    assert read_catalog_file(read, len(data), "c", probe_length=20) == checkpoint
    probe, again = reads[:2]  # a head longer than the probe: read again, whole
    assert probe[0] == 0 and probe[1] < head_end and again == (0, head_end)


def rewrite_head(data: bytes, **changes: int) -> bytes:
    """The file with some head fields replaced (the head re-framed, nothing else)."""
    head = frames_of(data)[0]
    value = decode_payload(head.payload)
    for name, number in changes.items():
        value[1 + catalog_file.HEAD_FIELDS.index(name)] = number
    return data[:head.offset] + encode_record(value) + data[head.end:]


@pytest.mark.parametrize("damage", ["record", "index crc", "truncated", "footer"])
def test_damage_to_the_index_is_named_and_the_checkpoint_ignored(
    directory: Directory, damage: str,
) -> None:
    two_a_record = dataclasses.replace(TINY, checkpoint_windows_per_record=2)
    with TranscriptStore.create(directory, config=two_a_record) as store:
        grow(store, 10)
        expected = observe(store)
    data = directory.read_bytes(CHECKPOINT_NAME)
    frames = frames_of(data)
    if damage == "record":
        changed = bytearray(data)
        changed[frames[3].offset + 12] ^= 0x01
        problem = f"corrupt at byte offset {frames[3].offset}: record CRC mismatch"
    elif damage == "index crc":  # every record intact, the head's CRC of them wrong
        head = decode_payload(frames[0].payload)
        changed = rewrite_head(data, index_crc=head[11] ^ 1)
        problem = (f"corrupt at byte offset {frames[0].end}: the index records do not match "
                   "the CRC in the head")
    elif damage == "truncated":
        changed = data[:-1]
        problem = (f"corrupt at byte offset {HEADER_SIZE}: the head describes a file of "
                   f"{len(data)} bytes, found {len(data) - 1}")
    else:  # an intact footer with the wrong CRC: only a whole decode checks it
        footer = decode_footer_at_end(data)
        changed = data[: footer.offset] + encode_footer(footer.record_count,
                                                        footer.records_crc ^ 1)
        with pytest.raises(CorruptFile, match="footer does not match the records"):
            decode_catalog_file(changed, "c")
        problem = None
    directory.write_atomic(CHECKPOINT_NAME, bytes(changed))
    if problem is not None:
        reopen_ignoring_the_checkpoint(directory, problem, expected)
        return
    with TranscriptStore.open(directory, config=TINY) as reopened:
        assert reopened.checkpoint_generation == 10
        assert observe(reopened) == expected


def flip_in_place(path: Path, offset: int) -> None:
    """Change one byte of a file without replacing it (as damage on disk would)."""
    with open(path, "r+b") as file:
        file.seek(offset)
        byte = file.read(1)[0]
        file.seek(offset)
        file.write(bytes([byte ^ 0x01]))


@pytest.mark.parametrize(("kind", "when"), [("file", "before open"), ("memory", "before open"),
                                            ("file", "after open")])
def test_damaged_positions_are_rebuilt_by_replay_when_first_needed(
    tmp_path: Path, kind: str, when: str,
) -> None:
    directory: Directory = FileDirectory(tmp_path / "store") if kind == "file" \
        else MemoryDirectory()
    with TranscriptStore.create(directory, config=TINY) as store:
        grow(store, 12)
        expected = observe(store)
    data = directory.read_bytes(CHECKPOINT_NAME)
    region = read_catalog_file(lambda offset, length: data[offset: offset + length],
                               len(data), "c").positions_region
    spot = region.offset + region.length // 2

    def damage() -> None:
        if kind == "file":
            flip_in_place(tmp_path / "store" / CHECKPOINT_NAME, spot)
        else:
            changed = bytearray(data)
            changed[spot] ^= 0x01
            directory.write_atomic(CHECKPOINT_NAME, bytes(changed))

    if when == "before open":
        damage()
    with TranscriptStore.open(directory, writer=True, config=TINY) as reopened:
        assert (reopened.checkpoint_generation, reopened.checkpoint_ignored) == (12, None)
        if when == "after open":
            damage()
        assert reopened.checkpoint_positions_rebuilt is None  # not needed yet
        assert observe(reopened) == expected
        assert reopened.checkpoint_positions_rebuilt == (
            f"{directory.location(CHECKPOINT_NAME)}: corrupt at byte offset {region.offset}: "
            "record CRC mismatch (the event positions were rebuilt from the segments)")
        with reopened.transaction() as transaction:  # appending to a window still works
            transaction.append_event("w10", {"id": "more"}, 2.0)
        after = observe(reopened)
    with TranscriptStore.open(directory, config=TINY) as again:  # the close saved a sound one
        assert again.checkpoint_generation == 13
        assert observe(again) == after
        assert again.checkpoint_positions_rebuilt is None


def test_a_reader_reads_the_positions_of_the_checkpoint_it_opened(
    directory: Directory,
) -> None:
    with TranscriptStore.create(directory, config=TINY) as store:
        grow(store, 6)
        expected = observe(store)
    reader = TranscriptStore.open(directory, config=TINY)
    closed_early = TranscriptStore.open(directory, config=TINY)
    closed_early.close()  # it gave the file back: it reads it again by name when needed
    with TranscriptStore.open(directory, writer=True, config=TINY) as writer:
        grow(writer, 6, start=50)  # the writer saves a checkpoint over the one read
        after = observe(writer)
    assert decode_catalog_file(directory.read_bytes(CHECKPOINT_NAME), "c").transaction_id == 12
    assert observe(reader) == expected  # from the file it opened, not the new one
    assert reader.checkpoint_positions_rebuilt is None
    reader.refresh()
    assert observe(reader) == after
    reader.close()
    assert observe(closed_early) == expected  # the new file did not fit: rebuilt by replay
    assert closed_early.checkpoint_positions_rebuilt is not None


def test_positions_that_the_log_contradicts_are_corruption_naming_the_checkpoint(
    directory: Directory,
) -> None:
    with TranscriptStore.create(directory) as store:
        grow(store, 3)  # windows w0, w1, w2 with one event each
    checkpoint = decode_catalog_file(directory.read_bytes(CHECKPOINT_NAME), "c")
    counts = array("i", checkpoint.event_counts)
    counts[0], counts[1] = 0, 2  # the index says w1 has w0's event as well
    data = bytearray(encode_catalog_file(dataclasses.replace(checkpoint, event_counts=counts)))
    region = read_catalog_file(lambda offset, length: data[offset: offset + length],
                               len(data), "c").positions_region
    data[region.offset + 12] ^= 0x01  # and its positions are damaged: they are replayed
    directory.write_atomic(CHECKPOINT_NAME, bytes(data))
    with TranscriptStore.open(directory, writer=True) as reopened:
        assert reopened.checkpoint_generation == 3
        with pytest.raises(CorruptFile) as refused, reopened.transaction() as transaction:
            transaction.append_event("w1", {"id": "late"})
        assert (refused.value.path, refused.value.offset) == (
            directory.location(CHECKPOINT_NAME), region.offset)
        assert refused.value.reason == ("window 'w0' has 0 events in the checkpoint, "
                                        "1 events in the segments")
        assert reopened.generation == 3  # the append was not committed
        assert reopened.checkpoint_positions_rebuilt is None
        with pytest.raises(CorruptFile) as again:  # the same answer, without a new replay
            reopened.events("w2")
        assert again.value is refused.value
    with TranscriptStore.open(directory, config=NO_CHECKPOINTS) as replayed:
        assert replayed.event_count("w1") == 1
