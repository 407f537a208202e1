"""A flushed segment's term dictionary, read from its terms file one record at a time.

Owns: exact and prefix lookup of terms over the term records of an opened terms file
(`engine.codec.terms_file.TermsFileReader`), and a small cache of the records read last.
Must not touch: posting lists (a lookup answers where a term's list lies), bytes, files.

`engine.index.termdict.TermDictionary` is the clear version (every term in memory): both
answer `get`, `with_prefix` and `terms` alike (`tests/index/test_stored_terms.py`). This
one keeps only the first term of each record in memory (from the table), so opening a
segment of a million terms decodes none of them; a lookup bisects those first terms and
decodes the one record (`TERMS_PER_RECORD` entries) that can hold the term. A decoded
record keeps its terms as the codec's list of them, which a lookup bisects, and their
slots as three columns of ints (`SlotColumns`; the codec's entry tuples are let go), and
a `PostingsSlot` is made only for the term looked up: a one-word search reads a record
per segment, and making a value (or a dict entry) for each of its other terms cost more
than decoding it, while a kept tuple per term was an object more for the garbage
collector to count and walk (a fresh search crossed a young collection for them).

A record not decoded yet is first probed (`TermsFileReader.term_record_if_held`): its
bytes are read and CRC-checked as always, and when they lack the bytes an entry of the
term starts with, the term is not there and nothing is decoded. A one-word search looks
its word up in every segment, and most segments of a large store lack a rare word, so
most of those records were decoded only to find that out. A record that lacks the term
is then not checked for its grammar (damage is still found: its CRC is). A record is
probed once: the next lookup in it decodes it, so a process that keeps asking (`serve`,
the MCP server) keeps the records it uses decoded, as before the probe.
"""

from __future__ import annotations

from array import array
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


class SlotColumns(NamedTuple):
    """The slots of a read term record's terms, a column each (`StoredTermDictionary`)."""

    frequencies: array
    offsets: array
    lengths: array


class StoredTermDictionary:
    """`term -> PostingsSlot` of one segment, read on demand."""

    #: False: keep a read record's entries as the codec's tuples (the clear version).
    slot_columns: bool = True
    #: False: `get` decodes the record that can hold the term even when its bytes show
    #: it does not (the clear version, and the oracle of the probe).
    probe_records: bool = True

    def __init__(self, reader: TermsFileReader, cached_records: int = 256) -> None:
        self._reader = reader
        self._records: RecentlyUsed[int, tuple[list[str], SlotColumns | list[TermEntry]]] = \
            RecentlyUsed(cached_records)
        #: The numbers of the records probed or decoded so far: `get` probes a record
        #: only the first time it is looked in.
        self._looked_in: set[int] = set()

    def __len__(self) -> int:
        return self._reader.head.term_count

    def _record(self, number: int) -> tuple[list[str], SlotColumns | list[TermEntry]]:
        """Record `number`'s terms (increasing) and their slots (`_read_record`)."""
        self._looked_in.add(number)
        return self._records.get(number, self._read_record)

    def _read_record(self, number: int) -> tuple[list[str], SlotColumns | list[TermEntry]]:
        """Record `number` as read, its slots as three columns of 64-bit ints (a record
        kept then holds no object per term but its text: the codec's tuples are let go
        at once, and the collector has them neither to count nor to walk), or as the
        codec's entries when a value is not such an int (a damaged file then fails
        where it did) or `slot_columns` is False."""
        return self._kept(*self._reader.term_record_columns(number))

    def _kept(self, terms: list[str], entries: list[TermEntry]
              ) -> tuple[list[str], SlotColumns | list[TermEntry]]:
        """A decoded record as `_read_record` keeps it (its number is recorded by the
        caller)."""
        if not self.slot_columns:
            return terms, entries
        try:  # the entries are checked 4-tuples: one C pass splits them into columns
            _terms, *slots = zip(*entries) if entries else ((), (), (), ())
            return terms, SlotColumns(*(array("q", column) for column in slots))
        except (TypeError, OverflowError):
            return terms, entries

    def get(self, term: str) -> PostingsSlot | None:
        """The slot of `term`, or None (bisected in the one record that can hold it)."""
        number = self._reader.term_record_of(term)
        if number < 0:
            return None
        if self.probe_records and number not in self._looked_in:
            self._looked_in.add(number)
            columns = self._reader.term_record_if_held(number, term)
            if columns is None:  # its bytes lack the term's entry: not decoded
                return None
            record = self._kept(*columns)
            terms, entries = self._records.get(number, lambda _number: record)
        else:
            terms, entries = self._record(number)
        position = bisect_left(terms, term)
        if position == len(terms) or terms[position] != term:
            return None
        if entries.__class__ is SlotColumns:
            frequencies, offsets, lengths = entries
            return PostingsSlot(frequencies[position], offsets[position], lengths[position])
        entry = entries[position]
        return PostingsSlot(entry[1], entry[2], entry[3])  # type: ignore[index]

    def with_prefix(self, prefix: str) -> Iterator[str]:
        """Every term starting with `prefix`, in order."""
        records = len(self._reader.head.term_firsts)
        for number in range(max(self._reader.term_record_of(prefix), 0), records):
            terms = self._record(number)[0]
            for term in islice(terms, bisect_left(terms, prefix), None):
                if not term.startswith(prefix):
                    return
                yield term

    def terms(self) -> Iterator[str]:
        """Every term, in increasing order."""
        for number in range(len(self._reader.head.term_firsts)):
            yield from self._record(number)[0]

    def items(self) -> Iterator[tuple[str, PostingsSlot]]:
        """Every `(term, slot)`, terms in increasing order (a merge reads them all)."""
        for number in range(len(self._reader.head.term_firsts)):
            for term, frequency, offset, length in self._reader.term_record(number):
                yield term, PostingsSlot(frequency, offset, length)  # once each: not cached
