"""A checkpoint save's positions read a slice at a time from the catalog's windows
(`PositionsColumn`, `checkpoint_of(..., whole_positions=False)`) against the clear
version, the three arrays copied whole: the same slices, lengths and items for windows
with positions of their own, ranges of positions shared from a loaded checkpoint (read or
not yet read), and windows without events; and a saved checkpoint is the file
`encode_catalog_file` makes of the whole arrays."""

from __future__ import annotations

from array import array

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.codec.catalog_file import decode_catalog_file, encode_catalog_file
from engine.directory import MemoryDirectory
from engine.model import SessionWindow
from engine.transcript.catalog import EventPositions, SharedPositions
from engine.transcript.checkpoint import CHECKPOINT_NAME, checkpoint_of
from engine.transcript.positions_column import PositionsColumn
from engine.transcript.store import TranscriptStore

NAMES = ("file_numbers", "offsets", "lengths")


def windows_of(shared_counts: list[int], own: list[tuple[int, int]], loaded: bool
               ) -> list[EventPositions]:
    """Windows sharing ranges of one set of arrays (`shared_counts`), some then appended
    to (`own`: which window, how many), in a shuffled order with empty ones among them."""
    total = sum(shared_counts)
    arrays = (array("i", [number % 5 for number in range(total)]),
              array("q", [8 + 40 * number for number in range(total)]),
              array("i", [30 + number % 7 for number in range(total)]))
    shared = SharedPositions(arrays) if loaded else SharedPositions(load=lambda: arrays)
    windows = EventPositions.ranges(shared, array("i", shared_counts))
    for index, extra in own:
        window = windows[index % len(windows)] if windows else EventPositions()
        for number in range(extra):
            window.append_at(9, 100 + number, 11 + number)
        if not windows:
            windows.append(window)
    windows.insert(len(windows) // 2, EventPositions())
    return windows


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 6), max_size=8),
       st.lists(st.tuples(st.integers(0, 7), st.integers(0, 4)), max_size=4),
       st.booleans(), st.lists(st.tuples(st.integers(-3, 40), st.integers(-3, 40)),
                               max_size=6))
def test_a_column_is_the_whole_array(shared_counts: list[int], own: list[tuple[int, int]],
                                     loaded: bool, slices: list[tuple[int, int]]) -> None:
    windows = windows_of(shared_counts, own, loaded)
    whole = array("i"), array("q"), array("i")
    for window in windows:
        window.extend_into(*whole)
    for name, expected in zip(NAMES, whole, strict=True):
        column = PositionsColumn.of(windows, name)
        assert len(column) == len(expected)
        assert list(column) == list(expected)
        assert column[:] == expected and column[:].typecode == expected.typecode
        for start, stop in slices:
            assert column[start:stop] == expected[start:stop]
        for index in range(-len(expected), len(expected)):
            assert column[index] == expected[index]


def test_a_saved_checkpoint_is_the_whole_arrays_file() -> None:
    """Windows read from a loaded checkpoint, appended to, and new ones, saved: the
    file is `encode_catalog_file` of the checkpoint with its positions copied whole."""
    directory = MemoryDirectory()
    with TranscriptStore.create(directory) as store, store.transaction() as transaction:
        for number in range(5):
            transaction.put_window(SessionWindow(f"w{number}", "agent:main:k"))
            for seq in range(number * 3):
                transaction.append_event(f"w{number}", {"type": "x", "n": seq}, 5.0)
    with TranscriptStore.open(directory, writer=True) as store:
        with store.transaction() as transaction:
            transaction.append_event("w2", {"type": "x", "n": 99}, 6.0)
            transaction.put_window(SessionWindow("v", "agent:main:j"))
            transaction.append_event("v", {"type": "x"}, 7.0)
        store.rewrite_checkpoint()
        saved = directory.read_bytes(CHECKPOINT_NAME)
        whole = checkpoint_of(store._catalog, store._committed_cursor(), store._sealed_files)
    assert isinstance(whole.event_offsets, array)
    assert saved == encode_catalog_file(whole)
    assert len(decode_catalog_file(saved, "ckpt").event_offsets) == 5 * 4 // 2 * 3 + 2
