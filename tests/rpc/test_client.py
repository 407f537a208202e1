"""`RpcClient` against the real server process (`python -m engine serve`)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from engine.model import SearchRequest, SessionWindow
from engine.rpc.client import RpcClient, RpcConnectionError
from engine.rpc.errors import INVALID_PARAMS, METHOD_NOT_FOUND, RpcError
from engine.store.registry import open_backend

CHECKOUT = Path(__file__).resolve().parents[2]


def message(message_id: str, parent: str | None, text: str, timestamp: float) -> dict:
    return {"type": "message", "id": message_id, "parentId": parent, "timestamp": timestamp,
            "message": {"role": "user", "content": text}}


@pytest.fixture
def store(tmp_path: Path) -> Path:
    folder = tmp_path / "store"
    writer = open_backend(folder, create=True)
    with writer.transaction() as transaction:
        transaction.put_window(SessionWindow("s1", "agent:main:main"))
        transaction.append_event("s1", message("m1", None, "saffron risotto", 5))
    writer.close()
    return folder


def test_calls_return_the_kernel_result_and_errors_raise(store: Path) -> None:
    with RpcClient.serve_store(store, cwd=CHECKOUT) as client:
        result = client.call("sessions.search", {"agentId": "main", "query": "saffron"})
        backend = open_backend(store)
        try:
            assert result == backend.search(SearchRequest("saffron", agent_id="main")).to_json()
        finally:
            backend.close()
        with pytest.raises(RpcError) as raised:
            client.call("sessions.search", {"agentId": "main", "query": "   "})
        assert (raised.value.code, raised.value.message) == (INVALID_PARAMS,
                                                            "query must not be empty")
        with pytest.raises(RpcError) as raised:
            client.call("sessions.list")
        assert raised.value.code == METHOD_NOT_FOUND
        client.notify("sessions.search", {"agentId": "main", "query": "saffron"})
        again = client.call("sessions.search", {"sessionKeys": [], "query": "risotto"})
        assert [hit["messageId"] for hit in again["hits"]] == ["m1"]
        assert client.close() == 0


def test_each_call_sees_the_commits_made_before_it(store: Path) -> None:
    with RpcClient.serve_store(store, cwd=CHECKOUT) as client:
        params = SearchRequest("paella", session_keys=()).to_json()
        assert client.call("sessions.search", params)["hits"] == []
        writer = open_backend(store, writer=True)
        with writer.transaction() as transaction:
            transaction.append_event("s1", message("m2", "m1", "paella tonight", 6))
        writer.close()
        hits = client.call("sessions.search", params)["hits"]
        assert [(hit["messageId"], hit["snippet"]) for hit in hits] == [("m2", "paella tonight")]


def test_a_server_that_goes_away_is_a_connection_error() -> None:
    client = RpcClient.spawn([sys.executable, "-c", "import sys; sys.stdin.readline()"])
    with pytest.raises(RpcConnectionError, match="closed the connection"):
        client.call("sessions.search", {"sessionKeys": [], "query": "x"})
    assert client.close() == 0
    with pytest.raises(RpcConnectionError, match="the client is closed"):
        client.call("sessions.search", {})


def test_a_server_that_cannot_start_is_a_connection_error(tmp_path: Path) -> None:
    with pytest.raises(RpcConnectionError, match="cannot start the server"):
        RpcClient.spawn([tmp_path / "no-such-program"])


def test_a_relative_store_is_found_whatever_the_server_folder(
        store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(store.parent)
    with RpcClient.serve_store("store", cwd=CHECKOUT) as client:
        hits = client.call("sessions.search", {"sessionKeys": [], "query": "saffron"})["hits"]
        assert [hit["messageId"] for hit in hits] == ["m1"]


def test_a_server_that_fails_to_open_reports_its_exit_status(tmp_path: Path) -> None:
    missing = pytest.raises(RpcConnectionError, match=r"exited with status 2\)$")
    with RpcClient.serve_store(tmp_path / "missing", cwd=CHECKOUT) as client, missing:
        client.call("sessions.search", {"sessionKeys": [], "query": "x"})


def test_a_folder_named_engine_in_the_working_directory_cannot_shadow_the_server(
        store: Path, tmp_path: Path) -> None:
    """Issue 26: `python -m engine` puts the working folder first on the module path, so
    a folder named `engine/` there was imported instead of this package. The server is
    started with `-P` and this package's own folder on `PYTHONPATH`."""
    impostor = tmp_path / "elsewhere" / "engine"
    impostor.mkdir(parents=True)
    (impostor / "__init__.py").write_text("", encoding="utf-8")
    (impostor / "__main__.py").write_text("raise SystemExit('the impostor ran')\n",
                                          encoding="utf-8")
    with RpcClient.serve_store(store, cwd=impostor.parent) as client:
        result = client.call("sessions.search", {"agentId": "main", "query": "saffron"})
        assert [hit["messageId"] for hit in result["hits"]] == ["m1"]
        assert client.close() == 0
