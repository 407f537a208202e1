"""The store metadata file `store.meta`: which backend a store was created for, and, at
a partitioned store's root, which agents have a partition.

Owns: the bytes of `store.meta`, of both kinds that use the name. Must not touch: files
(a reference partition writes its bytes with `Directory.write_atomic` once, at creation;
a partitioned store's root writes them again, atomically, whenever its list of
partitions changes).

Byte grammar (a `framing` file of kind `store`, in a reference partition's folder, or of
kind `partitioned`, at the root of a store whose partitions live under `agents/`)::

    store.meta  := header(magic "SS.STORE", version 1) store_record footer(record_count 1)
                 | header(magic "SS.PARTS", version 2) root_record footer(record_count 1)
    store_record := {"backend": str, "created_at": float}
    root_record  := {"backend": str, "created_at": float, "agents": [str, ...]}
                   `created_at` in epoch milliseconds; `agents` sorted, without duplicates:
                   every agent whose partition the store made (`agents/<agentId>/`)

The magic alone says which of the two a file is, so a reader given the root of a
partitioned store never opens it as a partition (and the other way round). The root's
`agents` list is what lets an open tell a partition folder that was deleted from one
that never existed (`engine.store.layout`).

`StoreMeta` and `RootMeta` are NamedTuples, not frozen dataclasses: every command that
opens a store imports this module first, and a NamedTuple's class costs a fraction of a
frozen dataclass's to make.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from engine.codec import FILE_KINDS
from engine.codec.framing import DecodeError, decode_single_record, encode_single_record
from engine.errors import CorruptFile

MAGIC = FILE_KINDS["store"].magic
#: The magic of the `store.meta` at the root of a partitioned store.
PARTITIONED_MAGIC = FILE_KINDS["partitioned"].magic


class StoreMeta(NamedTuple):
    """What `store.meta` says."""

    backend: str
    created_at: float


class RootMeta(NamedTuple):
    """What the `store.meta` at a partitioned store's root says: the partitions' backend,
    the creation time, and the agents that have a partition (sorted)."""

    backend: str
    created_at: float
    agents: tuple[str, ...] = ()

    def with_agents(self, agents: set[str] | tuple[str, ...]) -> RootMeta:
        """The same metadata listing `agents` (sorted).

        >>> RootMeta("sqlite", 1.0).with_agents({"ops", "main"}).agents
        ('main', 'ops')
        """
        return RootMeta(self.backend, self.created_at, tuple(sorted(set(agents))))


def encode_meta_file(meta: StoreMeta) -> bytes:
    """The whole `store.meta` file of a reference partition (kind `store`).

    >>> decode_meta_file(encode_meta_file(StoreMeta("reference", 1.0)), "store.meta")
    StoreMeta(backend='reference', created_at=1.0)
    """
    return encode_single_record(MAGIC, {"backend": meta.backend, "created_at": float(meta.created_at)})


def encode_root_meta_file(meta: RootMeta) -> bytes:
    """The whole `store.meta` file at a partitioned store's root (kind `partitioned`).

    >>> data = encode_root_meta_file(RootMeta("sqlite", 1.0, ("main", "ops")))
    >>> decode_root_meta_file(data, "store.meta")
    RootMeta(backend='sqlite', created_at=1.0, agents=('main', 'ops'))
    """
    return encode_single_record(PARTITIONED_MAGIC, {"backend": meta.backend,
                                       "created_at": float(meta.created_at),
                                       "agents": sorted(set(meta.agents))})


def _decode_fields(value: Any) -> StoreMeta:
    if not isinstance(value, dict) or not isinstance(value.get("backend"), str):
        raise DecodeError("store metadata has no backend name")
    created_at = value.get("created_at")
    if not isinstance(created_at, (int, float)):
        raise DecodeError("store metadata has no creation time")
    return StoreMeta(value["backend"], float(created_at))


def _decode_agents(value: dict[str, Any]) -> tuple[str, ...]:
    agents = value.get("agents")
    if not isinstance(agents, list) or not all(isinstance(agent, str) for agent in agents):
        raise DecodeError("root metadata has no list of agents")
    if agents != sorted(set(agents)):
        raise DecodeError("root metadata lists its agents out of order or twice")
    return tuple(agents)


def decode_meta_file(data: bytes, location: str) -> StoreMeta:
    """Decode a reference partition's `store.meta`: CorruptFile on any damage (another
    magic included), StoreError on another version."""
    offset, value = decode_single_record(data, location, MAGIC)
    try:
        return _decode_fields(value)
    except DecodeError as error:
        raise CorruptFile(location, offset, str(error)) from None


def decode_root_meta_file(data: bytes, location: str) -> RootMeta:
    """Decode the `store.meta` at a partitioned store's root, as `decode_meta_file` does.

    >>> decode_root_meta_file(encode_single_record(PARTITIONED_MAGIC, {"backend": "x", "created_at": 1.0}), "store.meta")
    Traceback (most recent call last):
    ...
    engine.errors.CorruptFile: store.meta: corrupt at byte offset 16: root metadata has no list of agents
    """
    offset, value = decode_single_record(data, location, PARTITIONED_MAGIC)
    try:
        meta = _decode_fields(value)
        return RootMeta(meta.backend, meta.created_at, _decode_agents(value))
    except DecodeError as error:
        raise CorruptFile(location, offset, str(error)) from None


def describe_payload(value: Any) -> dict[str, Any]:
    """A readable dict of the metadata record, for `session-search dump`."""
    meta = _decode_fields(value)
    described: dict[str, Any] = {"kind": "store", "backend": meta.backend,
                                 "created_at": meta.created_at}
    if isinstance(value, dict) and "agents" in value:
        described["agents"] = list(_decode_agents(value))
    return described
