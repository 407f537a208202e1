"""Committed index files of every layout still open and read the same.

`tests/index/compat_v1/index/` was written once by this code (see `write_fixture` below,
kept as the recipe): three rows, a tombstone for doc 0, window states (`w2` dirty), at
store generation 2, with posting blocks of 2 documents. Its terms file has layout 1
(texts inline in the document rows). `tests/index/compat_v2/index/` was written by the
same recipe after issue 5 moved the texts into blocks of their own (terms-file layout 2,
`engine.codec.terms_file`); its manifest and postings file are byte-equal to version 1's.
`tests/index/compat_v3/index/` was written by the same recipe after the terms file became
a row table read by offset (terms layout 3) and posting lists packed arrays (postings
layout 2); the manifest is unchanged. `tests/index/compat_v4/index/` was written after
the manifest gained the index statistics (document count and total tokens); only the
manifest changed. `tests/index/compat_v5/index/` was written after the terms file moved
its per-row columns out of the table map into a columns record (terms layout 4) and the
manifest's tombstones became runs of consecutive doc ids; the postings file is unchanged.
`tests/index/compat_v6/index/` was written after the row table stored its group table
as columns (session ids joined, one role byte a pair); only the terms file changed.
If a change to the codec makes a test here fail, the format changed: add a new layout
(or bump `engine.codec.FORMAT_VERSION`) and a new fixture instead of rewriting these.
"""

from __future__ import annotations

from pathlib import Path

import pytest

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

FIXTURE_V1 = Path(__file__).parent / "compat_v1"
FIXTURE_V2 = Path(__file__).parent / "compat_v2"
FIXTURE_V3 = Path(__file__).parent / "compat_v3"
FIXTURE_V4 = Path(__file__).parent / "compat_v4"
FIXTURE_V5 = Path(__file__).parent / "compat_v5"
FIXTURE = Path(__file__).parent / "compat_v6"
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
    flush_index(directory, index, SEARCH_PROFILE.label(), EngineConfig())
    index.delete_document(0)
    flush_index(directory, index, SEARCH_PROFILE.label(), EngineConfig())


@pytest.mark.parametrize("fixture", [FIXTURE_V1, FIXTURE_V2, FIXTURE_V3, FIXTURE_V4, FIXTURE_V5,
                                     FIXTURE],
                         ids=["layout1", "layout2", "layout3", "statistics", "columns",
                              "group-columns"])
def test_committed_files_open_with_their_rows_texts_postings_and_states(fixture):
    index = load_index(FileDirectory(fixture), SEARCH_PROFILE.label())
    assert check_index(index) == []
    assert (index.generation, index.next_doc_id, index.deleted) == (2, 3, {0})
    assert [(record.doc_id, record.message_id, record.length) for record in index.documents()] == [
        (1, "m2", 5), (2, "m1", 2),
    ]
    assert [record.text for record in index.documents()] == [ROWS[1][4], ROWS[2][4]]
    assert [record.text_is_ascii for record in index.documents()] == [True, False]
    assert index.postings("deployment") == [Posting(1, (1,)), Posting(2, (1,))]
    assert index.postings("cafe") == []  # doc 0 is deleted
    assert phrase_occurrences(index, ["明天下午三点开项目评审会议讨论排期", "deploy"], prefix=True) == {2: [0]}
    assert index.window_states == {"w1": WindowIndexState(1, "m2"), "w2": WindowIndexState(0, "m1", True)}


def test_the_recipe_still_writes_the_same_bytes(tmp_path):
    write_fixture(tmp_path)
    for name in ("manifest", "segment-000001.terms", "segment-000001.postings"):
        assert (tmp_path / "index" / name).read_bytes() == (FIXTURE / "index" / name).read_bytes()


@pytest.mark.parametrize("newer, older, changed", [
    (FIXTURE_V2, FIXTURE_V1, ("segment-000001.terms",)),
    (FIXTURE_V3, FIXTURE_V2, ("segment-000001.terms", "segment-000001.postings")),
    (FIXTURE_V4, FIXTURE_V3, ("manifest",)),
    (FIXTURE_V5, FIXTURE_V4, ("manifest", "segment-000001.terms")),
    (FIXTURE, FIXTURE_V5, ("segment-000001.terms",)),
], ids=["layout2", "layout3", "statistics", "columns", "group-columns"])
def test_each_new_layout_changed_only_the_files_it_names(newer, older, changed):
    for name in ("manifest", "segment-000001.terms", "segment-000001.postings"):
        same = (newer / "index" / name).read_bytes() == (older / "index" / name).read_bytes()
        assert same == (name not in changed), name
