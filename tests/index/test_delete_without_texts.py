"""Deleting a window's rows reads no text of a flushed row (issue 33, item 3): the
statistics and tombstones are the ones deleting each row by its record gave.

Oracle: the same index with each row deleted one by one (`delete_document`, which
makes the row's record), and the statistics summed again from the live records.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.config import EngineConfig
from engine.directory import MemoryDirectory
from engine.index.inverted_index import InvertedIndex
from engine.index.loading import load_index
from engine.index.writer import flush_index
from engine.model import IndexEntry

PROFILE = "test"
WINDOWS = ["w0", "w1", "w2"]

steps = st.lists(st.tuples(st.sampled_from(["add", "flush", "grams"]),
                           st.integers(0, len(WINDOWS) - 1), st.integers(1, 5)),
                 min_size=1, max_size=15)


def build(steps: list, directory: MemoryDirectory) -> InvertedIndex:
    config = EngineConfig(index_flush_documents=4, index_merge_segments=3)
    index = InvertedIndex(config=config)
    for operation, window, count in steps:
        if operation == "add":
            for _ in range(count):
                number = index.next_doc_id
                words = ["row"] * (number % 3 + 1) + ["\u5b57"] * (number % 2)
                index.add_entry(IndexEntry(WINDOWS[window], f"m{number}", "user",
                                           float(number), " ".join(words), number), words)
        elif operation == "flush":
            flush_index(directory, index, PROFILE, config)
    flush_index(directory, index, PROFILE, config)
    return load_index(directory, PROFILE, config=config)


@settings(max_examples=60, deadline=None)
@given(steps, st.integers(0, len(WINDOWS) - 1), st.booleans())
def test_a_window_is_deleted_without_reading_its_texts(chosen, window, grams):
    directory = MemoryDirectory()
    index = build(chosen, directory)
    clear = load_index(directory, PROFILE, config=index.config)
    if grams:  # the CJK grams, when kept, still lose the rows' texts
        assert len(index.cjk_grams) == len(clear.cjk_grams)  # both made now
    session_id = WINDOWS[window]
    doc_ids = clear.window_doc_ids(session_id)
    for doc_id in doc_ids:
        clear.delete_document(doc_id)
    for segment in index.segments:
        segment.documents._text_records._values.clear()
    assert index.delete_window_rows(session_id) == len(doc_ids)
    if not grams:
        assert not any(segment.documents._text_records._values for segment in index.segments)
    assert index.deleted == clear.deleted
    assert (index.document_count, index.total_tokens) == (
        clear.document_count, clear.total_tokens) == (
        sum(1 for _ in clear.documents()), sum(record.length for record in clear.documents()))
    if grams:
        assert index.cjk_grams.candidates("\u5b57") == clear.cjk_grams.candidates("\u5b57")
