"""The store metadata file `store.meta`: which backend a store was created for.

Owns: the bytes of `store.meta`, of both kinds that use the name. Must not touch: files
(the store writes the bytes this module returns with `Directory.write_atomic`, once, at
creation).

Byte grammar (a `framing` file of kind `store`, in a reference partition's folder, or of
kind `partitioned`, at the root of a store whose partitions live under `agents/`)::

    store.meta  := header(magic "SS.STORE" | "SS.PARTS", version 1) record footer(record_count 1)
    record      := {"backend": str, "created_at": float}
                   `created_at` in epoch milliseconds

The magic alone says which of the two a file is, so a reader given the root of a
partitioned store never opens it as a partition (and the other way round).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.codec import FILE_KINDS
from engine.codec.framing import (
    HEADER_SIZE,
    DecodeError,
    decode_payload,
    decode_sealed_frames,
    encode_footer,
    encode_header,
    encode_record,
    update_crc,
)
from engine.errors import CorruptFile

MAGIC = FILE_KINDS["store"].magic
#: The magic of the `store.meta` at the root of a partitioned store.
PARTITIONED_MAGIC = FILE_KINDS["partitioned"].magic


@dataclass(frozen=True, slots=True)
class StoreMeta:
    """What `store.meta` says."""

    backend: str
    created_at: float


def encode_meta_file(meta: StoreMeta, magic: bytes = MAGIC) -> bytes:
    """The whole `store.meta` file (of kind `store`, or `partitioned` for that magic).

    >>> data = encode_meta_file(StoreMeta("reference", 1.0))
    >>> decode_meta_file(data, "store.meta")
    StoreMeta(backend='reference', created_at=1.0)
    >>> root = encode_meta_file(StoreMeta("sqlite", 1.0), PARTITIONED_MAGIC)
    >>> decode_meta_file(root, "store.meta", PARTITIONED_MAGIC).backend
    'sqlite'
    """
    record = encode_record({"backend": meta.backend, "created_at": float(meta.created_at)})
    return encode_header(magic) + record + encode_footer(1, update_crc(0, record))


def _decode_fields(value: Any) -> StoreMeta:
    if not isinstance(value, dict) or not isinstance(value.get("backend"), str):
        raise DecodeError("store metadata has no backend name")
    created_at = value.get("created_at")
    if not isinstance(created_at, (int, float)):
        raise DecodeError("store metadata has no creation time")
    return StoreMeta(value["backend"], float(created_at))


def decode_meta_file(data: bytes, location: str, magic: bytes = MAGIC) -> StoreMeta:
    """Decode `store.meta` of the kind `magic` names: CorruptFile on any damage (another
    magic included), StoreError on another version."""
    frames = decode_sealed_frames(data, location, magic)
    if len(frames) != 1:
        raise CorruptFile(location, HEADER_SIZE, f"expected one record, found {len(frames)}")
    frame = frames[0]
    try:
        return _decode_fields(decode_payload(frame.payload))
    except DecodeError as error:
        raise CorruptFile(location, frame.offset, str(error)) from None


def describe_payload(value: Any) -> dict[str, Any]:
    """A readable dict of the metadata record, for `session-search dump`."""
    meta = _decode_fields(value)
    return {"kind": "store", "backend": meta.backend, "created_at": meta.created_at}
