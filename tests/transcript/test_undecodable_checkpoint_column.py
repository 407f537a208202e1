"""A catalog checkpoint whose records' CRCs hold but one of whose window columns does
not decode (a string that is not UTF-8: only a faulty writer makes one). A search's open
leaves that column unread (`engine.codec.catalog_index`), so it answers from the columns
it reads and fails with a clear `StoreError` naming the checkpoint when a window is
built; a writer's open and `verify`'s decode every column, so for them the checkpoint is
a damaged one: ignored, the log replayed, and reported, as before the columns were read
lazily."""

from __future__ import annotations

import pytest

import engine.codec.catalog_file_pieces as pieces
from engine.codec.framing import encode_frame, encode_payload
from engine.config import EngineConfig
from engine.directory import MemoryDirectory
from engine.errors import StoreError
from engine.model import SessionWindow
from engine.transcript.checkpoint import CHECKPOINT_NAME
from engine.transcript.store import TranscriptStore


def store_with_a_bad_title(monkeypatch: pytest.MonkeyPatch) -> MemoryDirectory:
    """Three windows; the checkpoint's title column holds bytes that are not UTF-8
    under a valid CRC."""
    written = pieces.encode_record

    def bad_record(value):
        if isinstance(value, list) and value and value[0] == "windows":
            payload = encode_payload(value).replace(b"\xa6TITLEX", b"\xa6TITL\xff\xfe")
            return encode_frame(payload)
        return written(value)

    directory = MemoryDirectory()
    with monkeypatch.context() as patch:
        patch.setattr(pieces, "encode_record", bad_record)
        with TranscriptStore.create(directory, config=EngineConfig()) as store:
            for number in range(3):
                with store.transaction() as transaction:
                    transaction.put_window(SessionWindow(
                        f"w{number}", f"agent:main:{number}",
                        title="TITLEX" if number == 1 else f"t{number}"))
    return directory


def test_a_search_reads_its_columns_and_a_window_build_fails_clearly(monkeypatch):
    directory = store_with_a_bad_title(monkeypatch)
    store = TranscriptStore.open(directory, config=EngineConfig())
    assert store.problems() == []
    assert [row[0] for row in store.scope_rows()] == ["w0", "w1", "w2"]
    for _attempt in range(2):
        with pytest.raises(StoreError, match="a window column of the catalog checkpoint "
                                             "does not decode") as raised:
            store.window("w1")
        assert directory.location(CHECKPOINT_NAME) in str(raised.value)


@pytest.mark.parametrize("opening", ["writer", "verify"])
def test_a_writer_and_verify_take_it_for_a_damaged_checkpoint(monkeypatch, opening):
    directory = store_with_a_bad_title(monkeypatch)
    options = {"writer": True} if opening == "writer" else {"accept_lost_commits": True}
    store = TranscriptStore.open(directory, config=EngineConfig(), **options)
    try:
        assert store.checkpoint_ignored is not None
        assert [problem.location for problem in store.problems()] == [
            directory.location(CHECKPOINT_NAME)]
        assert [window.title for window in store.windows()] == ["t0", "TITLEX", "t2"]
    finally:
        store.close()
