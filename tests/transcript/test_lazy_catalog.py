"""A catalog loaded from a checkpoint builds its entries and keys on first use
(`Catalog.loaded`, through `catalog_of`); `built_catalog_of`, which builds them at once,
is its oracle: every read and every change must see the same."""

from __future__ import annotations

from array import array

import pytest

from engine.codec.catalog_file import CatalogCheckpoint
from engine.config import EngineConfig
from engine.directory import MemoryDirectory
from engine.errors import StoreError, UnknownSession
from engine.model import SessionWindow
from engine.transcript.catalog import Catalog, SharedPositions
from engine.transcript.checkpoint import (
    built_catalog_of,
    catalog_of,
    checkpoint_of,
    event_total,
    load_checkpoint,
    open_checkpoint,
)
from engine.transcript.log_positions import RecordPosition
from engine.transcript.log_reader import LogReader
from engine.transcript.store import TranscriptStore


def message(text: str) -> dict[str, object]:
    return {"type": "message", "id": text, "message": {"role": "user", "content": text}}


def written_checkpoint() -> CatalogCheckpoint:
    """The checkpoint of a store of five windows over three keys, one archived, one moved
    to another key, one deleted, with events."""
    directory = MemoryDirectory()
    with TranscriptStore.create(directory, config=EngineConfig(log_roll_bytes=400)) as store:
        with store.transaction() as transaction:
            for number in range(5):
                transaction.put_window(SessionWindow(
                    f"w{number}", f"agent:main:k{number % 3}", archived=number == 3))
        for number in range(8):
            with store.transaction() as transaction:
                window = f"w{number % 5}"
                transaction.append_event(window, message(f"m{number}"))
        with store.transaction() as transaction:
            transaction.put_window(SessionWindow("w1", "agent:main:k0", title="moved"))
            transaction.delete_session("agent:main:k2")
    catalog = Catalog()
    reader = LogReader(directory)
    for committed in reader.iter_transactions():
        catalog.apply(committed, str)
    return checkpoint_of(catalog, reader.cursor, reader.sealed_files)


def both(checkpoint: CatalogCheckpoint) -> tuple[Catalog, Catalog]:
    arrays = (checkpoint.event_segments, checkpoint.event_offsets, checkpoint.event_lengths)
    return (catalog_of(checkpoint, SharedPositions(arrays)),
            built_catalog_of(checkpoint, SharedPositions(arrays)))


def state(catalog: Catalog) -> tuple:
    return ([(session_id, entry.window, entry.events.to_list())
             for session_id, entry in catalog.entries.items()],
            {key: list(ids) for key, ids in catalog.keys.items()}, catalog.event_total,
            catalog.generation, list(catalog.transaction_files),
            list(catalog.transaction_offsets), catalog.windows(), catalog.window_count())


def test_the_reads_a_search_makes_answer_without_building_the_entries() -> None:
    lazy, built = both(written_checkpoint())
    assert lazy.windows() == built.windows() and len(built.windows()) == 4
    assert [window.session_id for window in lazy.windows()] == ["w0", "w1", "w3", "w4"]
    assert lazy.window("w1") == built.window("w1") and lazy.window("w1").title == "moved"
    assert lazy.window_count() == built.window_count() == 4
    with pytest.raises(UnknownSession):
        lazy.window("w2")
    with pytest.raises(UnknownSession):
        built.window("w2")
    assert "entries" not in vars(lazy) and "keys" not in vars(lazy)
    windows = lazy.windows()
    assert state(lazy) == state(built)  # builds them
    assert all(mine is theirs for mine, theirs in zip(windows, lazy.windows(), strict=True))


@pytest.mark.parametrize("first", ["entries", "keys"])
def test_either_read_builds_both(first: str) -> None:
    lazy, built = both(written_checkpoint())
    assert getattr(lazy, first) == getattr(built, first) or first == "entries"
    assert "entries" in vars(lazy) and "keys" in vars(lazy)
    assert state(lazy) == state(built)


def test_changes_after_loading_are_the_same() -> None:
    lazy, built = both(written_checkpoint())
    for catalog in (lazy, built):
        catalog.put_window(SessionWindow("w9", "agent:main:k1"))
        catalog.put_window(SessionWindow("w0", "agent:main:k9"))
        assert catalog.append_event("w9", 0, RecordPosition(1, 16, 30)) is None
        assert catalog.append_event("w0", 1, RecordPosition(1, 16, 30)) is not None
        assert catalog.clear_events("w3") is None
        assert catalog.delete_session("agent:main:k1") == ("w4", "w9")
    assert state(lazy) == state(built)


def test_a_window_listed_twice_is_refused_by_both() -> None:
    checkpoint = written_checkpoint()
    windows = checkpoint.windows
    twice = CatalogCheckpoint(*[getattr(checkpoint, name) for name in (
        "segment", "offset", "record_count", "records_crc", "sealed", "transaction_id",
        "commit_offset", "sealed_segments")], (*windows[:-1], windows[0]),
        *[getattr(checkpoint, name) for name in (
            "event_counts", "event_segments", "event_offsets", "event_lengths", "keys",
            "transaction_segments", "transaction_offsets")])
    arrays = (array("i"), array("q"), array("i"))
    for build in (catalog_of, built_catalog_of):
        with pytest.raises(StoreError, match="twice"):
            build(twice, SharedPositions(arrays))


def test_a_checkpoint_read_without_its_positions_counts_its_events_from_its_head() -> None:
    directory = MemoryDirectory()
    with TranscriptStore.create(directory, config=EngineConfig(log_roll_bytes=400)) as store, \
            store.transaction() as transaction:
        transaction.put_window(SessionWindow("w1", "agent:main:a"))
        transaction.put_window(SessionWindow("w2", "agent:main:b"))
        for number in range(7):  # not the 5 records the positions region follows
            transaction.append_event(f"w{1 + number % 2}", message(f"m{number}"))
    loaded = load_checkpoint(directory, EngineConfig())
    assert loaded is not None and loaded.catalog.event_total == 7
    assert loaded.catalog.entry("w1").events.count == 4
    loaded.positions_reader.close()
    opened = open_checkpoint(directory, EngineConfig())
    region = opened.checkpoint.positions_region if opened is not None else None
    assert region is not None and region.records_before != 7
    assert event_total(opened.checkpoint) == sum(opened.checkpoint.event_counts) == 7
    assert opened.claim().event_count == 7
    opened.close()
