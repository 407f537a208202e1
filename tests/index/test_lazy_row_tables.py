"""A loaded segment's columns record is read the first time its rows are (issue 33, item 5):
a search reads the columns of the segments that hold its terms only, the row columns
of the others hold placeholders until their table is read.

Oracle: terms files whose columns are read at open (`TermsFileReader.lazy_columns =
False`, what every open did before), over the same rows, deletions, flushes, merges,
reloads and queries: the same results and the same columns of every row a query named.
A damaged columns record, or a terms file holding other rows than its manifest names,
is reported by the first read of its rows with the error opening gave, and by `verify`.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.codec.framing import HEADER_SIZE, RECORD_HEAD
from engine.codec.terms_file import TermsFileReader
from engine.errors import CorruptFile
from engine.index.inverted_index import InvertedIndex
from engine.index.loading import check_index_files, load_index, segment_file_names
from engine.index.writer import flush_index
from engine.model import SearchRequest
from engine.query.checked_request import check_request
from engine.search import kernel
from tests.search.test_fast_path import (
    ANALYZER,
    CONFIG,
    PROFILE,
    WINDOWS,
    Corpus,
    changes,
    requests,
    rows,
)


def loaded(corpus: Corpus, lazy: bool) -> InvertedIndex:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(TermsFileReader, "lazy_columns", lazy)
        return load_index(corpus.directory, PROFILE, config=CONFIG)


def reload(corpus: Corpus, lazy: bool) -> None:
    flush_index(corpus.directory, corpus.index, PROFILE, CONFIG)
    corpus.index = loaded(corpus, lazy)


def named_columns(index: InvertedIndex, run: kernel.KernelRun) -> list[tuple]:
    columns = index.view().rows
    return [(doc_id, columns.lengths[doc_id], columns.timestamps[doc_id],
             columns.group_sessions[columns.groups[doc_id]],
             columns.group_roles[columns.groups[doc_id]])
            for doc_id in (row.record.doc_id for row in run.rows)]


def tables_read(index: InvertedIndex) -> list[bool]:
    """Per segment, whether its columns record was read, by its rows or by anyone
    asking its terms file's reader for the whole table."""
    return [segment.documents.columns_read or "table" in vars(segment.documents.reader)
            for segment in index.segments]


steps = st.lists(st.tuples(st.one_of(changes, st.just(("reload", None))), requests),
                 min_size=1, max_size=6)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.lists(rows, min_size=1, max_size=8), min_size=1, max_size=4), steps)
def test_lazy_tables_answer_as_tables_read_at_open(flushes, steps):
    lazy, eager = Corpus(), Corpus()
    for corpus in (lazy, eager):
        for batch in flushes:  # a segment each
            for row in batch:
                corpus.add(row)
            flush_index(corpus.directory, corpus.index, PROFILE, CONFIG)
        corpus.apply(("delete", WINDOWS[1].session_id))  # rows deleted in written segments
        reload(corpus, corpus is lazy)
    assert not any(tables_read(lazy.index))
    for change, request in steps:
        for corpus in (lazy, eager):
            if change[0] == "reload":
                reload(corpus, corpus is lazy)
            else:
                corpus.apply(change)
        runs = [kernel.run_kernel(corpus.index.view(), WINDOWS, check_request(request), ANALYZER)
                for corpus in (lazy, eager)]
        results = [kernel.result_of_run(run, ANALYZER, indexing=False) for run in runs]
        assert results[0] == results[1]
        assert named_columns(lazy.index, runs[0]) == named_columns(eager.index, runs[1])


def three_segments() -> Corpus:
    corpus = Corpus()
    for text in ("the saffron ballast", "a quokka ballast", "the tidal ballast"):
        for number in range(3):
            corpus.add((WINDOWS[(0, 1, 3)[number]].session_id, text, float(number), "user"))
        flush_index(corpus.directory, corpus.index, PROFILE, CONFIG)
    return corpus


def search(index: InvertedIndex, query: str) -> kernel.KernelRun:
    return kernel.run_kernel(index.view(), WINDOWS, check_request(SearchRequest(query)), ANALYZER)


def test_a_search_reads_the_tables_of_the_segments_holding_its_word_only():
    index = loaded(three_segments(), True)
    assert len(search(index, "quokka").rows) == 3
    assert tables_read(index) == [False, True, False]
    assert len(search(index, "ballast").rows) == 9  # placeholders replaced when read
    assert tables_read(index) == [True, True, True]


def test_prefixes_and_the_indexed_windows_read_no_table():
    """What the head holds (term counts, the first term of each record, the group
    table) is read from the head: a prefix search reads the tables of the segments
    holding its terms only, and listing the windows that may have rows reads none."""
    index = loaded(three_segments(), True)
    assert {window for window in index.session_ids_maybe_indexed()} == {
        WINDOWS[number].session_id for number in (0, 1, 3)}
    assert tables_read(index) == [False, False, False]
    run = kernel.run_kernel(index.view(), WINDOWS,
                            check_request(SearchRequest("quok", match="prefix")), ANALYZER)
    assert len(run.rows) == 3
    assert tables_read(index) == [False, True, False]


def damage_columns(corpus: Corpus, number: int) -> tuple[str, int]:
    """Flip a byte of segment `number`'s columns record; the terms file's name and the
    record's offset."""
    name = segment_file_names(loaded(corpus, True).segments[number].name)[0]
    data = bytearray(corpus.directory.read_bytes(name))
    table_length = RECORD_HEAD.unpack_from(data, HEADER_SIZE)[0]
    columns_at = HEADER_SIZE + RECORD_HEAD.size + table_length
    data[columns_at + RECORD_HEAD.size + 12] ^= 0x01
    corpus.directory.write_atomic(name, bytes(data))
    return name, columns_at


def test_a_damaged_columns_record_is_reported_by_the_first_read_and_verify():
    corpus = three_segments()
    name, columns_at = damage_columns(corpus, 1)
    with pytest.raises(CorruptFile) as at_open:
        loaded(corpus, False)
    assert at_open.value.offset == columns_at  # where opening reported it before
    index = loaded(corpus, True)  # opens: the record is not read
    assert len(search(index, "saffron").rows) == 3
    for _attempt in range(2):  # every read until it is intact
        with pytest.raises(CorruptFile) as at_read:
            search(index, "quokka")
        assert str(at_read.value) == str(at_open.value)
    assert any(corpus.directory.location(name) in problem
               for problem in check_index_files(corpus.directory))


def segments_with_a_gap(delete: bool) -> Corpus:
    """Two segments; the second's middle row deleted before its flush when `delete`
    (its table then spans the same doc ids with one row fewer)."""
    corpus = Corpus()
    for text in ("the saffron ballast", "a quokka ballast"):
        for number in range(3):
            corpus.add((WINDOWS[(0, 1, 3)[number]].session_id, text, float(number), "user"))
        if delete and text.startswith("a quokka"):
            corpus.index.delete_window_rows(WINDOWS[1].session_id)
        flush_index(corpus.directory, corpus.index, PROFILE, CONFIG)
    return corpus


def test_a_terms_file_of_other_rows_is_reported_by_the_first_read():
    corpus, other = segments_with_a_gap(True), segments_with_a_gap(False)
    segment = loaded(corpus, True).segments[1]
    assert segment.documents.head.span == 3
    for name in segment_file_names(segment.name):  # 3 rows, not 2
        corpus.directory.write_atomic(name, other.directory.read_bytes(name))
    with pytest.raises(CorruptFile) as at_open:
        loaded(corpus, False)
    assert "(3 rows)" in str(at_open.value)
    index = loaded(corpus, True)
    assert len(search(index, "saffron").rows) == 2  # window 1's row is deleted
    for _attempt in range(2):
        with pytest.raises(CorruptFile) as at_read:
            search(index, "quokka")
        assert str(at_read.value) == str(at_open.value)


def test_a_writer_learns_each_segment_size_without_reading_its_table():
    """A flush asks every segment's row count to choose its merges (`merge_tiers`):
    a written segment knows it from its writer, a loaded one from its manifest, so
    neither's columns record is read for it; the counts are the tables' own."""
    corpus = three_segments()
    assert tables_read(corpus.index) == [False, False, False]  # written here
    index = loaded(corpus, True)
    assert [len(segment.documents) for segment in index.segments] == [3, 3, 3]
    corpus.index = index
    corpus.add((WINDOWS[0].session_id, "a fourth flush", 4.0, "user"))
    flush_index(corpus.directory, corpus.index, PROFILE, CONFIG)
    assert tables_read(corpus.index) == [False, False, False, False]
    read = [segment.documents.read_columns().present.count(1)
            for segment in loaded(corpus, True).segments]
    assert read == [len(segment.documents) for segment in corpus.index.segments] == [3, 3, 3, 1]


def test_a_manifest_count_that_the_rows_contradict_is_reported_when_they_are_read():
    corpus, other = segments_with_a_gap(True), segments_with_a_gap(False)
    name = loaded(corpus, True).segments[1].name
    for file_name in segment_file_names(name):  # 3 rows where the manifest names 2
        corpus.directory.write_atomic(file_name, other.directory.read_bytes(file_name))
    index = loaded(corpus, True)
    assert len(index.segments[1].documents) == 2  # the manifest's count, unread
    with pytest.raises(CorruptFile, match=r"\(3 rows\)"):
        index.segments[1].documents.read_columns()
    with pytest.raises(CorruptFile, match=r"\(3 rows\)"):
        len(index.segments[1].documents.table)
