"""A minimal PNG encoder (8-bit RGB, no interlace), for charts without matplotlib.

Owns: the PNG byte layout and nothing else: it turns rows of RGB pixels into bytes.
Must not touch: drawing (`bar_chart`), files.

It lives here rather than in `engine/codec/` because it is a benchmark-only output
format that the engine never reads back; it follows the codec rule all the same: the
byte grammar first, `encode_*` names, `struct` and `zlib` imported only here.

Byte grammar (PNG, ISO/IEC 15948; every integer big-endian)::

    png      := signature chunk(IHDR) chunk(IDAT) chunk(IEND)
    signature:= 89 50 4E 47 0D 0A 1A 0A
    chunk    := length:u32  type:4 ASCII bytes  data:length bytes  crc:u32
                (crc = CRC-32 of type followed by data)
    IHDR     := width:u32 height:u32 bit_depth:u8=8 colour_type:u8=2 (RGB)
                compression:u8=0 filter:u8=0 interlace:u8=0
    IDAT     := zlib( row* )          one zlib stream holding every row
    row      := filter_type:u8=0 (None) then width × (red:u8 green:u8 blue:u8)
    IEND     := (no data)
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

Pixel = tuple[int, int, int]


def encode_chunk(kind: bytes, data: bytes) -> bytes:
    """One chunk: length, type, data, CRC-32 of type + data.

    >>> encode_chunk(b"IEND", b"").hex()
    '0000000049454e44ae426082'
    """
    if len(kind) != 4:
        raise ValueError(f"a chunk type has 4 bytes, not {len(kind)}")
    crc = zlib.crc32(kind + data) & 0xFFFFFFFF
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)


def encode_png(rows: Sequence[Sequence[Pixel]]) -> bytes:
    """Encode equal-length rows of (r, g, b) pixels (0..255) as a PNG file.

    >>> data = encode_png([[(255, 0, 0), (0, 0, 255)]])
    >>> data[:8] == PNG_SIGNATURE, struct.unpack(">II", data[16:24])
    (True, (2, 1))
    """
    if not rows or not rows[0]:
        raise ValueError("an image needs at least one row and one column")
    width, height = len(rows[0]), len(rows)
    raw = bytearray()
    for row in rows:
        if len(row) != width:
            raise ValueError("every row must have the same width")
        raw.append(0)
        for red, green, blue in row:
            raw += bytes((red, green, blue))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        PNG_SIGNATURE
        + encode_chunk(b"IHDR", header)
        + encode_chunk(b"IDAT", zlib.compress(bytes(raw), 9))
        + encode_chunk(b"IEND", b"")
    )
