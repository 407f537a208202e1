"""Committed index files of format version 1 still open and read the same.

`tests/index/compat_v1/index/` was written once by this code (see `write_fixture` below,
kept as the recipe): three rows, a tombstone for doc 0, window states (`w2` dirty), at
store generation 2, with posting blocks of 2 documents. If a change to the codec makes
this test fail, the format changed: bump `engine.codec.FORMAT_VERSION` and add a
`compat_v2` fixture instead of rewriting this one.
"""

from __future__ import annotations

from pathlib import Path

from engine.analysis.profiles import SEARCH_PROFILE
from engine.config import EngineConfig
from engine.directory import FileDirectory
from engine.index.check import check_index
from engine.index.inverted_index import InvertedIndex
from engine.index.lifecycle import WindowIndexState
from engine.index.matching import phrase_occurrences
from engine.index.postings import Posting
from engine.index.writer import flush_index, load_index
from engine.model import IndexEntry

FIXTURE = Path(__file__).parent / "compat_v1"
ROWS = [
    ("w1", "m1", "user", 10.0, "Café crème, s'il vous plaît", 0),
    ("w1", "m2", "assistant", 11.0, "The deployment failed on friday.", 1),
    ("w2", "m1", "user", 12.0, "明天下午三点开项目评审会议讨论排期 deployment", 0),
]


def write_fixture(folder: Path) -> None:
    """The recipe that produced the committed files."""
    analyzer = SEARCH_PROFILE.analyzer()
    index = InvertedIndex()
    for row in ROWS:
        index.add_entry(IndexEntry(*row), analyzer.terms(row[4]))
    index.window_states.update({"w1": WindowIndexState(1, "m2"), "w2": WindowIndexState(0, "m1", True)})
    index.generation = 2
    directory = FileDirectory(folder)
    flush_index(directory, index, SEARCH_PROFILE.label(), EngineConfig(index_block_size=2))
    index.delete_document(0)
    flush_index(directory, index, SEARCH_PROFILE.label(), EngineConfig(index_block_size=2))


def test_version_1_files_open_with_their_rows_postings_and_states():
    index = load_index(FileDirectory(FIXTURE), SEARCH_PROFILE.label())
    assert check_index(index) == []
    assert (index.generation, index.next_doc_id, index.deleted) == (2, 3, {0})
    assert [(record.doc_id, record.message_id, record.length) for record in index.documents()] == [
        (1, "m2", 5), (2, "m1", 2),
    ]
    assert index.postings("deployment") == [Posting(1, (1,)), Posting(2, (1,))]
    assert index.postings("cafe") == []  # doc 0 is deleted
    assert phrase_occurrences(index, ["明天下午三点开项目评审会议讨论排期", "deploy"], prefix=True) == {2: [0]}
    assert index.window_states == {"w1": WindowIndexState(1, "m2"), "w2": WindowIndexState(0, "m1", True)}


def test_the_recipe_still_writes_the_same_bytes(tmp_path):
    write_fixture(tmp_path)
    for name in ("manifest", "segment-000001.terms", "segment-000001.postings"):
        assert (tmp_path / "index" / name).read_bytes() == (FIXTURE / "index" / name).read_bytes()
