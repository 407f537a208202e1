"""Record framing shared by every engine file: header, CRC32-checked records, footer.

Owns: the byte grammar below, msgpack payload encoding, and the rule that classifies a
damaged spot as a torn tail or as corruption. Must not touch: files (callers pass bytes
in and write bytes out) or the meaning of payloads (see `log_file`, `meta_file`).

Byte grammar (all integers big-endian; `u16`, `u32`, `u64` unsigned)::

    file        := header record* footer?
    header      := magic[8] version:u16 flags:u16 header_crc:u32            (16 bytes)
                   header_crc = CRC32(magic .. flags); version = the format version
                   of the file's kind (`engine.codec.FILE_KINDS`: the layout of its
                   records); flags = 0 (no kind uses them)
    record      := length:u32 payload_crc:u32 payload[length]
                   1 <= length <= MAX_PAYLOAD_LENGTH; payload_crc = CRC32(payload);
                   payload = one msgpack value (maps keep their key order, strings are
                   UTF-8 `str`, binary is `bin`)
    footer      := FOOTER_MARKER:u32 record_count:u64 records_crc:u32
                   version:u16 reserved:u16 footer_crc:u32                   (24 bytes)
                   FOOTER_MARKER = 0xFFFFFFFF (never a valid record length);
                   records_crc = CRC32 of every byte from the end of the header to the
                   start of the footer; footer_crc = CRC32(marker .. reserved); the footer
                   is the last thing in a file (a sealed file); version =
                   FRAMING_VERSION, the version of this grammar, the same in every
                   file (the header's version is the kind's, the footer's the frame's)

Reading a file front to back yields frames until one of: the end of the bytes, a footer
(which must end exactly at the end), or *damage*. Damage is classified here, from the
bytes alone, as `at_tail` when it is the kind of mess an interrupted append leaves:

* fewer than 8 bytes left for a record head, or fewer than 24 for a footer;
* a length that runs past the end of the bytes;
* a CRC mismatch on the very last record (its length landed, its payload did not);
* a tail of zero bytes (a file system may extend the length before the data lands).

Anything else (a bad CRC or an impossible length with more bytes after it) is *not* at
the tail. The transcript layer refines this with its commit records; see
`engine.transcript.log_tail` for the rule that decides between truncating and raising
`CorruptFile`.

The decoded values (`FileHeader`, `Frame`, `Footer`, `Damage`) are NamedTuples, not
frozen dataclasses: every command that opens a store imports this module, a search's
start-up among them, and a NamedTuple's class is made in a fraction of a frozen
dataclass's time (its values, one a record read, are also quicker to make).
"""

from __future__ import annotations

import struct
import threading
import zlib
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import msgpack

from engine.codec import MAGIC_LENGTH, check_version, kind_of_magic
from engine.errors import CorruptFile

HEADER = struct.Struct(">8sHHI")
RECORD_HEAD = struct.Struct(">II")
_pack_record_head = RECORD_HEAD.pack
FOOTER = struct.Struct(">IQIHHI")
HEADER_SIZE = HEADER.size  # 16
RECORD_HEAD_SIZE = RECORD_HEAD.size  # 8
FOOTER_SIZE = FOOTER.size  # 24
FOOTER_MARKER = 0xFFFFFFFF
MAX_PAYLOAD_LENGTH = 1 << 30
#: The version of the framing grammar above, written into every footer.
FRAMING_VERSION = 1


class DecodeError(ValueError):
    """Bytes that do not follow a codec grammar; the caller adds the file and offset."""


class FileHeader(NamedTuple):
    """The decoded 16-byte header of a framed file."""

    magic: bytes
    version: int
    flags: int


class Frame(NamedTuple):
    """One intact record: where it starts, its payload length and CRC, and the payload."""

    offset: int
    length: int
    crc: int
    payload: bytes

    @property
    def end(self) -> int:
        """Offset of the byte after this record."""
        return self.offset + RECORD_HEAD_SIZE + self.length


class Footer(NamedTuple):
    """A decoded footer (sealed file)."""

    offset: int
    record_count: int
    records_crc: int
    version: int


class Damage(NamedTuple):
    """The first spot where the bytes stop following the grammar."""

    offset: int
    reason: str
    at_tail: bool


# --------------------------------------------------------------------------------------
# Checksums and payloads
# --------------------------------------------------------------------------------------


def update_crc(crc: int, data: bytes) -> int:
    """CRC32 of everything seen so far followed by `data`.

    >>> update_crc(update_crc(0, b"ab"), b"c") == update_crc(0, b"abc")
    True
    """
    return zlib.crc32(data, crc)


def _gf2_times(matrix: list[int], vector: int) -> int:
    """The product of a 32x32 matrix over GF(2) (its columns as ints) and `vector`."""
    total = 0
    row = 0
    while vector:
        if vector & 1:
            total ^= matrix[row]
        vector >>= 1
        row += 1
    return total


def _gf2_square(matrix: list[int]) -> list[int]:
    return [_gf2_times(matrix, column) for column in matrix]


def combine_crc(first_crc: int, second_crc: int, second_length: int) -> int:
    """The CRC32 of two pieces of bytes one after the other, from the CRC32 of each and
    the second's length (zlib's `crc32_combine`, which Python's `zlib` does not offer):
    a file whose first record is rewritten once the rest is written gets its footer's
    CRC without reading the rest again.

    >>> combine_crc(update_crc(0, b"head"), update_crc(0, b"and the rest"), 12) == update_crc(0, b"headand the rest")
    True
    >>> combine_crc(5, 0, 0)
    5
    """
    operator = [0xEDB88320] + [1 << power for power in range(31)]  # append one zero bit
    for _doubling in range(3):
        operator = _gf2_square(operator)  # then 2, 4, 8 zero bits: one zero byte
    while second_length > 0:  # append len(second) zero bytes, a power of two at a time
        if second_length & 1:
            first_crc = _gf2_times(operator, first_crc)
        second_length >>= 1
        if second_length:
            operator = _gf2_square(operator)
    return first_crc ^ second_crc


#: Each thread's packers: `packer` (`encode_payload`'s, passing lone surrogates through)
#: and `strict` (`encode_record`'s).
_PACKERS = threading.local()
#: A packer keeps the buffer of the largest value it packed for as long as it lives; one
#: that packed a value longer than this many bytes (a checkpoint's record, a large
#: segment's table) is let go after it, so that buffer is freed at once.
PACKER_KEPT_BYTES = 1 << 20


def encode_payload(value: Any) -> bytes:
    """msgpack bytes of a JSON-like value; DecodeError names an unencodable value.

    Strings are encoded as UTF-8 with lone surrogates passed through (`surrogatepass`):
    JSON input may carry escapes such as `"\\ud800"`, and a store keeps events exactly as
    they came; the analysis layer reads a lone surrogate as U+FFFD, as FTS5 does.

    >>> decode_payload(encode_payload({"b": 1, "a": [True, None, 1.5, "é"]}))
    {'b': 1, 'a': [True, None, 1.5, 'é']}
    >>> lone = "a" + chr(0xD800) + "b"
    >>> decode_payload(encode_payload(lone)) == lone
    True
    >>> large = ["x" * 1000] * (PACKER_KEPT_BYTES // 1000 + 1)
    >>> encode_payload(large) == msgpack.packb(large, use_bin_type=True)
    True
    >>> encode_payload([1, "é"]) == msgpack.packb([1, "é"], use_bin_type=True)
    True
    """
    packer = getattr(_PACKERS, "packer", None)
    if packer is None:  # one reusable packer per thread (msgpack.packb makes one per call)
        packer = _PACKERS.packer = msgpack.Packer(use_bin_type=True,
                                                  unicode_errors="surrogatepass")
    try:
        data: bytes = packer.pack(value)  # resets itself after a value and after an error
    except (TypeError, ValueError, OverflowError) as error:
        raise DecodeError(f"value cannot be stored: {error}") from None
    if len(data) > PACKER_KEPT_BYTES:
        _PACKERS.packer = None
    return data


def decode_payload(payload: bytes, *, use_list: bool = True) -> Any:
    """The value of msgpack bytes (DecodeError when they are not exactly one value);
    arrays as tuples when not `use_list` (no list is made and copied again)."""
    try:
        return msgpack.unpackb(
            payload, raw=False, strict_map_key=True, unicode_errors="surrogatepass",
            use_list=use_list,
        )
    except (ValueError, TypeError, msgpack.ExtraData, msgpack.FormatError,
            msgpack.StackError) as error:
        raise DecodeError(f"payload is not valid msgpack: {error}") from None


# --------------------------------------------------------------------------------------
# Header
# --------------------------------------------------------------------------------------


def encode_header(magic: bytes, flags: int = 0, version: int | None = None) -> bytes:
    """The 16-byte header of a file of kind `magic`, with that kind's format version
    unless `version` says otherwise (a magic no kind has needs one).

    >>> len(encode_header(b"SS.SEGMT"))
    16
    """
    if len(magic) != MAGIC_LENGTH:
        raise ValueError(f"magic must be {MAGIC_LENGTH} bytes")
    if version is None:
        kind = kind_of_magic(magic)
        if kind is None:
            raise ValueError(f"no file kind has the magic {magic!r}: give its version")
        version = kind.version
    head = HEADER.pack(magic, version, flags, 0)[: HEADER_SIZE - 4]
    return head + struct.pack(">I", zlib.crc32(head))


def decode_header(data: bytes, location: str) -> FileHeader:
    """Decode and check a header: CorruptFile if damaged; UnsupportedVersion (a
    StoreError) if its kind is known and this build does not read its version (see
    `engine.codec.check_version`). A magic no kind has passes: the caller names it.

    >>> header = decode_header(encode_header(b"SS.SEGMT", flags=3), "x")
    >>> (header.magic, header.version, header.flags)
    (b'SS.SEGMT', 2, 3)
    >>> decode_header(encode_header(b"SS.SEGMT", version=3), "x")
    Traceback (most recent call last):
    ...
    engine.errors.UnsupportedVersion: x: unsupported version 3 of a segment file (this build reads version 2); it was written by a newer build of session-search
    """
    if len(data) < HEADER_SIZE:
        raise CorruptFile(location, 0, f"file too short for a header ({len(data)} bytes)")
    magic, version, flags, crc = HEADER.unpack_from(data, 0)
    if zlib.crc32(data[: HEADER_SIZE - 4]) != crc:
        raise CorruptFile(location, 0, "header CRC mismatch")
    kind = kind_of_magic(magic)
    if kind is not None:
        check_version(kind, version, location)
    return FileHeader(magic, version, flags)


# --------------------------------------------------------------------------------------
# Records and footer
# --------------------------------------------------------------------------------------


def bin_head(length: int) -> bytes:
    """The msgpack head of a `bin` of `length` bytes (bin 8, 16 or 32): what a file whose
    payload is written in pieces puts before each piece of raw bytes.

    >>> bin_head(3), bin_head(300), bin_head(70_000)
    (b'\\xc4\\x03', b'\\xc5\\x01,', b'\\xc6\\x00\\x01\\x11p')
    """
    if length < 0x100:
        return bytes((0xC4, length))
    if length < 0x10000:
        return b"\xc5" + length.to_bytes(2, "big")
    return b"\xc6" + length.to_bytes(4, "big")


def encode_frame(payload: bytes) -> bytes:
    """One record around `payload` bytes.

    >>> encode_frame(b"\\x01").hex()
    '00000001a505df1b01'
    """
    if not 1 <= len(payload) <= MAX_PAYLOAD_LENGTH:
        raise DecodeError(f"record payload of {len(payload)} bytes is out of range")
    return RECORD_HEAD.pack(len(payload), zlib.crc32(payload)) + payload


def encode_record(value: Any) -> bytes:
    """One record holding the msgpack encoding of `value`: `encode_frame` of
    `encode_payload(value)` (its oracle), in one call (once an event of an import).

    >>> encode_record([1, "x"]) == encode_frame(encode_payload([1, "x"]))
    True

    It packs with a strict packer of its own (one a thread), not `encode_payload`'s:
    a packer told to pass lone surrogates through (`surrogatepass`) encodes every string
    through Python's codec machinery, one new bytes object a string, while a strict one
    copies the string's own UTF-8 (CPython keeps that UTF-8 beside a non-ASCII string
    while the string lives). The UTF-8 of a string without a lone surrogate is the
    same either way; a string with one makes the strict packer fail, and the record is
    then made by the oracle. The same bytes, the same errors, and a packer that made a
    large record, or failed part-way, let go (with the buffer it grew):

    >>> encode_record({"a": [1.5, None]}) == encode_frame(encode_payload({"a": [1.5, None]}))
    True
    >>> lone = ["é", {"k" + chr(0xDC80): "v"}]
    >>> encode_record(lone) == encode_frame(encode_payload(lone))
    True
    >>> encode_record(object())
    Traceback (most recent call last):
    ...
    engine.codec.framing.DecodeError: value cannot be stored: can not serialize 'object' object
    >>> encode_record([chr(0xD800), object()])
    Traceback (most recent call last):
    ...
    engine.codec.framing.DecodeError: value cannot be stored: can not serialize 'object' object
    >>> large = ["x" * 1000] * (PACKER_KEPT_BYTES // 1000 + 1)
    >>> encode_record(large) == encode_frame(msgpack.packb(large, use_bin_type=True))
    True
    >>> getattr(_PACKERS, "strict", None) is None
    True
    """
    packer = getattr(_PACKERS, "strict", None)
    if packer is None:
        packer = _PACKERS.strict = msgpack.Packer(use_bin_type=True)
    try:
        payload: bytes = packer.pack(value)
    except UnicodeEncodeError:  # a lone surrogate: the oracle passes it through
        _PACKERS.strict = None  # with the buffer it grew before it failed (rare)
        return encode_frame(encode_payload(value))
    except (TypeError, ValueError, OverflowError) as error:
        _PACKERS.strict = None
        raise DecodeError(f"value cannot be stored: {error}") from None
    length = len(payload)
    if length > PACKER_KEPT_BYTES:
        _PACKERS.strict = None
        if length > MAX_PAYLOAD_LENGTH:
            raise DecodeError(f"record payload of {length} bytes is out of range")
    return _pack_record_head(length, zlib.crc32(payload)) + payload


def decode_frame_at(data: bytes, offset: int = 0) -> Frame:
    """The intact record starting at `offset` in `data` (DecodeError otherwise).

    >>> decode_frame_at(encode_record([1, "x"])).payload == encode_payload([1, "x"])
    True
    """
    item = _read_item(data, offset)
    if not isinstance(item, Frame):
        reason = item.reason if isinstance(item, Damage) else "expected a record, found a footer"
        raise DecodeError(reason)
    return item


def decode_whole_record(data: bytes) -> memoryview:
    """The payload of `data`, which must be exactly one intact record (DecodeError
    otherwise), as a view: no copy of a large payload is made before it is decoded.

    >>> bytes(decode_whole_record(encode_frame(b"abc")))
    b'abc'
    >>> decode_whole_record(encode_frame(b"abc") + b"x")
    Traceback (most recent call last):
    ...
    engine.codec.framing.DecodeError: record of 3 bytes is not the 4 bytes read
    """
    if len(data) < RECORD_HEAD_SIZE:
        raise DecodeError("incomplete record head")
    length, crc = RECORD_HEAD.unpack_from(data, 0)
    if length != len(data) - RECORD_HEAD_SIZE:
        raise DecodeError(f"record of {length} bytes is not the {len(data) - RECORD_HEAD_SIZE} bytes read")
    payload = memoryview(data)[RECORD_HEAD_SIZE:]
    if zlib.crc32(payload) != crc:
        raise DecodeError("record CRC mismatch")
    return payload


def encode_footer(record_count: int, records_crc: int, version: int = FRAMING_VERSION) -> bytes:
    """The 24-byte footer that seals a file."""
    head = FOOTER.pack(FOOTER_MARKER, record_count, records_crc, version, 0, 0)[: FOOTER_SIZE - 4]
    return head + struct.pack(">I", zlib.crc32(head))


def decode_footer_at_end(data: bytes) -> Footer | None:
    """The footer ending `data` (the last bytes of a file, offsets relative to `data`),
    or None when the file does not end with an intact footer.

    >>> decode_footer_at_end(b"xx" + encode_footer(5, 7)).record_count
    5
    >>> decode_footer_at_end(b"no footer here at all, no, none") is None
    True
    """
    offset = len(data) - FOOTER_SIZE
    if offset < 0 or RECORD_HEAD.unpack_from(data, offset)[0] != FOOTER_MARKER:
        return None
    item = _read_footer(data, offset)
    return item if isinstance(item, Footer) else None


def _read_footer(data: bytes, offset: int) -> Footer | Damage:
    if len(data) - offset < FOOTER_SIZE:
        return Damage(offset, "incomplete footer", at_tail=True)
    _marker, count, records_crc, version, _reserved, crc = FOOTER.unpack_from(data, offset)
    end = offset + FOOTER_SIZE
    if zlib.crc32(data[offset: end - 4]) != crc:
        return Damage(offset, "footer CRC mismatch", at_tail=end == len(data))
    if end != len(data):
        return Damage(end, f"{len(data) - end} bytes after the footer", at_tail=False)
    if version != FRAMING_VERSION:
        return Damage(offset, f"footer framing version {version} (expected {FRAMING_VERSION})",
                      at_tail=False)
    return Footer(offset, count, records_crc, version)


def _read_item(data: bytes, offset: int) -> Frame | Footer | Damage:
    """Decode whatever starts at `offset`: a record, a footer, or damage."""
    remaining = len(data) - offset
    if remaining < RECORD_HEAD_SIZE:
        return Damage(offset, "incomplete record head", at_tail=True)
    length, crc = RECORD_HEAD.unpack_from(data, offset)
    if length == FOOTER_MARKER:
        return _read_footer(data, offset)
    if length == 0 or length > MAX_PAYLOAD_LENGTH:
        if not any(data[offset:]):
            return Damage(offset, "zero-filled tail", at_tail=True)
        return Damage(offset, f"impossible record length {length}", at_tail=False)
    end = offset + RECORD_HEAD_SIZE + length
    if end > len(data):
        return Damage(offset, f"record of {length} bytes runs past the end", at_tail=True)
    payload = bytes(data[offset + RECORD_HEAD_SIZE: end])
    if zlib.crc32(payload) != crc:
        return Damage(offset, "record CRC mismatch", at_tail=end == len(data))
    return Frame(offset, length, crc, payload)


def iter_frames(data: bytes, start: int = HEADER_SIZE) -> Iterator[Frame | Footer | Damage]:
    """Yield the frames from `start`, then a final Footer or Damage if there is one.

    >>> body = encode_header(b"SS.SEGMT") + encode_record(1) + encode_record(2)
    >>> [type(item).__name__ for item in iter_frames(body + encode_footer(2, 0))]
    ['Frame', 'Frame', 'Footer']
    >>> list(iter_frames(body[:-1]))[-1]
    Damage(offset=25, reason='record of 1 bytes runs past the end', at_tail=True)
    """
    offset = start
    while offset < len(data):
        item = _read_item(data, offset)
        yield item
        if not isinstance(item, Frame):
            return
        offset = item.end


def decode_sealed_frames(data: bytes, location: str, magic: bytes) -> list[Frame]:
    """Every record of a whole sealed file of kind `magic`, checked against its footer.

    For files written at once (`write_atomic`), where any damage, even at the end, is
    corruption: CorruptFile names the offset; another version raises UnsupportedVersion.

    >>> body = encode_record("a")
    >>> data = encode_header(b"SS.STORE") + body + encode_footer(1, update_crc(0, body))
    >>> [decode_payload(f.payload) for f in decode_sealed_frames(data, "f", b"SS.STORE")]
    ['a']
    """
    header = decode_header(data, location)
    if header.magic != magic:
        raise CorruptFile(location, 0, f"expected magic {magic!r}, found {header.magic!r}")
    frames: list[Frame] = []
    for item in iter_frames(data, HEADER_SIZE):
        if isinstance(item, Frame):
            frames.append(item)
        elif isinstance(item, Footer):
            records_crc = update_crc(0, data[HEADER_SIZE: item.offset])
            if (item.record_count, item.records_crc) != (len(frames), records_crc):
                raise CorruptFile(location, item.offset, "footer does not match the records")
            return frames
        else:
            raise CorruptFile(location, item.offset, item.reason)
    raise CorruptFile(location, len(data), "file ends without a footer")


def encode_single_record(magic: bytes, value: Any) -> bytes:
    """A whole sealed file of kind `magic` holding one record, `value` (the inverse of
    `decode_single_record`).

    >>> decode_single_record(encode_single_record(b"SS.STORE", {"a": 1}), "f", b"SS.STORE")
    (16, {'a': 1})
    """
    body = encode_record(value)
    return encode_header(magic) + body + encode_footer(1, update_crc(0, body))


def decode_single_record(data: bytes, location: str, magic: bytes) -> tuple[int, Any]:
    """The offset and decoded payload of the one record of a whole sealed file of kind
    `magic` (a file of one record, written at once): CorruptFile naming the offset on
    any damage or another record count, as `decode_sealed_frames`.

    >>> body = encode_record({"a": 1})
    >>> data = encode_header(b"SS.STORE") + body + encode_footer(1, update_crc(0, body))
    >>> decode_single_record(data, "f", b"SS.STORE")
    (16, {'a': 1})
    """
    frames = decode_sealed_frames(data, location, magic)
    if len(frames) != 1:
        raise CorruptFile(location, HEADER_SIZE, f"expected one record, found {len(frames)}")
    frame = frames[0]
    try:
        return frame.offset, decode_payload(frame.payload)
    except DecodeError as error:
        raise CorruptFile(location, frame.offset, str(error)) from None


def count_frames(data: bytes, start: int, end: int) -> int | None:
    """How many records lie exactly between `start` and `end`, by their length fields
    alone (no CRC check), or None when they do not end exactly at `end`.

    >>> data = encode_record(1) + encode_record("two")
    >>> count_frames(data, 0, len(data)), count_frames(data, 0, len(data) - 1)
    (2, None)
    """
    count, offset = 0, start
    while offset < end:
        if end - offset < RECORD_HEAD_SIZE:
            return None
        length = RECORD_HEAD.unpack_from(data, offset)[0]
        if not 1 <= length <= MAX_PAYLOAD_LENGTH:
            return None
        offset += RECORD_HEAD_SIZE + length
        count += 1
    return count if offset == end else None


def find_frame_after(
    data: bytes, start: int, accept: Callable[[bytes], bool], max_length: int
) -> int | None:
    """The first offset >= `start` holding an intact record of at most `max_length`
    payload bytes whose payload `accept`s, or None.

    Used after damage to ask "is there committed data beyond this point?". Cost: one
    length check per byte offset, a CRC only where the length is small enough.
    """
    last = len(data) - RECORD_HEAD_SIZE
    for offset in range(start, last + 1):
        length, crc = RECORD_HEAD.unpack_from(data, offset)
        if not 1 <= length <= max_length or offset + RECORD_HEAD_SIZE + length > len(data):
            continue
        payload = bytes(data[offset + RECORD_HEAD_SIZE: offset + RECORD_HEAD_SIZE + length])
        if zlib.crc32(payload) == crc and accept(payload):
            return offset
    return None
