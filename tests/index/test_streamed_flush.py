"""A write buffer's flush writes its segment's files a record at a time
(`writer._write_buffered_segment`): the same bytes as the files written from the records
and lists held whole (`buffer_segment(..., streamed=False)`, its oracle), across rows
deleted before the flush (slots without a row), every kind of timestamp, non-ASCII and
unencodable text, group tables that start with the previous segment's, more terms than
a term record and more rows than a text record holds; and the flushed index answers
the same."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.codec.terms_file import ROWS_PER_TEXT_RECORD, TERMS_PER_RECORD
from engine.directory import Directory, FileDirectory, MemoryDirectory
from engine.index.check import check_index
from engine.index.inverted_index import InvertedIndex
from engine.index.loading import load_index
from engine.index.writer import buffer_segment, commit_manifest
from engine.model import IndexEntry
from tests.index.test_streamed_merge import PROFILE, SESSIONS, batch_strategy


def add_batch(index: InvertedIndex, rows, deleted: set[int], wide: int) -> None:
    """Add `wide` rows of distinct terms, then `rows`; delete the ones numbered in
    `deleted` (rows deleted before the flush: slots without a row)."""
    added = [index.add_entry(
        IndexEntry(SESSIONS[extra % 2], f"x{extra}", "user", float(extra), f"wide {extra}", extra),
        [f"t{extra:05d}", f"u{extra % 97:03d}"]) for extra in range(wide)]
    added += [index.add_entry(
        IndexEntry(session_id, f"m{index.next_doc_id}", role, stamp, text, index.next_doc_id),
        [f"w{term}" for term in terms]) for session_id, role, stamp, text, terms in rows]
    for doc_id in sorted({added[number].doc_id for number in deleted if number < len(added)}):
        index.delete_document(doc_id)


def flushed(directory: Directory, batches, *, streamed: bool, wide: int = 0) -> InvertedIndex:
    """Each batch added to the buffer, flushed as a segment after the ones before it
    (`streamed` or held whole), and the manifest committed."""
    index = InvertedIndex()
    for number, (rows, deleted) in enumerate(batches):
        add_batch(index, rows, deleted, wide if number == 0 else 0)
        segments = list(index.segments)
        buffer_segment(directory, index, segments, segments[-1] if segments else None,
                       streamed=streamed)
        commit_manifest(directory, index, PROFILE)
    return index


def index_files(directory: Directory) -> dict[str, bytes]:
    return {name: directory.read_bytes(name) for name in directory.list_names("index/")}


def answers(index: InvertedIndex) -> list:
    rows = [(record.doc_id, record.session_id, record.message_id, record.role,
             repr(record.timestamp), record.text, record.length, record.seq)
            for record in index.documents()]
    lists = [(term, [(posting.doc_id, tuple(posting.positions))
                     for posting in index.postings(term)])
             for term in sorted(index.terms_with_prefix(""))]
    return [rows, lists]


@settings(max_examples=40, deadline=None)
@given(st.lists(batch_strategy, min_size=1, max_size=4))
def test_a_streamed_flush_writes_the_files_written_whole(batches):
    streamed_directory, whole_directory = MemoryDirectory(), MemoryDirectory()
    streamed = flushed(streamed_directory, batches, streamed=True)
    whole = flushed(whole_directory, batches, streamed=False)
    assert index_files(streamed_directory) == index_files(whole_directory)
    assert answers(streamed) == answers(whole)
    reopened = load_index(streamed_directory, PROFILE)
    assert answers(reopened) == answers(whole)
    assert check_index(reopened) == []


def test_a_wide_flush_on_disk_writes_the_files_written_whole(tmp_path: Path):
    """More rows than a text record and more terms than a term record, on real files."""
    wide = max(ROWS_PER_TEXT_RECORD, TERMS_PER_RECORD) * 2 + 3
    batches = [([("w1", "user", 1.5, "café", [1, 2])], {0}),
               ([("w2", "tool", None, "b", [3])], set())]
    (tmp_path / "streamed").mkdir()
    (tmp_path / "whole").mkdir()
    streamed_directory = FileDirectory(tmp_path / "streamed")
    whole_directory = FileDirectory(tmp_path / "whole")
    flushed(streamed_directory, batches, streamed=True, wide=wide)
    flushed(whole_directory, batches, streamed=False, wide=wide)
    files = index_files(streamed_directory)
    assert files == index_files(whole_directory)
    assert len(files) == 5  # two segments' two files and the manifest
    assert sorted(streamed_directory.list_names("")) == sorted(whole_directory.list_names(""))
