"""The index's write buffer: the segment new rows go into, laid out for fast appends.

Owns: the in-memory layout of unflushed rows (documents, and per term two packed arrays
of its rows' doc ids, counts and positions) and handing them to a flush in term order,
as the columns a postings file holds. Must not touch: tombstones, files, bytes, scoring.

`MemorySegment` (in `engine.index.segment`) is the clear version of the same segment and
this module's test oracle: after the same `add` calls both answer `documents`,
`postings`, `terms` and `terms_with_prefix` alike (`tests/index/test_write_buffer.py`).
What makes this one faster and smaller on the write path:

* terms live in `dict`s (O(1) insert); the sorted term list that prefix lookups
  and flushes need is built when first asked for and kept until a new term arrives;
* an added row goes straight into its terms' columns (no `Posting` object): a term's
  column is two `array`s, `[doc_id, count, doc_id, count, ...]` and every position one
  after another, so a posting costs a few bytes instead of list slots, int objects and a
  list of positions (about a quarter of the memory), and a flush hands the arrays,
  sliced in C, to the postings file's encoder without flattening anything;
* the row's positions are appended in C (`map`), and its doc id and counts once a
  distinct term (a term comes back about twice in a chat message), not once a token;
* `Posting` objects are made only when a query reads a term's list (and kept until the
  next `add`).

Rows are appended in doc-id order (the index hands out increasing ids), so each term's
column stays sorted by doc id, and its positions row after row. Deleted rows stay until
the flush leaves them out.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping, Sequence
from functools import partial
from itertools import accumulate, chain, compress, repeat
from operator import itemgetter

from engine.index.documents import DocumentRecord
from engine.index.postings import FLIP_KEEP, Posting

#: One term's rows: `(doc_ids_and_counts, positions)`, the first interleaved
#: `[doc_id, count, doc_id, count, ...]` in doc-id order, the second each row's
#: positions, row after row (`count` of them each).
Column = tuple[array, array]
_append = array.append
#: Doc ids a column of typecode "I" holds; a larger one widens every column to "Q".
_NARROW_DOC_IDS = 1 << 32


#: A column's doc ids and its counts (`column_rows`), each sliced in C.
_DOC_IDS = itemgetter(slice(0, None, 2))
_COUNTS = itemgetter(slice(1, None, 2))


def column_rows(column: Column) -> tuple[array, array, array]:
    """`(doc_ids, counts, positions)` of a column (slices made in C).

    >>> column_rows((array("I", [3, 2, 7, 1]), array("I", [0, 4, 2])))
    (array('I', [3, 7]), array('I', [2, 1]), array('I', [0, 4, 2]))
    """
    doc_ids_and_counts, positions = column
    return doc_ids_and_counts[0::2], doc_ids_and_counts[1::2], positions


class WriteBuffer:
    """The writable buffer segment (the `Segment` protocol of `engine.index.segment`).

    >>> buffer = WriteBuffer()
    >>> buffer.add(DocumentRecord(0, "w", "m1", "user", 1.0, "to be or not to be", 6, 0),
    ...            ["to", "be", "or", "not", "to", "be"])
    >>> buffer.postings("be"), list(buffer.terms_with_prefix("n"))
    ([Posting(doc_id=0, positions=(1, 5))], ['not'])
    >>> [(term, list(doc_ids), list(counts), list(positions))
    ...  for term, doc_ids, counts, positions in buffer.posting_columns()][:2]
    [('be', [0], [2], [1, 5]), ('not', [0], [1], [3])]
    """

    name = "buffer"

    def __init__(self) -> None:
        self._documents: dict[int, DocumentRecord] = {}
        #: Per term, its rows' `[doc_id, count, ...]` and every position (a `Column`
        #: split in two, so that a row's positions are appended in C).
        self._doc_ids_and_counts: defaultdict[str, array] = defaultdict(partial(array, "I"))
        self._positions: defaultdict[str, array] = defaultdict(partial(array, "I"))
        self._sorted_terms: list[str] | None = None
        self._decoded: dict[str, list[Posting]] = {}
        #: The typecode of the doc-id columns: "I" until a doc id needs 64 bits.
        self._doc_typecode = "I"

    @property
    def documents(self) -> Mapping[int, DocumentRecord]:
        return self._documents

    def __len__(self) -> int:
        return len(self._documents)

    def add(self, record: DocumentRecord, terms: Sequence[str]) -> None:
        """Append one row with its analyzed terms; its doc id must exceed every earlier one.

        Every token's position goes to its term's positions in C (`map` over the
        term -> positions `defaultdict`, which makes a new term's array itself); then
        each distinct term of the row (counted in C by `Counter`) appends its doc id and
        count: one Python step a distinct term, not a token."""
        doc_id = record.doc_id
        self._documents[doc_id] = record
        if self._decoded:
            self._decoded.clear()
        if doc_id >= _NARROW_DOC_IDS and self._doc_typecode == "I":
            self._widen()
        positions = self._positions
        known_terms = len(positions)
        any(map(_append, map(positions.__getitem__, terms), range(len(terms))))
        doc_ids_and_counts = self._doc_ids_and_counts
        for term, count in Counter(terms).items():
            column = doc_ids_and_counts[term]
            column.append(doc_id)
            column.append(count)
        if len(positions) != known_terms:
            self._sorted_terms = None

    def _widen(self) -> None:
        """Make every doc-id column hold 64-bit doc ids (a doc id reached 2**32)."""
        self._doc_typecode = "Q"
        columns = self._doc_ids_and_counts
        columns.default_factory = partial(array, "Q")
        for term, doc_ids_and_counts in columns.items():
            columns[term] = array("Q", doc_ids_and_counts)

    def _column(self, term: str) -> Column | None:
        """`term`'s column, None when no row holds it."""
        positions = self._positions.get(term)
        return None if positions is None else (self._doc_ids_and_counts[term], positions)

    # ----- the Segment protocol (reads) -----------------------------------------------

    def postings(self, term: str) -> Sequence[Posting]:
        cached = self._decoded.get(term)
        if cached is not None:
            return cached
        column = self._column(term)
        if column is None:
            return ()
        doc_ids, counts, positions = column_rows(column)
        postings = [
            Posting(doc_id, tuple(positions[start:end]))
            for doc_id, start, end in zip(doc_ids, accumulate(counts, initial=0),
                                          accumulate(counts), strict=False)
        ]
        self._decoded[term] = postings
        return postings

    def _terms_in_order(self) -> list[str]:
        if self._sorted_terms is None:
            self._sorted_terms = sorted(self._positions)
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
    ) -> Iterator[tuple[str, array, array, array]]:
        """Every `(term, doc_ids, counts, positions)` in term order (each row's positions
        one after another in `positions`), rows in `deleted` left out (and terms left
        with no row dropped): what `engine.codec.postings_file.encode_postings_file`
        takes. Without a deleted row among them, every term's columns are sliced and
        handed on in C (`zip` and `map`: no Python step a term); else `_filtered_columns`
        (which is also the clear version with no row deleted)."""
        if deleted and not deleted.isdisjoint(self._documents):
            return self._filtered_columns(deleted)
        terms = self._terms_in_order()
        columns = list(map(self._doc_ids_and_counts.__getitem__, terms))
        return zip(terms, map(_DOC_IDS, columns), map(_COUNTS, columns),
                   map(self._positions.__getitem__, terms))

    def _filtered_columns(self, deleted: frozenset[int] | set[int]
                          ) -> Iterator[tuple[str, array, array, array]]:
        """`posting_columns`, a term at a time, rows in `deleted` left out."""
        filtering = bool(deleted) and not deleted.isdisjoint(self._documents)
        doc_ids_and_counts, all_positions = self._doc_ids_and_counts, self._positions
        for term in self._terms_in_order():
            column = doc_ids_and_counts[term]  # `column_rows`, without a call a term
            doc_ids, counts, positions = column[0::2], column[1::2], all_positions[term]
            if filtering and not deleted.isdisjoint(doc_ids):
                # One byte a row, 1 = kept, then one a position (each row's repeated by
                # its count): every column filtered by `compress`, in C.
                keep = bytes(map(deleted.__contains__, doc_ids)).translate(FLIP_KEEP)
                if 1 not in keep:
                    continue
                doc_ids = array(doc_ids.typecode, compress(doc_ids, keep))
                positions = array("I", compress(positions, bytes(
                    chain.from_iterable(map(repeat, keep, counts)))))
                counts = array(counts.typecode, compress(counts, keep))
            yield term, doc_ids, counts, positions
