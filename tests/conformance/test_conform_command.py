"""`session-search conform`: every backend, the report's forms, and serve's scratch store.

`--backend reference` and `sqlite` run the shipped cases in-process; `exec:` runs them
against a process: this engine's own `serve` without a store (the proof that the
protocol and its set-up methods are complete), and the minimal example backend of
`corpora/examples/` with its expectations file. The report is a readable text with a
summary by spec section, JSON with `--json`, JUnit XML with `--junit`; bad usage exits
with status 2 and one line.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest

from engine.cli import main
from engine.conformance.case_files import load_cases
from engine.rpc.client import RpcClient, engine_command
from engine.rpc.errors import RpcError

CHECKOUT = Path(__file__).resolve().parents[2]
EXAMPLE = CHECKOUT / "corpora" / "examples" / "minimal_backend.py"
CASE_COUNT = len(load_cases())


def exec_backend(*command: str) -> str:
    return "exec:" + shlex.join(command)


def test_the_reference_backend_passes_a_selection_with_a_readable_report(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    junit = tmp_path / "report.xml"
    status = main(["conform", "--backend", "reference", "--features", "cjk-retry", "--quiet",
                   "--junit", str(junit)])
    out = capsys.readouterr().out
    assert status == 0
    lines = out.strip().splitlines()
    assert lines[0].split() == ["section", "passed", "failed", "skipped", "known", "fixed"]
    assert any(line.split()[:3] == ["§7", "7", "0"] for line in lines)
    selected = [case for case in load_cases() if "cjk-retry" in case.features]
    assert lines[-1] == (f"conformance of session-search 0.1.0: {len(selected)} cases: "
                         f"{len(selected)} passed, 0 failed, 0 skipped")
    suite = ElementTree.parse(junit).getroot()
    assert (suite.tag, suite.get("tests"), suite.get("failures")) == (
        "testsuite", str(len(selected)), "0")
    assert sorted(case.get("name") for case in suite) == sorted(case.id for case in selected)


def test_this_engine_as_an_external_process_passes_every_case(
        capsys: pytest.CaptureFixture[str]) -> None:
    """`conform --backend 'exec:session-search serve'`: every case over the protocol."""
    command, _ = engine_command("serve", "--quiet")
    status = main(["conform", "--backend", exec_backend(*command), "--json", "--quiet"])
    report = json.loads(capsys.readouterr().out)
    assert report["summary"]["passed"] == CASE_COUNT, [
        (case["id"], case["reason"]) for case in report["cases"] if case["status"] != "passed"]
    assert status == 0
    assert report["backend"]["name"] == "session-search"
    assert report["backend"]["backend"] == "reference"


def test_the_example_backend_runs_end_to_end_with_its_expectations(
        capsys: pytest.CaptureFixture[str]) -> None:
    backend = exec_backend(sys.executable, str(EXAMPLE))
    expectations = EXAMPLE.with_name("minimal_backend.expectations.json")
    status = main(["conform", "--backend", backend, "--json", "--quiet",
                   "--expectations", str(expectations)])
    report = json.loads(capsys.readouterr().out)
    assert status == 0
    listed = json.loads(expectations.read_text(encoding="utf-8"))["cases"]
    known = {case["id"] for case in report["cases"] if case["status"] == "expected-failure"}
    assert known == set(listed)
    assert report["summary"]["passed"] > 40 and report["summary"]["failed"] == 0
    skipped = [case["reason"] for case in report["cases"] if case["status"] == "skipped"]
    assert any(reason.startswith("the backend does not support") for reason in skipped)
    # without its expectations file the same failures are unexpected: status 1
    status = main(["conform", "--backend", backend, "--json", "--quiet"])
    report = json.loads(capsys.readouterr().out)
    assert status == 1 and {case["id"] for case in report["cases"]
                            if case["status"] == "failed"} == known


def test_serve_without_a_store_speaks_the_set_up_methods_and_removes_its_store(
        tmp_path: Path) -> None:
    command, environment = engine_command("serve", "--quiet")
    environment = {name: value for name, value in environment.items()
                   if name != "SESSION_SEARCH_STORE"} | {"TMPDIR": str(tmp_path)}
    with RpcClient.spawn(command, env=environment) as client:
        description = client.call("conformance.describe")
        assert description["protocol"] == 1 and "conformance.load" in description["methods"]
        assert [path.name.startswith("session-search-scratch-")
                for path in tmp_path.iterdir()] == [True]
        client.call("conformance.load", {
            "windows": [{"sessionId": "s1", "sessionKey": "agent:main:main"}],
            "events": [{"sessionId": "s1", "event": {"type": "message", "id": "m1",
                                                     "message": {"role": "user",
                                                                 "content": "scratch words"}}}]})
        hits = client.call("sessions.search", {"agentId": "main", "query": "scratch"})["hits"]
        assert [(hit["messageId"], hit["timestamp"]) for hit in hits] == [("m1", 0)]
        client.call("conformance.reset")
        assert client.call("sessions.search", {"agentId": "main", "query": "scratch"})["hits"] == []
    assert list(tmp_path.iterdir()) == []


def test_a_store_served_by_path_has_no_set_up_methods(tmp_path: Path) -> None:
    from engine import open_backend

    open_backend(tmp_path / "store", create=True, writer=True).close()
    with RpcClient.serve_store(tmp_path / "store") as client, pytest.raises(RpcError) as refused:
        client.call("conformance.reset")
    assert refused.value.code == -32601


@pytest.mark.parametrize(("argv", "message"), [
    (["--backend", "reference", "--cases", "/nonexistent/cases"],
     "/nonexistent/cases: no such folder of case files"),
    (["--backend", "reference", "--case", "no-such-case/"], "no case matches --features/--case"),
    (["--backend", exec_backend(sys.executable, "-c", "pass")],
     "the backend ended before answering conformance.describe"),
])
def test_bad_usage_is_one_line_and_status_2(argv: list[str], message: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["conform", "--quiet", *argv])
    err = capsys.readouterr().err
    assert status == 2 and message in err and "Traceback" not in err
    assert err.startswith("session-search: error: ")


def test_an_unknown_backend_is_refused_by_the_parser(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["conform", "--backend", "mysql"])
    assert exited.value.code == 2
    assert ("choose reference, sqlite, postgres, reference:postgres or exec:COMMAND"
            in capsys.readouterr().err)


def test_the_scratch_store_is_deterministic_about_indexing() -> None:
    """No background reconcile behind the runner's back: a dirty window stays dirty
    however often it is searched, until `conformance.reconcile`."""
    from engine.conformance.targets import InProcessTarget

    message = {"type": "message", "id": "m1", "message": {"role": "user", "content": "words"}}
    rewind = {"type": "leaf", "id": "l1", "parentId": "m1", "targetId": "m1"}
    target = InProcessTarget("reference")
    try:
        target.call("conformance.load", {
            "windows": [{"sessionId": "s", "sessionKey": "agent:main:x"}],
            "events": [{"sessionId": "s", "event": message}, {"sessionId": "s", "event": rewind}]})
        for _ in range(3):
            reply = target.call("sessions.search", {"agentId": "main", "query": "words"})
            assert (reply.result["hits"], reply.result["indexing"]) == ([], True)
        assert target.call("conformance.reconcile", {}).result == {"rebuilt": 1}
        reply = target.call("sessions.search", {"agentId": "main", "query": "words"})
        assert ([hit["messageId"] for hit in reply.result["hits"]], reply.result["indexing"]) == (
            ["m1"], False)
    finally:
        target.close()


# ----- the postgres backend and its expectation set -----------------------------------


@pytest.mark.postgres
@pytest.mark.slow
def test_the_postgres_backend_passes_every_case_on_the_real_server(
        postgres_stores: str, capsys: pytest.CaptureFixture[str]) -> None:
    """`conform --backend postgres` on the server of `SESSION_SEARCH_PG_DSN` (skipped
    without one, failed under CI): every case, held to the postgres expectations."""
    status = main(["conform", "--backend", "postgres", "--json", "--quiet"])
    report = json.loads(capsys.readouterr().out)
    assert report["summary"]["passed"] == CASE_COUNT, [
        (case["id"], case["reason"], case["mismatches"][:1])
        for case in report["cases"] if case["status"] != "passed"]
    assert status == 0
    assert report["backend"]["expectationSet"] == "postgres"


def test_the_reference_engine_predicting_postgres_passes_every_case(
        capsys: pytest.CaptureFixture[str]) -> None:
    """`conform --backend reference:postgres`: the reference engine in its postgres
    expectation mode, held to the cases' postgres expectations, which it made."""
    status = main(["conform", "--backend", "reference:postgres", "--json", "--quiet"])
    report = json.loads(capsys.readouterr().out)
    assert report["summary"]["passed"] == CASE_COUNT, [
        (case["id"], case["reason"]) for case in report["cases"] if case["status"] != "passed"]
    assert status == 0
    assert report["backend"]["expectationSet"] == "postgres"


@pytest.mark.postgres
def test_an_external_backend_names_its_expectation_set_in_describe(
        postgres_stores: str, capsys: pytest.CaptureFixture[str]) -> None:
    """`serve` on a postgres scratch store says `expectationSet: postgres`, and the runner
    holds it to those expectations: the ranking and tokenizer cases pass as postgres."""
    command, _ = engine_command("serve", "--quiet", "--backend", "postgres")
    status = main(["conform", "--backend", exec_backend(*command), "--quiet",
                   "--features", "ranking", "tokenizer"])
    out = capsys.readouterr().out
    selected = [case for case in load_cases()
                if {"ranking", "tokenizer"} & set(case.features)]
    assert out.strip().splitlines()[-1] == (
        f"conformance of session-search 0.1.0 (postgres expectations): {len(selected)} "
        f"cases: {len(selected)} passed, 0 failed, 0 skipped")
    assert status == 0


def test_an_expectation_set_no_case_knows_is_bad_usage(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    backend = tmp_path / "mysql_backend.py"
    backend.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    request = json.loads(line)\n"
        "    print(json.dumps({'jsonrpc': '2.0', 'id': request['id'], 'result': "
        "{'name': 'x', 'expectationSet': 'mysql'}}), flush=True)\n", encoding="utf-8")
    status = main(["conform", "--quiet", "--backend", exec_backend(sys.executable, str(backend))])
    err = capsys.readouterr().err
    assert status == 2 and "Traceback" not in err
    assert "names the expectation set 'mysql'; the sets are sqlite, postgres" in err
