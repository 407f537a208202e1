"""A manifest's bytes checked once per open (`engine.codec.manifest_file`, issue 33, item 5).

Opening a partition reads the manifest's generation, then the whole manifest, each from
the file. The second read skips the framing and CRC checks only for bytes equal to the
ones the first read checked. Oracle: `decode_manifest` with nothing kept (what opening
did before): bytes that changed in between, damaged or not, give what they gave then.
"""

from __future__ import annotations

import pytest

from engine.codec import manifest_file
from engine.codec.manifest_file import (
    Manifest,
    decode_manifest,
    decode_manifest_generation,
    encode_manifest,
)
from engine.errors import CorruptFile

LOCATION = "index/manifest"
FIRST = Manifest(7, 3, "unicode61", (("segment-000001", 0, 2, 3),), (1,),
                 (("w1", 4, "m3", False), ("w2", 0, None, True)))
SECOND = FIRST._replace(generation=8, windows=(("w1", 5, "m4", False),))


def clear_error(data: bytes) -> str:
    """The error `decode_manifest` gives for `data` with nothing kept."""
    manifest_file._last_checked = None
    with pytest.raises(CorruptFile) as raised:
        decode_manifest(data, LOCATION)
    return str(raised.value)


def flipped(data: bytes, offset: int) -> bytes:
    return data[:offset] + bytes([data[offset] ^ 0x01]) + data[offset + 1:]


def test_the_same_bytes_are_checked_once(monkeypatch):
    data = encode_manifest(FIRST)
    assert decode_manifest_generation(data, LOCATION) == 7
    checks = []
    real = manifest_file.decode_sealed_frames
    monkeypatch.setattr(manifest_file, "decode_sealed_frames",
                        lambda *arguments: checks.append(1) or real(*arguments))
    assert decode_manifest(bytes(data), LOCATION) == FIRST  # equal bytes, another object
    assert checks == []
    assert manifest_file._last_checked is None  # let go once read
    assert decode_manifest(data, LOCATION) == FIRST
    assert checks == [1]


@pytest.mark.parametrize("offset", [20, 40, -30, -2])  # the record head, its payload, footer
def test_bytes_damaged_after_the_generation_was_read_are_refused_as_before(offset):
    data = encode_manifest(FIRST)
    damaged = flipped(data, offset % len(data))
    expected = clear_error(damaged)
    assert decode_manifest_generation(data, LOCATION) == 7
    with pytest.raises(CorruptFile) as raised:
        decode_manifest(damaged, LOCATION)
    assert str(raised.value) == expected


def test_a_manifest_replaced_after_the_generation_was_read_is_read_anew():
    first, second = encode_manifest(FIRST), encode_manifest(SECOND)
    assert decode_manifest_generation(first, LOCATION) == 7
    assert decode_manifest(second, LOCATION) == SECOND


def test_a_damaged_manifest_is_not_kept():
    data = encode_manifest(FIRST)
    damaged = flipped(data, 40)
    decode_manifest_generation(data, LOCATION)
    decode_manifest(data, LOCATION)
    with pytest.raises(CorruptFile):
        decode_manifest_generation(damaged, LOCATION)
    expected = clear_error(damaged)
    with pytest.raises(CorruptFile) as raised:
        decode_manifest(damaged, LOCATION)
    assert str(raised.value) == expected
