"""The live import of the SQLite state the real OpenClaw 2026.9.6 writes, on both backends.

OpenClaw writes `agents/<agentId>/agent/openclaw-agent.sqlite` for two agents
(`tests/backends/test_sqlite_openclaw_state.py`'s builder, its own transcript writer);
`live_import_into_store` imports it into a store of each backend, read-only: every file
of the state is byte-identical afterwards. The store's searches, per agent, give the
hits OpenClaw's own kernel gives. Then OpenClaw appends to two windows and starts a
third: a re-import adds exactly those events, and the searches still agree.

OpenClaw is found where the oracle tests install it (skipped without an install, failed
under `CI=true`), as in the builder's module.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.ingest import live_import_into_store
from engine.model import SearchRequest
from engine.store.registry import open_store
from tests.backends.test_sqlite_openclaw_state import (
    MESSAGES,
    SEARCHES,
    build_openclaw_state,
    digests,
)

#: What OpenClaw appends later: two windows grow, one is new.
MORE = [
    ("main", "agent:main:main", "new", "m07", "assistant", "gingko tea after the saffron deployment"),
    ("main", "agent:main:fresh", "fresh-1", "f01", "user", "gingko leaves in the fresh window"),
    ("work", "agent:work:main", "work-1", "w04", "user", "gingko for the work team"),
]
LATER = {"main": [*SEARCHES["main"], SearchRequest("gingko", agent_id="main"),
                  SearchRequest("saffron", agent_id="main", order="recent")],
         "work": [*SEARCHES["work"], SearchRequest("gingko", agent_id="work")]}


def run_openclaw(folder: Path, searches: dict[str, list[SearchRequest]], rows: list[tuple],
                 first_number: int) -> dict[str, list[dict]]:
    """Let OpenClaw write `rows` into `folder / "state"`; its answers, per agent."""
    flat = [request for requests in searches.values() for request in requests]
    answers = iter(build_openclaw_state(folder, flat, rows, first_number))
    return {agent: [next(answers) for _ in requests] for agent, requests in searches.items()}


def assert_same_answers(store: Path, searches: dict[str, list[SearchRequest]],
                        answers: dict[str, list[dict]]) -> None:
    backend = open_store(store, "search")
    try:
        for agent, requests in searches.items():
            for request, expected in zip(requests, answers[agent], strict=True):
                got = backend.search(request).to_json()
                assert [{**hit, "score": pytest.approx(hit["score"], rel=1e-12)}
                        for hit in got["hits"]] == expected["hits"], request
                assert got["truncated"] == expected["truncated"], request
    finally:
        backend.close()


@pytest.mark.parametrize("backend", ["reference", "sqlite"])
def test_openclaws_sqlite_state_is_imported_read_only_and_followed(
        tmp_path: Path, backend: str) -> None:
    answers = run_openclaw(tmp_path, SEARCHES, MESSAGES, 0)
    state, store = tmp_path / "state", tmp_path / "store"
    before = digests(state)
    outcome = live_import_into_store(store, backend, state)
    assert digests(state) == before
    report = outcome.imported
    windows = {(row[0], row[2]) for row in MESSAGES}
    # every window's events: its `session` header, then its messages
    assert (report.added, report.events) == (len(windows), len(MESSAGES) + len(windows))
    assert sum(1 for hits in answers.values() for answer in hits if answer["hits"]) >= 8
    assert_same_answers(store, SEARCHES, answers)

    again = live_import_into_store(store, None, state).imported
    assert (again.changed, again.events, again.unchanged) == (False, 0, len(windows))
    assert digests(state) == before

    later = run_openclaw(tmp_path, LATER, MORE, len(MESSAGES))
    before = digests(state)
    report = live_import_into_store(store, None, state).imported
    assert digests(state) == before
    assert (report.added, report.extended, report.replaced, report.events) == (1, 2, 0, 4)
    assert report.unchanged == len(windows) - 2
    assert_same_answers(store, LATER, later)
    opened = open_store(store, "stats")
    try:
        assert opened.stats()["events"] == len(MESSAGES) + len(MORE) + len(windows) + 1
    finally:
        opened.close()
