"""History pages across hidden rows, against the real OpenClaw 2026.9.6 (issue 27, item 4).

A user message without visible text (`""`, `" "`) is a hidden row: no page shows it. A
limited page (a tail with `limit`, or `offset` and `limit`) of OpenClaw fills `limit` with
shown rows, reaching older rows past the hidden ones, and its `nextOffset` counts the
hidden rows it stepped over; the engine used to cut `limit` rows first and then drop the
hidden ones (`limit: 1` over a hidden newest row gave `[]`). The windows here hold hidden
rows at the tail, in the middle, at the head and in runs; every tail and offset page of
limits 1 to 4 and offsets 0 to 6, and every anchored read of limits 1 to 5, must agree on
both backends through `sessions_history`, once the listed history divergences are taken
out.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from engine.agent_tools.sessions_history import sessions_history
from engine.errors import InputError
from engine.history.request import ToolHistoryRequest
from engine.rpc.errors import RpcError
from tests.oracles.chat_corpus import FlatMessage, write_flat_file
from tests.oracles.oracle_run import imported_stores, oracle_summary, running_adapter
from tests.parity.known_divergences import HISTORY_DIVERGENCES

AGENT = "work"
REQUESTER = f"agent:{AGENT}:main"
#: Each window's texts, oldest first; roles alternate from `user` ("" and " " hidden).
WINDOWS = {
    "tb": ["tb1", "tb2", "tb3", "tb4", ""],
    "mb": ["mb1", "mb2", " ", "mb4", "mb5"],
    "xb": ["x1", "x2", "", "x4", " ", "x6", "", "x8"],
    "hb": ["", "h2", "", "h4"],
    "rb": ["r1", "r2", "", "r4", "", "r6", " ", "r8", "", "r10"],
}


def messages() -> list[FlatMessage]:
    found = []
    for number, (name, texts) in enumerate(WINDOWS.items()):
        for index, text in enumerate(texts):
            found.append(FlatMessage(f"agent:{AGENT}:{name}", name, f"{name}-{index + 1}",
                                     ("user", "assistant")[index % 2],
                                     100_000 * number + 1000 * index, text))
    return found


def requests() -> Iterator[dict[str, Any]]:
    for name, texts in WINDOWS.items():
        key = f"agent:{AGENT}:{name}"
        for limit in (1, 2, 3, 4):
            yield {"sessionKey": key, "limit": limit}
            for offset in range(7):
                yield {"sessionKey": key, "limit": limit, "offset": offset}
        for limit in (1, 3, 5):
            for index in range(len(texts)):
                yield {"sessionKey": key, "limit": limit, "messageId": f"{name}-{index + 1}"}


@pytest.fixture(scope="module")
def loaded(openclaw_installation, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple]:
    folder = tmp_path_factory.mktemp("openclaw-history-pages")
    flat = write_flat_file(messages(), folder / "messages.jsonl")
    with running_adapter(openclaw_installation, folder / "state") as adapter:
        adapter.call("config.write", {"config": {"agents": {
            "ownership": "explicit", "entries": {AGENT: {}}}}})
        loaded = adapter.call("corpus.load", {"path": str(flat)})
        assert loaded["appended"] == len(messages()), loaded
        with imported_stores(folder, flat) as stores:
            yield adapter, stores


def test_limited_pages_step_over_hidden_rows_as_openclaw_does(
        loaded, pytestconfig: pytest.Config) -> None:
    adapter, stores = loaded
    differences = []
    counted = {"requests": 0, "pages over hidden rows": 0}
    for params in requests():
        try:
            theirs = adapter.call("sessions_history", {"requesterSessionKey": REQUESTER,
                                                       "arguments": params})
        except RpcError as error:
            theirs = {"error": error.message}
        counted["requests"] += 1
        shown = [message.get("__openclaw", {}).get("seq") for message in theirs["messages"]]
        counted["pages over hidden rows"] += bool(shown) and shown[-1] - shown[0] + 1 > len(
            shown)
        for backend, store in stores.items():
            try:
                ours = sessions_history(store, ToolHistoryRequest.from_json(params))
            except InputError as error:
                ours = {"error": str(error)}
            expected = theirs
            for entry in HISTORY_DIVERGENCES:
                if entry.recognises(params) and entry.present(ours, expected):
                    ours, expected = entry.normalise(ours, expected)
            if ours != expected:
                differences.append(f"{backend} {json.dumps(params)}: ours {json.dumps(ours)[:300]}"
                                   f" theirs {json.dumps(expected)[:300]}")
    oracle_summary(pytestconfig).append(f"sessions_history pages over hidden rows: {counted}")
    assert not differences, f"{len(differences)} differences:\n" + "\n".join(differences[:8])
    assert counted["pages over hidden rows"] > 20
