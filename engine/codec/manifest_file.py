"""The index manifest: which segments make up the committed index, and what it covers.

Owns: the bytes of `index/manifest`. Must not touch: files (the index writer replaces the
manifest with `Directory.write_atomic`, after every segment it names is durable, so the
manifest is the index's commit point).

Byte grammar (a `framing` file of kind `manifest`)::

    manifest := header(magic "SS.MANIF") record footer(record_count 1)
    record   := {"generation": int,        the transcript-store generation covered
                 "next_doc_id": int,       the doc id the next row gets
                 "profile": str,           the analyzer label the terms were made with
                 "segments": [[name, first_doc_id, last_doc_id, document_count], ...],
                 "deleted": [gap, ...],    tombstoned doc ids in flushed segments, as a
                                           running sum from 0 (first gap absolute)
                 "windows": [[session_id, indexed_seq, leaf_event_id | nil,
                              needs_rebuild], ...],   sorted by session_id
                 "statistics": [document_count, total_tokens]}   optional
                 the live rows of the segments and their summed token counts (FTS5's N
                 and the total behind avgdl), so opening needs no pass over the rows;
                 absent in manifests written before issue 5's reopen work (and then
                 summed from the segments when opened)
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import accumulate
from typing import Any

from engine.codec import FILE_KINDS
from engine.codec.framing import (
    DecodeError,
    decode_payload,
    decode_sealed_frames,
    encode_footer,
    encode_header,
    encode_record,
    update_crc,
)
from engine.errors import CorruptFile

MAGIC = FILE_KINDS["manifest"].magic

#: `(name, first_doc_id, last_doc_id, document_count)`
SegmentEntry = tuple[str, int, int, int]
#: `(session_id, indexed_seq, leaf_event_id, needs_rebuild)`
WindowEntry = tuple[str, int, str | None, bool]


@dataclass(frozen=True, slots=True)
class Manifest:
    """A decoded manifest."""

    generation: int
    next_doc_id: int
    profile: str
    segments: tuple[SegmentEntry, ...]
    deleted: tuple[int, ...]
    windows: tuple[WindowEntry, ...]
    statistics: tuple[int, int] | None = None


def _to_value(manifest: Manifest) -> dict[str, Any]:
    gaps = []
    previous = 0
    for doc_id in sorted(manifest.deleted):
        gaps.append(doc_id - previous)
        previous = doc_id
    return {
        "generation": manifest.generation,
        "next_doc_id": manifest.next_doc_id,
        "profile": manifest.profile,
        "segments": [list(entry) for entry in manifest.segments],
        "deleted": gaps,
        "windows": [list(entry) for entry in sorted(manifest.windows)],
        **({} if manifest.statistics is None else {"statistics": list(manifest.statistics)}),
    }


def encode_manifest(manifest: Manifest) -> bytes:
    """The whole manifest file.

    >>> value = Manifest(7, 3, "unicode61", (("segment-000001", 0, 2, 3),), (1,),
    ...                  (("w1", 4, "m3", False),))
    >>> decode_manifest(encode_manifest(value), "manifest") == value
    True
    """
    record = encode_record(_to_value(manifest))
    return encode_header(MAGIC) + record + encode_footer(1, update_crc(0, record))


def _from_value(value: Any) -> Manifest:
    if not isinstance(value, dict):
        raise DecodeError("manifest record is not a map")
    try:
        gaps = value["deleted"]
        if set(map(type, gaps)) - {int}:
            raise DecodeError("manifest tombstone gaps are not integers")
        deleted = accumulate(gaps)  # the running sum, in C
        segments = tuple((str(n), int(a), int(b), int(c)) for n, a, b, c in value["segments"])
        windows = tuple(
            (str(session_id), int(seq), leaf if leaf is None else str(leaf), bool(rebuild))
            for session_id, seq, leaf, rebuild in value["windows"]
        )
        statistics = value.get("statistics")
        if statistics is not None:
            document_count, total_tokens = statistics
            statistics = (int(document_count), int(total_tokens))
        return Manifest(
            int(value["generation"]), int(value["next_doc_id"]), str(value["profile"]),
            segments, tuple(deleted), windows, statistics,
        )
    except (KeyError, TypeError, ValueError) as error:
        raise DecodeError(f"manifest record is malformed: {error!r}") from None


def decode_manifest(data: bytes, location: str) -> Manifest:
    """Decode the manifest: CorruptFile (with the offset) on any damage."""
    frames = decode_sealed_frames(data, location, MAGIC)
    if len(frames) != 1:
        raise CorruptFile(location, frames[-1].offset if frames else 0, "expected one record")
    try:
        return _from_value(decode_payload(frames[0].payload))
    except DecodeError as error:
        raise CorruptFile(location, frames[0].offset, str(error)) from None


def describe_payload(value: Any) -> dict[str, Any]:
    """A readable dict of the manifest record, for `session-search dump`."""
    manifest = _from_value(value)
    return {"kind": "manifest", **_to_value(manifest), "deleted": list(manifest.deleted)}
