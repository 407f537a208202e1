"""The index manifest: which segments make up the committed index, and what it covers.

Owns: the bytes of `index/manifest`, and the last bytes whose checks passed (kept between
a partition's two reads, below). Must not touch: files (the index writer replaces the
manifest with `Directory.write_atomic`, after every segment it names is durable, so the
manifest is the index's commit point).

Byte grammar (a `framing` file of kind `manifest`)::

    manifest := header(magic "SS.MANIF", version 2) record footer(record_count 1)
    record   := {"generation": int,        the transcript-store generation covered
                 "next_doc_id": int,       the doc id the next row gets
                 "profile": str,           the analyzer label the terms were made with
                 "segments": [[name, first_doc_id, last_doc_id, document_count], ...],
                 "deleted_runs": [gap, length, ...],   tombstoned doc ids in flushed
                                           segments, as runs of consecutive ids (see
                                           `encode_runs`)
                 "windows": [[session_id, indexed_seq, leaf_event_id | nil,
                              needs_rebuild], ...],   sorted by session_id
                 "statistics": [document_count, total_tokens],   optional
                 the live rows of the segments and their summed token counts (FTS5's N
                 and the total behind avgdl), so opening needs no pass over the rows;
                 absent when the index was committed with rows still in its write
                 buffer (then summed from the segments when opened)
                 "indexing": bool}         optional: the `indexing` flag (behaviour.md
                 §8.4) of the store at `generation` with this index, as the writer
                 computed it; a reader that replays nothing after opening uses it
                 instead of an O(windows) pass at its first search

Opening a partition reads the manifest twice, each time from the file: its generation
before the store opens (`decode_manifest_generation`), then the whole of it when the
index loads (`decode_manifest`). The bytes whose framing and CRCs the first read checked
are kept until the next `decode_manifest`, which checks again only bytes that differ
(compared in one pass, no CRC): a writer that replaced the manifest in between is read
and checked anew, as before; the same bytes pass the same checks.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import chain
from typing import Any, NamedTuple

import msgpack

from engine.codec import FILE_KINDS
from engine.codec.framing import (
    DecodeError,
    Frame,
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


class Manifest(NamedTuple):
    """A decoded manifest.

    A NamedTuple, not a frozen dataclass (every search imports this module, and a
    NamedTuple's class costs a fraction of a dataclass's to make). It compares as the
    dataclass did: equal only to a manifest, with `deleted_runs` left out.

    >>> a = Manifest(1, 2, "p", (), (3,), ())
    >>> a == decode_manifest(encode_manifest(a), "m"), a == tuple(a), a != tuple(a)
    (True, False, True)
    """

    generation: int
    next_doc_id: int
    profile: str
    segments: tuple[SegmentEntry, ...]
    deleted: tuple[int, ...]
    windows: tuple[WindowEntry, ...]
    statistics: tuple[int, int] | None = None
    #: `deleted` as runs of consecutive doc ids in a decoded manifest (None in one made
    #: to be written); derived, so not compared.
    deleted_runs: tuple[range, ...] | None = None
    #: The `indexing` flag at `generation` (None: not recorded).
    indexing: bool | None = None

    def _compared(self) -> tuple:
        return self[:7] + self[8:]

    def __eq__(self, other: object) -> bool:
        return (other.__class__ is self.__class__
                and self._compared() == other._compared())  # type: ignore[attr-defined]

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(self._compared())


def encode_runs(doc_ids: Iterable[int]) -> list[int]:
    """The tombstone runs of `doc_ids` (distinct, non-negative): `[gap, length, ...]`,
    one pair per run of consecutive doc ids, `gap` counted from the end of the run
    before (the first from 0).

    Why runs (a store must reopen fast at a million rows): tombstones come from whole
    windows rebuilt or deleted, so they are long runs of consecutive doc ids. A
    reconcile after a bulk import leaves a great many of them; as a list of gaps they
    were slow to decode and type-check at every open, as a far shorter list of runs
    they cost next to nothing.

    >>> encode_runs([5, 2, 3, 4, 9])
    [2, 4, 3, 1]
    >>> decode_runs(encode_runs([5, 2, 3, 4, 9]))
    [range(2, 6), range(9, 10)]
    """
    runs: list[int] = []
    end = 0  # one past the last doc id of the run before
    for doc_id in sorted(doc_ids):
        if runs and doc_id == end:
            runs[-1] += 1
        else:
            runs += [doc_id - end, 1]
        end = doc_id + 1
    return runs


def decode_runs(value: Any) -> list[range]:
    """The runs of `encode_runs`'s list as ranges, increasing (DecodeError when
    malformed); `chain.from_iterable` of them gives the doc ids."""
    if not isinstance(value, list) or len(value) % 2 or set(map(type, value)) - {int} \
            or (value and min(value) < 0):
        raise DecodeError("manifest tombstone runs are not pairs of natural numbers")
    runs: list[range] = []
    end = 0
    for gap, length in zip(value[0::2], value[1::2]):
        start = end + gap
        end = start + length
        runs.append(range(start, end))
    return runs


def _to_value(manifest: Manifest) -> dict[str, Any]:
    return {
        "generation": manifest.generation,
        "next_doc_id": manifest.next_doc_id,
        "profile": manifest.profile,
        "segments": [list(entry) for entry in manifest.segments],
        "deleted_runs": encode_runs(manifest.deleted),
        "windows": [list(entry) for entry in sorted(manifest.windows)],
        **({} if manifest.statistics is None else {"statistics": list(manifest.statistics)}),
        **({} if manifest.indexing is None else {"indexing": manifest.indexing}),
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
        runs = tuple(decode_runs(value["deleted_runs"]))
        segments = tuple((str(n), int(a), int(b), int(c)) for n, a, b, c in value["segments"])
        windows = tuple(
            (str(session_id), int(seq), leaf if leaf is None else str(leaf), bool(rebuild))
            for session_id, seq, leaf, rebuild in value["windows"]
        )
        statistics = value.get("statistics")
        if statistics is not None:
            document_count, total_tokens = statistics
            statistics = (int(document_count), int(total_tokens))
        indexing = value.get("indexing")
        if indexing is not None and not isinstance(indexing, bool):
            raise DecodeError("manifest indexing flag is not a boolean")
        return Manifest(
            int(value["generation"]), int(value["next_doc_id"]), str(value["profile"]),
            segments, tuple(chain.from_iterable(runs)), windows, statistics, runs, indexing,
        )
    except (KeyError, TypeError, ValueError) as error:
        raise DecodeError(f"manifest record is malformed: {error!r}") from None


#: The bytes of the manifest file `decode_manifest_generation` checked last and their one
#: record (None: none kept), let go by the next `decode_manifest` (module docstring).
_last_checked: tuple[bytes, Frame] | None = None


def _manifest_frame(data: bytes, location: str) -> Frame:
    """The one record of a whole manifest file, its framing and CRCs checked
    (CorruptFile, with the offset, on any damage)."""
    frames = decode_sealed_frames(data, location, MAGIC)
    if len(frames) != 1:
        raise CorruptFile(location, frames[-1].offset if frames else 0, "expected one record")
    return frames[0]


def decode_manifest(data: bytes, location: str) -> Manifest:
    """Decode the manifest: CorruptFile (with the offset) on any damage. Bytes equal to
    the ones `decode_manifest_generation` checked last are not checked again.

    >>> data = encode_manifest(Manifest(7, 3, "p", (), (), ()))
    >>> decode_manifest_generation(data, "m"), decode_manifest(data, "m").generation
    (7, 7)
    >>> decode_manifest(data[:-1] + bytes([data[-1] ^ 1]), "m")
    Traceback (most recent call last):
    ...
    engine.errors.CorruptFile: m: corrupt at byte offset ...: footer CRC mismatch
    """
    global _last_checked
    kept, _last_checked = _last_checked, None
    frame = kept[1] if kept is not None and kept[0] == data else _manifest_frame(data, location)
    try:
        return _from_value(decode_payload(frame.payload))
    except DecodeError as error:
        raise CorruptFile(location, frame.offset, str(error)) from None


def describe_payload(value: Any) -> dict[str, Any]:
    """A readable dict of the manifest record, for `session-search dump`."""
    manifest = _from_value(value)
    return {"kind": "manifest", **_to_value(manifest), "deleted": list(manifest.deleted)}


def decode_manifest_generation(data: bytes, location: str) -> int:
    """The store generation a whole manifest file covers, decoding only that field of
    its record (the file's CRCs are all checked): what a store needs to know before
    it opens, at a cost that does not grow with the windows and tombstones the rest
    of the record holds. CorruptFile (with the offset) on any damage.

    >>> value = Manifest(7, 3, "unicode61", (), (), (("w1", 4, "m3", False),))
    >>> decode_manifest_generation(encode_manifest(value), "manifest")
    7
    """
    global _last_checked
    frame = _manifest_frame(data, location)
    _last_checked = (data, frame)
    unpacker = msgpack.Unpacker(raw=False, strict_map_key=True, unicode_errors="surrogatepass")
    unpacker.feed(frame.payload)
    try:
        for _ in range(unpacker.read_map_header()):
            if unpacker.unpack() == "generation":
                generation = unpacker.unpack()
                if type(generation) is int and generation >= 0:
                    return generation
                break
            unpacker.skip()
    except (ValueError, TypeError, msgpack.OutOfData, msgpack.FormatError,
            msgpack.StackError):
        pass
    raise CorruptFile(location, frame.offset, "manifest record has no generation")
