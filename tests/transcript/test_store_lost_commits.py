"""Committed transactions are never taken for a torn tail (`engine.transcript.evidence`).

A log cut back into transactions that the catalog checkpoint (or a claim the opener
passes, as the reference backend passes its index manifest's generation) records as
committed, a log file they name that is missing, or committed bytes damaged in place,
are refused at open naming the file and the missing range, before a writer cuts
anything; `accept_lost_commits` opens all the same and says what is lost. What no claim
covers (what a crash leaves) is still cut silently.

Every test body runs on `FileDirectory` and on `MemoryDirectory`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.codec.catalog_file import decode_catalog_file, encode_catalog_file
from engine.codec.framing import HEADER_SIZE, Frame, encode_header, iter_frames
from engine.codec.log_file import CommitRecord, decode_log_payload
from engine.config import EngineConfig
from engine.directory import Directory, MemoryDirectory
from engine.errors import StoreError
from engine.model import SessionWindow
from engine.transcript.checkpoint import CHECKPOINT_NAME
from engine.transcript.evidence import CommittedClaim
from engine.transcript.log_files import LOG_FOLDER, log_file_name
from engine.transcript.lost_commits import store_folder
from engine.transcript.store import TranscriptStore
from tests.transcript.store_files import clone, directory_maker

LOG_FILE = log_file_name(1)
TINY = EngineConfig(log_roll_bytes=120)


@pytest.fixture(params=["file", "memory"])
def make_directory(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], Directory]:
    return directory_maker(request.param, tmp_path)


@pytest.fixture
def source(make_directory: Callable[[], Directory]) -> Directory:
    """A store built by `build_store` (three commits, closed: the checkpoint covers all)."""
    directory = make_directory()
    build_store(directory)
    return directory


def build_store(directory: Directory, config: EngineConfig | None = None) -> None:
    """Three committed transactions (4 events), closed cleanly: the close saves the
    checkpoint of all three."""
    with TranscriptStore.create(directory, config=config) as store:
        with store.transaction() as transaction:
            transaction.put_window(SessionWindow("w1", "agent:main:main"))
            transaction.append_event("w1", {"id": "a", "text": "hello"}, 1.0)
        with store.transaction() as transaction:
            transaction.put_window(SessionWindow("w2", "agent:main:cron:1"))
            transaction.append_event("w2", {"id": "b"}, 2.0)
            transaction.append_event("w1", {"id": "c"}, 3.0)
        with store.transaction() as transaction:
            transaction.append_event("w2", {"id": "d", "text": "x" * 40}, 4.0)


def commit_ends(data: bytes) -> list[int]:
    """Where each transaction's commit record ends, in file order."""
    return [item.end for item in iter_frames(data) if isinstance(item, Frame)
            and isinstance(decode_log_payload(item.payload), CommitRecord)]


def refused(directory: Directory, *, writer: bool, **options: object) -> str:
    with pytest.raises(StoreError) as raised:
        TranscriptStore.open(directory, writer=writer, **options)  # type: ignore[arg-type]
    return str(raised.value)


def advice(directory: Directory) -> str:
    return (f"; run `session-search verify --store {store_folder(directory)}` to see what is "
            "lost and what `verify --repair` can recover")


def test_a_log_cut_into_checkpointed_commits_is_refused_naming_the_range(
    make_directory: Callable[[], Directory], source: Directory,
) -> None:
    full = source.read_bytes(LOG_FILE)
    second_end = commit_ends(full)[1]
    for cut in [*range(second_end, len(full)), len(full) // 2, HEADER_SIZE, 3, 0]:
        directory = clone(source, make_directory(), {LOG_FILE: full[:cut]})
        holds = sum(end <= cut for end in commit_ends(full))
        missing = ("1 byte of committed transactions is" if cut == len(full) - 1 else
                   f"{len(full) - cut} bytes of committed transactions are")
        expected = (
            f"{directory.location(LOG_FILE)}: {missing} missing (bytes {cut}..{len(full)} "
            f"were committed, the file "
            f"ends at {cut}); {directory.location(CHECKPOINT_NAME)} records 3 committed "
            f"transactions, the log holds {holds}" + advice(directory))
        for writer in (False, True):
            assert refused(directory, writer=writer) == expected, cut
        assert directory.read_bytes(LOG_FILE) == full[:cut]  # the writer cut nothing
        with TranscriptStore.open(directory, writer=True, accept_lost_commits=True) as store:
            assert store.generation == holds  # and the lock was released by the refusals


def test_a_missing_log_file_that_held_commits_is_refused(
    make_directory: Callable[[], Directory], source: Directory,
) -> None:
    alone = clone(source, make_directory(), {LOG_FILE: None})
    assert refused(alone, writer=True) == (
        f"{alone.location(LOG_FILE)}: missing, but it held committed transactions; "
        f"{alone.location(CHECKPOINT_NAME)} records 3 committed transactions, the log "
        "holds 0" + advice(alone))
    rolled = make_directory()
    build_store(rolled, TINY)
    names = rolled.list_names(LOG_FOLDER + "/segment-")
    assert len(names) >= 3
    newest = clone(rolled, make_directory(), {names[-1]: None})
    message = refused(newest, writer=True, config=TINY)
    assert message.startswith(f"{newest.location(names[-1])}: missing, but it held "
                              "committed transactions; ")
    two = clone(rolled, make_directory(), {names[-1]: None, names[-2]: None})
    message = refused(two, writer=True, config=TINY)
    assert message.startswith(f"{two.location(names[-2])}: missing (and every later log "
                              f"file up to {names[-1]}), but it held committed transactions")


def test_a_claim_passed_by_the_opener_is_evidence_too(
    make_directory: Callable[[], Directory], source: Directory,
) -> None:
    """What the reference backend passes: its manifest's generation (no position)."""
    claim = CommittedClaim("index/manifest", 3)
    no_log = clone(source, make_directory(), {LOG_FILE: None, CHECKPOINT_NAME: None})
    assert refused(no_log, writer=True, committed=[claim]) == (
        f"{no_log.location(LOG_FILE)}: missing, but the log held committed transactions; "
        "index/manifest records 3 committed transactions, the log holds 0" + advice(no_log))
    full = source.read_bytes(LOG_FILE)
    second_end = commit_ends(full)[1]
    cut = clone(source, make_directory(), {LOG_FILE: full[:-5], CHECKPOINT_NAME: None})
    assert refused(cut, writer=True, committed=[claim]).startswith(
        f"{cut.location(LOG_FILE)}: the log ends after byte {second_end} in "
        f"{len(full) - 5 - second_end} bytes that do not replay (")
    assert cut.read_bytes(LOG_FILE) == full[:-5]
    at_a_commit = clone(source, make_directory(),
                        {LOG_FILE: full[:second_end], CHECKPOINT_NAME: None})
    assert refused(at_a_commit, writer=False, committed=[claim]).startswith(
        f"{at_a_commit.location(LOG_FILE)}: the log ends at byte {second_end}, after the "
        "last transaction it holds; index/manifest records 3 committed transactions, the "
        "log holds 2")
    with TranscriptStore.open(at_a_commit, committed=[CommittedClaim("m", 2)]) as store:
        assert store.generation == 2  # a claim the log meets is no problem


def test_the_last_commit_damaged_under_a_checkpoint_is_refused(
    make_directory: Callable[[], Directory], source: Directory,
) -> None:
    """The limit of the bytes alone (`test_store_recovery`) does not apply where a
    checkpoint saved after the commit says it was committed."""
    data = bytearray(source.read_bytes(LOG_FILE))
    second_end = commit_ends(bytes(data))[1]
    data[-3] ^= 0x01  # inside the last commit record
    directory = clone(source, make_directory(), {LOG_FILE: bytes(data)})
    message = refused(directory, writer=True)
    assert message.startswith(
        f"{directory.location(LOG_FILE)}: committed transactions are damaged after byte "
        f"{second_end} (record CRC mismatch at byte offset ")
    assert directory.read_bytes(LOG_FILE) == bytes(data)


def test_a_reader_accepting_lost_commits_says_what_is_lost(
    make_directory: Callable[[], Directory], source: Directory,
) -> None:
    full = source.read_bytes(LOG_FILE)
    directory = clone(source, make_directory(), {LOG_FILE: full[:-10]})
    with TranscriptStore.open(directory, accept_lost_commits=True) as store:
        lost = store.lost_commits
        assert lost is not None
        assert (lost.first_lost, lost.last_lost, lost.count) == (store.generation + 1, 3,
                                                                  3 - store.generation)
        assert lost.events_claimed == 4
        assert lost.events_left == sum(store.event_counts().values())
        assert store.problems() == [lost.problem]
        assert lost.problem.serious and lost.problem.location == directory.location(LOG_FILE)
        assert "bytes of committed transactions are missing" in str(lost.problem)
    assert directory.read_bytes(LOG_FILE) == full[:-10]


def test_a_writer_accepting_lost_commits_drops_them_and_the_store_goes_on(
    make_directory: Callable[[], Directory], source: Directory,
) -> None:
    full = source.read_bytes(LOG_FILE)
    second_end = commit_ends(full)[1]
    directory = clone(source, make_directory(), {LOG_FILE: full[:-7]})
    with TranscriptStore.open(directory, writer=True, accept_lost_commits=True) as store:
        assert (store.generation, store.lost_commits.first_lost) == (2, 3)
        assert store.recovered_tail.cut_bytes == len(full) - 7 - second_end
        assert directory.size(LOG_FILE) == second_end
        saved = decode_catalog_file(directory.read_bytes(CHECKPOINT_NAME), "c")
        assert (saved.transaction_id, saved.offset) == (2, second_end)  # no longer claims 3
        with store.transaction() as transaction:
            transaction.append_event("w1", {"id": "after"}, 5.0)
    with TranscriptStore.open(directory) as reopened:  # no claim is broken any more
        assert reopened.generation == 3 and reopened.problems() == []
        assert [e.event["id"] for e in reopened.events("w1")] == ["a", "c", "after"]
        assert reopened.verify_log() is None
    nothing_left = clone(source, make_directory(), {LOG_FILE: None})
    with TranscriptStore.open(nothing_left, writer=True, accept_lost_commits=True) as store:
        assert store.generation == 0
        assert not nothing_left.exists(CHECKPOINT_NAME)  # it claimed what is gone
    with TranscriptStore.open(nothing_left) as reopened:
        assert (reopened.generation, reopened.problems()) == (0, [])


def test_a_crash_torn_tail_is_still_cut_silently() -> None:
    """After a clean close (checkpoint of 3) and a later commit, a crash inside the next
    transaction: the commit after the checkpoint is kept, the torn records are cut, and
    nothing is reported but an informational note."""
    directory = MemoryDirectory()
    build_store(directory)
    with TranscriptStore.open(directory, writer=True) as store:
        with store.transaction() as transaction:
            transaction.append_event("w1", {"id": "kept"}, 5.0)
        synced = directory.size(LOG_FILE)
        with pytest.raises(RuntimeError), store.transaction() as transaction:
            for number in range(5):
                transaction.append_event("w1", {"n": number})
            transaction.events("w1")  # the records reach the file, not the disk
            crashed = directory.crash_copy()
            written = directory.read_bytes(LOG_FILE)
            raise RuntimeError("the power is cut here")
    assert crashed.size(LOG_FILE) == synced
    torn = clone(crashed, MemoryDirectory(), {LOG_FILE: written[: synced + 30]})
    for directory_after in (crashed, torn):
        with TranscriptStore.open(directory_after) as reader:
            assert reader.generation == 4
            assert [problem.serious for problem in reader.problems()] == \
                ([False] if directory_after is torn else [])
        with TranscriptStore.open(directory_after, writer=True) as recovered:
            assert recovered.generation == 4 and recovered.lost_commits is None
            assert [e.event["id"] for e in recovered.events("w1")] == ["a", "c", "kept"]
            if directory_after is torn:
                tail = recovered.recovered_tail
                assert (tail.committed_end, tail.file_size) == (synced, synced + 30)
                assert [(note.serious, note.message) for note in recovered.problems()] == [(
                    False, (f"{torn.location(LOG_FILE)}: 30 bytes of an unfinished "
                            f"transaction were cut off at open (bytes {synced}.."
                            f"{synced + 30}: {tail.reason})"))]
        assert directory_after.size(LOG_FILE) == synced


def test_garbage_after_the_last_commit_is_a_note_for_readers(
    make_directory: Callable[[], Directory], source: Directory,
) -> None:
    full = source.read_bytes(LOG_FILE)
    directory = clone(source, make_directory(), {LOG_FILE: full + b"\x00\x01" * 20})
    with TranscriptStore.open(directory) as reader:
        assert reader.generation == 3
        (note,) = reader.problems()
        assert not note.serious
        assert re.fullmatch(
            re.escape(f"{directory.location(LOG_FILE)}: 40 bytes after the last commit are "
                      f"an unfinished transaction, left out (bytes {len(full)}..{len(full) + 40}"
                      ": ") + r".+\); the next writer cuts them off", note.message)
    with TranscriptStore.open(directory, writer=True) as writer:
        assert writer.recovered_tail.cut_bytes == 40
    assert directory.read_bytes(LOG_FILE) == full


def test_a_reader_behind_its_writer_catches_up_before_judging_a_claim(
    source: Directory,
) -> None:
    with TranscriptStore.open(source, writer=True) as writer, \
            TranscriptStore.open(source) as reader:
        with writer.transaction() as transaction:
            transaction.append_event("w1", {"id": "new"}, 5.0)
        reader.check_committed(CommittedClaim("index/manifest", 4))
        assert reader.generation == 4
        with pytest.raises(StoreError, match="index/manifest records 5 committed "
                                             "transactions, the log holds 4"):
            reader.check_committed(CommittedClaim("index/manifest", 5))


def forge(directory: Directory, **changes: object) -> None:
    checkpoint = decode_catalog_file(directory.read_bytes(CHECKPOINT_NAME), "c")
    directory.write_atomic(CHECKPOINT_NAME,
                           encode_catalog_file(dataclasses.replace(checkpoint, **changes)))


def test_checkpoint_problems_are_reported_and_lose_nothing(
    make_directory: Callable[[], Directory], source: Directory,
) -> None:
    checkpoint = decode_catalog_file(source.read_bytes(CHECKPOINT_NAME), "c")
    disagreeing = clone(source, make_directory(), {})
    forge(disagreeing, commit_offset=checkpoint.commit_offset + 1)
    with TranscriptStore.open(disagreeing) as store:
        assert store.generation == 3 and store.lost_commits is None
        (problem,) = store.problems()
        assert problem.serious and problem.location == disagreeing.location(CHECKPOINT_NAME)
        assert problem.message.startswith(
            f"{disagreeing.location(CHECKPOINT_NAME)}: the catalog checkpoint disagrees with "
            f"the log ({disagreeing.location(LOG_FILE)}: the last commit the checkpoint "
            f"covers, at byte {checkpoint.commit_offset + 1}: ")
        assert problem.message.endswith("; it was not used: the log was replayed")
    with TranscriptStore.open(disagreeing, writer=True) as writer:
        writer.rewrite_checkpoint()
    with TranscriptStore.open(disagreeing) as store:
        assert store.problems() == []
    damaged = bytearray(source.read_bytes(CHECKPOINT_NAME))
    damaged[40] ^= 0x10
    with TranscriptStore.open(clone(source, make_directory(),
                                    {CHECKPOINT_NAME: bytes(damaged)})) as store:
        (problem,) = store.problems()
        assert problem.serious and "catalog.ckpt: corrupt at byte offset" in problem.message
    other_version = (encode_header(b"SS.CATLG", version=1)
                     + source.read_bytes(CHECKPOINT_NAME)[HEADER_SIZE:])
    with TranscriptStore.open(clone(source, make_directory(),
                                    {CHECKPOINT_NAME: other_version})) as store:
        (problem,) = store.problems()
        assert not problem.serious and "unsupported version 1" in problem.message


def test_without_checkpoints_in_use_the_claim_still_counts(
    make_directory: Callable[[], Directory], source: Directory,
) -> None:
    full = source.read_bytes(LOG_FILE)
    directory = clone(source, make_directory(), {LOG_FILE: full[:-1]})
    message = refused(directory, writer=True, config=EngineConfig(catalog_checkpoints=False))
    assert message.startswith(f"{directory.location(LOG_FILE)}: 1 byte of committed "
                              f"transactions is missing (bytes {len(full) - 1}..{len(full)}")
