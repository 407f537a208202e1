"""A term longer than FTS5 indexes is cut as FTS5 cuts it, when the index adds its row.

`InvertedIndex.add_entry` cuts a row's terms (`engine.index.termdict.index_term`: the
first 32,768 UTF-8 bytes) only when one may be too long (`_may_need_a_cut`, decided
from the terms' summed length first). These rows sit on each side of that decision:
many short terms whose lengths add up past the bound (no cut), and one term far past
it (cut), and the stored terms are compared with `index_term` applied to each term.
"""

from __future__ import annotations

from engine.index.inverted_index import InvertedIndex
from engine.index.termdict import MAX_TERM_BYTES, index_term
from engine.model import IndexEntry


def add(index: InvertedIndex, terms: list[str]) -> int:
    entry = IndexEntry("w1", f"m{index.next_doc_id}", "user", 5.0, " ".join(terms), 0)
    return index.add_entry(entry, terms).doc_id


def test_a_term_too_long_is_indexed_cut() -> None:
    index = InvertedIndex()
    long_term = "é" * 20_000  # 40,000 UTF-8 bytes
    doc_id = add(index, ["short", long_term, "tail"])
    cut = index_term(long_term)
    assert len(cut.encode()) <= MAX_TERM_BYTES < len(long_term.encode())
    assert [posting.doc_id for posting in index.postings(cut)] == [doc_id]
    assert [posting.positions for posting in index.postings(cut)] == [(1,)]
    assert index.postings(long_term) == []
    assert [posting.doc_id for posting in index.postings("tail")] == [doc_id]


def test_many_short_terms_are_kept_whole() -> None:
    index = InvertedIndex()
    terms = [f"word{number}" for number in range(3_000)]  # lengths sum past the bound
    doc_id = add(index, terms)
    for term in ("word0", "word1234", "word2999"):
        assert [posting.doc_id for posting in index.postings(term)] == [doc_id]
    assert index.document(doc_id).length == len(terms)
