"""`search`, `stats` and `explain --read-only` over a state the real OpenClaw wrote.

The state is built by `tests/backends/test_sqlite_openclaw_state.py`'s builder (OpenClaw's
own transcript writer, two agents), which also prints OpenClaw's kernel answers. Each
command runs in a fresh process; every file and folder of the state must be the same
afterwards (no byte changed, nothing created or removed). An agent-scoped search must
answer what OpenClaw's kernel answers on that agent's database; a search over every
session what the Gateway makes of the kernel's answers on each agent's database (asked
for every session with limit 25, merged by score, then timestamp, descending, then
messageId; cut to the limit). Without an OpenClaw install the tests skip, except under
`CI=true`, where they fail (the builder's rule).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.errors import StoreError
from engine.model import SearchRequest
from engine.store.opening import open_openclaw_state
from engine.store.registry import partition_kind
from tests.backends.test_sqlite_openclaw_state import MESSAGES, build_openclaw_state, digests
from tests.cli.conftest import Runner

AGENTS = ("main", "work")
#: What the agent-scoped searches ask, then (one per agent) what the Gateway asks of each
#: agent's database for a search over every session.
SCOPED = [SearchRequest("saffron", agent_id="main"), SearchRequest("harvest", agent_id="work")]
EVERY_SESSION = [SearchRequest("saffron", agent_id=agent, session_keys=(), limit=25)
                 for agent in AGENTS]


@pytest.fixture(scope="module")
def state(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict]]:
    """A state the real OpenClaw wrote, and its kernel's answers to `SCOPED + EVERY_SESSION`."""
    folder = tmp_path_factory.mktemp("openclaw-cli")
    return folder / "state", build_openclaw_state(folder, SCOPED + EVERY_SESSION)


def snapshot(folder: Path) -> tuple[dict[str, str], list[str]]:
    """Every file's digest, and every path (folders too)."""
    return digests(folder), sorted(str(path.relative_to(folder)) for path in folder.rglob("*"))


def same_hits(got: list[dict], expected: list[dict]) -> bool:
    return [{**hit, "score": pytest.approx(hit["score"], rel=1e-12)} for hit in got] == expected


def merged(answers: list[dict], limit: int) -> dict:
    """The Gateway's merge of per-agent kernel answers."""
    hits = sorted((hit for answer in answers for hit in answer["hits"]),
                  key=lambda hit: (-hit["score"], -hit["timestamp"], hit["messageId"]))
    return {"hits": hits[:limit],
            "truncated": len(hits) > limit or any(answer["truncated"] for answer in answers),
            "indexing": any(answer["indexing"] for answer in answers)}


def test_read_only_commands_answer_as_openclaw_without_changing_a_byte(
        state: tuple[Path, list[dict]], session_search: Runner) -> None:
    folder, answers = state
    before = snapshot(folder)
    read_only = ("--store", str(folder), "--backend", "sqlite", "--read-only", "--json")
    for request, expected in zip(SCOPED, answers[:len(SCOPED)], strict=True):
        run = session_search("search", *read_only, "--agent", request.agent_id, request.query)
        assert (run.status, run.err) == (0, ""), run.err
        got = json.loads(run.out)
        assert got["hits"] and same_hits(got["hits"], expected["hits"]), request
        assert (got["truncated"], got["indexing"]) == (expected["truncated"], expected["indexing"])

    run = session_search("search", *read_only, "saffron")
    assert (run.status, run.err) == (0, ""), run.err
    got, expected = json.loads(run.out), merged(answers[len(SCOPED):], limit=10)
    assert {hit["sessionKey"].split(":")[1] for hit in got["hits"]} == set(AGENTS)
    assert same_hits(got["hits"], expected["hits"])
    assert (got["truncated"], got["indexing"]) == (expected["truncated"], expected["indexing"])

    run = session_search("stats", *read_only)
    assert (run.status, run.err) == (0, ""), run.err
    counts = json.loads(run.out)
    assert (counts["backend"], counts["agents"], counts["sessions"], counts["windows"]) == (
        "sqlite", 2, len({row[1] for row in MESSAGES}), len({row[2] for row in MESSAGES}))
    assert counts["messagesIndexed"] == len(MESSAGES)
    assert sorted(counts["partitions"]) == list(AGENTS)

    session_search("explain", *read_only, "saffron").refused(
        2, "explain needs a reference store; this one uses 'sqlite'")
    assert snapshot(folder) == before


def test_an_openclaw_state_is_refused_without_read_only(
        state: tuple[Path, list[dict]], session_search: Runner) -> None:
    folder, _ = state
    before = snapshot(folder)
    advice = (f"{folder}: an OpenClaw state, not a session-search store; add --read-only "
              "--backend sqlite to read it without writing to it")
    session_search("search", "--store", str(folder), "saffron").refused(2, advice)
    session_search("stats", "--store", str(folder)).refused(2, advice)
    session_search("reconcile", "--store", str(folder)).refused(
        2, f"{folder}: an OpenClaw state, not a session-search store; reconcile does not open "
           "it (search, explain, stats and verify read it with --read-only --backend sqlite)")
    session_search("search", "--store", str(folder), "--backend", "reference", "--read-only",
                   "saffron").refused(2, f"{folder}: an OpenClaw state holds SQLite databases; "
                                         "read it with --backend sqlite, not 'reference'")
    assert snapshot(folder) == before


def test_an_openclaw_state_refuses_every_write_naming_its_folder(
        state: tuple[Path, list[dict]]) -> None:
    folder, _ = state
    before = snapshot(folder)
    reason = f"{folder}: an OpenClaw state, opened read-only; session-search never writes to it"
    with pytest.raises(StoreError, match=reason):
        open_openclaw_state(folder, partition_kind("sqlite"), writer=True)
    store = open_openclaw_state(folder, partition_kind("sqlite"))
    try:
        assert sorted(store.partitions()) == list(AGENTS)
        with pytest.raises(StoreError, match=reason), store.transaction():
            pass
        with pytest.raises(StoreError, match=reason):
            store.space.create_partition("other")
    finally:
        store.close()
    assert snapshot(folder) == before


def test_read_only_opens_a_session_search_store_as_usual(demo_store: Path,
                                                         session_search: Runner) -> None:
    plain = session_search("search", "--store", str(demo_store), "--json", "cafe")
    read_only = session_search("search", "--store", str(demo_store), "--read-only", "--json", "cafe")
    assert (read_only.status, read_only.err) == (0, "")
    assert read_only.out == plain.out and json.loads(plain.out)["hits"]
    session_search("search", "--store", str(demo_store), "--read-only", "--backend", "sqlite",
                   "cafe").refused(2, f"{demo_store}: store was created for backend "
                                      "'reference', not 'sqlite'")
