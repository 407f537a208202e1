"""The write buffer answers exactly as the clear `MemorySegment` after the same adds."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.index.documents import DocumentRecord
from engine.index.segment import MemorySegment
from engine.index.write_buffer import WriteBuffer


def column_pairs(doc_ids, counts, positions) -> list[tuple[int, tuple[int, ...]]]:
    """One term's rows as `posting_columns` gives them, as `(doc_id, positions)` pairs."""
    pairs, start = [], 0
    for doc_id, count in zip(doc_ids, counts, strict=True):
        pairs.append((doc_id, tuple(positions[start:start + count])))
        start += count
    assert start == len(positions)
    return pairs

WORDS = st.sampled_from(["a", "ab", "abc", "b", "ba", "é", "zz", "z"])
ROWS = st.lists(st.lists(WORDS, min_size=0, max_size=8), min_size=0, max_size=12)


def record(doc_id: int, terms: list[str]) -> DocumentRecord:
    return DocumentRecord(doc_id, "w", f"m{doc_id}", "user", 1.0, " ".join(terms), len(terms),
                          doc_id)


@settings(max_examples=60, deadline=None)
@given(ROWS, st.sampled_from(["", "a", "ab", "b", "é", "q"]))
def test_buffer_matches_the_memory_segment(rows: list[list[str]], prefix: str) -> None:
    clear, fast = MemorySegment(), WriteBuffer()
    for doc_id, terms in enumerate(rows):
        clear.add(record(doc_id, terms), terms)
        fast.add(record(doc_id, terms), terms)
        # reads between adds must see every row so far
        assert list(fast.terms_with_prefix(prefix)) == list(clear.terms_with_prefix(prefix))
    assert dict(fast.documents) == dict(clear.documents)
    assert list(fast.terms()) == list(clear.terms())
    for term in clear.terms():
        assert list(fast.postings(term)) == list(clear.postings(term))
    assert list(fast.postings("missing")) == []
    pairs = [(term, [(p.doc_id, p.positions) for p in postings])
             for term, postings in clear.posting_lists()]
    assert [(term, column_pairs(*columns))
            for term, *columns in fast.posting_columns()] == pairs


@settings(max_examples=40, deadline=None)
@given(ROWS, st.sets(st.integers(0, 11)))
def test_posting_columns_leave_out_deleted_rows(rows: list[list[str]], deleted: set[int]) -> None:
    fast = WriteBuffer()
    for doc_id, terms in enumerate(rows):
        fast.add(record(doc_id, terms), terms)
    expected = []
    for term in fast.terms():
        pairs = [(p.doc_id, p.positions) for p in fast.postings(term)
                 if p.doc_id not in deleted]
        if pairs:
            expected.append((term, pairs))
    assert [(term, column_pairs(*columns))
            for term, *columns in fast.posting_columns(deleted)] == expected


@settings(max_examples=30, deadline=None)
@given(ROWS, st.integers(2**32 - 3, 2**32 + 2))
def test_doc_ids_past_32_bits_widen_the_columns(rows: list[list[str]], first: int) -> None:
    """Doc ids are never reused, so they may pass 2**32: the columns widen, same answers."""
    clear, fast = MemorySegment(), WriteBuffer()
    for number, terms in enumerate(rows):
        clear.add(record(first + number, terms), terms)
        fast.add(record(first + number, terms), terms)
    pairs = [(term, [(p.doc_id, p.positions) for p in postings])
             for term, postings in clear.posting_lists()]
    assert [(term, column_pairs(*columns)) for term, *columns in fast.posting_columns()] == pairs
    for term in clear.terms():
        assert list(fast.postings(term)) == list(clear.postings(term))


def test_doctests_of_the_module() -> None:
    import doctest

    import engine.index.write_buffer as module

    assert doctest.testmod(module).failed == 0
