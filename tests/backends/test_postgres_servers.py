"""A postgres store whose agents live on three servers (issue 30, item 5): the same answers
as the store on one server, for every scope; a server that is down is an error naming the
agent's partition and the server, never a partial answer.

Two extra clusters are made for this module with Debian's `pg_createcluster` on free
ports (trust authentication, UTF8, C.UTF-8, the test server's binaries) and dropped at
its end; making them needs root (or the postgres user): without it the module is skipped,
and under `CI=true` it fails, as every PostgreSQL test does.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.config import EngineConfig
from engine.errors import StoreError
from engine.model import SearchRequest
from engine.store.registry import open_backend
from tests.ci_policy import skip_or_fail
from tests.parity.strategies import PARITY_SETTINGS, Corpus, corpora, load_corpus, requests
from tests.parity.test_postgres_differential import differences, outcome

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

QUIET = EngineConfig(background_reconcile=False)
VERSION = "15"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def cluster_command(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run(list(arguments), capture_output=True, text=True, timeout=120,
                          check=False)


@pytest.fixture(scope="module")
def servers(pg_dsn: str) -> Iterator[list[tuple[str, str]]]:
    """The test server and two clusters made for this module: (cluster name, DSN) each."""
    if shutil.which("pg_createcluster") is None or os.geteuid() != 0:
        skip_or_fail("making extra PostgreSQL clusters needs pg_createcluster and root",
                     "the several-server tests cannot run")
    made: list[tuple[str, str]] = []
    try:
        for _ in range(2):
            name, port = f"ss{secrets.token_hex(3)}", free_port()
            created = cluster_command("pg_createcluster", VERSION, name, "-p", str(port),
                                      "--start", "--", "--auth-host=trust", "--auth-local=trust",
                                      "--encoding=UTF8", "--locale=C.UTF-8")
            assert created.returncode == 0, created.stderr
            made.append((name, f"postgresql://postgres@127.0.0.1:{port}/postgres"))
        yield [("main", pg_dsn), *made]
    finally:
        for name, _ in made:
            cluster_command("pg_dropcluster", "--stop", VERSION, name)


def agent_servers(corpus: Corpus, dsns: list[str]) -> dict[str, str]:
    """Every agent of `corpus` (and `main`) spread over the servers, in turn."""
    agents = sorted({*corpus.agent_ids, "main"})
    return {agent: dsns[number % len(dsns)] for number, agent in enumerate(agents)}


def test_three_servers_answer_as_one(servers: list[tuple[str, str]],
                                     postgres_stores: str) -> None:
    def run(corpus: Corpus, request_list: list[SearchRequest]) -> None:
        check_spread(corpus, request_list, servers, postgres_stores)

    settings(PARITY_SETTINGS, max_examples=12)(given(
        corpora().flatmap(lambda corpus: st.tuples(
            st.just(corpus), st.lists(requests(corpus), min_size=4, max_size=10)))
    )(lambda case: run(*case)))()


def check_spread(corpus: Corpus, request_list: list[SearchRequest],
                 servers: list[tuple[str, str]], default_dsn: str) -> None:
    """The store on one server and the store spread over `servers` answer alike, loaded
    and reconciled, and each partition lies on the server the map names."""
    spread = agent_servers(corpus, [dsn for _, dsn in servers])
    with tempfile.TemporaryDirectory() as folder:
        one = open_backend(Path(folder) / "one", backend="postgres", create=True, config=QUIET)
        three = open_backend(Path(folder) / "three", backend="postgres", create=True,
                             config=QUIET, servers=spread)
        try:
            for store in (one, three):
                load_corpus(store, corpus)
            for stage in ("loaded", "reconciled"):
                for request in request_list:
                    problems = differences(outcome(one, request), outcome(three, request))
                    assert problems == [], f"{request!r} ({stage}):\n" + "\n".join(problems)
                assert one.reconcile() == three.reconcile()
            placed = {agent: json.loads((Path(folder) / "three" / "agents" / agent /
                                         "postgres.json").read_text())["server"]
                      for agent in three.partitions()}
            for agent, server in placed.items():
                port = spread.get(agent, default_dsn).rsplit(":", 1)[1].split("/")[0]
                assert f"port={port}" in server, (agent, server)
        finally:
            for store in (one, three):
                store.close()


def message(message_id: str, text: str) -> dict:
    return {"type": "message", "id": message_id, "parentId": None, "timestamp": 5,
            "message": {"role": "user", "content": text}}


def test_a_server_that_is_down_is_named_never_a_partial_answer(
        servers: list[tuple[str, str]], postgres_stores: str, tmp_path: Path) -> None:
    from engine.model import SessionWindow

    (_, main_dsn), (down_name, down_dsn), (_, other_dsn) = servers
    path = tmp_path / "store"
    spread = {"main": main_dsn, "ops": down_dsn, "dev": other_dsn}
    store = open_backend(path, backend="postgres", create=True, config=QUIET, servers=spread)
    with store, store.transaction() as transaction:
        for agent in spread:
            transaction.put_window(SessionWindow(f"w-{agent}", f"agent:{agent}:main"))
            transaction.append_event(f"w-{agent}", message(f"m-{agent}", "saffron harbour"))
    assert cluster_command("pg_ctlcluster", VERSION, down_name, "stop").returncode == 0
    try:
        reader = open_backend(path)
        try:
            scoped = reader.search(SearchRequest("saffron", agent_id="dev"))
            assert [hit.message_id for hit in scoped.hits] == ["m-dev"]
            with pytest.raises(StoreError) as raised:
                reader.search(SearchRequest("saffron", session_keys=()))
        finally:
            reader.close()
        message_text = str(raised.value)
        port = down_dsn.rsplit(":", 1)[1].split("/")[0]
        assert "agents/ops/postgres.json" in message_text and f"port={port}" in message_text
        assert "does not answer" in message_text
    finally:
        assert cluster_command("pg_ctlcluster", VERSION, down_name, "start").returncode == 0
