"""The active path a streamed import keeps of each window it holds for the rebuild with
its commit (`streaming.HeldWindow.seqs`) is an array of integers, not a tuple of int
objects, and of the narrowest unsigned integers that hold the window's seqs (every held
window's path waits until the commit, where an import's peak is set), and it is the
path `tree.visible_events` gives."""

from __future__ import annotations

from array import array
from pathlib import Path

import pytest

from engine.backends.reference import streaming
from engine.backends.reference.backend import ReferenceBackend
from engine.codec.postings_file import smallest_typecode
from engine.directory import MemoryDirectory
from engine.ingest import import_sources
from engine.model import StoredEvent
from engine.transcript.tree import visible_events
from tests.ingest.test_reference_whole_windows import SMALL
from tests.ingest.test_spooled_tails import long_windows
from tests.ingest.test_whole_windows import message, write_corpus


def wide_window() -> list[dict]:
    """300 messages, rewound to the 100th after the 280th: seqs past a byte's range."""
    events = [message(number, f"wide {number}", f"m{number - 1}" if number else None)
              for number in range(280)]
    events.append({"type": "leaf", "id": "lw", "parentId": "m279", "targetId": "m100"})
    return [*events, *(message(number, f"wide {number}", "m100" if number == 280
                               else f"m{number - 1}") for number in range(280, 300))]


@pytest.mark.parametrize("wide", [False, True])
def test_held_paths_are_arrays_of_the_visible_seqs(tmp_path: Path, wide: bool) -> None:
    """Every held window's path; `wide`: one window of 301 events held whole (it takes
    two bytes a seq), as an import holds a window shorter than `held_events`."""
    windows = long_windows()
    if wide:
        windows = {"l-wide": ("agent:main:long-wide", wide_window())}
    corpus = write_corpus(tmp_path / "corpus", windows)
    held: dict[str, streaming.HeldWindow | None] = {}
    rebuilds = streaming.StreamedIndexing.rebuilds

    def kept(follower: streaming.StreamedIndexing) -> dict[str, streaming.HeldWindow | None] | None:
        taken = rebuilds(follower)
        held.update(taken or {})
        return taken

    backend = ReferenceBackend.create_in(MemoryDirectory(), config=SMALL)
    try:
        streaming.StreamedIndexing.rebuilds = kept  # type: ignore[method-assign]
        import_sources(backend, [corpus], received_at=1.0, whole_windows=True,
                       held_events=400 if wide else 40)
        paths = {session_id: window for session_id, window in held.items() if window is not None}
        assert paths
        if wide:
            assert paths["l-wide"].seqs.typecode == "H" and max(paths["l-wide"].seqs) == 300
        for session_id, window in paths.items():
            events = [StoredEvent(session_id, seq, event)
                      for seq, event in enumerate(windows[session_id][1])]
            assert isinstance(window.seqs, array)
            assert window.seqs.typecode == smallest_typecode(len(events))
            assert window.seqs.tolist() == [stored.seq for stored in visible_events(events)]
    finally:
        streaming.StreamedIndexing.rebuilds = rebuilds  # type: ignore[method-assign]
        backend.close()
