"""Stores whose partitions live on database servers: which server each partition is made
on and opened from, and what such a store keeps outside its folder.

Owns: the backends that keep their partitions on a server (`SERVER_BACKENDS`), the
connection string a command was given (`use_dsn`, `given_dsn_for`: the command line's
`--dsn`, for that command's run), the map
of a store's agents to servers (`servers.json` at the store's root: `read_servers`,
`write_servers`), the options a server backend's partitions are made and opened with
(`server_options`). Must not
touch: how a partition is reached or laid out on its server (the backend:
`engine.backends.postgres`), the store's folders (`engine.store.layout`), which backend
a store has (`engine.store.registry`).

**Several servers.** A postgres store may keep each agent on a server of its own (the
upstream model of one database per agent, one level up): `servers.json` at the store's
root maps agent ids to connection strings::

    {"format": 1, "agents": {"ops": "postgresql://app@db2/sessions", ...}}

A new partition of an agent it lists is made on that server; any other agent's on the
store's default server (`--dsn`, `dsn=`, or `SESSION_SEARCH_PG_DSN`). Once made, a
partition names its own server in its folder (`postgres.json`), so the map matters only
when an agent's partition is made: editing it later moves nothing. A search across agents
asks each partition on its server and merges the answers as the Gateway merges its
databases' (`engine.store.fan_out`); a server that does not answer is an error naming the
partition's file (so its agent) and the server, never a partial answer passed off as
whole. The file is written by `open_backend(..., servers={...})` when a store is made, or
by hand; like `postgres.json`, it should not hold passwords (use `~/.pgpass`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from engine.directory import FileDirectory
from engine.errors import CorruptFile, StoreError, UsageError

#: The backends whose partitions live on a server, reached with a connection string
#: (their folder holds only a file naming the server and the schema).
SERVER_BACKENDS = frozenset({"postgres"})
#: The map of agents to servers, at a store's root.
SERVERS_NAME = "servers.json"
SERVERS_FORMAT = 1

#: The connection string the command line was given (`use_dsn`).
_given_dsn: str | None = None


def use_dsn(dsn: str | None) -> None:
    """Make `dsn` the server of the postgres stores this process opens or makes without
    naming one (the command line's `--dsn`; None: `SESSION_SEARCH_PG_DSN`, then the
    server each partition's file names)."""
    global _given_dsn
    _given_dsn = dsn


@contextmanager
def given_dsn_for(dsn: str) -> Iterator[None]:
    """`use_dsn(dsn)` for the block (a command's run), then the one before again."""
    previous = _given_dsn
    use_dsn(dsn)
    try:
        yield
    finally:
        use_dsn(previous)


def given_dsn() -> str | None:
    """The connection string `use_dsn` was last given (None: none)."""
    return _given_dsn


def server_options(name: str, dsn: str | None, servers: Mapping[str, str] | None
                   ) -> tuple[dict[str, Any], tuple[tuple[str, Any], ...],
                              tuple[tuple[str, str], ...]]:
    """(open options, create options, servers by agent) of backend `name`'s partitions
    (`UsageError` when a server is named for a backend that keeps its partitions in files).

    >>> server_options("postgres", "postgresql://a", {"ops": "postgresql://b"})
    ({'dsn': 'postgresql://a'}, (('dsn', 'postgresql://a'),), (('ops', 'postgresql://b'),))
    >>> server_options("sqlite", None, None)
    ({}, (), ())
    """
    if name not in SERVER_BACKENDS:
        if dsn is not None or servers:
            raise UsageError(f"--dsn names a PostgreSQL server; backend {name!r} keeps its "
                             "partitions in files and takes none")
        return {}, (), ()
    dsn = dsn if dsn is not None else _given_dsn
    by_agent = tuple(sorted((servers or {}).items()))
    if dsn is None:
        return {}, (), by_agent
    return {"dsn": dsn}, (("dsn", dsn),), by_agent


def read_servers(root: Path) -> dict[str, str]:
    """The agents' servers `servers.json` at store root `root` lists (none without it;
    `CorruptFile` naming it when it is not such a map)."""
    path = root / SERVERS_NAME
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as error:
        raise StoreError(f"{path}: cannot read: {error.strerror or error}") from None
    try:
        value: Any = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise CorruptFile(str(path), 0, f"not JSON: {error}") from None
    agents = value.get("agents") if isinstance(value, dict) else None
    if (not isinstance(value, dict) or value.get("format") != SERVERS_FORMAT
            or not isinstance(agents, dict)
            or not all(isinstance(key, str) and isinstance(server, str)
                       for key, server in agents.items())):
        raise CorruptFile(str(path), 0, 'not a map of agents to servers ({"format": 1, '
                                        '"agents": {"<agentId>": "<connection string>"}})')
    return dict(agents)


def write_servers(root: Path, servers: Mapping[str, str]) -> None:
    """Write `servers.json` at store root `root`, whole or not at all."""
    data = json.dumps({"format": SERVERS_FORMAT, "agents": dict(sorted(servers.items()))},
                      indent=1).encode("utf-8") + b"\n"
    FileDirectory(root).write_atomic(SERVERS_NAME, data)
