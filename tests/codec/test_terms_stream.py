"""`engine.codec.terms_stream` writes the bytes `encode_terms_file` makes whole: rows cut
into several source files (each with a group table of its own), some rows deleted, doc
ids no source holds, every kind of timestamp, texts that need every msgpack string size,
and terms over several term records."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.codec.terms_file import (
    ROWS_PER_TEXT_RECORD,
    TERMS_PER_RECORD,
    check_terms_file,
    encode_terms_file,
    open_terms_file,
)
from engine.codec.terms_stream import (
    TermRecordSpool,
    live_bounds,
    merged_table,
    merged_text_bodies,
    write_rows_terms_file,
    write_terms_file,
)
from engine.directory.handles import BytesAtomicWriter

TIMESTAMPS = [1.5, 7, None, "x", math.nan, 2**60, True, -2.25]
TEXTS = ["", "a", "é" * 40, "日本語", "lone \ud800", "long " * 70]


def opened(data: bytes):
    return open_terms_file(lambda offset, length: data[offset: offset + length], len(data), "t")


def sink() -> BytesAtomicWriter:
    return BytesAtomicWriter("memory:test", lambda data: None)


def written(sink_: BytesAtomicWriter) -> bytes:
    return sink_.read(0, sink_.size())


row_strategy = st.tuples(
    st.integers(1, 3),  # doc id step: gaps between rows
    st.sampled_from(["w1", "w2", "w\x00x"]), st.sampled_from(["user", "assistant"]),
    st.sampled_from(TIMESTAMPS), st.sampled_from(TEXTS), st.integers(0, 9), st.booleans())


@settings(max_examples=80, deadline=None)
@given(st.lists(row_strategy, min_size=1, max_size=150), st.lists(st.integers(1, 150), max_size=3),
       st.integers(0, 2 * TERMS_PER_RECORD + 5), st.sampled_from([(), (("w9", "tool"),)]))
def test_streamed_terms_file_is_the_file_encoded_whole(draws, cuts, terms, prefix):
    rows, doc_id, deleted = [], 5, set()
    for step, session, role, timestamp, text, length, delete in draws:
        doc_id += step
        rows.append((doc_id, session, f"m{doc_id}", role, timestamp, length, doc_id * 3, text))
        if delete:
            deleted.add(doc_id)
    # the sources: consecutive runs of rows, each a terms file of its own
    bounds_at = sorted({0, len(rows), *(cut for cut in cuts if cut < len(rows))})
    sources = [opened(encode_terms_file(rows[begin:end], [], ()))
               for begin, end in itertools.pairwise(bounds_at)]
    live = [row for row in rows if row[0] not in deleted]
    entries = [(f"t{number:05d}", 1 + number % 4, 16 + number, 9) for number in range(terms)]
    tables = [source.table for source in sources]
    bounds = live_bounds(tables, deleted)
    if not live:
        assert bounds is None
        return
    assert bounds == (live[0][0], live[-1][0])
    spool = sink()
    term_records = TermRecordSpool(spool)
    for entry in entries:
        term_records.add(entry)
    term_records.finish()
    table = merged_table(tables, deleted, bounds, prefix, term_records.firsts, term_records.count)
    texts = merged_text_bodies([(source.table, source.text_record) for source in sources],
                               deleted, bounds)
    out = sink()
    write_terms_file(out, table, texts, term_records.records())
    expected = encode_terms_file(live, entries, prefix)
    assert written(out) == expected
    check_terms_file(written(out), "t")


@settings(max_examples=60, deadline=None)
@given(st.lists(row_strategy, min_size=1, max_size=200), st.integers(0, 2 * TERMS_PER_RECORD + 5),
       st.sampled_from([(), (("w9", "tool"),), (("w1", "user"), ("w2", "assistant"))]))
def test_rows_written_a_record_at_a_time_are_the_file_encoded_whole(draws, terms, prefix):
    """A write buffer's flush (`write_rows_terms_file`): the same bytes as
    `encode_terms_file` of the same rows, terms and group prefix (its oracle)."""
    rows, doc_id = [], 0
    for step, session, role, timestamp, text, length, _delete in draws:
        doc_id += step
        rows.append((doc_id, session, f"m{doc_id}", role, timestamp, length, doc_id * 3, text))
    entries = [(f"t{number:05d}", 1 + number % 4, 16 + number, 9) for number in range(terms)]
    out = sink()
    write_rows_terms_file(out, rows, entries, prefix)
    assert written(out) == encode_terms_file(rows, entries, prefix)
    check_terms_file(written(out), "t")


def test_a_table_that_names_more_records_than_written_is_refused():
    data = encode_terms_file([(0, "w", "m", "user", 1.0, 1, 0, "a")] * 1, [])
    table = opened(data).table
    with pytest.raises(ValueError, match="0 records written, the table names 1"):
        write_terms_file(sink(), table, iter([]), iter([]))


def test_text_records_are_cut_where_the_merged_table_starts():
    rows = [(doc_id, "w", f"m{doc_id}", "user", 1.0, 1, doc_id, f"t{doc_id}")
            for doc_id in range(3, 3 + 2 * ROWS_PER_TEXT_RECORD + 7)]
    first, second = rows[:ROWS_PER_TEXT_RECORD + 5], rows[ROWS_PER_TEXT_RECORD + 5:]
    sources = [opened(encode_terms_file(first, [])), opened(encode_terms_file(second, []))]
    deleted = {3, 4, rows[-1][0]}
    bounds = live_bounds([source.table for source in sources], deleted)
    bodies = list(merged_text_bodies([(source.table, source.text_record) for source in sources],
                                     deleted, bounds))
    assert [len(body[1]) for body in bodies] == [ROWS_PER_TEXT_RECORD, ROWS_PER_TEXT_RECORD, 4]
    assert bodies[0][1][0] == "t5" and bodies[-1][1][-1] == f"t{rows[-2][0]}"
