"""The catalog checkpoint's bytes in pieces, for a save that never holds the whole file.

Owns: `catalog_file_pieces`, the bytes of `engine.codec.catalog_file.encode_catalog_file`
(the clear version, and the oracle of this one: the same bytes, joined) given out a
record at a time, and each positions record a column at a time. Must not touch: files
(the caller writes the pieces, through an atomic write) or the byte grammar (that is
`engine.codec.catalog_file`, whose writing parts this reuses, except a positions
record's payload: its msgpack heads are restated here byte by byte, held to
`catalog_file`'s by the tests that join the pieces and compare them with the file).

Why. The store saves the whole catalog at commits and at close; joined, the file's bytes
were held twice or three times over (the records, the index and positions joined, then
the file) at the moment a large import peaks. The head states the length and CRC32 of the
index and of the positions before them, so they must be known before the first byte is
written: the index records (a small part of the file) are kept encoded, and the
positions records (most of it) are encoded twice, once to count and check them and once
as they are written. A positions record is not built whole either (its columns' bytes,
then msgpack's copy of them in the payload and the packer's buffer, then the framed
copy): its payload is written as pieces, the msgpack heads written here byte by byte
and each column's bytes between them (`_positions_payload`), so no more than one
column of one record is held at a time. Each record's frame head (its payload's length
and CRC32) is kept from the first pass.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from engine.codec.catalog_file import (
    MAGIC,
    POSITIONS_PER_RECORD,
    WINDOWS_PER_RECORD,
    CatalogCheckpoint,
    _index_values,
    encode_array,
    head_record,
)
from engine.codec.framing import (
    RECORD_HEAD,
    bin_head,
    combine_crc,
    encode_footer,
    encode_header,
    encode_record,
    update_crc,
)

#: The msgpack bytes a positions record's payload starts with: a 4-item array, then the
#: string "positions".
_POSITIONS_PREFIX = b"\x94\xa9positions"


def catalog_file_pieces(
    checkpoint: CatalogCheckpoint, *, windows_per_record: int = WINDOWS_PER_RECORD,
) -> Iterator[bytes]:
    """The pieces whose join is `encode_catalog_file(checkpoint, windows_per_record=...)`:
    the header, the head, each index record, each positions record's frame head and its
    payload in pieces, the footer. The checks of `encode_catalog_file` (ValueError) are
    made here, before any piece is given; the positions are encoded again as their
    pieces are taken."""
    if windows_per_record < 1:
        raise ValueError("a windows record holds at least one window")
    index = [encode_record(value) for value in _index_values(checkpoint, windows_per_record)]
    columns = _position_columns(checkpoint)
    record_heads: list[bytes] = []
    positions_length = positions_crc = 0
    for start in range(0, len(columns[1]), POSITIONS_PER_RECORD):
        length = crc = 0
        for piece in _positions_payload(columns, start):
            length += len(piece)
            crc = update_crc(crc, piece)
        record_head = RECORD_HEAD.pack(length, crc)
        record_heads.append(record_head)
        positions_crc = combine_crc(update_crc(positions_crc, record_head), crc, length)
        positions_length += len(record_head) + length
    if sum(checkpoint.event_counts) != len(columns[1]):
        raise ValueError("the event counts do not add up to the positions")
    index_length = sum(map(len, index))
    index_crc = 0
    for record in index:
        index_crc = update_crc(index_crc, record)
    head = head_record(checkpoint, index_length, index_crc, positions_length, positions_crc)
    return _pieces(columns, head, index, record_heads)


def _position_columns(checkpoint: CatalogCheckpoint) -> tuple[Sequence[int], ...]:
    """The checkpoint's three position columns: log file numbers, offsets, lengths
    (ValueError when it was made without them)."""
    columns = (checkpoint.event_segments, checkpoint.event_offsets, checkpoint.event_lengths)
    if any(column is None for column in columns):
        raise ValueError("a checkpoint is written with its event positions")
    return columns  # type: ignore[return-value]


def _positions_payload(columns: tuple[Sequence[int], ...], start: int) -> Iterator[bytes]:
    """The payload of the positions record of the events from `start` on, in pieces
    whose join is `encode_payload(["positions", segments, offsets, lengths])` of the
    record's slice of each column (`catalog_file._positions_values`, the oracle): the
    array and string heads, then each column's `bin` head and bytes, its slice taken
    as it is given.

    >>> from array import array
    >>> columns = (array("i", [1, 2]), array("q", [8, 20]), array("i", [12, 7]))
    >>> from engine.codec.framing import encode_payload
    >>> b"".join(_positions_payload(columns, 1)) == encode_payload(
    ...     ["positions", encode_array(array("i", [2])), encode_array(array("q", [20])),
    ...      encode_array(array("i", [7]))])
    True
    """
    end = start + POSITIONS_PER_RECORD
    yield _POSITIONS_PREFIX
    for column in columns:
        data = encode_array(column[start:end])  # type: ignore[arg-type]
        yield bin_head(len(data))
        yield data
        del data  # let it go before the next column's slice is made


def _pieces(columns: tuple[Sequence[int], ...], head: bytes, index: list[bytes],
            record_heads: list[bytes]) -> Iterator[bytes]:
    """Give out the file a record at a time (the positions a piece at a time, encoded
    as they go), with the footer's running CRC32 of every record."""
    record_count = 1 + len(index) + len(record_heads)
    yield encode_header(MAGIC)
    yield head
    records_crc = update_crc(0, head)
    for record in index:
        records_crc = update_crc(records_crc, record)
        yield record
    del index[:]  # let them go as the positions are written
    for number, record_head in enumerate(record_heads):
        records_crc = update_crc(records_crc, record_head)
        yield record_head
        for piece in _positions_payload(columns, number * POSITIONS_PER_RECORD):
            records_crc = update_crc(records_crc, piece)
            yield piece
            del piece
    yield encode_footer(record_count, records_crc)
