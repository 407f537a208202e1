"""The store metadata file `store.meta`: which backend a store was created for.

Owns: the bytes of `store.meta`. Must not touch: files (the store writes the bytes this
module returns with `Directory.write_atomic`, once, at creation).

Byte grammar (a `framing` file of kind `store`)::

    store.meta  := header(magic "SS.STORE", version 1) record footer(record_count 1)
    record      := {"backend": str, "created_at": float}
                   `created_at` in epoch milliseconds
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


@dataclass(frozen=True, slots=True)
class StoreMeta:
    """What `store.meta` says."""

    backend: str
    created_at: float


def encode_meta_file(meta: StoreMeta) -> bytes:
    """The whole `store.meta` file.

    >>> data = encode_meta_file(StoreMeta("reference", 1.0))
    >>> decode_meta_file(data, "store.meta")
    StoreMeta(backend='reference', created_at=1.0)
    """
    record = encode_record({"backend": meta.backend, "created_at": float(meta.created_at)})
    return encode_header(MAGIC) + record + encode_footer(1, update_crc(0, record))


def _decode_fields(value: Any) -> StoreMeta:
    if not isinstance(value, dict) or not isinstance(value.get("backend"), str):
        raise DecodeError("store metadata has no backend name")
    created_at = value.get("created_at")
    if not isinstance(created_at, (int, float)):
        raise DecodeError("store metadata has no creation time")
    return StoreMeta(value["backend"], float(created_at))


def decode_meta_file(data: bytes, location: str) -> StoreMeta:
    """Decode `store.meta`: CorruptFile on any damage, StoreError on another version."""
    frames = decode_sealed_frames(data, location, MAGIC)
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
