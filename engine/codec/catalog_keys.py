"""The `keys` record of a catalog checkpoint, decoded as the tuples its reader keeps.

Owns: decoding an index record's payload for `engine.codec.catalog_file.read_catalog_file`
(`decode_index_payload`: a `keys` record's arrays as tuples, every other record as
before), and turning a `keys` record's body into the checkpoint's `keys`, checked
(`keys_of`). Must not touch: the byte grammar (that is `engine.codec.catalog_file`'s,
which writes the record and says what it holds), files, or the catalog built from it.

Why apart: `catalog_file` is at its size limit. Why tuples: the checkpoint keeps its keys
as `((session_key, (session_id, ...)), ...)`; decoded as lists, every key's pair and its
session ids were copied into tuples again, a large part of the time a search's start-up
spent reading a checkpoint. Decoded as tuples (msgpack makes them so), the body is the
checkpoint's keys as it is, once its shape is checked; a body of another shape takes the
clear way (`keys_of`), which raises what it raised before.
"""

from __future__ import annotations

from itertools import chain
from operator import itemgetter
from typing import Any

from engine.codec.framing import DecodeError, decode_payload

#: How every `keys` record's payload starts: a 2-item array, then the string "keys".
KEYS_PAYLOAD_START = b"\x92\xa4keys"

Keys = tuple[tuple[str, tuple[str, ...]], ...]

_KEY = itemgetter(0)
_SESSION_IDS = itemgetter(1)


def decode_index_payload(payload: Any) -> Any:
    """The value of an index record's payload: `decode_payload`, with a `keys` record's
    arrays as tuples (`keys_of` takes its body so).

    >>> from engine.codec.framing import encode_payload
    >>> decode_index_payload(encode_payload(["keys", [["k", ["w1"]]]]))
    ('keys', (('k', ('w1',)),))
    >>> decode_index_payload(encode_payload(["sealed", [[1, 2, 3]]]))
    ['sealed', [[1, 2, 3]]]
    """
    keys = payload[:len(KEYS_PAYLOAD_START)] == KEYS_PAYLOAD_START
    return decode_payload(payload, use_list=not keys)


def keys_of(body: Any) -> Keys:
    """The checkpoint's keys from a `keys` record's body `[[session_key, [session_id,
    ...]], ...]`: the body itself when it is such tuples, else each pair copied into
    tuples (the clear version: a body of another shape raises the `TypeError` or
    `ValueError` it raised before). DecodeError when a key or session id is not a string.

    >>> keys_of((("k", ("w1", "w2")),)) == keys_of([["k", ["w1", "w2"]]]) == (("k", ("w1", "w2")),)
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
