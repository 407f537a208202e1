"""The catalog and its checkpoint without a store: the replay rule, and the round trip of
a catalog through its checkpoint (positions shared by range, read on first use)."""

from __future__ import annotations

import pytest

from engine.codec.log_file import CommitRecord, EventRecord
from engine.config import EngineConfig
from engine.directory import MemoryDirectory
from engine.errors import CorruptFile
from engine.model import SessionWindow
from engine.transcript.catalog import Catalog, SharedPositions
from engine.transcript.checkpoint import catalog_of, checkpoint_of, load_checkpoint
from engine.transcript.log_positions import CommittedTransaction, RecordPosition
from engine.transcript.log_reader import LogReader
from engine.transcript.store import TranscriptStore

MAIN = SessionWindow("w1", "agent:main:main")
OTHER = SessionWindow("w2", "agent:main:other")


def message(text: str) -> dict[str, object]:
    return {"type": "message", "id": text, "message": {"role": "user", "content": text}}


def written_store(directory: MemoryDirectory) -> None:
    """Six transactions over two windows, in several log files; closing saves a checkpoint."""
    with TranscriptStore.create(directory, config=EngineConfig(log_roll_bytes=300)) as store:
        for number in range(6):
            with store.transaction() as transaction:
                if number == 0:
                    transaction.put_window(MAIN)
                    transaction.put_window(OTHER)
                transaction.append_event("w1" if number % 2 else "w2", message(str(number)))


def replayed(directory: MemoryDirectory) -> tuple[Catalog, LogReader]:
    catalog, reader = Catalog(), LogReader(directory)
    for committed in reader.iter_transactions():
        catalog.apply(committed, str)
    return catalog, reader


def positions_of(catalog: Catalog) -> dict[str, list[RecordPosition]]:
    return {session_id: entry.events.to_list() for session_id, entry in catalog.entries.items()}


def test_an_event_the_state_does_not_expect_is_corruption_naming_its_log_file() -> None:
    catalog = Catalog()
    position = RecordPosition(3, 120, 40)
    stray = CommittedTransaction(((position, EventRecord("w9", 0, 1.0, {})),),
                                 CommitRecord(1, 0.0), position)
    with pytest.raises(CorruptFile) as refused:
        catalog.apply(stray, lambda number: f"log-{number}")
    assert (refused.value.path, refused.value.offset) == ("log-3", 120)
    assert refused.value.reason == "event for unknown window 'w9'"
    assert catalog.generation == 0


def test_a_catalog_survives_its_checkpoint_value() -> None:
    directory = MemoryDirectory()
    written_store(directory)
    catalog, reader = replayed(directory)
    checkpoint = checkpoint_of(catalog, reader.cursor, reader.sealed_files)
    assert checkpoint.transaction_id == 6 and len(checkpoint.sealed_segments) >= 1
    arrays = (checkpoint.event_segments, checkpoint.event_offsets, checkpoint.event_lengths)
    again = catalog_of(checkpoint, SharedPositions(arrays))
    assert positions_of(again) == positions_of(catalog)
    assert again.keys == catalog.keys and again.event_total == catalog.event_total == 6
    assert list(again.transaction_files) == list(catalog.transaction_files)


def test_a_loaded_checkpoint_reads_its_positions_only_when_first_needed() -> None:
    directory = MemoryDirectory()
    assert load_checkpoint(directory, EngineConfig()) is None
    written_store(directory)
    loaded = load_checkpoint(directory, EngineConfig())
    assert loaded is not None and loaded.positions_reader is not None
    catalog, reader = replayed(directory)
    assert loaded.transaction_id == catalog.generation == 6
    assert (loaded.cursor, list(loaded.sealed_files)) == (reader.cursor, reader.sealed_files)
    shared = loaded.catalog.entry("w1").events.shared
    assert shared is not None and not shared.loaded
    assert positions_of(loaded.catalog) == positions_of(catalog)
    assert shared.loaded and loaded.positions_reader.problem is None
    loaded.positions_reader.close()
