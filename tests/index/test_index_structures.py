"""Term dictionary, live index statistics, phrase matching against the naive oracle,
flush / merge / reload, and the invariant checker."""

from __future__ import annotations

from array import array
from itertools import accumulate

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.config import EngineConfig
from engine.directory import MemoryDirectory
from engine.errors import CorruptFile
from engine.index.check import check_index
from engine.index.inverted_index import InvertedIndex
from engine.index.loading import ProfileMismatch, load_index
from engine.index.matching import phrase_occurrences
from engine.index.merged_lists import live_lists
from engine.index.postings import Posting
from engine.index.termdict import TermDictionary
from engine.index.writer import _merged_lists, flush_index, merge_index
from engine.model import IndexEntry
from engine.query.ast import Phrase
from engine.query.phrase_match import phrase_positions

PROFILE = "test-profile"
WORDS = ["a", "ab", "abc", "b", "ba", "c"]


def entry(number: int, session_id: str = "w") -> IndexEntry:
    return IndexEntry(session_id, f"m{number}", "user", float(number), f"text {number}", number)


def build(documents: list[list[str]], config: EngineConfig | None = None) -> InvertedIndex:
    index = InvertedIndex(config=config)
    for number, terms in enumerate(documents):
        index.add_entry(entry(number, f"w{number % 3}"), terms)
    return index


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.text("abc", max_size=4), st.integers(), max_size=20), st.text("abc", max_size=2))
def test_term_dictionary_is_a_sorted_dict_with_prefixes(entries, prefix):
    terms = TermDictionary(entries)
    assert list(terms.terms()) == sorted(entries)
    assert list(terms.with_prefix(prefix)) == sorted(t for t in entries if t.startswith(prefix))
    for term, value in entries.items():
        assert terms.get(term) == value


documents_strategy = st.lists(st.lists(st.sampled_from(WORDS), max_size=8), max_size=12)
phrase_strategy = st.builds(
    Phrase, st.lists(st.sampled_from(WORDS), max_size=3).map(tuple), st.booleans()
)


@settings(max_examples=80, deadline=None)
@given(documents_strategy, phrase_strategy, st.sets(st.integers(0, 11)))
def test_phrase_occurrences_equal_the_naive_oracle(documents, phrase, deleted):
    index = build(documents)
    for doc_id in sorted(deleted):
        if doc_id < len(documents):
            index.delete_document(doc_id)
    expected = {}
    for doc_id, terms in enumerate(documents):
        positions = phrase_positions(terms, phrase)
        if positions and doc_id not in deleted:
            expected[doc_id] = positions
    assert phrase_occurrences(index, phrase.terms, prefix=phrase.prefix) == expected
    assert check_index(index) == []


def test_statistics_count_every_live_row_and_drop_deleted_ones():
    index = build([["a", "b"], ["c"], ["a", "a", "a"]])
    assert (index.document_count, index.total_tokens) == (3, 6)
    assert index.average_length == 2.0
    index.delete_document(1)
    assert (index.document_count, index.total_tokens) == (2, 5)
    assert index.postings("c") == []
    assert index.postings("a") == [Posting(0, (0,)), Posting(2, (0, 1, 2))]


def apply_actions(directory, index, documents, actions, config) -> None:
    """Run `actions` (add the next of `documents`, delete the first row, flush, merge)
    on `index`, checking it after each one."""
    pending = list(documents)
    for action in actions:
        if action == "add" and pending:
            index.add_entry(entry(index.next_doc_id), pending.pop(0))
        elif action == "delete" and index.document_count:
            index.delete_document(next(iter(index.documents())).doc_id)
        elif action == "flush":
            flush_index(directory, index, PROFILE, config)
        elif action == "merge":
            merge_index(directory, index, PROFILE, config)
        assert check_index(index) == []


@settings(max_examples=25, deadline=None)
@given(documents_strategy, st.lists(st.sampled_from(["add", "delete", "flush", "merge"]), max_size=10))
def test_flush_merge_and_reload_keep_the_same_index(documents, actions):
    directory = MemoryDirectory()
    tiny = EngineConfig(index_flush_documents=1000, index_merge_segments=3)
    index = InvertedIndex()
    apply_actions(directory, index, documents, actions, tiny)
    flush_index(directory, index, PROFILE, tiny)
    reloaded = load_index(directory, PROFILE)
    assert check_index(reloaded) == []
    assert list(reloaded.documents()) == list(index.documents())
    assert reloaded.next_doc_id == index.next_doc_id
    for word in WORDS:
        assert reloaded.postings(word) == index.postings(word)
        assert reloaded.terms_with_prefix(word) == index.terms_with_prefix(word)


def test_merge_drops_tombstones_and_old_files():
    directory = MemoryDirectory()
    tiny = EngineConfig(index_flush_documents=1000, index_merge_segments=10)
    index = build([["a"], ["b"], ["c"]])
    flush_index(directory, index, PROFILE, tiny)
    index.add_entry(entry(3), ["a", "c"])
    flush_index(directory, index, PROFILE, tiny)
    index.delete_document(0)
    flush_index(directory, index, PROFILE, tiny)
    assert index.deleted == {0}
    assert len(index.segments) == 2
    merge_index(directory, index, PROFILE, tiny)
    assert index.deleted == set()
    assert [segment.name for segment in index.segments] == ["segment-000003"]
    assert directory.list_names("index/") == [
        "index/manifest", "index/segment-000003.postings", "index/segment-000003.terms",
    ]
    assert index.postings("a") == [Posting(3, (0,))]


def test_unreferenced_segment_files_are_removed_by_the_next_commit():
    directory = MemoryDirectory()
    directory.write_atomic("index/segment-000007.terms", b"left by a crashed flush")
    index = build([["a"]])
    flush_index(directory, index, PROFILE, EngineConfig())
    assert "index/segment-000007.terms" not in directory.list_names("index/")


def test_swapped_terms_files_are_refused_naming_the_file():
    """Two segments' terms files swapped (or an older copy put back): the rows a terms
    file holds are not the ones the manifest names, so loading names that file instead
    of a search ending in a KeyError (issue 28, item 3)."""
    directory = MemoryDirectory()
    tiny = EngineConfig(index_flush_documents=1000, index_merge_segments=10)
    index = build([["a"], ["b"]])
    flush_index(directory, index, PROFILE, tiny)
    index.add_entry(entry(2), ["c"])  # a segment of the same shape: two rows, two terms
    index.add_entry(entry(3), ["d"])
    flush_index(directory, index, PROFILE, tiny)
    first, second = "index/segment-000001.terms", "index/segment-000002.terms"
    assert load_index(directory, PROFILE).document_count == 4
    one, two = directory.read_bytes(first), directory.read_bytes(second)
    directory.write_atomic(first, two)
    directory.write_atomic(second, one)
    with pytest.raises(CorruptFile, match=r"segment-000001\.terms: .*holds rows 2\.\.3 \(2 rows\), "
                                          r"the manifest names 0\.\.1 \(2 rows\)"):
        load_index(directory, PROFILE)


def test_loading_with_another_profile_is_refused():
    directory = MemoryDirectory()
    flush_index(directory, build([["a"]]), PROFILE, EngineConfig())
    with pytest.raises(ProfileMismatch, match="index was built with 'test-profile'"):
        load_index(directory, "other")


def test_checker_reports_a_position_past_the_row_length():
    index = build([["a", "b"]])
    index.buffer._doc_ids_and_counts["zz"] = array("I", [0, 1])  # damage on purpose
    index.buffer._positions["zz"] = array("I", [7])
    index.buffer._sorted_terms = None
    problems = check_index(index)
    assert "buffer: term 'zz' doc 0: position outside 0..1" in problems
    assert "buffer: doc 0 positions do not cover 0..1" in problems


def test_checker_reports_rows_that_point_at_missing_messages():
    index = build([["a"], ["b"]])

    def row_source(session_id, seq):
        if seq == 1:
            return False, None
        return True, entry(seq, session_id)

    assert check_index(index, row_source) == ["row 1 (w1 seq 1): points at a missing message"]


def test_a_reader_racing_a_merge_loads_the_newer_manifest():
    directory = MemoryDirectory()
    config = EngineConfig(index_merge_segments=10)
    index = build([["a"], ["b"]])
    flush_index(directory, index, PROFILE, config)
    stale_manifest = directory.read_bytes("index/manifest")
    index.add_entry(entry(2), ["c"])
    merge_index(directory, index, PROFILE, config)  # removes segment-000001
    original_read = directory.read_bytes
    calls = []

    def read_bytes(name, offset=0, length=None):
        if name == "index/manifest" and not calls:
            calls.append(name)
            return stale_manifest  # the reader saw the manifest before the merge
        return original_read(name, offset, length)

    directory.read_bytes = read_bytes
    reloaded = load_index(directory, PROFILE)
    assert [record.doc_id for record in reloaded.documents()] == [0, 1, 2]
    assert [segment.name for segment in reloaded.segments] == ["segment-000002"]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sets(st.integers(0, 39), max_size=30), min_size=1, max_size=3))
def test_tombstone_runs_follow_every_delete_and_a_reload(rounds):
    """Long lists drop deleted rows by runs; the runs come from the manifest after a
    reload and are remade after each delete; either way the answer is the set filter's."""
    from engine.index.postings import DeletedRuns

    every_list_by_runs = EngineConfig(tombstone_runs_factor=0)
    directory = MemoryDirectory()
    index = build([["alpha", "beta"] if number % 3 else ["alpha"] for number in range(40)],
                  every_list_by_runs)
    flush_index(directory, index, "p", EngineConfig())
    for deleted in rounds:
        for doc_id in sorted(deleted - index.deleted):
            index.delete_document(doc_id)
        assert index.deleted_runs() == DeletedRuns.of(index.deleted)
        assert [posting.doc_id for posting in index.postings("alpha")] == list(
            index.term_columns("alpha").doc_ids)
        flush_index(directory, index, "p", EngineConfig())
        index = load_index(directory, "p", config=every_list_by_runs)
        assert index.deleted_runs() == DeletedRuns.of(index.deleted)
        assert [posting.doc_id for posting in index.postings("beta")] == list(
            index.term_columns("beta").doc_ids)


@pytest.mark.parametrize(("config", "by_runs"), [
    (EngineConfig(), 0),  # a list of 30 rows, 3 runs: not more than 10 times the runs
    (EngineConfig(tombstone_runs_factor=8), 1),
    (EngineConfig(tombstone_runs_factor=0, tombstone_runs=False), 0),  # the clear version
])
def test_the_config_chooses_how_tombstones_are_dropped(
    monkeypatch: pytest.MonkeyPatch, config: EngineConfig, by_runs: int,
) -> None:
    from engine.index import inverted_index

    calls: list[int] = []
    by_runs_filter = inverted_index.columns_without_runs

    def counting(columns, runs):
        calls.append(len(columns))
        return by_runs_filter(columns, runs)

    monkeypatch.setattr(inverted_index, "columns_without_runs", counting)
    index = build([["alpha"] for _ in range(30)], config)
    for doc_id in (3, 10, 11, 20):
        index.delete_document(doc_id)
    assert list(index.term_columns("alpha").doc_ids) == [
        doc_id for doc_id in range(30) if doc_id not in (3, 10, 11, 20)]
    assert len(calls) == by_runs


@settings(max_examples=25, deadline=None)
@given(documents_strategy, st.lists(st.sampled_from(["add", "delete", "flush"]), max_size=12))
def test_a_merge_of_flushed_segments_lists_what_the_clear_merge_lists(documents, actions):
    """`writer._merged_lists` (files read front to back, terms walked side by side)
    against `merged_lists.live_lists` (every term looked up in every segment),
    tombstones and all."""
    directory = MemoryDirectory()
    tiny = EngineConfig(index_flush_documents=1000, index_merge_segments=100)
    index = InvertedIndex()
    apply_actions(directory, index, documents, [*actions, "flush"], tiny)

    def shown(lists):
        return [(item[0], list(item[1]), [list(positions) for positions in item[2]])
                if len(item) == 3 else
                (item[0], list(item[1]), [list(item[3][start:start + count]) for start, count
                                          in zip(accumulate(item[2], initial=0), item[2])])
                for item in lists]

    assert shown(_merged_lists(directory, index.segments, index.deleted, read_ahead=64)) == shown(
        live_lists(index.segments, index.deleted))
