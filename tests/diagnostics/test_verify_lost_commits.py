"""The reference backend's index manifest is evidence of what was committed, and verify
reports and repairs a log that lost committed transactions.

The manifest is written after the commits it covers were fsynced, so a log that holds
fewer transactions lost committed data: opening refuses it before a writer cuts
anything (and never rebuilds a smaller index in silence); `verify_backend` reports it
and does not compare the index; `repair_backend` drops what is lost, says so, and the
store verifies afterwards. Every test body runs on `FileDirectory` and `MemoryDirectory`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from engine.backends.reference.backend import ReferenceBackend, manifest_claim
from engine.codec.manifest_file import Manifest, decode_manifest_generation, encode_manifest
from engine.config import EngineConfig
from engine.diagnostics.verify import repair_backend, verify_backend
from engine.directory import Directory
from engine.errors import CorruptFile, StoreError
from engine.index.loading import MANIFEST_NAME
from engine.model import SearchRequest, SessionWindow
from engine.transcript.checkpoint import CHECKPOINT_NAME
from engine.transcript.log_files import log_file_name
from tests.transcript.store_files import directory_maker

LOG_FILE = log_file_name(1)
#: Flush the index after every commit of 2 rows or more: the manifest then covers them
#: while no checkpoint does (the default saves one only at a seal or a close).
FLUSH_OFTEN = EngineConfig(index_flush_documents=2)


@pytest.fixture(params=["file", "memory"])
def make_directory(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], Directory]:
    return directory_maker(request.param, tmp_path)


def message(message_id: str, parent: str | None, text: str) -> dict:
    return {"type": "message", "id": message_id, "parentId": parent, "timestamp": 1.0,
            "message": {"role": "user", "content": text}}


def build(directory: Directory) -> tuple[int, int]:
    """Two transactions, the index flushed after each; the writer is dropped without a
    close (as a crash would leave it), so no checkpoint covers them. Returns the log's
    size after the first and after the second transaction."""
    backend = ReferenceBackend.create_in(directory, config=FLUSH_OFTEN)
    with backend.transaction() as transaction:
        transaction.put_window(SessionWindow("w1", "agent:main:main"))
        transaction.append_event("w1", message("m1", None, "first saffron"))
        transaction.append_event("w1", message("m2", "m1", "second saffron"))
    first = directory.size(LOG_FILE)
    with backend.transaction() as transaction:
        transaction.append_event("w1", message("m3", "m2", "third saffron"))
        transaction.append_event("w1", message("m4", "m3", "fourth saffron"))
    backend.store._lock.release()
    assert not directory.exists(CHECKPOINT_NAME)
    assert backend.index.generation == 2
    return first, directory.size(LOG_FILE)


def cut_log(directory: Directory, size: int) -> None:
    data = directory.read_bytes(LOG_FILE)[:size]
    directory.remove(LOG_FILE)
    directory.write_atomic(LOG_FILE, data)


def test_the_manifest_claim_is_read_without_the_rest(make_directory) -> None:
    directory = make_directory()
    build(directory)
    (claim,) = manifest_claim(directory)
    assert (claim.source, claim.transaction_id) == (directory.location(MANIFEST_NAME), 2)
    data = bytearray(directory.read_bytes(MANIFEST_NAME))
    data[30] ^= 0x01
    with pytest.raises(CorruptFile):
        decode_manifest_generation(bytes(data), "m")
    directory.write_atomic(MANIFEST_NAME, bytes(data))
    assert manifest_claim(directory) == ()  # unreadable: no claim (opening names it)
    assert decode_manifest_generation(encode_manifest(Manifest(0, 0, "p", (), (), ())),
                                      "m") == 0


def test_a_log_behind_the_manifest_is_refused_before_a_writer_cuts(make_directory) -> None:
    directory = make_directory()
    first, second = build(directory)
    cut_log(directory, second - 5)
    for writer in (False, True):
        with pytest.raises(StoreError) as refused:
            ReferenceBackend.open_in(directory, writer=writer)
        assert str(refused.value).startswith(
            f"{directory.location(LOG_FILE)}: the log ends after byte {first} in "
            f"{second - 5 - first} bytes that do not replay (")
        assert (f"; {directory.location(MANIFEST_NAME)} records 2 committed transactions, "
                "the log holds 1; run `session-search verify --store ") in str(refused.value)
    assert directory.size(LOG_FILE) == second - 5  # nothing was cut


def test_verify_reports_lost_commits_and_repair_drops_them(make_directory) -> None:
    directory = make_directory()
    first, second = build(directory)
    cut_log(directory, second - 5)
    with ReferenceBackend.open_in(directory, accept_lost_commits=True) as reader:
        assert reader.index.generation == 1  # rebuilt from what the log holds
        report = verify_backend(reader)
        assert not report.ok and report.windows == 1
        assert report.problems[0].startswith(f"{directory.location(LOG_FILE)}: the log ends ")
        assert report.problems[1:] == [
            ("the index was not compared: committed transactions are missing from the "
            "transcripts")]
        assert report.notes == [
            ("`verify --repair` can drop transactions 2..2 and go on with what remains (1 "
            "transaction, 2 events): it cuts what is left of them from the end of the log, "
            "saves the catalog checkpoint again and rebuilds the index; it cannot recover "
            "the missing committed bytes: if a backup holds the file, restore it before any "
            "repair or write")]
        assert report.to_json()["notes"] == report.notes
    with ReferenceBackend.open_in(directory, writer=True, accept_lost_commits=True) as writer:
        done = repair_backend(writer)
    location = directory.location(LOG_FILE)
    assert done[0] == (f"{location}: committed transactions 2..2 (1 of 2) are lost; what "
                       "remains: 1 transaction, 2 events; they were dropped")
    assert done[1].startswith(f"{location}: cut {second - 5 - first} bytes after the last "
                              f"intact commit (bytes {first}..{second - 5}: ")
    assert done[2:] == ["rebuilt the index from the transcripts (1 window, 1 transaction)",
                        ("could not recover the missing committed bytes (only a backup of "
                        "the file holds them)")]
    assert directory.size(LOG_FILE) == first
    with ReferenceBackend.open_in(directory) as reopened:
        assert verify_backend(reopened).ok
        hits = reopened.search(SearchRequest("saffron", agent_id="main")).hits
        assert sorted(hit.message_id for hit in hits) == ["m1", "m2"]


def test_a_whole_log_is_not_a_problem(make_directory) -> None:
    directory = make_directory()
    build(directory)
    with ReferenceBackend.open_in(directory, writer=True) as writer:
        assert writer.store.generation == 2 and writer.store.problems() == []
        report = verify_backend(writer)
        assert report.ok and report.notes == [] and report.problems == []
