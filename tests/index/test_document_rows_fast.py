"""A segment's terms-file rows are the same whichever way they are picked.

`engine.index.writer._document_rows` picks a buffer's records' fields in C when every
record holds its text itself, and `_document_rows_clear` builds them field by field (the
oracle). Both writers of a segment (the streamed one and the held-whole one) call the
fast version, so the byte tests between them no longer compare it with the clear one:
this test does, over random records, mixed with records whose text is read back from a
segment.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from engine.index.documents import DocumentRecord
from engine.index.writer import _document_rows, _document_rows_clear


class ReadBack:
    """A `TextSource` that gives each row a text made from its id."""

    def text_of(self, doc_id: int) -> str:
        return f"read back {doc_id}"


texts = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30)
records = st.builds(
    DocumentRecord,
    doc_id=st.integers(0, 10**9),
    session_id=st.text(min_size=1, max_size=8),
    message_id=st.text(max_size=8),
    role=st.sampled_from(["user", "assistant", "tool"]),
    timestamp=st.one_of(st.none(), st.floats(allow_nan=False), st.text(max_size=12)),
    stored_text=st.one_of(texts, st.just(ReadBack())),
    length=st.integers(0, 10**6),
    seq=st.integers(0, 10**9),
)


@given(st.lists(records, max_size=20))
def test_fast_rows_equal_clear_rows(documents: list[DocumentRecord]) -> None:
    assert _document_rows(documents) == _document_rows_clear(documents)


def test_rows_put_the_text_last_and_length_before_seq() -> None:
    record = DocumentRecord(4, "w", "m1", "user", 1.0, "héllo", 3, 7)
    read_back = record._replace(doc_id=5, stored_text=ReadBack())
    assert _document_rows([record]) == [(4, "w", "m1", "user", 1.0, 3, 7, "héllo")]
    assert _document_rows([record, read_back])[1] == (5, "w", "m1", "user", 1.0, 3, 7,
                                                      "read back 5")
