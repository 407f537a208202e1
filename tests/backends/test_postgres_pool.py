"""`serve` over a postgres store reads through a pool per server, on the real server.

The serve loop answers one request at a time; the pool is there for what a server that
stays up meets (`engine/backends/postgres/pool.py`): a killed connection is replaced and
the next request answers as before (a partition with one connection of its own fails
instead, which is why `serve` pools); the partitions of every agent on one server share
one small pool; reads from several threads at once each get a connection and the same
answers; the watchdog's cancel reaches a connection the pool lent; a server that does
not answer is one clear error, from one direct connection (not after a pool's waits);
and, on a cluster of the test's own, `serve` answers again after its server restarts
(slow: it makes the cluster).

Connections are killed with `pg_terminate_backend`, only those whose last statement
named this test's own schemas (the server is shared with other test runs).
"""

from __future__ import annotations

import os
import secrets
import shutil
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg
import pytest

from engine.backends.postgres.backend import PostgresBackend
from engine.backends.postgres.pool import MAX_CONNECTIONS, open_pools
from engine.cli import main
from engine.errors import StoreError
from engine.model import SearchRequest
from engine.rpc.client import RpcClient
from engine.rpc.errors import RpcError
from engine.store.registry import open_store
from tests.ci_policy import skip_or_fail

pytestmark = pytest.mark.postgres

DEMO = Path(__file__).resolve().parents[2] / "engine" / "demo_corpus"
QUERIES = ("the", "session", "deploy", "search", "error", "café")


@pytest.fixture
def demo_store(postgres_stores: str, tmp_path: Path) -> Path:
    """The demo corpus in a postgres store (several agents, one server)."""
    store = tmp_path / "store"
    assert main(["import", "--store", str(store), "--backend", "postgres", "--quiet",
                 str(DEMO)]) == 0
    return store


def kill_connections_of_this_test(dsn: str) -> int:
    """Terminate the server's connections whose last statement named this test's
    schemas (their prefix); how many."""
    prefix = os.environ["SESSION_SEARCH_PG_SCHEMA_PREFIX"]
    with psycopg.connect(dsn, autocommit=True) as connection:
        return connection.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE pid <> pg_backend_pid() AND strpos(query, %s) > 0", (prefix,)).fetchone()[0]


def search_params(query: str) -> dict:
    return {"query": query, "sessionKeys": []}


def test_serve_answers_the_same_after_its_connections_are_killed(
        demo_store: Path, postgres_stores: str) -> None:
    with RpcClient.serve_store(demo_store) as client:
        before = [client.call("sessions.search", search_params(query)) for query in QUERIES]
        assert any(answer["hits"] for answer in before)
        assert kill_connections_of_this_test(postgres_stores) >= 1
        after = [client.call("sessions.search", search_params(query)) for query in QUERIES]
        assert after == before
        assert kill_connections_of_this_test(postgres_stores) >= 1
        assert client.call("sessions.search", search_params(QUERIES[0])) == before[0]


def test_a_partition_with_one_connection_fails_after_it_is_killed(
        demo_store: Path, postgres_stores: str) -> None:
    """What the pool is for: without it, a killed connection fails the next request."""
    store = open_store(demo_store, "search")
    try:
        request = SearchRequest(query="the", session_keys=())
        assert store.search(request).hits
        assert kill_connections_of_this_test(postgres_stores) >= 1
        with pytest.raises(StoreError, match="search failed"):
            store.search(request)
    finally:
        store.close()


def test_every_agent_on_one_server_shares_one_pool(demo_store: Path) -> None:
    store = open_store(demo_store, "serve", pooled=True)
    try:
        assert store.search(SearchRequest(query="the", session_keys=())).hits
        partitions = [folder for folder in (demo_store / "agents").iterdir()
                      if PostgresBackend.claims(folder)]
        assert len(partitions) >= 2
        assert list(open_pools().values()) == [len(partitions)]
    finally:
        store.close()
    assert open_pools() == {}


def test_concurrent_reads_get_the_answers_of_sequential_ones(
        demo_store: Path, postgres_stores: str) -> None:
    store = open_store(demo_store, "serve", pooled=True)
    try:
        requests = [SearchRequest(query=query, session_keys=()) for query in QUERIES] * 6
        sequential = [store.search(request) for request in requests]
        with ThreadPoolExecutor(max_workers=6) as executor:
            concurrent = list(executor.map(store.search, requests))
        assert concurrent == sequential
        with psycopg.connect(postgres_stores, autocommit=True) as connection:
            held = connection.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE pid <> pg_backend_pid() "
                "AND strpos(query, %s) > 0",
                (os.environ["SESSION_SEARCH_PG_SCHEMA_PREFIX"],)).fetchone()[0]
        assert 1 <= held <= MAX_CONNECTIONS
    finally:
        store.close()


def test_an_interrupt_cancels_the_statement_on_a_lent_connection(
        demo_store: Path, postgres_stores: str) -> None:
    partition = next(folder for folder in sorted((demo_store / "agents").iterdir())
                     if PostgresBackend.claims(folder))
    backend = PostgresBackend.open(partition, pooled=True)
    try:
        outcome: list[BaseException] = []

        def sleep() -> None:
            try:
                backend.read(lambda connection: connection.execute("SELECT pg_sleep(60)"))
            except BaseException as error:  # noqa: BLE001 - the test looks at it
                outcome.append(error)

        reader = threading.Thread(target=sleep)
        reader.start()
        with psycopg.connect(postgres_stores, autocommit=True) as observer:
            while not outcome and not observer.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' "
                    "AND query = 'SELECT pg_sleep(60)' AND pid = ANY(%s)",
                    ([connection.info.backend_pid for connection in list(backend._lent)],)
            ).fetchone()[0]:
                time.sleep(0.01)  # until the statement runs on the server
        backend.interrupt()
        reader.join(timeout=20)
        assert not reader.is_alive()
        assert outcome and isinstance(outcome[0], psycopg.errors.QueryCanceled)
        assert backend.windows()  # the pool lends again after the cancel
    finally:
        backend.close()


def test_a_server_that_does_not_answer_is_one_error_at_once(demo_store: Path) -> None:
    partition = next(folder for folder in sorted((demo_store / "agents").iterdir())
                     if PostgresBackend.claims(folder))
    with pytest.raises(StoreError, match="does not answer") as refused:
        PostgresBackend.open(partition, pooled=True,
                             dsn="postgresql://postgres@127.0.0.1:1/test")
    assert "postgres.json" in str(refused.value) and "port=1" in str(refused.value)
    assert open_pools() == {}


# ----- a server restarted under serve (a private cluster) -----------------------------


@pytest.fixture
def private_server(pg_dsn: str) -> Iterator[tuple[str, str]]:
    """A cluster of this test's own (so that restarting it disturbs no other test): its
    name and DSN; dropped at the end."""
    from tests.backends.test_postgres_servers import VERSION, cluster_command, free_port

    if shutil.which("pg_createcluster") is None or os.geteuid() != 0:
        skip_or_fail("making a PostgreSQL cluster needs pg_createcluster and root",
                     "the server-restart test cannot run")
    name, port = f"sp{secrets.token_hex(3)}", free_port()
    created = cluster_command("pg_createcluster", VERSION, name, "-p", str(port), "--start",
                              "--", "--auth-host=trust", "--auth-local=trust",
                              "--encoding=UTF8", "--locale=C.UTF-8")
    assert created.returncode == 0, created.stderr
    try:
        yield name, f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        cluster_command("pg_dropcluster", "--stop", VERSION, name)


@pytest.mark.slow
def test_serve_answers_again_after_its_server_restarts(
        private_server: tuple[str, str], tmp_path: Path) -> None:
    """Restarted under a running `serve`, the server answers the next request as before;
    stopped, a request gets an error naming it (the server goes on); started again, the
    answers come back, without restarting `serve`."""
    from tests.backends.test_postgres_servers import VERSION, cluster_command

    name, dsn = private_server
    store = tmp_path / "store"
    assert main(["import", "--store", str(store), "--backend", "postgres", "--dsn", dsn,
                 "--quiet", str(DEMO)]) == 0
    with RpcClient.serve_store(store) as client:
        before = [client.call("sessions.search", search_params(query)) for query in QUERIES]
        assert cluster_command("pg_ctlcluster", VERSION, name, "restart").returncode == 0
        assert [client.call("sessions.search", search_params(query))
                for query in QUERIES] == before
        assert cluster_command("pg_ctlcluster", VERSION, name, "stop").returncode == 0
        with pytest.raises(RpcError) as refused:
            client.call("sessions.search", search_params(QUERIES[0]))
        port = dsn.rsplit(":", 1)[1].split("/")[0]
        assert f"port={port}" in refused.value.message
        assert cluster_command("pg_ctlcluster", VERSION, name, "start").returncode == 0
        assert [client.call("sessions.search", search_params(query))
                for query in QUERIES] == before
