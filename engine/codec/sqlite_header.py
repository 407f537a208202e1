"""The first 100 bytes of a SQLite database file: how long the file says it is.

Owns: reading the size a SQLite database's header claims, so that a file cut short is
named at open instead of answering with rows missing (SQLite reads a short file without
an error until a query touches a page past its end). Must not touch: files (callers
pass the header's bytes and the file's size), or anything else of SQLite's format
(SQLite itself reads the file; this is one check before it does).

Byte grammar (SQLite's own, https://www.sqlite.org/fileformat.html, big-endian)::

    header      := magic[16] page_size:u16 ... change_counter:u32 @24
                   page_count:u32 @28 ... version_valid_for:u32 @92    (100 bytes)
                   magic = "SQLite format 3\\0"; page_size 1 means 65536;
                   page_count is valid only when version_valid_for equals
                   change_counter (a writer of an old SQLite may not have kept it)
"""

from __future__ import annotations

import struct

SQLITE_MAGIC = b"SQLite format 3\x00"
HEADER_LENGTH = 100


def claimed_size(header: bytes) -> int | None:
    """The bytes the database says it holds (page size times page count), or None when
    the header does not say (too short, another magic, a count not kept).

    >>> header = bytearray(100); header[:16] = SQLITE_MAGIC
    >>> header[16:18] = (4096).to_bytes(2, "big"); header[28:32] = (3).to_bytes(4, "big")
    >>> claimed_size(bytes(header))
    12288
    >>> header[92:96] = (7).to_bytes(4, "big"); claimed_size(bytes(header)) is None
    True
    """
    if len(header) < HEADER_LENGTH or not header.startswith(SQLITE_MAGIC):
        return None
    (page_size,) = struct.unpack_from(">H", header, 16)
    (change_counter, page_count) = struct.unpack_from(">II", header, 24)
    (valid_for,) = struct.unpack_from(">I", header, 92)
    if valid_for != change_counter or page_count == 0:
        return None
    return (65536 if page_size == 1 else page_size) * page_count
