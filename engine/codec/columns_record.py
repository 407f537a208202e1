"""The columns record of a terms file: a segment's per-slot columns in one `bin`.

Owns: encoding and decoding the columns record (`columns_record := ["columns", bin]`,
its grammar in `engine.codec.terms_file`'s docstring), and the little-endian byte
columns of a terms file's records. Must not touch: the rest of a terms file (its table,
text and term records, its reading: `engine.codec.terms_file`, which imports this
module and holds the grammar), files, index types.

Why a module of its own: a terms file's reader reads this record only when the columns
are first asked for (`TermsFileReader.table`), and its encoding and decoding is a
concept of its own that the terms file's module had no room left for.
"""

from __future__ import annotations

import sys
from array import array
from typing import TYPE_CHECKING, Any

from engine.codec.framing import RECORD_HEAD, DecodeError, update_crc

if TYPE_CHECKING:
    from engine.codec.terms_file import RowTable

COLUMNS_KIND = "columns"
#: What a columns record's payload starts with, before the bin's 4-byte length (msgpack:
#: a 2-item array, the kind as a fixstr, the bin 32 marker).
COLUMNS_PREFIX = (b"\x92" + bytes([0xA0 + len(COLUMNS_KIND)]) + COLUMNS_KIND.encode("ascii")
                  + b"\xc6")
COLUMNS_PREFIX_SIZE = len(COLUMNS_PREFIX) + 4


_COLUMN_TYPES = {"lengths": "I", "seqs": "q", "groups": "I", "timestamps": "d"}
#: The typed columns in the order the columns record holds them (after present, flags).
_RECORD_COLUMNS = ("lengths", "groups", "seqs", "timestamps")
_ITEM_SIZES = {code: array(code).itemsize for code in _COLUMN_TYPES.values()}
COLUMN_BYTES_PER_SLOT = 2 + sum(_ITEM_SIZES[code] for code in _COLUMN_TYPES.values())


def _to_bytes(values: array) -> bytes:
    """An array's bytes in little-endian order."""
    if sys.byteorder != "little":
        values = array(values.typecode, values)
        values.byteswap()
    return values.tobytes()


def _from_bytes(typecode: str, data: Any, count: int, name: str) -> array:
    """A little-endian `bin` column as an array of `count` items (DecodeError otherwise)."""
    values = array(typecode)
    if not isinstance(data, bytes) or len(data) != count * values.itemsize:
        raise DecodeError(f"table column {name} is not {count} items of {values.itemsize} bytes")
    values.frombytes(data)
    if sys.byteorder != "little":
        values.byteswap()
    return values


def encode_columns_record(table: RowTable) -> bytes:
    """The framed columns record of `table` (its bin always with the 32-bit header)."""
    return b"".join(columns_record_pieces(table))


def columns_record_pieces(table: RowTable) -> list[bytes]:
    """`encode_columns_record(table)` in pieces, one a column, so that it is written
    without one more copy of every column: the record head, then the payload."""
    pieces = [table.present, table.flags,
              *(_to_bytes(getattr(table, name)) for name in _RECORD_COLUMNS)]
    size = sum(map(len, pieces))
    pieces.insert(0, COLUMNS_PREFIX + size.to_bytes(4, "big"))
    crc = 0
    for piece in pieces:
        crc = update_crc(crc, piece)
    return [RECORD_HEAD.pack(COLUMNS_PREFIX_SIZE + size, crc), *pieces]


def columns_of(payload: memoryview, span: int) -> dict[str, Any]:
    """The per-slot columns of a columns record's `payload` (CRC already checked): the
    two byte columns copied out of the view, the typed ones views of it cast to their
    type (no copy: they keep the record's bytes, read once, instead of a second copy of
    most of them); DecodeError when the payload is not the record.

    >>> from engine.codec.terms_file import build_table
    >>> table = build_table([(4, "w", "m", "user", 3, 7, 2, "x")], [])[0]
    >>> record = encode_columns_record(table)
    >>> columns = columns_of(memoryview(record)[8:], 1)
    >>> columns["present"], list(columns["lengths"]), list(columns["seqs"])
    (b'\\x01', [7], [2])
    """
    size = COLUMN_BYTES_PER_SLOT * span
    if (len(payload) != COLUMNS_PREFIX_SIZE + size
            or payload[:len(COLUMNS_PREFIX)] != COLUMNS_PREFIX
            or int.from_bytes(payload[len(COLUMNS_PREFIX):COLUMNS_PREFIX_SIZE], "big") != size):
        raise DecodeError(f"columns record is not {COLUMNS_KIND} of {span} slots")
    position = COLUMNS_PREFIX_SIZE
    columns: dict[str, Any] = {}
    for name in ("present", "flags"):
        columns[name] = bytes(payload[position: position + span])
        position += span
    for name in _RECORD_COLUMNS:
        typecode = _COLUMN_TYPES[name]
        end = position + _ITEM_SIZES[typecode] * span
        columns[name] = payload[position: end].cast(typecode) if sys.byteorder == "little" \
            else _from_bytes(typecode, bytes(payload[position: end]), span, name)
        position = end
    return columns
