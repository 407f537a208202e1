"""The catalog checkpoint's bytes in pieces, for a save that never holds the whole file.

Owns: `catalog_file_pieces`, the bytes of `engine.codec.catalog_file.encode_catalog_file`
(the clear version, and the oracle of this one: the same bytes, joined) given out a
record at a time. Must not touch: files (the caller writes the pieces, through an atomic
write) or the byte grammar (that is `engine.codec.catalog_file`, whose writing parts this
reuses).

Why. The store saves the whole catalog at commits and at close; joined, the file's bytes
were held twice or three times over (the records, the index and positions joined, then
the file) at the moment a large import peaks. The head states the length and CRC32 of the
index and of the positions before them, so they must be known before the first byte is
written: the index records (a small part of the file) are kept encoded, and the
positions records (most of it) are encoded twice, once to count and check them and once
as they are written, so no more than one positions record is held at a time.
"""

from __future__ import annotations

from collections.abc import Iterator

from engine.codec.catalog_file import (
    MAGIC,
    WINDOWS_PER_RECORD,
    CatalogCheckpoint,
    _index_values,
    _positions_values,
    head_record,
)
from engine.codec.framing import encode_footer, encode_header, encode_record, update_crc


def catalog_file_pieces(
    checkpoint: CatalogCheckpoint, *, windows_per_record: int = WINDOWS_PER_RECORD,
) -> Iterator[bytes]:
    """The pieces whose join is `encode_catalog_file(checkpoint, windows_per_record=...)`:
    the header, the head, each index record, each positions record, the footer. The
    checks of `encode_catalog_file` (ValueError) are made here, before any piece is given;
    the positions are encoded again as their pieces are taken."""
    if windows_per_record < 1:
        raise ValueError("a windows record holds at least one window")
    index = [encode_record(value) for value in _index_values(checkpoint, windows_per_record)]
    positions_length = positions_crc = positions_count = 0
    for value in _positions_values(checkpoint):
        record = encode_record(value)
        positions_length += len(record)
        positions_crc = update_crc(positions_crc, record)
        positions_count += 1
    assert checkpoint.event_offsets is not None  # _positions_values checked the three
    if sum(checkpoint.event_counts) != len(checkpoint.event_offsets):
        raise ValueError("the event counts do not add up to the positions")
    index_length = sum(map(len, index))
    index_crc = 0
    for record in index:
        index_crc = update_crc(index_crc, record)
    head = head_record(checkpoint, index_length, index_crc, positions_length, positions_crc)
    return _pieces(checkpoint, head, index, positions_count)


def _pieces(checkpoint: CatalogCheckpoint, head: bytes, index: list[bytes],
            positions_count: int) -> Iterator[bytes]:
    """Give out the file a record at a time, the positions encoded as they go, with the
    footer's running CRC32 of every record."""
    record_count = 1 + len(index) + positions_count
    yield encode_header(MAGIC)
    yield head
    records_crc = update_crc(0, head)
    for record in index:
        records_crc = update_crc(records_crc, record)
        yield record
    del index[:]  # let them go as the positions are written
    for value in _positions_values(checkpoint):
        record = encode_record(value)
        records_crc = update_crc(records_crc, record)
        yield record
        del record
    yield encode_footer(record_count, records_crc)
