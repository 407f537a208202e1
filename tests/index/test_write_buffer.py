"""The write buffer answers exactly as the clear `MemorySegment` after the same adds."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.index.documents import DocumentRecord
from engine.index.postings import positions_by_term
from engine.index.segment import MemorySegment
from engine.index.write_buffer import WriteBuffer, group_positions, positions_tuple

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
    assert [(term, [(doc_id, positions_tuple(item)) for doc_id, item in zip(ids, positions)])
            for term, ids, positions in fast.posting_columns()] == pairs


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
    assert [(term, [(doc_id, positions_tuple(item)) for doc_id, item in zip(ids, positions)])
            for term, ids, positions in fast.posting_columns(deleted)] == expected


@given(st.lists(WORDS, max_size=20))
def test_group_positions_is_positions_by_term(terms: list[str]) -> None:
    grouped = {term: list(positions_tuple(value)) for term, value in group_positions(terms).items()}
    assert grouped == positions_by_term(terms)
    assert list(grouped) == list(positions_by_term(terms))


def test_doctests_of_the_module() -> None:
    import doctest

    import engine.index.write_buffer as module

    assert doctest.testmod(module).failed == 0
