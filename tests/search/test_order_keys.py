"""`order_rows` in relevance order against the clear key (`relevance_key`).

Rows whose timestamps are all plain numbers are ordered by `plain_relevance_key`
(negated timestamps, message and session ids as strings); the order must be the one
`relevance_key` gives (SQLite's value order, UTF-8 bytes), ties and NaN ranks included,
and message ids holding astral characters, characters past the surrogates and lone
surrogates (whose UTF-8 bytes, `surrogatepass`, sort as their code points do).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.index.documents import DocumentRecord
from engine.search.order import RankedRow, order_rows, plain_timestamp, relevance_key

PLAIN = [0, 1, 1.0, -0.0, 2.5, 3, 2**53, 2**53 + 1, -(2**60), float("inf"), float("-inf")]
ODD = [None, float("nan"), "10", "2026-01-01", True]
IDS = ["a", "A", "b", "ab", "é", "\ud7ff", "\ud800", "\udfff", "\ue000", "\uffff", "😀", "a😀",
       "a\ud800", ""]
RANKS = [-2.0, -1.0, -1.0, -0.5, 0.0, float("nan"), float("-inf")]


def row_of(number: int, rank: float, timestamp: object, message_id: str,
           session_id: str) -> RankedRow:
    record = DocumentRecord(number, session_id, message_id, "user", timestamp, "", 1, number)
    return RankedRow(record, rank, ())


ranked_rows = st.lists(
    st.tuples(st.sampled_from(RANKS), st.sampled_from(PLAIN), st.sampled_from(IDS),
              st.sampled_from(["w1", "w2", "\ud800"])),
    max_size=30)


@settings(max_examples=300, deadline=None)
@given(ranked_rows, st.one_of(st.none(), st.integers(1, 40)), st.booleans())
def test_relevance_order_equals_the_clear_key(drawn, count, with_odd):
    rows = [row_of(number, *values) for number, values in enumerate(drawn)]
    if with_odd and rows:  # one odd timestamp: the clear key for all
        rows[0] = row_of(0, rows[0].rank, ODD[len(rows) % len(ODD)], rows[0].record.message_id,
                         rows[0].record.session_id)
    ordered = order_rows(rows, "relevance", count)
    clear = sorted(rows, key=relevance_key)
    if count is not None:
        clear = clear[:count]
    if not any(row.rank != row.rank for row in rows):  # NaN ranks: no total order
        assert [row.record.doc_id for row in ordered] == [row.record.doc_id for row in clear]
    assert all(map(plain_timestamp, PLAIN)) and not any(map(plain_timestamp, ODD))


@settings(max_examples=200, deadline=None)
@given(ranked_rows, st.integers(1, 40))
def test_relevance_order_with_nan_ranks_compares_as_the_clear_key(drawn, count):
    # With NaN ranks the comparisons are no total order; the plain key must still answer
    # every comparison as the clear key does, so the heap picks the same rows.
    import heapq

    rows = [row_of(number, *values) for number, values in enumerate(drawn)]
    ordered = order_rows(rows, "relevance", count)
    clear = heapq.nsmallest(count, rows, key=relevance_key)
    assert [row.record.doc_id for row in ordered] == [row.record.doc_id for row in clear]
