"""The real OpenClaw 2026.9.6 `sessions_history` tool as a differential oracle (issue 13).

How it runs: the project's adapter (`openclaw/adapter.mjs`, as for the search oracles)
runs the installed `openclaw` package (`openclaw_installation`) in local embedded mode:
its `corpus.load` writes a flat messages file through OpenClaw's own transcript writer,
and its `sessions_history` method calls the real agent tool, whose embedded Gateway
answers `chat.history` with the real handler. Both of our backends import the same file with
`engine.ingest` and answer through `engine.agent_tools.sessions_history.sessions_history`.

The corpus: `chat_corpus.generate_messages` (multilingual keys with one to three windows
each, so every later window is a physical reset that retains the earlier ones; message ids
repeat across windows) plus a window of long messages that the tool's 4,000-unit cut
shortens, a key written with capitals holding 300 windows, windows of one key interleaved
in time, blank and whitespace-only messages inside limited pages, and assistant messages
stored as text blocks (`shaped_sessions`). Requests, for every key and message: tails (limits 1, 3, 200), offset pages,
anchored reads with and without the message's `sessionId` (a retained window's message
without its `sessionId` must give `[]`), a missing anchor, a `sessionId` of another key,
and `offset` with `messageId`.

Answers must agree exactly (messages and every member, errors by message) once the
`HISTORY_DIVERGENCES` of `tests.parity.known_divergences` that recognise a request are
taken out; each entry must have fired, and only where the raw answers really differ.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from engine.agent_tools.sessions_history import sessions_history
from engine.errors import InputError
from engine.history.request import ToolHistoryRequest
from engine.ingest.into_store import import_into_store
from engine.rpc.client import RpcClient
from engine.rpc.errors import RpcError
from engine.store.registry import open_backend
from tests.oracles.chat_corpus import FlatMessage, generate_messages, write_flat_file
from tests.oracles.oracle_run import oracle_summary, running_adapter
from tests.parity.known_divergences import HISTORY_DIVERGENCES

AGENT = "work"
REQUESTER = f"agent:{AGENT}:main"
SEED = 13


def corpus() -> list[FlatMessage]:
    """The generated corpus plus a window of long messages (cut by the tool)."""
    messages = generate_messages(SEED, [AGENT])
    clock = max(message.timestamp for message in messages) + 3_600_000
    words = ("river", "stone", "cloud", "ember", "maple", "quartz")
    for number, size in enumerate((900, 4200, 5200, 40, 6000)):
        text = " ".join(words[(number + index) % len(words)] for index in range(size // 6))
        messages.append(FlatMessage(f"agent:{AGENT}:long", "long-w0", f"m{number:03d}",
                                    ("user", "assistant")[number % 2], clock + number, text))
    return messages + shaped_sessions(clock + 1000)


#: The key whose assistant messages are stored as text blocks on both sides.
BLOCKS_KEY = f"agent:{AGENT}:blocks"


def with_text_blocks(store: Any, messages: list[FlatMessage]) -> None:
    """Store the `BLOCKS_KEY` window's transcript again with its assistant messages as
    text blocks (`[{"type": "text", "text": ...}]`), as OpenClaw stores a model's reply
    and as the adapter's `corpus.load {textBlockKeys}` writes them."""
    rows = [message for message in messages if message.session_key == BLOCKS_KEY]
    events, parent = [], None
    for row in rows:
        content: Any = ([{"type": "text", "text": row.text}] if row.role == "assistant"
                        else row.text)
        events.append({"type": "message", "id": row.message_id, "parentId": parent,
                       "timestamp": row.timestamp,
                       "message": {"role": row.role, "content": content}})
        parent = row.message_id
    with store.transaction() as transaction:
        transaction.replace_transcript(rows[0].session_id, events)
    store.reconcile()


def shaped_sessions(clock: int) -> list[FlatMessage]:
    """The shapes issue 27 asked the generated corpus for: a key written with capitals
    holding 300 windows (each a reset of the one before), windows of one key interleaved
    in time (the window with the newest message is current), and blank and
    whitespace-only messages inside the pages a limit cuts, and a window whose assistant
    messages are text blocks (`BLOCKS_KEY`)."""
    roles = ("user", "assistant")
    messages = [FlatMessage(f"agent:{AGENT}:Many:Windows", f"many-w{number:03d}",
                            f"mw{number:03d}", roles[number % 2], clock + number,
                            f"window {number} of many")
                for number in range(300)]
    clock += 1000
    for step, window in enumerate(("mix-w1", "mix-w2", "mix-w1", "mix-w2", "mix-w1")):
        messages.append(FlatMessage(f"agent:{AGENT}:mix", window, f"x{step}", roles[step % 2],
                                    clock + step, f"interleaved message {step}"))
    clock += 1000
    for step in range(6):
        messages.append(FlatMessage(BLOCKS_KEY, "blocks-w0", f"k{step}", roles[step % 2],
                                    clock + step, f"block message {step}"))
    clock += 1000
    for step, text in enumerate(("one", "", "three", " ", "five", "\t", "seven")):
        messages.append(FlatMessage(f"agent:{AGENT}:blanks", "blanks-w0", f"b{step}",
                                    roles[step % 2], clock + step, text))
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


def their_answer(adapter: RpcClient, params: dict[str, Any]) -> dict[str, Any]:
    try:
        return adapter.call("sessions_history", {"requesterSessionKey": REQUESTER,
                                                 "arguments": params})
    except RpcError as error:
        return {"error": error.message}


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
    folder = tmp_path_factory.mktemp("openclaw-history")
    messages = corpus()
    flat = write_flat_file(messages, folder / "messages.jsonl")
    with running_adapter(openclaw_installation, folder / "state") as adapter:
        adapter.call("config.write", {"config": {"agents": {
            "ownership": "explicit", "entries": {AGENT: {}}}}})
        loaded = adapter.call("corpus.load", {"path": str(flat), "textBlockKeys": [BLOCKS_KEY]})
        assert loaded["appended"] == loaded["messages"] == len(messages), loaded
        stores = {}
        for backend in ("reference", "sqlite"):
            import_into_store(folder / backend, backend, [flat])
            writer = open_backend(folder / backend, writer=True)
            try:
                with_text_blocks(writer, messages)
            finally:
                writer.close()
            stores[backend] = open_backend(folder / backend)
        try:
            yield adapter, stores, messages
        finally:
            for store in stores.values():
                store.close()


def test_sessions_history_agrees_with_openclaw(loaded, pytestconfig: pytest.Config) -> None:
    adapter, stores, messages = loaded
    tally: Counter[str] = Counter()
    differences: list[str] = []
    requests = requests_for(messages)
    for params in requests:
        theirs = their_answer(adapter, params)
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
