"""Round trips and corruption of the three index file kinds (postings, terms, manifest)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.codec.framing import (
    encode_footer,
    encode_header,
    encode_record,
    update_crc,
)
from engine.codec.manifest_file import Manifest, decode_manifest, encode_manifest
from engine.codec.postings_file import (
    check_postings_file,
    decode_posting_value,
    encode_posting_value,
    encode_postings_file,
    read_posting_record,
)
from engine.codec.postings_file_legacy import decode_posting_list, encode_posting_list
from engine.codec.terms_file import MAGIC
from engine.codec.terms_file_legacy import decode_terms_file
from engine.errors import CorruptFile


@st.composite
def posting_lists(draw: st.DrawFn) -> list[tuple[int, tuple[int, ...]]]:
    doc_ids = sorted(draw(st.sets(st.integers(0, 10_000), max_size=40)))
    return [
        (doc_id, tuple(sorted(draw(st.sets(st.integers(0, 500), min_size=1, max_size=6)))))
        for doc_id in doc_ids
    ]


@settings(max_examples=60, deadline=None)
@given(posting_lists(), st.integers(1, 5))
def test_posting_list_round_trip_any_block_size(postings, block_size):
    assert decode_posting_list(encode_posting_list(postings, block_size)) == postings


def test_posting_blocks_are_delta_coded_and_full_except_the_last():
    value = encode_posting_list([(5, [1, 3]), (6, [0]), (10, [2])], block_size=2)
    assert value == [[6, [5, 1], [[1, 2], [0]]], [10, [4], [[2]]]]


@settings(max_examples=80, deadline=None)
@given(posting_lists(), st.booleans())
def test_posting_list_round_trip_as_arrays(postings, singles_as_ints):
    positions = [p[0] if singles_as_ints and len(p) == 1 else list(p) for _d, p in postings]
    value = encode_posting_value([d for d, _p in postings], positions)
    assert decode_posting_value(value).pairs() == postings


@settings(max_examples=40, deadline=None)
@given(posting_lists(), st.integers(1, 5))
def test_a_layout_1_list_decodes_to_the_same_arrays(postings, block_size):
    assert decode_posting_value(encode_posting_list(postings, block_size)).pairs() == postings


def test_posting_columns_take_the_smallest_typecode():
    value = encode_posting_value([1, 70_000], [[300], 5])
    assert value[0] == "postings/2" and value[1::2] == ["I", "B", "H"]


def test_postings_file_round_trip_through_slots():
    lists = [("alpha", [0], [[0, 4]]), ("beta", [1, 3], [2, [0, 1]])]
    data, slots = encode_postings_file(lists)
    assert check_postings_file(data, "p", decode_lists=True) == 2
    expected = {"alpha": [(0, (0, 4))], "beta": [(1, (2,)), (3, (0, 1))]}
    for term, postings in expected.items():
        frequency, offset, length = slots[term]
        assert frequency == len(postings)
        read = lambda start, size: data[start: start + size]
        assert read_posting_record(read, offset, length, "p").pairs() == postings


def test_flipped_byte_in_postings_names_file_and_offset():
    data, slots = encode_postings_file([("alpha", [0], [0])])
    offset, length = slots["alpha"][1:]
    damaged = bytearray(data)
    damaged[offset + 9] ^= 0xFF
    with pytest.raises(CorruptFile) as caught:
        check_postings_file(bytes(damaged), "index/segment-000001.postings")
    assert caught.value.path == "index/segment-000001.postings"
    assert caught.value.offset == offset
    with pytest.raises(CorruptFile) as caught:
        read_posting_record(lambda start, size: bytes(damaged[start: start + size]),
                            offset, length, "index/segment-000001.postings")
    assert caught.value.offset == offset


def test_inconsistent_columns_are_corruption():
    with pytest.raises(ValueError, match="disagree in length"):
        decode_posting_value(["postings/2", "B", b"\x01", "B", b"\x02", "B", b"\x00"])
    with pytest.raises(CorruptFile, match="do not increase"):
        data, _slots = encode_postings_file([("a", [5, 3], [0, 1])])
        check_postings_file(data, "p", decode_lists=True)


def test_block_header_mismatch_is_corruption():
    with pytest.raises(ValueError, match="header says 9"):
        decode_posting_list([[9, [3, 4], [[0], [1]]]])


def test_legacy_terms_file_missing_texts_record_is_corrupt():
    documents = encode_record(["documents/2", [[0, "w", "m", "user", None, 1, 0, 0]]])
    without_texts = encode_header(MAGIC) + documents + encode_footer(1, update_crc(0, documents))
    with pytest.raises(CorruptFile, match="lacks texts records"):
        decode_terms_file(without_texts, "t")


def test_legacy_terms_file_texts_record_of_the_wrong_size_is_corrupt():
    documents = encode_record(["documents/2", [[0, "w", "m", "user", None, 1, 0, 0]]])
    texts = encode_record(["texts", ["one", "two"]])
    data = encode_header(MAGIC) + documents + texts + encode_footer(2, update_crc(update_crc(0, documents), texts))
    decoded = decode_terms_file(data, "t")  # texts are checked when read, not on open
    with pytest.raises(CorruptFile, match="texts record 0 is not 1 strings"):
        decoded.text_block(0)


def test_legacy_terms_file_without_footer_is_corrupt():
    documents = encode_record(["documents", [[0, "w", "m", "user", 1.0, 1, 0, "x"]]])
    data = encode_header(MAGIC) + documents
    with pytest.raises(CorruptFile, match="corrupt at byte offset"):
        decode_terms_file(data, "t")


def test_manifest_round_trip_and_truncation():
    manifest = Manifest(
        generation=12, next_doc_id=40, profile="unicode61 remove_diacritics=2",
        segments=(("segment-000002", 0, 19, 18), ("segment-000003", 20, 39, 20)),
        deleted=(4, 7), windows=(("a", 3, "m4", False), ("b", 9, None, True)),
    )
    data = encode_manifest(manifest)
    assert decode_manifest(data, "index/manifest") == manifest
    with pytest.raises(CorruptFile):
        decode_manifest(data[:-5], "index/manifest")


def test_file_kinds_are_registered_for_dump():
    from engine.codec import kind_of_magic

    assert [kind_of_magic(magic).name for magic in (b"SS.POSTS", b"SS.TERMS", b"SS.MANIF")] == [
        "postings", "terms", "manifest",
    ]


@settings(max_examples=80, deadline=None)
@given(st.sets(st.integers(0, 2**40), max_size=60) | st.sets(st.integers(0, 300), max_size=200))
def test_manifest_tombstones_round_trip_as_runs(deleted):
    manifest = Manifest(3, 2**40 + 1, "p", (), tuple(sorted(deleted)), ())
    data = encode_manifest(manifest)
    assert decode_manifest(data, "index/manifest").deleted == tuple(sorted(deleted))


@pytest.mark.parametrize("runs", [[1], [1, -2], [1, "x"], "ab"])
def test_malformed_tombstone_runs_name_the_manifest(runs):
    from engine.codec.framing import encode_footer, encode_header, encode_record, update_crc
    from engine.codec.manifest_file import MAGIC as MANIFEST_MAGIC

    value = {"generation": 1, "next_doc_id": 9, "profile": "p", "segments": [],
             "deleted_runs": runs, "windows": []}
    record = encode_record(value)
    data = encode_header(MANIFEST_MAGIC) + record + encode_footer(1, update_crc(0, record))
    with pytest.raises(CorruptFile, match="index/manifest.*tombstone runs"):
        decode_manifest(data, "index/manifest")


@pytest.mark.parametrize("session_ids", [["w1", "w2"], ["a\x00b", "w2"], ["", "w2"]])
def test_group_tables_round_trip_as_columns_or_pairs(session_ids):
    from engine.codec.terms_file import encode_terms_file, open_terms_file

    rows = [(number, session_id, f"m{number}", role, 1.0, 1, number, "x")
            for number, (session_id, role) in enumerate(
                [(session_ids[0], "user"), (session_ids[1], "assistant"), (session_ids[0], "tool")])]
    data = encode_terms_file(rows, [])
    table = open_terms_file(lambda offset, length: data[offset: offset + length], len(data),
                            "t").table
    assert table.group_table == ((session_ids[0], "user"), (session_ids[1], "assistant"),
                                 (session_ids[0], "tool"))
    assert (b"group_sessions" in data) == ("\x00" not in "".join(session_ids))
