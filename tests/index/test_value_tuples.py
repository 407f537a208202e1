"""The index's and the search's small values made as `NamedTuple`s (their classes cost a
searching process less at import than frozen dataclasses: issue 33, item 5) keep what
the dataclasses gave: equality by fields, immutability, their repr, and a posting list's
`len` and truth as its row count.
"""

from __future__ import annotations

from array import array

import pytest

from engine.index.impact_order import ImpactOrder, LengthRuns
from engine.index.postings import DeletedRuns, Posting, PostingColumns
from engine.index.stored_terms import PostingsSlot
from engine.search.prepared import PreparedRequest

VALUES = [
    (Posting(3, (0, 2)), Posting(3, (0, 2)), Posting(3, (0,))),
    (PostingsSlot(2, 16, 9), PostingsSlot(2, 16, 9), PostingsSlot(2, 16, 10)),
    (DeletedRuns.of({1, 2, 5}), DeletedRuns(array("q", [1, 5]), array("q", [3, 6])),
     DeletedRuns.of({1, 5})),
    (LengthRuns(1, (4,), ((7,),)), LengthRuns(1, (4,), ((7,),)), LengthRuns(2, (4,), ((7,),))),
    (PreparedRequest(None, None, 25), PreparedRequest(None, None, 25),
     PreparedRequest(None, None, 24)),
]


@pytest.mark.parametrize(("value", "equal", "other"), VALUES)
def test_values_compare_by_their_fields_and_stay_fixed(value, equal, other):
    assert value == equal
    if not isinstance(value, DeletedRuns):  # arrays have no hash, as before
        assert hash(value) == hash(equal)
    assert value != other
    with pytest.raises(AttributeError):
        value.__setattr__(value._fields[0], None)
    assert repr(value).startswith(f"{type(value).__name__}({value._fields[0]}=")


def test_posting_columns_count_their_rows():
    columns = PostingColumns.of([Posting(1, (0, 3)), Posting(4, (2,)), Posting(9, (1,))])
    assert len(columns) == 3 and columns
    assert columns == PostingColumns([1, 4, 9], [2, 1, 1], [(0, 3), (2,), (1,)])
    assert not PostingColumns([], [], [])
    assert repr(PostingColumns([1], [1], [(0,)])) == \
        "PostingColumns(doc_ids=[1], counts=[1], positions=[(0,)])"
    order = ImpactOrder.of(columns, [0, 5, 0, 0, 2, 0, 0, 0, 0, 2])
    assert [(runs.frequency, runs.lengths) for runs in order.by_frequency] == \
        [(1, (2,)), (2, (5,))]
