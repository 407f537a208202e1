"""Framing: header, records, footer; torn-tail versus corruption classification."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.codec import FILE_KINDS
from engine.codec.framing import (
    FOOTER_SIZE,
    FRAMING_VERSION,
    HEADER_SIZE,
    Damage,
    DecodeError,
    Footer,
    Frame,
    decode_footer_at_end,
    decode_frame_at,
    decode_header,
    decode_payload,
    encode_footer,
    encode_header,
    encode_payload,
    encode_record,
    find_frame_after,
    iter_frames,
    update_crc,
)
from engine.errors import CorruptFile, UnsupportedVersion

#: A magic no file kind has, so a header of it needs its version given.
MAGIC = b"SS.TESTS"
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)


def build(values: list[object], sealed: bool = False) -> bytes:
    records = b"".join(encode_record(value) for value in values)
    footer = encode_footer(len(values), update_crc(0, records)) if sealed else b""
    return encode_header(MAGIC, version=1) + records + footer


@settings(max_examples=60)
@given(st.lists(json_values, max_size=5))
def test_records_round_trip(values: list[object]) -> None:
    data = build(values, sealed=True)
    items = list(iter_frames(data))
    assert [decode_payload(item.payload) for item in items[:-1]] == values
    footer = items[-1]
    assert isinstance(footer, Footer)
    assert footer.record_count == len(values)
    assert footer.records_crc == update_crc(0, data[HEADER_SIZE: len(data) - FOOTER_SIZE])


@settings(max_examples=40)
@given(st.lists(json_values, min_size=2, max_size=4), st.data())
def test_a_flipped_byte_never_passes_silently(values: list[object], data: st.DataObject) -> None:
    original = build(values)
    position = data.draw(st.integers(HEADER_SIZE, len(original) - 1))
    damaged = bytearray(original)
    damaged[position] ^= data.draw(st.integers(1, 255))
    items = list(iter_frames(bytes(damaged)))
    decoded = [decode_payload(item.payload) for item in items if isinstance(item, Frame)]
    assert isinstance(items[-1], Damage) or decoded != values


def test_header_carries_its_kinds_version_and_refuses_another() -> None:
    for kind in FILE_KINDS.values():
        assert decode_header(encode_header(kind.magic), "f").version == kind.version
    header = encode_header(MAGIC, flags=7, version=3)
    assert (decode_header(header, "f").flags, decode_header(header, "f").version) == (7, 3)
    with pytest.raises(ValueError, match="give its version"):
        encode_header(MAGIC)
    with pytest.raises(UnsupportedVersion, match=(
            r"^f: unsupported version 9 of a terms file \(this build reads version 2\); "
            r"it was written by a newer build of session-search$")) as refused:
        decode_header(encode_header(b"SS.TERMS", version=9), "f")
    assert not isinstance(refused.value, CorruptFile)
    with pytest.raises(UnsupportedVersion, match=(
            r"^f: unsupported version 1 of a terms file \(this build reads version 2\); "
            r"it was written by an earlier build of session-search: re-import the store$")):
        decode_header(encode_header(b"SS.TERMS", version=1), "f")
    broken = bytearray(header)
    broken[3] ^= 1
    with pytest.raises(CorruptFile, match="f: corrupt at byte offset 0: header CRC mismatch"):
        decode_header(bytes(broken), "f")
    with pytest.raises(CorruptFile, match="too short"):
        decode_header(header[:10], "f")


def test_truncation_anywhere_in_the_last_record_is_a_torn_tail() -> None:
    data = build(["first", {"second": [1, 2, 3]}])
    last_start = HEADER_SIZE + len(encode_record("first"))
    for cut in range(last_start + 1, len(data)):
        items = list(iter_frames(data[:cut]))
        assert decode_payload(items[0].payload) == "first"
        assert items[1] == Damage(last_start, items[1].reason, at_tail=True)


def test_bad_crc_mid_file_is_not_at_the_tail() -> None:
    data = bytearray(build(["first", "second"]))
    data[HEADER_SIZE + 9] ^= 0x40
    damage = next(iter(iter_frames(bytes(data))))
    assert damage == Damage(HEADER_SIZE, "record CRC mismatch", at_tail=False)


def test_zero_filled_tail_is_torn_but_zero_length_mid_file_is_not() -> None:
    data = build(["first"])
    assert list(iter_frames(data + bytes(20)))[-1] == Damage(len(data), "zero-filled tail", True)
    middle = data + bytes(8) + encode_record("x")
    assert list(iter_frames(middle))[-1].at_tail is False


def test_footer_must_end_the_file() -> None:
    data = build(["a"], sealed=True)
    assert list(iter_frames(data + b"junk"))[-1].reason == "4 bytes after the footer"
    assert list(iter_frames(data[:-3]))[-1] == Damage(len(data) - FOOTER_SIZE,
                                                      "incomplete footer", True)



def test_footer_carries_the_framing_version() -> None:
    data = build(["a"], sealed=True)
    assert decode_footer_at_end(data).version == FRAMING_VERSION == 1
    records = encode_record("a")
    other = encode_header(MAGIC, version=1) + records + encode_footer(
        1, update_crc(0, records), version=2)
    assert list(iter_frames(other))[-1] == Damage(
        HEADER_SIZE + len(records), "footer framing version 2 (expected 1)", at_tail=False)


def test_decode_frame_at_and_unencodable_values() -> None:
    record = encode_record(["x", 1])
    assert decode_payload(decode_frame_at(record).payload) == ["x", 1]
    with pytest.raises(DecodeError, match="runs past the end"):
        decode_frame_at(record[:-1])
    with pytest.raises(DecodeError, match="cannot be stored"):
        encode_payload({"big": 2**70})
    with pytest.raises(DecodeError, match="not valid msgpack"):
        decode_payload(b"\xc1")


def test_find_frame_after_finds_a_matching_record() -> None:
    data = b"\x07garbage" + encode_record("wanted") + encode_record("other")
    found = find_frame_after(data, 0, lambda p: decode_payload(p) == "wanted", 64)
    assert found == 8
    assert find_frame_after(data, 9, lambda p: decode_payload(p) == "wanted", 64) is None
