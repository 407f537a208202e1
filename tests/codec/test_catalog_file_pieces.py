"""The catalog checkpoint written in pieces is byte for byte the file encoded whole
(`encode_catalog_file`, the oracle), on random catalogs."""

from __future__ import annotations

import random
from array import array

import pytest

from engine.codec.catalog_file import (
    POSITIONS_PER_RECORD,
    CatalogCheckpoint,
    decode_catalog_file,
    encode_catalog_file,
)
from engine.codec.catalog_file_pieces import catalog_file_pieces
from engine.model import SessionWindow


def random_checkpoint(rng: random.Random, events: int | None = None) -> CatalogCheckpoint:
    window_count = rng.randrange(0, 40)
    windows = tuple(
        SessionWindow(f"w{number}", f"agent:a{rng.randrange(3)}:main",
                      title=rng.choice([None, "t", "ü" * rng.randrange(5)]),
                      current=rng.random() < 0.5, created_at=rng.choice([None, rng.random()]),
                      extra=rng.choice([{}, {"x": rng.randrange(1 << 40)}]))
        for number in range(window_count))
    counts = array("i", [rng.randrange(0, 30) for _ in windows])
    if events is not None and windows:
        counts[-1] += events
    total = sum(counts)
    keys: dict[str, list[str]] = {}
    for window in windows:
        keys.setdefault(window.session_key, []).append(window.session_id)
    transactions = rng.randrange(0, 20)
    return CatalogCheckpoint(
        rng.randrange(1, 9), rng.randrange(1 << 33), rng.randrange(1000), rng.randrange(1 << 32),
        rng.random() < 0.5, transactions, rng.randrange(1 << 20),
        tuple((rng.randrange(1 << 30), rng.randrange(100), rng.randrange(1 << 32))
              for _ in range(rng.randrange(4))),
        windows, counts,
        array("i", (rng.randrange(1, 9) for _ in range(total))),
        array("q", (rng.randrange(1 << 40) for _ in range(total))),
        array("i", (rng.randrange(1, 1 << 20) for _ in range(total))),
        tuple((key, tuple(ids)) for key, ids in keys.items()),
        array("i", (rng.randrange(1, 9) for _ in range(transactions))),
        array("q", (rng.randrange(1 << 40) for _ in range(transactions))))


@pytest.mark.parametrize("seed", range(60))
def test_the_pieces_join_to_the_whole_file(seed: int) -> None:
    rng = random.Random(seed)
    checkpoint = random_checkpoint(rng)
    per_record = rng.choice([1, 2, 3, 7, 1024])
    whole = encode_catalog_file(checkpoint, windows_per_record=per_record)
    pieces = list(catalog_file_pieces(checkpoint, windows_per_record=per_record))
    assert b"".join(pieces) == whole
    assert decode_catalog_file(whole, "x").windows == checkpoint.windows


def test_positions_over_several_records_join_to_the_whole_file() -> None:
    checkpoint = random_checkpoint(random.Random(7), events=POSITIONS_PER_RECORD * 2 + 5)
    pieces = list(catalog_file_pieces(checkpoint))
    assert b"".join(pieces) == encode_catalog_file(checkpoint)
    assert max(map(len, pieces)) < len(encode_catalog_file(checkpoint)) // 2


def test_what_the_whole_encoding_refuses_is_refused_before_any_piece() -> None:
    checkpoint = random_checkpoint(random.Random(3))
    while not checkpoint.windows:
        checkpoint = random_checkpoint(random.Random(4))
    short = CatalogCheckpoint(*[
        getattr(checkpoint, name) for name in CatalogCheckpoint.__dataclass_fields__][:10],
        None, None, None, *[getattr(checkpoint, name) for name in (
            "keys", "transaction_segments", "transaction_offsets")])
    wrong_counts = CatalogCheckpoint(*[
        getattr(checkpoint, name) for name in CatalogCheckpoint.__dataclass_fields__][:9],
        array("i", [count + 1 for count in checkpoint.event_counts]),
        *[getattr(checkpoint, name) for name in CatalogCheckpoint.__dataclass_fields__][10:])
    for bad, per_record in ((checkpoint, 0), (short, 1024), (wrong_counts, 1024)):
        with pytest.raises(ValueError):
            encode_catalog_file(bad, windows_per_record=per_record)
        with pytest.raises(ValueError):
            catalog_file_pieces(bad, windows_per_record=per_record)
