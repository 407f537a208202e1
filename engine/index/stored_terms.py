"""A flushed segment's term dictionary, read from its terms file one record at a time.

Owns: exact and prefix lookup of terms over the term records of an opened terms file
(`engine.codec.terms_file.TermsFileReader`), and a small cache of the records read last.
Must not touch: posting lists (a lookup answers where a term's list lies), bytes, files.

`engine.index.termdict.TermDictionary` is the clear version (every term in memory): both
answer `get`, `with_prefix` and `terms` alike (`tests/index/test_stored_terms.py`). This
one keeps only the first term of each record in memory (from the table), so opening a
segment of a million terms decodes none of them; a lookup bisects those first terms and
decodes the one record (`TERMS_PER_RECORD` entries) that can hold the term. A decoded
record keeps its terms and entries as the codec's lists of them, which a lookup bisects,
and a `PostingsSlot` is made only for the term looked up: a one-word search reads a
record per segment, and making a value (or a dict entry) for each of its other terms
cost more than decoding it.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator
from itertools import islice
from typing import NamedTuple

from engine.codec.terms_file import TermEntry, TermsFileReader
from engine.index.recent_cache import RecentlyUsed


class PostingsSlot(NamedTuple):
    """Where a term's posting list lies in a segment's postings file (a `NamedTuple`,
    not a frozen dataclass: cheaper to make per lookup, and its class costs a searching
    process less to make at import)."""

    document_frequency: int
    offset: int
    length: int


class StoredTermDictionary:
    """`term -> PostingsSlot` of one segment, read on demand."""

    def __init__(self, reader: TermsFileReader, cached_records: int = 256) -> None:
        self._reader = reader
        self._records: RecentlyUsed[int, tuple[list[str], list[TermEntry]]] = \
            RecentlyUsed(cached_records)

    def __len__(self) -> int:
        return self._reader.table.term_count

    def _record(self, number: int) -> tuple[list[str], list[TermEntry]]:
        """Record `number`'s terms (increasing) and entries."""
        return self._records.get(number, self._reader.term_record_columns)

    def get(self, term: str) -> PostingsSlot | None:
        """The slot of `term`, or None (bisected in the one record that can hold it)."""
        number = self._reader.term_record_of(term)
        if number < 0:
            return None
        terms, entries = self._record(number)
        position = bisect_left(terms, term)
        if position == len(terms) or terms[position] != term:
            return None
        entry = entries[position]
        return PostingsSlot(entry[1], entry[2], entry[3])

    def with_prefix(self, prefix: str) -> Iterator[str]:
        """Every term starting with `prefix`, in order."""
        records = len(self._reader.table.term_firsts)
        for number in range(max(self._reader.term_record_of(prefix), 0), records):
            terms = self._record(number)[0]
            for term in islice(terms, bisect_left(terms, prefix), None):
                if not term.startswith(prefix):
                    return
                yield term

    def terms(self) -> Iterator[str]:
        """Every term, in increasing order."""
        for number in range(len(self._reader.table.term_firsts)):
            yield from self._record(number)[0]

    def items(self) -> Iterator[tuple[str, PostingsSlot]]:
        """Every `(term, slot)`, terms in increasing order (a merge reads them all)."""
        for number in range(len(self._reader.table.term_firsts)):
            for term, frequency, offset, length in self._reader.term_record(number):
                yield term, PostingsSlot(frequency, offset, length)  # once each: not cached
