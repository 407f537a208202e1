"""Connection pools for long-running readers: one pool per server, shared by every
read-only partition a process opens on it with `pooled=True` (what `session-search
serve` opens its store with).

Owns: making, sharing and closing the pools (`acquire_pool`, `release_pool`: one per
connection string, counted by the partitions using it), and lending a connection for one
read (`read_pooled`: taken and given back; a read that finds its connection killed is
run again on another; a server that gives none within `CONNECT_TIMEOUT` is an error
naming it). Must not touch: what a read does (`backend`, `search`), the writer's
connection, or where a partition lives (`connection`).

**Why a pool, when `serve` answers one request at a time.** Its loop reads a line,
answers it and reads the next; the only other thread is the tools' reader watchdog,
which cancels (`PostgresBackend.interrupt`) and never reads. So the pool is not there to
let requests run together; it is there for what a process that stays up for days meets:

* *connections die under it*: a server restart, a failover, `pg_terminate_backend`, an
  idle timeout of a proxy or a firewall. A partition holding one connection then fails
  every later request with "the connection is closed" until the server process is
  restarted by hand. A read on a pooled connection that died (psycopg marks it broken)
  is run again on another one, the dead one dropped and replaced by the pool, up to
  `MAX_CONNECTIONS + 1` times, so that every connection of the pool may have died (reads
  change nothing, so running one again is safe). The connections are not checked as
  they are taken (`ConnectionPool.check_connection` costs a round trip per read, and a
  search across agents reads once per partition): a dead one is found by its first use;
* *many agents on one server*: a store keeps one partition per agent, and a search
  across agents opens them all. Holding one connection each, a `serve` over 200 agents
  on one server would hold 200 connections (PostgreSQL's default `max_connections` is
  100); the partitions on one server share its pool of at most `MAX_CONNECTIONS`, and a
  store whose agents live on several servers (`servers.json`) has one pool per server;
* *nothing is shared unsafely*: a connection is lent for one read (a search's statement
  and its CJK retry, or one listing) and given back, so two threads reading at once (an
  embedding program, a future threaded server) read on two connections, and the
  watchdog's cancel reaches only the connections the partition has lent.

**Why readers only.** The writer keeps its own connection: a write transaction is one
session from `BEGIN` to `COMMIT`, a read inside it must see what it gathered, and a
store has one writer. One-shot commands keep one connection too: a pool starts worker
threads and a connection of its own, which a command that reads once does not need.

**Failing fast.** A new pool is made only after one direct connection answered, so a
server that is down at start is one clear error at once, as without a pool; later, a
read that gets no connection from the pool within `CONNECT_TIMEOUT` runs on one direct
connection: a server still down is then an error with its own reason (`connect`'s,
naming the server), and a server back from a restart answers at once, whatever the
pool's reconnections, which back off, are waiting for.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import psycopg

from engine.backends.postgres.connection import CONNECT_TIMEOUT, connect, server_label
from engine.errors import UsageError

Value = TypeVar("Value")

#: The most connections one server's pool opens (a `serve` reads one request at a time;
#: the margin is for an embedding program's threads).
MAX_CONNECTIONS = 4


@dataclass(slots=True)
class _Shared:
    """A pool and how many open partitions use it (a mutable holder)."""

    pool: Any
    users: int


_pools: dict[str, _Shared] = {}
_pools_lock = threading.Lock()


def _new_pool(dsn: str) -> Any:
    """An open pool of `dsn` (after one direct connection answered: `StoreError` now,
    naming the server, when it does not)."""
    try:
        from psycopg_pool import ConnectionPool
    except ImportError:
        raise UsageError("serving a postgres store needs psycopg_pool: "
                         "pip install 'session-search[postgres]'") from None
    connect(dsn, autocommit=True).close()
    pool = ConnectionPool(dsn, min_size=1, max_size=MAX_CONNECTIONS, open=False,
                          kwargs={"autocommit": True, "connect_timeout": CONNECT_TIMEOUT},
                          timeout=CONNECT_TIMEOUT, name=f"session-search {server_label(dsn)}")
    pool.open(wait=False)
    return pool


def acquire_pool(dsn: str) -> Any:
    """The pool of server `dsn`, made on first use; every `acquire_pool` is matched by
    one `release_pool`."""
    with _pools_lock:
        shared = _pools.get(dsn)
        if shared is None:
            shared = _pools[dsn] = _Shared(_new_pool(dsn), 0)
        shared.users += 1
        return shared.pool


def release_pool(dsn: str) -> None:
    """One user fewer of `dsn`'s pool; the last closes it."""
    with _pools_lock:
        shared = _pools.get(dsn)
        if shared is None:
            return
        shared.users -= 1
        if shared.users > 0:
            return
        del _pools[dsn]
    shared.pool.close(timeout=5.0)


def open_pools() -> dict[str, int]:
    """The servers with an open pool, by label, and how many partitions use each."""
    with _pools_lock:
        return {server_label(dsn): shared.users for dsn, shared in _pools.items()}


def read_pooled(pool: Any, dsn: str, read: Callable[[psycopg.Connection], Value],
                lent: set[psycopg.Connection], lent_lock: threading.Lock) -> Value:
    """`read(connection)` on a connection of `pool` (server `dsn`), kept in `lent` while
    it reads (so that a cancel reaches it); run again on another connection when the one
    it had was dead (as many times as the pool has connections, and once more)."""
    from psycopg_pool import PoolTimeout

    attempts = MAX_CONNECTIONS + 1
    for attempt in range(1, attempts + 1):
        try:
            with pool.connection() as connection:
                with lent_lock:
                    lent.add(connection)
                try:
                    return read(connection)
                except psycopg.OperationalError:
                    if attempt < attempts and connection.broken:
                        continue  # the pool drops it when it comes back
                    raise
                finally:
                    with lent_lock:
                        lent.discard(connection)
        except PoolTimeout:
            return _read_directly(dsn, read, lent, lent_lock)
    raise AssertionError("unreachable: the last attempt returns or raises")


def _read_directly(dsn: str, read: Callable[[psycopg.Connection], Value],
                   lent: set[psycopg.Connection], lent_lock: threading.Lock) -> Value:
    """`read` on a connection of its own, when the pool gave none in time: the server's
    own reason when it does not answer (`StoreError` naming it), else the answer, while
    the pool's reconnections back off (a server back from a restart answers at once)."""
    with connect(dsn, autocommit=True) as connection:
        with lent_lock:
            lent.add(connection)
        try:
            return read(connection)
        finally:
            with lent_lock:
                lent.discard(connection)
