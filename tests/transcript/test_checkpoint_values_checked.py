"""A checkpoint whose CRCs are right but whose values are not what the grammar says
(`engine.codec.catalog_file`) is refused when the store opens, where the store can still
replay its log instead, not at a later read that the lazy catalog makes (the reviewer's
findings on the catalog opened without its entries): a session key or a session id that
is not a string; and a head whose event count is the msgpack `true` is read as the
number it stands for (what the sum of the windows' counts said before)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from engine.codec import catalog_file
from engine.codec.framing import encode_record
from engine.config import EngineConfig
from engine.directory import MemoryDirectory
from engine.model import SessionWindow
from engine.transcript.checkpoint import CHECKPOINT_NAME, open_checkpoint
from engine.transcript.store import TranscriptStore
from tests.transcript.test_checkpoint_streamed_save import checkpoint_bytes


def _store_with_a_checkpoint() -> MemoryDirectory:
    directory = MemoryDirectory()
    with TranscriptStore.create(directory, config=EngineConfig()) as store, \
            store.transaction() as transaction:
        transaction.put_window(SessionWindow("w1", "agent:main:a"))
        transaction.append_event("w1", {"type": "message", "id": "m", "message": {
            "role": "user", "content": "hi"}})
    return directory


def _rewrite(directory: MemoryDirectory, data: bytes) -> None:
    with directory.open_atomic(CHECKPOINT_NAME) as writer:
        writer.write(data)
        writer.commit()


@pytest.mark.parametrize("keys", [((["agent:main:a"], ("w1",)),),
                                  (("agent:main:a", (["w1"],)),)],
                         ids=["key", "session id"])
def test_keys_that_are_not_strings_are_refused_at_open(keys: tuple) -> None:
    directory = _store_with_a_checkpoint()
    checkpoint = catalog_file.decode_catalog_file(checkpoint_bytes(directory), "checkpoint")
    _rewrite(directory, catalog_file.encode_catalog_file(
        dataclasses.replace(checkpoint, keys=keys)))
    with TranscriptStore.open(directory, config=EngineConfig()) as store:
        assert store.checkpoint_ignored is not None  # read from the log instead
        assert "not a string" in store.checkpoint_ignored
        assert [window.session_id for window in store.windows_of("agent:main:a")] == ["w1"]
        assert store.stats()["windows"] == 1


def test_an_event_count_written_as_true_is_read_as_one(monkeypatch) -> None:
    directory = _store_with_a_checkpoint()
    checkpoint = catalog_file.decode_catalog_file(checkpoint_bytes(directory), "checkpoint")

    def head_with_true(stored, index_length, index_crc, positions_length, positions_crc):
        return encode_record(["head", stored.segment, stored.offset, stored.record_count,
                              stored.records_crc, stored.sealed, stored.transaction_id,
                              stored.commit_offset, len(stored.windows), True,
                              index_length, index_crc, positions_length, positions_crc])

    monkeypatch.setattr(catalog_file, "head_record", head_with_true)
    _rewrite(directory, catalog_file.encode_catalog_file(checkpoint))
    with TranscriptStore.open(directory, config=EngineConfig()) as store:
        assert json.dumps({"events": store.stats()["events"]}) == '{"events": 1}'
    opened = open_checkpoint(directory, EngineConfig())
    assert opened is not None
    try:
        assert type(opened.claim().event_count) is int and opened.claim().event_count == 1
    finally:
        opened.close()
