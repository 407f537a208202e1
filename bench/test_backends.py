"""Backend lifecycle benchmarks: reopen (time to first query, resident memory), the agent
tool over every visible session and the command palette's search per keystroke.

Owns: the reopen, agent-tool and palette benchmarks. Must not touch: the prepared stores
(read only here).

* `test_reopen_first_query`: open the prepared store read-only and run the first query;
  `benchmark.pedantic` closes the previous instance in each round's setup, so every round
  pays the full open. The resident memory of a fresh process after opening is measured
  once through `engine.bench.reopen_probe` and recorded in `extra_info`.
* `test_agent_tool_sessions_search`: `sessions_search` over the 200+ visible sessions of
  the 10k corpus.
* `test_ui_search_per_keystroke`: `ui.search` (the command palette) for each prefix of a
  3-word query from its second character, one timed round typing the whole query; the
  time per keystroke is the round's time over `extra_info["keystrokes"]`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from engine.backends.protocol import Backend
from engine.bench.adapters import (
    CapabilityMissing,
    agent_sessions_search,
    palette_ui_search,
    registry_open_store,
)
from engine.bench.feature_workloads import UiSearchWorkload, keystrokes
from engine.model import SearchRequest


def test_reopen_first_query(benchmark: Any, backend_name: str, manifest: dict[str, Any],
                            prepared: tuple[Path, Backend]) -> None:
    directory, _ = prepared
    # A rare word: the time to a first answer is the cost of opening; what a common word
    # costs (cold and warm) is measured by the query benchmarks.
    common = manifest["probes"]["rare_word"]
    request = SearchRequest(query=common["query"], limit=25, session_keys=())
    opened: list[Backend] = []

    def setup() -> tuple[tuple[()], dict[str, Any]]:
        while opened:
            opened.pop().close()
        return (), {}

    def open_and_query() -> int:
        backend = registry_open_store(backend_name, directory, False, False)
        opened.append(backend)
        return len(backend.search(request).hits)

    try:
        hits = benchmark.pedantic(open_and_query, setup=setup, rounds=3, iterations=1)
    finally:
        setup()
    probe = subprocess.run(
        [sys.executable, "-m", "engine.bench.reopen_probe", "--backend", backend_name,
         "--store", str(directory), "--query", common["query"]],
        capture_output=True, text=True, check=True,
    )
    report = json.loads(probe.stdout)
    benchmark.extra_info.update(
        resident_bytes_after_open=report["resident_bytes_after_open"],
        resident_bytes_opened=report["resident_bytes_after_open"]
        - report["resident_bytes_before_open"],
    )
    assert hits == min(25, common["matchingMessages"])
    assert report["hits"] == hits


@pytest.mark.parametrize("visibility", ["all", "agent"])
def test_agent_tool_sessions_search(benchmark: Any, manifest: dict[str, Any],
                                    prepared: tuple[Path, Backend], visibility: str) -> None:
    _, backend = prepared
    query = manifest["probes"]["common_word"]["query"]
    try:
        agent_sessions_search(backend, query, 10, visibility)
    except CapabilityMissing as missing:
        pytest.skip(str(missing))
    benchmark.extra_info.update(session_keys=manifest["counts"]["sessionKeys"],
                                visibility=visibility)
    output = benchmark(agent_sessions_search, backend, query, 10, visibility)
    assert 1 <= len(output["results"]) <= 10


def test_ui_search_per_keystroke(benchmark: Any, manifest: dict[str, Any],
                                 prepared: tuple[Path, Backend]) -> None:
    _, backend = prepared
    typed = keystrokes(UiSearchWorkload().query(manifest))
    try:
        palette_ui_search(backend, typed[0])
    except CapabilityMissing as missing:
        pytest.skip(str(missing))
    benchmark.extra_info.update(session_keys=manifest["counts"]["sessionKeys"],
                                keystrokes=len(typed), query=typed[-1])

    def type_the_query() -> list[dict[str, Any]]:
        return [palette_ui_search(backend, text) for text in typed]

    answers = benchmark(type_the_query)
    assert all(answer["searched"] for answer in answers)
    assert all(len(answer["messages"]) <= 25 for answer in answers)
