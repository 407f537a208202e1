"""The index manifest: round trips (tombstones as runs) and damage naming the file."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.codec.framing import encode_footer, encode_header, encode_record, update_crc
from engine.codec.manifest_file import MAGIC, Manifest, decode_manifest, encode_manifest
from engine.errors import CorruptFile


def manifest_file(value: dict) -> bytes:
    record = encode_record(value)
    return encode_header(MAGIC) + record + encode_footer(1, update_crc(0, record))


def test_manifest_round_trip_and_truncation():
    manifest = Manifest(
        generation=12, next_doc_id=40, profile="unicode61 remove_diacritics=2",
        segments=(("segment-000002", 0, 19, 18), ("segment-000003", 20, 39, 20)),
        deleted=(4, 7), windows=(("a", 3, "m4", False), ("b", 9, None, True)),
        statistics=(30, 120), indexing=False,
    )
    data = encode_manifest(manifest)
    decoded = decode_manifest(data, "index/manifest")
    assert decoded == manifest
    assert decoded.deleted_runs == (range(4, 5), range(7, 8))
    with pytest.raises(CorruptFile):
        decode_manifest(data[:-5], "index/manifest")


@settings(max_examples=80, deadline=None)
@given(st.sets(st.integers(0, 2**40), max_size=60) | st.sets(st.integers(0, 300), max_size=200))
def test_manifest_tombstones_round_trip_as_runs(deleted):
    manifest = Manifest(3, 2**40 + 1, "p", (), tuple(sorted(deleted)), ())
    data = encode_manifest(manifest)
    assert decode_manifest(data, "index/manifest").deleted == tuple(sorted(deleted))


@pytest.mark.parametrize("runs", [[1], [1, -2], [1, "x"], "ab"])
def test_malformed_tombstone_runs_name_the_manifest(runs):
    value = {"generation": 1, "next_doc_id": 9, "profile": "p", "segments": [],
             "deleted_runs": runs, "windows": []}
    with pytest.raises(CorruptFile, match="index/manifest.*tombstone runs"):
        decode_manifest(manifest_file(value), "index/manifest")


def test_a_manifest_without_tombstone_runs_is_corrupt():
    value = {"generation": 1, "next_doc_id": 9, "profile": "p", "segments": [],
             "deleted": [1, 1], "windows": []}
    with pytest.raises(CorruptFile, match="index/manifest.*malformed: KeyError\\('deleted_runs'\\)"):
        decode_manifest(manifest_file(value), "index/manifest")
