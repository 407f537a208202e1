"""The index's write buffer: the segment new rows go into, laid out for fast appends.

Owns: the in-memory layout of unflushed rows (documents, and per term one list of its
rows' doc ids and positions, interleaved) and handing them to a flush in term order, as
columns. Must not touch: tombstones, files, bytes, scoring.

`MemorySegment` (in `engine.index.segment`) is the clear version of the same segment and
this module's test oracle: after the same `add` calls both answer `documents`,
`postings`, `terms` and `terms_with_prefix` alike (`tests/index/test_write_buffer.py`).
What makes this one faster on the write path:

* terms live in a plain `dict` (O(1) insert); the sorted term list that prefix lookups
  and flushes need is built when first asked for and kept until a new term arrives;
* an added row appends its doc id and its positions to one list per term, instead of
  making a `Posting` object and inserting into a sorted map; a term that occurs once in
  the row (about 70% of postings) keeps its position as a bare int, not a list;
  `Posting` objects are made only when a query reads a term's list (and kept until the
  next `add`).

Rows are appended in doc-id order (the index hands out increasing ids), so each term's
list stays sorted by doc id. Deleted rows stay until the flush leaves them out.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator, Mapping, Sequence

from engine.index.documents import DocumentRecord
from engine.index.postings import Posting

#: One row's positions of one term: a bare int when it occurs once (most terms do; small
#: ints are shared objects, so the common case allocates nothing), else a list.
Positions = int | list[int]
#: One term's rows, interleaved: `[doc_id, positions, doc_id, positions, ...]` in doc-id
#: order (one `+=` per row; `[0::2]` and `[1::2]` split it into columns in C).
Interleaved = list[int | Positions]


def group_positions(terms: Sequence[str]) -> dict[str, Positions]:
    """The token positions of one row's terms, grouped by term in first-seen order; a
    term seen once has its position as a bare int.

    Same grouping as `engine.index.postings.positions_by_term` (the clear version).

    >>> group_positions(["to", "be", "or", "not", "to", "be"])
    {'to': [0, 4], 'be': [1, 5], 'or': 2, 'not': 3}
    """
    grouped: dict[str, Positions] = {}
    lookup = grouped.get
    for position, term in enumerate(terms):
        positions = lookup(term)
        if positions is None:
            grouped[term] = position
        elif positions.__class__ is int:
            grouped[term] = [positions, position]  # type: ignore[list-item]
        else:
            positions.append(position)  # type: ignore[union-attr]
    return grouped


def positions_tuple(positions: Positions) -> tuple[int, ...]:
    """The positions as a tuple (`Posting.positions`).

    >>> positions_tuple(4), positions_tuple([1, 5])
    ((4,), (1, 5))
    """
    return (positions,) if positions.__class__ is int else tuple(positions)  # type: ignore[arg-type]


class WriteBuffer:
    """The writable buffer segment (the `Segment` protocol of `engine.index.segment`).

    >>> buffer = WriteBuffer()
    >>> buffer.add(DocumentRecord(0, "w", "m1", "user", 1.0, "to be or not to be", 6, 0),
    ...            ["to", "be", "or", "not", "to", "be"])
    >>> buffer.postings("be"), list(buffer.terms_with_prefix("n"))
    ([Posting(doc_id=0, positions=(1, 5))], ['not'])
    >>> list(buffer.posting_columns())[:2]
    [('be', [0], [[1, 5]]), ('not', [0], [3])]
    """

    name = "buffer"

    def __init__(self) -> None:
        self._documents: dict[int, DocumentRecord] = {}
        self._columns: dict[str, Interleaved] = {}
        self._sorted_terms: list[str] | None = None
        self._decoded: dict[str, list[Posting]] = {}

    @property
    def documents(self) -> Mapping[int, DocumentRecord]:
        return self._documents

    def __len__(self) -> int:
        return len(self._documents)

    def add(self, record: DocumentRecord, terms: Sequence[str]) -> None:
        """Append one row with its analyzed terms; its doc id must exceed every earlier one."""
        doc_id = record.doc_id
        self._documents[doc_id] = record
        if self._decoded:
            self._decoded.clear()
        columns = self._columns
        lookup = columns.get
        for term, positions in group_positions(terms).items():
            column = lookup(term)
            if column is None:
                columns[term] = [doc_id, positions]
                self._sorted_terms = None
            else:
                column += (doc_id, positions)

    # ----- the Segment protocol (reads) -----------------------------------------------

    def postings(self, term: str) -> Sequence[Posting]:
        cached = self._decoded.get(term)
        if cached is not None:
            return cached
        column = self._columns.get(term)
        if column is None:
            return ()
        postings = [
            Posting(doc_id, positions_tuple(positions))  # type: ignore[arg-type]
            for doc_id, positions in zip(column[0::2], column[1::2], strict=True)
        ]
        self._decoded[term] = postings
        return postings

    def _terms_in_order(self) -> list[str]:
        if self._sorted_terms is None:
            self._sorted_terms = sorted(self._columns)
        return self._sorted_terms

    def terms_with_prefix(self, prefix: str) -> Iterator[str]:
        ordered = self._terms_in_order()
        for index in range(bisect_left(ordered, prefix), len(ordered)):
            term = ordered[index]
            if not term.startswith(prefix):
                return
            yield term

    def terms(self) -> Iterator[str]:
        return iter(self._terms_in_order())

    # ----- what a flush writes --------------------------------------------------------

    def posting_columns(
        self, deleted: frozenset[int] | set[int] = frozenset()
    ) -> Iterator[tuple[str, list[int], list[Positions]]]:
        """Every `(term, doc_ids, positions)` in term order, rows in `deleted` left out
        (and terms left with no row dropped); see `Positions` (what
        `engine.codec.postings_file.encode_postings_file` takes)."""
        filtering = bool(deleted) and not deleted.isdisjoint(self._documents)
        for term in self._terms_in_order():
            column = self._columns[term]
            doc_ids, positions = column[0::2], column[1::2]
            if filtering and not deleted.isdisjoint(doc_ids):
                kept = [index for index, doc_id in enumerate(doc_ids) if doc_id not in deleted]
                if not kept:
                    continue
                doc_ids = [doc_ids[index] for index in kept]
                positions = [positions[index] for index in kept]
            yield term, doc_ids, positions
