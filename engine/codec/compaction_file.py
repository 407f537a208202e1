"""The compaction state file `transcripts/compaction.state`: how many compactions of
the transcript log began, and whether the last one is still running.

Owns: the bytes of `transcripts/compaction.state`. Must not touch: files (the writer
replaces it with `Directory.write_atomic`; `engine.transcript.compaction` says when and
what readers and opening do with it).

Byte grammar (a `framing` file of kind `compaction`)::

    compaction.state := header(magic "SS.COMPT", version 1) record footer(record_count 1)
    record           := {"compactions": int,     compactions begun, from 1
                         "in_progress": bool,    the last one has not finished: log
                                                 files may have been rewritten after
                                                 the catalog checkpoint was saved
                         "reclaimed_bytes": int} bytes reclaimed by every finished one

A store that was never compacted has no such file (the same as `compactions` 0).

`CompactionState` is a NamedTuple, not a frozen dataclass: opening a store (a search's
start-up) imports this module, and a NamedTuple's class costs a fraction of a frozen
dataclass's to make.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from engine.codec import FILE_KINDS
from engine.codec.framing import DecodeError, decode_single_record, encode_single_record
from engine.errors import CorruptFile

MAGIC = FILE_KINDS["compaction"].magic


class CompactionState(NamedTuple):
    """What `transcripts/compaction.state` says (all zero and False when it is absent)."""

    compactions: int = 0
    in_progress: bool = False
    reclaimed_bytes: int = 0


def encode_compaction_file(state: CompactionState) -> bytes:
    """The whole compaction state file.

    >>> decode_compaction_file(encode_compaction_file(CompactionState(2, True, 10)), "f")
    CompactionState(compactions=2, in_progress=True, reclaimed_bytes=10)
    """
    return encode_single_record(MAGIC, {"compactions": state.compactions,
                                        "in_progress": state.in_progress,
                                        "reclaimed_bytes": state.reclaimed_bytes})


def _decode_fields(value: Any) -> CompactionState:
    if not isinstance(value, dict) or set(value) != {"compactions", "in_progress",
                                                      "reclaimed_bytes"}:
        raise DecodeError("compaction state is not a map of compactions, in_progress and "
                          "reclaimed_bytes")
    compactions, in_progress, reclaimed = (value["compactions"], value["in_progress"],
                                           value["reclaimed_bytes"])
    if type(compactions) is not int or compactions < 0 or type(reclaimed) is not int \
            or reclaimed < 0 or type(in_progress) is not bool:
        raise DecodeError("compaction state has a field of the wrong type")
    return CompactionState(compactions, in_progress, reclaimed)


def decode_compaction_file(data: bytes, location: str) -> CompactionState:
    """Decode a compaction state file: CorruptFile on any damage, StoreError on another
    version.

    >>> decode_compaction_file(b"", "transcripts/compaction.state")
    Traceback (most recent call last):
    ...
    engine.errors.CorruptFile: transcripts/compaction.state: corrupt at byte offset 0: file too short for a header (0 bytes)
    """
    offset, value = decode_single_record(data, location, MAGIC)
    try:
        return _decode_fields(value)
    except DecodeError as error:
        raise CorruptFile(location, offset, str(error)) from None


def describe_payload(value: Any) -> dict[str, Any]:
    """A readable dict of the state record, for `session-search dump`."""
    state = _decode_fields(value)
    return {"kind": "compaction", "compactions": state.compactions,
            "in_progress": state.in_progress, "reclaimed_bytes": state.reclaimed_bytes}
