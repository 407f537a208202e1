"""The real OpenClaw 2026.9.6 `sessions_history` tool as a differential oracle (issue 13).

How it runs: the shared driver (`../shared/oracles/openclaw/driver.mjs`, beside the
checkout; `SESSION_SEARCH_OPENCLAW_DRIVER` names another) runs the installed `openclaw`
package (`openclaw_installation`, as for the search oracle) in local embedded mode: its
`corpus.load` writes a flat messages file through OpenClaw's own transcript writer, and
its `sessions_history` method calls the real agent tool, whose embedded Gateway answers
`chat.history` with the real handler. Both of our backends import the same file with
`engine.ingest` and answer through `engine.history.tool.sessions_history`.

The corpus: `chat_corpus.generate_messages` (multilingual keys with one to three windows
each, so every later window is a physical reset that retains the earlier ones; message ids
repeat across windows) plus a window of long messages that the tool's 4,000-unit cut
shortens. Requests, for every key and message: tails (limits 1, 3, 200), offset pages,
anchored reads with and without the message's `sessionId` (a retained window's message
without its `sessionId` must give `[]`), a missing anchor, a `sessionId` of another key,
and `offset` with `messageId`.

Answers must agree exactly (messages and every member, errors by message) once the
`HISTORY_DIVERGENCES` of `tests.parity.known_divergences` that recognise a request are
taken out; each entry must have fired, and only where the raw answers really differ.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.backends.registry import open_backend
from engine.errors import InputError
from engine.history.request import ToolHistoryRequest
from engine.history.tool import sessions_history
from engine.ingest.into_store import import_into_store
from tests.oracles.chat_corpus import FlatMessage, generate_messages, write_flat_file
from tests.oracles.oracle_run import oracle_summary, skip_or_fail
from tests.parity.known_divergences import HISTORY_DIVERGENCES

CHECKOUT = Path(__file__).resolve().parents[2]
DRIVER_VARIABLE = "SESSION_SEARCH_OPENCLAW_DRIVER"
DRIVER_CANDIDATES = (CHECKOUT.parent / "shared", CHECKOUT.parent.parent / "shared")
AGENT = "work"
REQUESTER = f"agent:{AGENT}:main"
SEED = 13


def driver_path() -> Path:
    """The shared driver: `$SESSION_SEARCH_OPENCLAW_DRIVER`, else beside the checkout."""
    named = os.environ.get(DRIVER_VARIABLE, "").strip()
    candidates = [Path(named)] if named else [
        folder / "oracles" / "openclaw" / "driver.mjs" for folder in DRIVER_CANDIDATES]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    skip_or_fail(f"no OpenClaw driver at {', '.join(map(str, candidates))} "
                 f"({DRIVER_VARIABLE} names one)")
    raise AssertionError("unreachable")


class Driver:
    """The driver's line protocol: `{"id", "method", "params"}` in, `{"id", "result"}` or
    `{"id", "error": {"code", "message"}}` out, one request at a time."""

    def __init__(self, node: Path, script: Path, package: Path, folder: Path) -> None:
        home = folder / "home"
        home.mkdir(parents=True, exist_ok=True)
        environment = {"PATH": f"{node.parent}:{os.environ.get('PATH', '/usr/bin:/bin')}",
                       "HOME": str(home), "TMPDIR": str(folder), "NO_COLOR": "1",
                       "OPENCLAW_DISABLE_UPDATE_CHECK": "1", "OPENCLAW_PKG": str(package),
                       "OPENCLAW_STATE_DIR": str(folder / "state")}
        self.log = (folder / "driver.log").open("w", encoding="utf-8")
        self.process = subprocess.Popen([str(node), str(script)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=self.log, text=True,
                                        encoding="utf-8", env=environment)
        self.next_id = 0

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps({"id": self.next_id, "method": method,
                                             "params": params}) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the OpenClaw driver stopped; see {self.log.name}")
        answer = json.loads(line)
        assert answer["id"] == self.next_id
        return answer

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()


def corpus() -> list[FlatMessage]:
    """The generated corpus plus a window of long messages (cut by the tool)."""
    messages = generate_messages(SEED, [AGENT])
    clock = max(message.timestamp for message in messages) + 3_600_000
    words = ("river", "stone", "cloud", "ember", "maple", "quartz")
    for number, size in enumerate((900, 4200, 5200, 40, 6000)):
        text = " ".join(words[(number + index) % len(words)] for index in range(size // 6))
        messages.append(FlatMessage(f"agent:{AGENT}:long", "long-w0", f"m{number:03d}",
                                    ("user", "assistant")[number % 2], clock + number, text))
    return messages


def requests_for(messages: list[FlatMessage]) -> list[dict[str, Any]]:
    """Every request of the module docstring, in a fixed order."""
    keys = sorted({message.session_key for message in messages})
    requests: list[dict[str, Any]] = []
    for key in keys:
        for limit in (1, 3, 200):
            requests.append({"sessionKey": key, "limit": limit})
        for offset, limit in ((0, 3), (2, 3), (5, 200), (1000, 2)):
            requests.append({"sessionKey": key, "offset": offset, "limit": limit})
        requests.append({"sessionKey": key, "messageId": "missing-anchor"})
        requests.append({"sessionKey": key, "messageId": "m000", "offset": 0})
    for message in messages:
        requests.append({"sessionKey": message.session_key, "messageId": message.message_id,
                         "sessionId": message.session_id, "limit": 3})
        requests.append({"sessionKey": message.session_key, "messageId": message.message_id,
                         "limit": 5})
    foreign = next(message for message in messages if message.session_key != keys[0])
    requests.append({"sessionKey": keys[0], "messageId": foreign.message_id,
                     "sessionId": foreign.session_id})
    return requests


def their_answer(driver: Driver, params: dict[str, Any]) -> dict[str, Any]:
    answer = driver.call("sessions_history", {**params, "requesterSessionKey": REQUESTER})
    return {"error": answer["error"]["message"]} if "error" in answer else answer["result"]


def our_answer(store: Any, params: dict[str, Any]) -> dict[str, Any]:
    try:
        return sessions_history(store, ToolHistoryRequest.from_json(params))
    except InputError as error:
        return {"error": str(error)}


def difference(ours: dict[str, Any], theirs: dict[str, Any]) -> str:
    """Where two answers differ: the members, and the first differing message."""
    members = sorted(name for name in set(ours) | set(theirs) if ours.get(name) != theirs.get(name))
    parts = [f"members {members}"]
    for index, (mine, other) in enumerate(zip(ours.get("messages", []), theirs.get("messages", []))):
        if mine != other:
            parts.append(f"message {index}: ours {json.dumps(mine)[:300]} theirs "
                         f"{json.dumps(other)[:300]}")
            break
    for name in members:
        if name != "messages":
            parts.append(f"{name}: ours {json.dumps(ours.get(name))[:200]} theirs "
                         f"{json.dumps(theirs.get(name))[:200]}")
    return "; ".join(parts)


@pytest.fixture(scope="module")
def loaded(openclaw_installation, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple]:
    script = driver_path()
    folder = tmp_path_factory.mktemp("openclaw-history")
    messages = corpus()
    flat = write_flat_file(messages, folder / "messages.jsonl")
    driver = Driver(openclaw_installation.node, script, openclaw_installation.package, folder)
    try:
        configured = driver.call("config.configureAgents", {"agentIds": [AGENT]})
        loaded = driver.call("corpus.load", {"path": str(flat), "messageShape": "string"})
        if "error" in configured or "error" in loaded:
            skip_or_fail(f"the OpenClaw driver could not load the corpus: {configured} {loaded}")
        assert loaded["result"]["failed"] == 0, loaded
        stores = {}
        for backend in ("reference", "sqlite"):
            import_into_store(folder / backend, backend, [flat])
            stores[backend] = open_backend(folder / backend)
        yield driver, stores, messages
        for store in stores.values():
            store.close()
    finally:
        driver.close()


def test_sessions_history_agrees_with_openclaw(loaded, pytestconfig: pytest.Config) -> None:
    driver, stores, messages = loaded
    tally: Counter[str] = Counter()
    differences: list[str] = []
    requests = requests_for(messages)
    for params in requests:
        theirs = their_answer(driver, params)
        for backend, store in stores.items():
            ours, expected = our_answer(store, params), theirs
            for entry in HISTORY_DIVERGENCES:
                if entry.recognises(params) and entry.present(ours, expected):
                    tally[entry.id] += 1
                    ours, expected = entry.normalise(ours, expected)
            if ours != expected:
                differences.append(f"{backend} {json.dumps(params)}: {difference(ours, expected)}")
        tally["requests"] += 1
        tally["anchored" if params.get("messageId") else "unanchored"] += 1
        tally["errors" if "error" in theirs else "pages"] += 1
        tally["cut texts"] += bool(theirs.get("contentTruncated"))
        tally["empty pages"] += theirs.get("messages") == []
    oracle_summary(pytestconfig).append(f"sessions_history: {dict(sorted(tally.items()))}")
    assert not differences, f"{len(differences)} differences:\n" + "\n".join(differences[:8])
    never = [entry.id for entry in HISTORY_DIVERGENCES if tally[entry.id] == 0]
    assert never == [], f"history divergences that never fired (stale entries): {never}"
    for needed in ("errors", "cut texts", "empty pages", "anchored", "unanchored"):
        assert tally[needed] > 0, needed
