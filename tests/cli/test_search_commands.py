"""The `search`, `explain`, `reconcile` and `verify` commands, run in-process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.backends.reference.backend import ReferenceBackend
from engine.cli import main
from engine.codec.framing import Frame, iter_frames
from engine.codec.log_file import EventRecord, decode_log_payload
from engine.diagnostics.verify import verify_backend
from engine.model import SearchRequest, SessionWindow
from engine.store.registry import open_backend


def message(message_id: str, parent: str | None, role: str, text: str, timestamp: float) -> dict:
    return {"type": "message", "id": message_id, "parentId": parent, "timestamp": timestamp,
            "message": {"role": role, "content": text}}


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "store"
    backend = open_backend(path, backend="reference", create=True)
    with backend.transaction() as transaction:
        transaction.put_window(SessionWindow("s-main", "agent:main:main"))
        transaction.append_event("s-main", message("m1", None, "user", "the deployment failed on friday", 1))
        transaction.append_event("s-main", message("m2", "m1", "assistant", "the deployment fix is rolling", 2))
        transaction.put_window(SessionWindow("s-work", "agent:work:main"))
        transaction.append_event("s-work", message("w1", None, "user", "deployment notes for work", 3))
    backend.close()
    return path


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_search_json_is_the_kernel_result(store, capsys):
    status, out, _ = run(capsys, "search", "--store", str(store), "--agent", "main", "--json", "deployment")
    backend = open_backend(store)
    expected = backend.search(SearchRequest("deployment", agent_id="main")).to_json()
    backend.close()
    assert status == 0
    assert json.loads(out) == expected
    # equal scores (both rows have 5 tokens): the newer timestamp comes first
    assert [hit["messageId"] for hit in expected["hits"]] == ["m2", "m1"]


def test_without_agent_every_session_is_searched(store, capsys):
    _, out, _ = run(capsys, "search", "--store", str(store), "--json", "deployment")
    assert sorted(hit["sessionKey"] for hit in json.loads(out)["hits"]) == [
        "agent:main:main", "agent:main:main", "agent:work:main",
    ]
    _, out, _ = run(capsys, "search", "--store", str(store), "--json", "--session-key", "agent:work:main", "deployment")
    assert [hit["messageId"] for hit in json.loads(out)["hits"]] == ["w1"]


def test_filters_and_words_joined_into_one_query(store, capsys):
    _, out, _ = run(capsys, "search", "--store", str(store), "--json", "--role", "assistant",
                    "--order", "recent", "--limit", "1", "deployment", "the")
    result = json.loads(out)
    assert [hit["messageId"] for hit in result["hits"]] == ["m2"]
    assert result["truncated"] is False


def test_plain_output_is_a_table(store, capsys):
    status, out, _ = run(capsys, "search", "--store", str(store), "--agent", "work", "deploy", "--match", "prefix")
    lines = out.splitlines()
    assert status == 0
    assert lines[0].split() == ["score", "timestamp", "sessionKey", "sessionId", "messageId", "role", "snippet"]
    assert "deployment notes for work" in lines[2]


def test_bad_query_and_bad_usage_exit_2(store, capsys):
    status, _, err = run(capsys, "search", "--store", str(store), "   ")
    assert (status, err) == (2, "session-search: error: query must not be empty\n")
    status, _, err = run(capsys, "search", "--store", str(store), "--all-sessions", "--session-key", "x", "q")
    assert (status, err) == (2, "session-search: error: --all-sessions cannot be combined with --session-key\n")


def test_missing_store_is_refused_as_stats_refuses_it(tmp_path, capsys):
    missing = tmp_path / "nothing"
    for command in (["search", "--store", str(missing), "q"], ["stats", "--store", str(missing)]):
        status, _, err = run(capsys, *command)
        assert (status, err) == (2, (f"session-search: error: {missing}: no session-search "
                                    "store here\n"))


def test_explain_shows_bm25_inputs_and_the_excerpt_choice(store, capsys):
    status, out, _ = run(capsys, "explain", "--store", str(store), "--agent", "main", "--json", "deployment")
    report = json.loads(out)
    assert status == 0
    assert report["phrases"] == [{"terms": ["deployment"], "prefix": False}]
    first = report["hits"][0]
    assert first["partition"] == "main"
    bm25 = first["bm25"]
    # main's own statistics: its two rows (work's row is in work's partition)
    assert [bm25[key] for key in ("N", "D", "avgdl", "k1", "b")] == [2, 5, 5.0, 1.2, 0.75]
    (phrase,) = bm25["phrases"]
    assert [phrase[key] for key in ("phrase", "n", "f", "idf", "idfFloored")] == [
        "deployment", 2, 1, 1e-06, True]
    assert bm25["score"] == -bm25["bm25"] == first["score"]
    assert [first["excerpt"][key] for key in ("kind", "start", "score")] == ["window", 0, 1000]
    status, out, _ = run(capsys, "explain", "--store", str(store), "--agent", "main", "deployment")
    assert "excerpt window:" in out and "score" in out
    assert "  partition main: scored with the statistics of that agent's index\n" in out
    assert "  N=2 D=5 avgdl=5.000 k1=1.2 b=0.75\n" in out
    assert '    phrase "deployment": n=2 f=1 idf=1.00e-06 (floored) contribution=' in out
    assert "    chosen start 0 (score 1000)\n" in out
    assert "[" not in out and "'" not in out.replace("agent's", "")  # no Python reprs


def test_reconcile_and_verify(store, capsys):
    backend = open_backend(store, writer=True)
    with backend.transaction() as transaction:
        transaction.append_event("s-main", {"type": "leaf", "id": "l1", "parentId": "m2", "targetId": "m1"})
    backend.close()
    _, out, _ = run(capsys, "search", "--store", str(store), "--json", "fix")
    assert json.loads(out) == {"hits": [], "truncated": False, "indexing": True}
    status, out, _ = run(capsys, "reconcile", "--store", str(store), "--json")
    assert (status, json.loads(out)) == (0, {"reconciled": 1, "rows": 1, "orphans": 0,
                                             "indexing": False})
    status, out, _ = run(capsys, "verify", "--store", str(store), "--json")
    report = json.loads(out)
    assert (status, report["ok"], report["rowsCommitted"]) == (0, True, 2)


def test_verify_after_losing_the_index_files_rebuilds_by_replay(store, capsys):
    for file in store.glob("agents/*/index/*"):
        file.unlink()
    status, out, _ = run(capsys, "verify", "--store", str(store))
    assert status == 0
    assert out.splitlines()[0] == "OK: the index matches its transcripts"
    status, out, _ = run(capsys, "verify", "--store", str(store), "--repair", "--json")
    assert (status, json.loads(out)["rowsExpected"]) == (0, 3)


def test_commands_work_on_a_sqlite_store_except_explain(tmp_path, capsys):
    backend = open_backend(tmp_path / "lite", backend="sqlite", create=True)
    with backend.transaction() as transaction:
        transaction.put_window(SessionWindow("s", "agent:main:main"))
        transaction.append_event("s", message("m1", None, "user", "saffron rice", 1))
    backend.close()
    status, out, _ = run(capsys, "search", "--store", str(tmp_path / "lite"), "--json", "saffron")
    assert (status, [hit["messageId"] for hit in json.loads(out)["hits"]]) == (0, ["m1"])
    status, _, err = run(capsys, "explain", "--store", str(tmp_path / "lite"), "saffron")
    assert (status, err) == (2, "session-search: error: explain needs a reference store; this one uses 'sqlite'\n")


def damage_last_event(store: Path) -> tuple[Path, int]:
    """Flip one payload byte of the last event record; return the segment and the offset."""
    segment = store / "agents" / "main" / "transcripts" / "segment-000001.log"
    data = bytearray(segment.read_bytes())
    events = [item for item in iter_frames(bytes(data)) if isinstance(item, Frame)
              and isinstance(decode_log_payload(item.payload), EventRecord)]
    data[events[-1].offset + 20] ^= 0x01
    segment.write_bytes(bytes(data))
    return segment, events[-1].offset


def test_verify_checks_the_transcripts_that_open_skips(store, capsys):
    """Opening from the catalog checkpoint does not read the records; verify reads every
    byte, so a record damaged under the checkpoint is reported (and the index is then not
    compared)."""
    partition = store / "agents" / "main"
    backend = ReferenceBackend.open(partition)
    assert (backend.store.checkpoint_generation, backend.store.verify_log()) == (1, None)
    backend.close()
    segment, offset = damage_last_event(store)
    damage = f"{segment}: corrupt at byte offset {offset}: record CRC mismatch"
    backend = ReferenceBackend.open(partition)
    try:
        assert backend.store.checkpoint_generation == 1  # open did not see it
        assert verify_backend(backend).problems == [
            f"transcripts: {damage}", "the index was not compared: the transcripts are damaged"]
    finally:
        backend.close()
    status, out, _ = run(capsys, "verify", "--store", str(store), "--json")
    report = json.loads(out)
    assert (status, report["problems"][0]) == (1, f"agent main: transcripts: {damage}")
    assert report["partitions"]["main"]["problems"][0] == f"transcripts: {damage}"
    assert report["partitions"]["work"]["ok"] is True



@pytest.mark.parametrize(("error", "status", "message"), [
    (PermissionError(13, "Permission denied", "/srv/store/index/manifest"), 2,
     "/srv/store/index/manifest: permission denied"),
    (OSError(5, "Input/output error", "/srv/store/store.meta"), 1,
     "/srv/store/store.meta: Input/output error"),
])
def test_an_os_error_reaching_main_is_one_line_naming_its_file(
        monkeypatch, capsys, error: OSError, status: int, message: str):
    from engine.cli import search_commands

    def failing_open(path, command, **options):
        raise error

    monkeypatch.setattr(search_commands, "open_store", failing_open)
    assert run(capsys, "search", "--store", "/srv/store", "q") == (
        status, "", f"session-search: error: {message}\n")
