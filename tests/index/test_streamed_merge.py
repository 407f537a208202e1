"""The streamed tier merge (`writer._write_merged_segment`) writes the files the merge
from records held whole writes (`merge_tail(..., streamed=False)`, its oracle): byte for
byte, across rows deleted before a flush (slots without a row), windows deleted whole
(doc ids no segment holds), tombstones the merge drops, non-ASCII and unencodable text,
every kind of timestamp, group tables that grow and start with the previous segment's,
more terms than one term record and more rows than one text record holds."""

from __future__ import annotations

import math
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.codec.terms_file import ROWS_PER_TEXT_RECORD, TERMS_PER_RECORD
from engine.config import EngineConfig
from engine.directory import Directory, FileDirectory, MemoryDirectory
from engine.index.check import check_index
from engine.index.inverted_index import InvertedIndex
from engine.index.writer import flush_index, merge_index, merge_tail
from engine.model import IndexEntry

PROFILE = "test-profile"
#: No merge by tiers while the segments are made: the test merges them itself.
NEVER_MERGE = EngineConfig(index_flush_documents=1_000_000, index_merge_segments=1000)

TIMESTAMPS = [1.5, 7, None, "2026-01-01", math.nan, 2**60, True, -3, 0.0]
TEXTS = ["plain words", "café crème", "日本語のテキスト", "lone \ud800 surrogate", ""]
SESSIONS = ["w1", "w2", "w\x00nul", "w3"]
ROLES = ["user", "assistant", "tool"]

#: One flushed batch: rows `(session, role, timestamp, text, terms)` and which of them to
#: delete before the flush.
row_strategy = st.tuples(
    st.sampled_from(SESSIONS), st.sampled_from(ROLES), st.sampled_from(TIMESTAMPS),
    st.sampled_from(TEXTS), st.lists(st.integers(0, 40), max_size=6))
batch_strategy = st.tuples(st.lists(row_strategy, min_size=1, max_size=12),
                           st.sets(st.integers(0, 11)))


def build(directory: Directory, batches, deletions_after: set[int], *,
          wide: int = 0) -> InvertedIndex:
    """Flush each batch as a segment (its rows in `deleted` gone before the flush), then
    delete the rows numbered in `deletions_after` (tombstones for the merge).

    `wide` adds that many rows with distinct terms to the first batch: more terms than
    a term record and more rows than a text record hold."""
    index = InvertedIndex()
    for number, (rows, deleted) in enumerate(batches):
        added = []
        if number == 0:
            for extra in range(wide):
                added.append(index.add_entry(IndexEntry(
                    SESSIONS[extra % 2], f"x{extra}", "user", float(extra),
                    f"wide {extra}", extra), [f"t{extra:05d}", f"u{extra % 97:03d}"]))
        for session_id, role, timestamp, text, terms in rows:
            added.append(index.add_entry(IndexEntry(
                session_id, f"m{index.next_doc_id}", role, timestamp, text, index.next_doc_id),
                [f"w{term}" for term in terms]))
        for position in sorted(deleted):
            if position < len(added) and added[position].doc_id not in index.deleted:
                index.delete_document(added[position].doc_id)
        flush_index(directory, index, PROFILE, NEVER_MERGE)
    live = sorted(record.doc_id for record in index.documents())
    for position in sorted(deletions_after):
        if position < len(live):
            index.delete_document(live[position])
    return index


def merged_files(directory: Directory) -> dict[str, bytes]:
    return {name: directory.read_bytes(name) for name in directory.list_names("index/")}


def merge_both(batches, deletions_after, count, wide=0, make=MemoryDirectory):
    """Merge the newest `count` segments (every segment and commit, when None) streamed
    and held whole; return both indexes and directories."""
    results = []
    for streamed in (True, False):
        directory = make()
        index = build(directory, batches, deletions_after, wide=wide)
        if count is None:
            merge_index(directory, index, PROFILE, NEVER_MERGE, streamed=streamed)
        else:
            merge_tail(directory, index, min(count, len(index.segments)), streamed=streamed)
        results.append((directory, index))
    return results


def assert_same_merge(results) -> None:
    (streamed_directory, streamed), (whole_directory, whole) = results
    assert merged_files(streamed_directory) == merged_files(whole_directory)
    assert [segment.name for segment in streamed.segments] == [
        segment.name for segment in whole.segments]
    assert streamed.deleted == whole.deleted
    assert check_index(streamed) == []
    assert rows(streamed) == rows(whole)


def rows(index: InvertedIndex) -> list[tuple]:
    """Every live row's fields (a NaN timestamp by its repr: it equals nothing)."""
    return [(record.doc_id, record.session_id, record.message_id, record.role,
             repr(record.timestamp), record.text, record.length, record.seq)
            for record in index.documents()]


@settings(max_examples=60, deadline=None)
@given(st.lists(batch_strategy, min_size=1, max_size=6), st.sets(st.integers(0, 40)),
       st.integers(2, 6))
def test_a_streamed_merge_writes_the_files_of_the_merge_held_whole(batches, deletions_after,
                                                                   count):
    assert_same_merge(merge_both(batches, deletions_after, count))


@settings(max_examples=30, deadline=None)
@given(st.lists(batch_strategy, min_size=1, max_size=5), st.sets(st.integers(0, 40)))
def test_a_streamed_merge_of_everything_writes_the_files_of_the_merge_held_whole(
        batches, deletions_after):
    assert_same_merge(merge_both(batches, deletions_after, None))


def test_many_terms_and_rows_span_several_term_and_text_records():
    wide = TERMS_PER_RECORD + 3 * ROWS_PER_TEXT_RECORD
    batches = [([("w1", "user", 1.5, "é", [1, 2])], {0}),
               ([("w2", "tool", None, "x", [3])] * 5, {1, 3}),
               ([("w3", "user", 1.5, "a window deleted whole: a gap", [7])] * 2, {0, 1}),
               ([("w\x00nul", "assistant", 2**60, "日本", [4, 5])] * 3, set())]
    results = merge_both(batches, {2, 70, 600}, 4, wide=wide)
    assert_same_merge(results)
    _directory, index = results[0]
    merged = index.segments[-1]
    assert len(merged.documents.table.term_firsts) > 1
    assert len(merged.documents.table.text_offsets) > 3
    assert merged.documents.table.present.count(0) > 3  # deleted rows and the gap


def test_a_merge_of_only_deleted_rows_writes_no_segment():
    results = merge_both([([("w1", "user", 1.5, "a", [1])], set())] * 3, {0, 1, 2}, 3)
    assert_same_merge(results)
    assert results[0][1].segments == []


def test_a_streamed_merge_on_disk_leaves_only_the_segment_files(tmp_path: Path):
    folders = iter([tmp_path / "streamed", tmp_path / "whole"])
    batches = [([("w1", "user", 1.5, "café", [1, 2]), ("w2", "tool", None, "b", [2])], {1}),
               ([("w3", "assistant", 7, "c", [3])], set()),
               ([("w1", "user", math.nan, "d", [1])], set())]
    results = merge_both(batches, {0}, 3, wide=100,
                         make=lambda: FileDirectory(next(folders)))
    assert_same_merge(results)
    leftovers = [path.name for path in (tmp_path / "streamed" / "index").iterdir()
                 if path.name.startswith(".tmp-")]
    assert leftovers == []
