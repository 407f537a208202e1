"""The active path a streamed import keeps of each window it holds for the rebuild with
its commit (`streaming.HeldWindow.seqs`) is an array of integers, not a tuple of int
objects, and of the narrowest unsigned integers that hold the window's seqs (every held
window's path waits until the commit, where an import's peak is set), and it is the
path `tree.visible_events` gives."""

from __future__ import annotations

from array import array
from pathlib import Path

from engine.backends.reference import streaming
from engine.backends.reference.backend import ReferenceBackend
from engine.codec.postings_file import smallest_typecode
from engine.directory import MemoryDirectory
from engine.ingest import import_sources
from engine.model import StoredEvent
from engine.transcript.tree import visible_events
from tests.ingest.test_reference_whole_windows import SMALL
from tests.ingest.test_spooled_tails import long_windows
from tests.ingest.test_whole_windows import write_corpus


def test_held_paths_are_arrays_of_the_visible_seqs(tmp_path: Path) -> None:
    windows = long_windows()
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
        import_sources(backend, [corpus], received_at=1.0, whole_windows=True, held_events=40)
        paths = {session_id: window for session_id, window in held.items() if window is not None}
        assert paths
        for session_id, window in paths.items():
            events = [StoredEvent(session_id, seq, event)
                      for seq, event in enumerate(windows[session_id][1])]
            assert isinstance(window.seqs, array)
            assert window.seqs.typecode == smallest_typecode(len(events))
            assert window.seqs.tolist() == [stored.seq for stored in visible_events(events)]
    finally:
        streaming.StreamedIndexing.rebuilds = rebuilds  # type: ignore[method-assign]
        backend.close()
