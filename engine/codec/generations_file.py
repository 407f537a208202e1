"""The store's record of how far each partition has committed: `generations` at its root.

Owns: the bytes of `generations`. Must not touch: files (the store replaces it with
`Directory.write_atomic`; `engine.store.witness` says when it is written and what an
open does with it).

Byte grammar (a `framing` file of kind `generations`)::

    generations := header(magic "SS.GENER", version 1) record footer(record_count 1)
    record      := {agent_id:str: generation:int, ...}
                   per agent, the partition's `commit_generation()` after the last
                   transaction the store committed to it

Why a file outside the partitions: a partition's files can only vouch for themselves.
A log cut after its last commit, or a database replaced by an older copy of itself, is
a whole, valid file that holds less than was committed; only a count kept elsewhere
shows that it went back.
"""

from __future__ import annotations

from typing import Any

from engine.codec import FILE_KINDS
from engine.codec.framing import DecodeError, decode_single_record, encode_single_record
from engine.errors import CorruptFile

MAGIC = FILE_KINDS["generations"].magic


def encode_generations_file(generations: dict[str, int]) -> bytes:
    """The whole file (the inverse of `decode_generations_file`).

    >>> decode_generations_file(encode_generations_file({"main": 3, "ops": 1}), "g")
    {'main': 3, 'ops': 1}
    """
    return encode_single_record(MAGIC, dict(sorted(generations.items())))


def _check(value: Any) -> dict[str, int]:
    if not isinstance(value, dict) or not all(
            isinstance(agent, str) and isinstance(count, int) and not isinstance(count, bool)
            and count >= 0 for agent, count in value.items()):
        raise DecodeError("expected a map of agent ids to commit counts")
    return dict(value)


def decode_generations_file(data: bytes, location: str) -> dict[str, int]:
    """The generations in `data` (CorruptFile naming `location` on any damage)."""
    offset, value = decode_single_record(data, location, MAGIC)
    try:
        return _check(value)
    except DecodeError as error:
        raise CorruptFile(location, offset, str(error)) from None


def describe_payload(value: Any) -> dict[str, Any]:
    """The record, readable (for `session-search dump`)."""
    return {"record": "generations", "agents": value}
