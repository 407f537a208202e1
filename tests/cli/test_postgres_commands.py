"""The commands on a postgres store: `--backend postgres --dsn DSN` makes one, and every
command after that finds its server through the store (or `--dsn`, or
`SESSION_SEARCH_PG_DSN`); a missing or unreachable server is one line naming it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.cli import main

pytestmark = pytest.mark.postgres

DEMO = Path(__file__).resolve().parents[2] / "engine" / "demo_corpus"
#: A server nobody listens on (a closed port of this machine).
NOBODY = "postgresql://postgres@127.0.0.1:1/test?connect_timeout=2"


def run(capsys: pytest.CaptureFixture[str], *arguments: str) -> tuple[int, str, str]:
    status = main(list(arguments))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_every_command_works_on_a_store_made_with_dsn(
        postgres_stores: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SESSION_SEARCH_PG_DSN")
    store = str(tmp_path / "store")
    status, _, err = run(capsys, "import", "--store", store, "--backend", "postgres", "--dsn",
                         postgres_stores, str(DEMO))
    assert status == 0, err
    partition = json.loads((tmp_path / "store" / "agents" / "main" / "postgres.json").read_text())
    assert partition["server"].startswith("user=postgres") and "password" not in partition["server"]
    status, out, err = run(capsys, "search", "--store", store, "--json", "deployment")
    assert status == 0, err
    hits = json.loads(out)["hits"]
    assert hits and all("deployment" in hit["snippet"].lower() for hit in hits)
    assert run(capsys, "stats", "--store", store, "--json")[0] == 0
    status, out, _ = run(capsys, "verify", "--store", store, "--json")
    assert status == 0 and json.loads(out)["ok"] is True
    assert run(capsys, "reconcile", "--store", store)[0] == 0
    session_key = hits[0]["sessionKey"]
    assert run(capsys, "history", "--store", store, session_key)[0] == 0
    assert run(capsys, "archive", "--store", store, session_key)[0] == 0
    status, out, _ = run(capsys, "search", "--store", store, "--json", "deployment")
    assert json.loads(out)["archivedTranscriptsExcluded"] >= 1
    assert run(capsys, "restore", "--store", store, session_key)[0] == 0
    assert run(capsys, "compact", "--store", store)[0] == 0
    assert run(capsys, "delete", "--store", store, session_key)[0] == 0
    status, out, _ = run(capsys, "search", "--store", store, "--json", "--dsn", postgres_stores,
                         "deployment")
    assert status == 0 and all(hit["sessionKey"] != session_key
                               for hit in json.loads(out)["hits"])


def test_a_new_postgres_store_without_a_server_is_refused_naming_both_ways(
        postgres_stores: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SESSION_SEARCH_PG_DSN")
    status, _, err = run(capsys, "import", "--store", str(tmp_path / "store"), "--backend",
                         "postgres", str(DEMO))
    assert status == 2
    assert err.strip() == ("session-search: error: the postgres backend needs a server: pass "
                           "--dsn DSN or set SESSION_SEARCH_PG_DSN=postgresql://user@host:port/"
                           "database")
    assert not (tmp_path / "store").exists()


def test_a_server_that_does_not_answer_is_one_line_naming_the_partition_and_server(
        postgres_stores: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = str(tmp_path / "store")
    assert run(capsys, "import", "--store", store, "--backend", "postgres", str(DEMO))[0] == 0
    status, _, err = run(capsys, "search", "--store", store, "--dsn", NOBODY, "deployment")
    assert status == 1 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "agents/main/postgres.json" in err
    assert "PostgreSQL server 'user=postgres connect_timeout=2 dbname=test host=127.0.0.1 port=1'" in err
    assert "does not answer" in err
