"""Index segments: the in-memory buffer that takes new rows, and flushed immutable ones.

Owns: one segment's documents, term dictionary and posting lists, and the `Segment`
interface the index reads through. Must not touch: tombstones, window states, the
manifest or files (`engine.index.writer` decides what is written; `engine.codec` says how).

* `MemorySegment` is the writable buffer: rows are appended in doc-id order, so each
  posting list grows at its end.
* `FrozenSegment` is a flushed segment, read from its terms and postings files. Its rows
  are a `SegmentRows` mapping over the terms file's table (records made on demand), its
  term dictionary a `StoredTermDictionary` (records of terms read on demand), each
  mapping a term to the byte range of its posting list; a list is read from the file and
  decoded the first time a query needs it, and then cached. The fast query path reads `term_columns`
  instead: with `read_columns` (doc ids and counts decoded, positions left as gaps until
  a row is shown) when the opener supplies it, else made from `postings`. Opening a store therefore decodes the
  document table and the term dictionary, never re-tokenizes text, and decodes only the
  posting lists that queries touch.

Segments are disjoint in doc ids and ordered: every doc id of a later segment (and of the
buffer) is larger than every doc id of an earlier one, so a term's live posting list is
the concatenation of the segments' lists, in segment order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Protocol

from engine.index.documents import DocumentRecord
from engine.index.postings import EMPTY_COLUMNS, Posting, PostingColumns, positions_by_term
from engine.index.stored_terms import PostingsSlot
from engine.index.termdict import TermDictionary


class Segment(Protocol):
    """What the index reads from a segment."""

    name: str

    @property
    def documents(self) -> Mapping[int, DocumentRecord]:
        """Every row the segment holds (including rows deleted since), by doc id."""
        ...

    def postings(self, term: str) -> Sequence[Posting]:
        """The posting list of `term` in this segment (empty when absent)."""
        ...

    def terms_with_prefix(self, prefix: str) -> Iterator[str]:
        """The segment's terms starting with `prefix`, in order."""
        ...

    def terms(self) -> Iterator[str]:
        """Every term of the segment, in order."""
        ...


class MemorySegment:
    """The writable buffer segment.

    >>> buffer = MemorySegment()
    >>> record = DocumentRecord(0, "w", "m1", "user", 1.0, "to be or not to be", 6, 0)
    >>> buffer.add(record, ["to", "be", "or", "not", "to", "be"])
    >>> buffer.postings("be")
    [Posting(doc_id=0, positions=(1, 5))]
    """

    name = "buffer"

    def __init__(self) -> None:
        self._documents: dict[int, DocumentRecord] = {}
        self._terms: TermDictionary[list[Posting]] = TermDictionary()

    @property
    def documents(self) -> Mapping[int, DocumentRecord]:
        return self._documents

    def __len__(self) -> int:
        return len(self._documents)

    def add(self, record: DocumentRecord, terms: Sequence[str]) -> None:
        """Append one row with its analyzed terms; its doc id must exceed every earlier one."""
        self._documents[record.doc_id] = record
        for term, positions in positions_by_term(terms).items():
            self._terms.setdefault(term, []).append(Posting(record.doc_id, tuple(positions)))

    def postings(self, term: str) -> Sequence[Posting]:
        return self._terms.get(term) or ()

    def terms_with_prefix(self, prefix: str) -> Iterator[str]:
        return self._terms.with_prefix(prefix)

    def terms(self) -> Iterator[str]:
        return self._terms.terms()

    def posting_lists(self) -> Iterator[tuple[str, list[Posting]]]:
        """Every `(term, posting list)` in term order (what a flush writes)."""
        return self._terms.items()


class TermSlots(Protocol):
    """A segment's term dictionary: `term -> PostingsSlot` (in memory, or read from the
    terms file on demand: `engine.index.stored_terms.StoredTermDictionary`)."""

    def get(self, term: str) -> PostingsSlot | None: ...

    def with_prefix(self, prefix: str) -> Iterator[str]: ...

    def terms(self) -> Iterator[str]: ...


class FrozenSegment:
    """A flushed, immutable segment; posting lists are decoded on first use."""

    def __init__(
        self,
        name: str,
        documents: Mapping[int, DocumentRecord],
        slots: TermSlots,
        read_postings: Callable[[PostingsSlot], list[Posting]],
        read_columns: Callable[[PostingsSlot], PostingColumns] | None = None,
    ) -> None:
        self.name = name
        self._documents = documents
        self._slots = slots
        self._read_postings = read_postings
        self._read_columns = read_columns
        self._decoded: dict[str, list[Posting]] = {}
        self._columns: dict[str, PostingColumns] = {}

    @property
    def documents(self) -> Mapping[int, DocumentRecord]:
        return self._documents

    def term_slots(self) -> Iterator[tuple[str, PostingsSlot]]:
        """Every `(term, slot)` of the segment, terms in increasing order (a merge)."""
        items = getattr(self._slots, "items", None)
        if items is not None:
            return items()
        return ((term, slot) for term in self._slots.terms()
                if (slot := self._slots.get(term)) is not None)

    def slot(self, term: str) -> PostingsSlot | None:
        """The byte range of `term`'s list, or None."""
        return self._slots.get(term)

    def postings(self, term: str) -> Sequence[Posting]:
        cached = self._decoded.get(term)
        if cached is not None:
            return cached
        slot = self._slots.get(term)
        if slot is None:
            return ()
        decoded = self._read_postings(slot)
        self._decoded[term] = decoded
        return decoded

    def term_columns(self, term: str) -> PostingColumns:
        """`postings(term)` as columns, made once per term (the segment never changes)."""
        cached = self._columns.get(term)
        if cached is None:
            decoded = self._decoded.get(term)
            if self._read_columns is None or decoded is not None:
                cached = PostingColumns.of(self.postings(term))
            else:
                slot = self._slots.get(term)
                cached = EMPTY_COLUMNS if slot is None else self._read_columns(slot)
            self._columns[term] = cached
        return cached

    def read_term_columns(self, term: str) -> PostingColumns:
        """`term_columns(term)` read again from the file and not cached (for a merge,
        which reads every list once)."""
        cached = self._columns.get(term)
        if cached is not None:
            return cached
        slot = self._slots.get(term)
        if slot is None:
            return EMPTY_COLUMNS
        if self._read_columns is None:
            return PostingColumns.of(self._read_postings(slot))
        return self._read_columns(slot)

    def terms_with_prefix(self, prefix: str) -> Iterator[str]:
        return self._slots.with_prefix(prefix)

    def terms(self) -> Iterator[str]:
        return self._slots.terms()


def segment_statistics(segment: Segment) -> tuple[int, int]:
    """A segment's row count and token total, deleted rows included.

    >>> buffer = MemorySegment()
    >>> buffer.add(DocumentRecord(0, "w", "m1", "user", 1.0, "a b a", 3, 0), ["a", "b", "a"])
    >>> segment_statistics(buffer)
    (1, 3)
    """
    documents = segment.documents
    total_tokens = getattr(documents, "total_tokens", None)
    if total_tokens is not None:  # `SegmentRows`: one sum over its lengths column
        return len(documents), total_tokens()
    return len(documents), sum(record.length for record in documents.values())


def read_posting_columns(segment: Segment, term: str) -> PostingColumns:
    """A segment's list of `term` as columns, without filling a frozen segment's caches."""
    if isinstance(segment, FrozenSegment):
        return segment.read_term_columns(term)
    return PostingColumns.of(segment.postings(term))


def segment_posting_columns(segment: Segment, term: str) -> PostingColumns:
    """A segment's list of `term` as columns: cached by a frozen segment, made afresh
    from the buffer's postings (which change with every added row).

    >>> buffer = MemorySegment()
    >>> buffer.add(DocumentRecord(0, "w", "m1", "user", 1.0, "a b a", 3, 0), ["a", "b", "a"])
    >>> segment_posting_columns(buffer, "a")
    PostingColumns(doc_ids=[0], counts=[2], positions=[(0, 2)])
    """
    if isinstance(segment, FrozenSegment):
        return segment.term_columns(term)
    return PostingColumns.of(segment.postings(term))
