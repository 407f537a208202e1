"""The index records of a catalog checkpoint, decoded as its reader keeps them.

Owns: decoding an index record's payload for `engine.codec.catalog_file.read_catalog_file`
(`decode_index_payload`): a `keys` record's arrays as tuples, turned into the
checkpoint's `keys` and checked by `keys_of`; a `windows` record with only the columns
a search reads decoded, the others kept as their bytes (`UnreadColumn`) until a window
is built; every other record as before. Must not touch: the byte grammar (that is
`engine.codec.catalog_file`'s, which writes the records, says what they hold and checks
the decoded values), files, or the catalog built from them.

Why apart: `catalog_file` is at its size limit. Why tuples: the checkpoint keeps its keys
as `((session_key, (session_id, ...)), ...)`; decoded as lists, every key's pair and its
session ids were copied into tuples again, a large part of the time a search's start-up
spent reading a checkpoint. Decoded as tuples (msgpack makes them so), the body is the
checkpoint's keys as it is, once its shape is checked; a body of another shape takes the
clear way (`keys_of`), which raises what it raised before.

Why some columns unread: a search reads each window's session id, key and `archived`
flag (`WindowColumns.scope_rows`), and the grammar checks those and `extra` at open; the
other fields (titles, reasons, times, parents...) are most of a windows record's strings,
and a search never reads them. They are skipped by msgpack without making their values
(`Unpacker.skip`), their bytes kept, and decoded when a window is first built (a column
reads as its list: `UnreadColumn` iterates its decoded values). A record of another shape
(its columns not arrays, bytes after it, not msgpack) is decoded whole as before, so the
checks at open raise what they raised. What a skipped column's bytes could still hold
that its decode refuses (a string that is not UTF-8, which no writer of ours makes)
raises `DecodeError` when the windows are built: a writer and `verify` build them at open
(then the checkpoint is a damaged one), a search when it first reads a window
(`engine.transcript.checkpoint.WindowColumns`, which names the checkpoint).
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import chain
from operator import itemgetter
from typing import Any

import msgpack

from engine.codec.framing import DecodeError, decode_payload

#: How every `keys` record's payload starts: a 2-item array, then the string "keys".
KEYS_PAYLOAD_START = b"\x92\xa4keys"
#: How every `windows` record's payload starts: a 4-item array, then "windows".
WINDOWS_PAYLOAD_START = b"\x94\xa7windows"
#: The window fields whose columns are decoded at open: what a search and the checks
#: at open read.
READ_WINDOW_FIELDS = frozenset(("session_id", "session_key", "archived", "extra"))

Keys = tuple[tuple[str, tuple[str, ...]], ...]

_KEY = itemgetter(0)
_SESSION_IDS = itemgetter(1)
#: msgpack's array heads: fixarray (the count in the low nibble), array 16, array 32.
_ARRAY_16, _ARRAY_32 = 0xDC, 0xDD
_UNPACK_ERRORS = (ValueError, TypeError, IndexError, msgpack.UnpackException)


def decode_index_payload(payload: Any) -> Any:
    """The value of an index record's payload: `decode_payload`, with a `keys` record's
    arrays as tuples (`keys_of` takes its body so) and a `windows` record's columns
    outside `READ_WINDOW_FIELDS` unread (`decode_windows_payload`).

    >>> from engine.codec.framing import encode_payload
    >>> decode_index_payload(encode_payload(["keys", [["k", ["w1"]]]]))
    ('keys', (('k', ('w1',)),))
    >>> decode_index_payload(encode_payload(["sealed", [[1, 2, 3]]]))
    ['sealed', [[1, 2, 3]]]
    """
    start = payload[:len(WINDOWS_PAYLOAD_START)]
    if start == WINDOWS_PAYLOAD_START:
        return decode_windows_payload(payload)
    keys = start[:len(KEYS_PAYLOAD_START)] == KEYS_PAYLOAD_START
    return decode_payload(payload, use_list=not keys)


def keys_of(body: Any) -> Keys:
    """The checkpoint's keys from a `keys` record's body `[[session_key, [session_id,
    ...]], ...]`: the body itself when it is such tuples, else each pair copied into
    tuples (the clear version: a body of another shape raises the `TypeError` or
    `ValueError` it raised before). DecodeError when a key or session id is not a string.

    >>> keys_of((("k", ("w1", "w2")),)) == keys_of([["k", ["w1", "w2"]]])
    True
    >>> keys_of((("k", ("w1", 2)),))
    Traceback (most recent call last):
    ...
    engine.codec.framing.DecodeError: a checkpoint key or session id is not a string
    """
    if type(body) is tuple and not set(map(type, body)) - {tuple} \
            and not set(map(len, body)) - {2} \
            and not set(map(type, map(_SESSION_IDS, body))) - {tuple}:
        keys = body
    else:
        keys = tuple([(key, tuple(session_ids)) for key, session_ids in body])
    names = chain(map(_KEY, keys), chain.from_iterable(map(_SESSION_IDS, keys)))
    if not {str}.issuperset(map(type, names)):  # the grammar's str, checked at open
        raise DecodeError("a checkpoint key or session id is not a string")
    return keys


class UnreadColumn:
    """A windows record's column kept as its msgpack bytes (an array of `len(self)`
    values), decoded the first time it is iterated, as the list it holds.

    >>> from engine.codec.framing import encode_payload
    >>> column = UnreadColumn(encode_payload(["a", None]), 2)
    >>> len(column), list(column), list(column)
    (2, ['a', None], ['a', None])
    """

    __slots__ = ("_data", "_length", "_values")

    def __init__(self, data: bytes, length: int) -> None:
        self._data = data
        self._length = length
        self._values: list[Any] | None = None

    def __len__(self) -> int:
        return self._length

    def __iter__(self) -> Iterator[Any]:
        return iter(self.values())

    def values(self) -> list[Any]:
        """The column's values, decoded on the first call (its bytes are let go then)."""
        if self._values is None:
            values = decode_payload(self._data)
            if not isinstance(values, list) or len(values) != self._length:
                raise DecodeError("an unread window column is not the array it began as")
            self._values, self._data = values, b""
        return self._values

    def __repr__(self) -> str:
        return f"UnreadColumn({self._length} values)"


def array_length(data: Any, offset: int) -> int | None:
    """The item count of the msgpack array whose head is at `offset` of `data`, or None
    when no array starts there.

    >>> from engine.codec.framing import encode_payload
    >>> [array_length(encode_payload(value), 0) for value in ([1] * 3, [1] * 20, [1] * 70000, "x")]
    [3, 20, 70000, None]
    """
    head = data[offset]
    if 0x90 <= head <= 0x9F:
        return head & 0x0F
    size = 2 if head == _ARRAY_16 else 4 if head == _ARRAY_32 else 0
    return int.from_bytes(data[offset + 1: offset + 1 + size], "big") if size else None


def decode_windows_payload(payload: Any) -> list[Any]:
    """`decode_payload(payload)` of a `windows` record (`["windows", field_names,
    columns, event_counts]`), each column of a field outside `READ_WINDOW_FIELDS` left
    an `UnreadColumn` when it is an array; a payload of another shape is decoded whole
    (`decode_payload`, which raises what it raised before).

    >>> from engine.codec.framing import encode_payload
    >>> value = decode_windows_payload(encode_payload(
    ...     ["windows", ["session_id", "title"], [["w1", "w2"], ["a", "b"]], b""]))
    >>> value[2][0], value[2][1], list(value[2][1])
    (['w1', 'w2'], UnreadColumn(2 values), ['a', 'b'])
    """
    unpacker = msgpack.Unpacker(raw=False, strict_map_key=True,
                                unicode_errors="surrogatepass", max_buffer_size=len(payload))
    try:
        unpacker.feed(payload)
        if unpacker.read_array_header() != 4:
            return decode_payload(payload)
        tag, names = unpacker.unpack(), unpacker.unpack()
        if not isinstance(names, list) or unpacker.read_array_header() != len(names):
            return decode_payload(payload)
        columns: list[Any] = []
        for name in names:
            start = unpacker.tell()
            length = None if name in READ_WINDOW_FIELDS else array_length(payload, start)
            if length is None:
                columns.append(unpacker.unpack())
            else:
                unpacker.skip()
                columns.append(UnreadColumn(bytes(payload[start: unpacker.tell()]), length))
        counts = unpacker.unpack()
        if unpacker.tell() != len(payload):
            return decode_payload(payload)
    except _UNPACK_ERRORS:
        return decode_payload(payload)
    return [tag, names, columns, counts]
