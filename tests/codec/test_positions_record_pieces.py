"""A positions record of the catalog checkpoint written as pieces (its frame head, the
msgpack heads, each column's `bin` head and bytes) is byte for byte the record encoded
whole (`encode_record` of `catalog_file._positions_values`, the oracle), for each size
class of `bin` head (8, 16 and 32-bit lengths) and for files of several records."""

from __future__ import annotations

import random
from array import array
from dataclasses import replace

import pytest

from engine.codec.catalog_file import (
    POSITIONS_PER_RECORD,
    CatalogCheckpoint,
    _positions_values,
    encode_catalog_file,
)
from engine.codec.catalog_file_pieces import _positions_payload, catalog_file_pieces
from engine.codec.framing import RECORD_HEAD, encode_record, update_crc
from tests.codec.test_catalog_file_pieces import random_checkpoint

#: Event counts whose columns' `bin`s take each head: int32 columns of 63 events (252
#: bytes, 8-bit length), 64 and 16,383 (16-bit), 16,384 (32-bit); int64 offsets of
#: 32 (256 bytes: 16-bit) and 8,192 (32-bit).
EVENT_COUNTS = (1, 31, 32, 63, 64, 8191, 8192, 16383, 16384, 40_000)


def columns_of(rng: random.Random, count: int) -> tuple[array, array, array]:
    return (array("i", (rng.randrange(1, 1 << 31) for _ in range(count))),
            array("q", (rng.randrange(-(1 << 63), 1 << 63) for _ in range(count))),
            array("i", (rng.randrange(-(1 << 31), 1 << 31) for _ in range(count))))


def bin_heads(payload: bytes, columns: tuple[array, array, array]) -> list[int]:
    """The first byte of each column's `bin` head in a positions payload."""
    heads, at = [], len(b"\x94\xa9positions")
    for column in columns:
        heads.append(payload[at])
        size = column.itemsize * len(column)
        at += {0xC4: 2, 0xC5: 3, 0xC6: 5}[payload[at]] + size
    assert at == len(payload)
    return heads


@pytest.mark.parametrize("count", EVENT_COUNTS)
def test_a_record_in_pieces_is_the_record_encoded_whole(count: int) -> None:
    columns = columns_of(random.Random(count), count)
    checkpoint = random_checkpoint(random.Random(count))
    whole = encode_record(next(_positions_values(CatalogCheckpoint(
        *[getattr(checkpoint, name) for name in CatalogCheckpoint.__dataclass_fields__][:10],
        *columns, checkpoint.keys, checkpoint.transaction_segments,
        checkpoint.transaction_offsets))))
    pieces = list(_positions_payload(columns, 0))
    payload = b"".join(pieces)
    assert RECORD_HEAD.pack(len(payload), update_crc(0, payload)) + payload == whole
    # the heads, then each column's bin head and bytes apart
    assert [len(piece) for piece in pieces[2::2]] == [
        column.itemsize * count for column in columns]


def test_the_cases_reach_every_bin_head() -> None:
    seen = set()
    for count in EVENT_COUNTS:
        columns = columns_of(random.Random(count), count)
        seen.update(bin_heads(b"".join(_positions_payload(columns, 0)), columns))
    assert seen == {0xC4, 0xC5, 0xC6}


def checkpoint_of_events(seed: int, events: int) -> CatalogCheckpoint:
    """A random checkpoint whose windows hold exactly `events` events in all (the last
    window all of them), so that its last positions record holds what is left after the
    whole ones."""
    rng = random.Random(seed)
    checkpoint = random_checkpoint(rng)
    while not checkpoint.windows:
        checkpoint = random_checkpoint(rng)
    counts = array("i", [0] * len(checkpoint.windows))
    counts[-1] = events
    return replace(checkpoint, event_counts=counts,
                   event_segments=array("i", (rng.randrange(1, 9) for _ in range(events))),
                   event_offsets=array("q", (rng.randrange(1 << 40) for _ in range(events))),
                   event_lengths=array("i", (rng.randrange(1, 1 << 20) for _ in range(events))))


@pytest.mark.parametrize("last", [1, 40, 64, 16_384])
def test_several_records_join_to_the_whole_file(last: int) -> None:
    """The last record's columns take each head class (`last` events: 8-bit heads for 1;
    for 40, 8-bit for the int32 columns and 16-bit for the offsets (320 bytes); 16-bit
    for 64; 32-bit for 16,384); the others are whole records."""
    checkpoint = checkpoint_of_events(last, POSITIONS_PER_RECORD + last)
    assert len(checkpoint.event_offsets) == POSITIONS_PER_RECORD + last
    pieces = list(catalog_file_pieces(checkpoint, windows_per_record=7))
    whole = encode_catalog_file(checkpoint, windows_per_record=7)
    assert b"".join(pieces) == whole
    # no piece holds more than one column of one record (the offsets, 8 bytes an event)
    assert max(map(len, pieces)) <= 8 * POSITIONS_PER_RECORD
    last_heads = bin_heads(b"".join(_positions_payload(
        (checkpoint.event_segments, checkpoint.event_offsets, checkpoint.event_lengths),
        POSITIONS_PER_RECORD)), tuple(column[POSITIONS_PER_RECORD:] for column in (
            checkpoint.event_segments, checkpoint.event_offsets, checkpoint.event_lengths)))
    assert last_heads == {1: [0xC4] * 3, 40: [0xC4, 0xC5, 0xC4], 64: [0xC5] * 3,
                          16_384: [0xC6] * 3}[last]
