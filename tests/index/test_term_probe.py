"""A flushed segment's term dictionary probes a term record's bytes before decoding it
(issue 33, item 5): a record whose CRC-checked bytes lack the bytes the term's entry
starts with (`entry_start`) is not decoded, and the lookup answers None.

Oracle: the same dictionary decoding every record it looks in (`probe_records = False`,
the clear version); damage is reported alike, whether the term is there or not.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.codec.framing import RECORD_HEAD_SIZE
from engine.codec.terms_file import (
    TERMS_PER_RECORD,
    encode_terms_file,
    entry_start,
    open_terms_file,
)
from engine.errors import CorruptFile
from engine.index.stored_terms import PostingsSlot, StoredTermDictionary

ROWS = [(0, "w", "m", "user", 1.0, 1, 0, "x")]


def file_of(words: list[str]) -> bytes:
    return encode_terms_file(ROWS, [(word, number + 1, 16 * number, 9 + number)
                                    for number, word in enumerate(words)])


def dictionary(data: bytes, probe: bool) -> StoredTermDictionary:
    reader = open_terms_file(lambda offset, length: data[offset: offset + length], len(data),
                             "index/segment-000001.terms")
    terms = StoredTermDictionary(reader)
    terms.probe_records = probe
    return terms


def answer(terms: StoredTermDictionary, term: str) -> object:
    try:
        return terms.get(term)
    except CorruptFile as error:
        return ("CorruptFile", error.path, error.offset, str(error))


# Short and long terms (msgpack's str headers change at 32 and 256 bytes), non-ASCII ones,
# a lone surrogate, and terms that are prefixes or extensions of each other.
words = st.text(alphabet="ab\x00é会\ud800", min_size=1, max_size=6) | st.builds(
    lambda text, length: (text * length)[:length], st.text(alphabet="abé", min_size=1,
                                                          max_size=3), st.integers(28, 300))


@settings(max_examples=80, deadline=None)
@given(st.lists(words, unique=True, min_size=1, max_size=3 * TERMS_PER_RECORD // 128)
       .map(sorted), st.lists(words, max_size=12))
def test_a_probed_lookup_answers_as_the_clear_one(stored, others):
    data = file_of(stored)
    probed, clear = dictionary(data, True), dictionary(data, False)
    for term in [*stored, *others, *(word + "a" for word in stored),
                 *(word[:-1] for word in stored)]:
        assert probed.get(term) == clear.get(term)
    assert probed.get(stored[-1]) == PostingsSlot(len(stored), 16 * (len(stored) - 1),
                                                  9 + len(stored) - 1)


def test_a_record_that_lacks_the_term_is_not_decoded():
    words = [f"t{number:05d}" for number in range(0, 2 * TERMS_PER_RECORD, 2)]
    terms = dictionary(file_of(words), True)
    assert terms.get("t00003") is None  # record 0 can hold it, and its bytes lack it
    assert terms._records.get(0, lambda number: None) is None  # nothing decoded, nor kept
    assert terms.get("t00004") == PostingsSlot(3, 32, 11)
    assert terms._records.get(0, lambda number: None) is not None  # decoded, kept
    assert terms.get("t00005") is None and terms.get(words[0]) == PostingsSlot(1, 0, 9)
    clear = dictionary(file_of(words), False)
    assert clear.get("t00003") is None
    assert clear._records.get(0, lambda number: None) is not None


def test_a_record_is_probed_once_then_decoded_and_kept():
    """A long-lived process (`serve`) that asks a record again has it decoded and kept,
    so a word that is missing costs a cache lookup, not a read, each time after."""
    words = [f"t{number:05d}" for number in range(0, 2 * TERMS_PER_RECORD, 2)]
    terms = dictionary(file_of(words), True)
    reads = []
    read_record = terms._reader.term_record_columns

    def counted(number):
        reads.append(number)
        return read_record(number)

    terms._reader.term_record_columns = counted
    for _ask in range(4):
        assert terms.get("t00003") is None
    assert reads == [0]  # probed the first time, decoded the second, kept after
    assert terms._records.get(0, lambda number: None) is not None


@pytest.mark.parametrize("term", ["t00003", "t00004", "t00000"])
def test_a_damaged_record_is_reported_alike_whether_it_holds_the_term_or_not(term):
    words = [f"t{number:05d}" for number in range(0, 2 * TERMS_PER_RECORD, 2)]
    data = file_of(words)
    start = dictionary(data, True)._reader.head.term_offsets[0]
    damaged = bytearray(data)
    damaged[start + RECORD_HEAD_SIZE + 40] ^= 0x01
    probed = answer(dictionary(bytes(damaged), True), term)
    assert probed == answer(dictionary(bytes(damaged), False), term)
    assert probed[:3] == ("CorruptFile", "index/segment-000001.terms", start)


@pytest.mark.parametrize("length", [1, 31, 32, 255, 256, 70_000])
def test_the_entry_start_is_in_the_bytes_written(length):
    term = ("é" + "a" * length)[:length]
    data = file_of([term])
    assert data.count(entry_start(term)) == 1
    assert entry_start(term)[:1] == b"\x94"
