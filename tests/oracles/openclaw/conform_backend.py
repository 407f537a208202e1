"""The real OpenClaw as a `session-search conform` backend: `exec:python -m tests.oracles.openclaw.conform_backend`.

Owns: speaking the conformance protocol (docs/conformance.md) on standard input and
output in front of `adapter.mjs`, the real `openclaw@2026.9.6` npm package on Node 24
(installed into the cache by `installation.py` on first use, as the oracle tests do):
each `conformance.reset` starts a fresh adapter on a fresh OpenClaw state folder;
`conformance.load` writes the messages through OpenClaw's own writer (the adapter's
`corpus.load` of a flat file) and the windows' ownership through its session entries
(`sessions.upsert`); `conformance.configure` writes `openclaw.json` (`config.write`);
`sessions.search`, `sessions_search`, `sessions_history` and `gateway.sessions.search` go
to the adapter, their params translated where its shape differs. Must not touch: the
engine (this backend is OpenClaw, not session-search) or anything outside its state
folders.

What OpenClaw's writer cannot be given is answered with the skip code (-32002) and the
reason, so the case is skipped, not failed: an event that is no user or assistant
message (a rewind, a reset, a tool result, ...), a message that does not continue its
window's chain, a corpus OpenClaw's writer refuses (a key that is not canonical for it,
`agent:a*b:main`), an archived (cold) window (OpenClaw's `archivedAt` only lists a session
as archived, its transcript is still searched), time budgets, a requester's agent id or
grants. An incognito window's messages are not written at all: OpenClaw keeps incognito
transcripts in process memory, out of the agent databases it searches. The Gateway's
refusals, which the adapter answers with code -32000 and the Gateway's code beside the
message, are answered as this engine's protocol answers them: INVALID_REQUEST as -32602. The methods it lacks (`chat.history`, `ui.search`, the
lifecycle set-up methods) are left out of its description, so their cases are skipped
too. What it answers differently is listed, each with its reason, in
`tests/oracles/openclaw/expectations.json`; run it with:

    session-search conform --backend "exec:python -m tests.oracles.openclaw.conform_backend" \\
        --expectations tests/oracles/openclaw/expectations.json

from the checkout's root (the adapter's files are not in the installed package).
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from engine.rpc.client import RpcClient
from engine.rpc.errors import RpcError
from tests.oracles.openclaw.installation import (
    OPENCLAW_VERSION,
    Installation,
    ensure_installed,
    spawn_adapter,
)

SKIPPED = -32002
METHODS = ["conformance.describe", "conformance.reset", "conformance.load",
           "conformance.configure", "sessions.search", "sessions_search", "sessions_history",
           "gateway.sessions.search"]
#: Feature tags whose cases need a method or a set-up step OpenClaw's adapter lacks.
UNSUPPORTED = ["lifecycle", "replace", "delete", "archive", "history", "history-anchors",
               "ui-search", "budgets"]


class Skip(Exception):
    """A request this backend cannot express: answered with the skip code."""


class OpenClaw:
    """One adapter process on one state folder, started again by `reset`."""

    def __init__(self) -> None:
        self.installation: Installation = ensure_installed()
        self.state: Path | None = None
        self.adapter: RpcClient | None = None
        self.chains: dict[str, str | None] = {}
        self.windows: dict[str, dict[str, Any]] = {}

    def client(self) -> RpcClient:
        if self.adapter is None:
            self.state = Path(tempfile.mkdtemp(prefix="openclaw-conform-"))
            self.adapter = spawn_adapter(self.installation, self.state)
        return self.adapter

    def reset(self) -> dict[str, Any]:
        self.close()
        self.chains, self.windows = {}, {}
        return {}

    def close(self) -> None:
        if self.adapter is not None:
            self.adapter.close()
            self.adapter = None
        if self.state is not None:
            shutil.rmtree(self.state, ignore_errors=True)
            self.state = None

    # ----- conformance.load -----------------------------------------------------------

    def load(self, params: dict[str, Any]) -> dict[str, Any]:
        windows = {record["sessionId"]: record for record in params.get("windows", [])}
        self.windows.update(windows)
        events = [item for item in params.get("events", [])
                  if not self.is_incognito(self.windows.get(item["sessionId"], {}))]
        rows = [self.flat_row(item) for item in events]
        self.client()
        assert self.state is not None
        if rows:
            path = self.state / f"load-{len(list(self.state.glob('load-*')))}.jsonl"
            path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows),
                            encoding="utf-8")
            blocks = sorted({row["sessionKey"] for row, item in zip(rows, events, strict=True)
                             if isinstance(item["event"]["message"].get("content"), list)})
            try:
                self.call("corpus.load", {"path": str(path), "unscopedAgentId": "main",
                                          "textBlockKeys": blocks})
            except RpcError as refused:  # e.g. a key OpenClaw does not write
                raise Skip(f"OpenClaw's writer refuses this corpus: {refused.message}") from None
        entries = [self.entry(record, rows) for record in self.windows.values()
                   if record.get("current", True)]
        entries = [entry for entry in entries if entry is not None]
        if entries:
            self.call("sessions.upsert", {"entries": entries})
        return {"windows": len(windows), "events": len(rows)}

    def flat_row(self, item: dict[str, Any]) -> dict[str, Any]:
        event, session_id = item["event"], item["sessionId"]
        window = self.windows.get(session_id)
        message = event.get("message") if isinstance(event.get("message"), dict) else {}
        if window is None:
            raise Skip(f"an event of window {session_id!r}, which the load does not name")
        if window.get("archived"):
            raise Skip("an archived (cold) window: the adapter cannot move a transcript to "
                       "OpenClaw's cold storage")
        if event.get("type") != "message" or message.get("role") not in ("user", "assistant"):
            raise Skip(f"OpenClaw's writer is given user and assistant messages only, not "
                       f"a {event.get('type')!r} event of role {message.get('role')!r}")
        parent = event.get("parentId")
        if parent != self.chains.get(session_id) or event.get("appendMode") is not None:
            raise Skip("a message that does not continue its window's chain (a branch, a "
                       "side append) cannot be written through the adapter")
        content = message.get("content")
        if isinstance(content, list):
            if len(content) != 1 or not (isinstance(content[0], dict) and content[0].get(
                    "type") == "text" and isinstance(content[0].get("text"), str)):
                raise Skip("the adapter writes a message's content as a string or as one "
                           "text block, not as these blocks")
            text = content[0]["text"]
        elif isinstance(content, str):
            text = content
        else:
            raise Skip("a message without string content cannot be written")
        stamp = event.get("timestamp", item.get("createdAt", 0))
        self.chains[session_id] = event["id"]
        return {"sessionKey": window["sessionKey"], "sessionId": session_id,
                "messageId": event["id"], "role": message["role"], "text": text,
                "timestamp": stamp}

    @staticmethod
    def is_incognito(record: dict[str, Any]) -> bool:
        """An incognito window, by its flag or by OpenClaw's incognito key shape."""
        key = str(record.get("sessionKey", "")).lower()
        return bool(record.get("incognito")) or ":incognito-" in key

    def entry(self, record: dict[str, Any], rows: list[dict[str, Any]]) -> dict[str, Any] | None:
        """The session entry of a key's current window, with its ownership metadata (a
        spawned session's `startedAt`, as OpenClaw writes it for a child) and, for an
        incognito window, OpenClaw's `incognito` mark (its transcript is not written)."""
        fields: dict[str, Any] = {name: record[name] for name in ("spawnedBy", "parentSessionKey")
                                  if isinstance(record.get(name), str)}
        if self.is_incognito(record):
            fields["incognito"] = True
        if not fields:
            return None
        stamps = [row["timestamp"] for row in rows if row["sessionId"] == record["sessionId"]
                  and isinstance(row["timestamp"], (int, float))]
        if "spawnedBy" in fields or "parentSessionKey" in fields:
            fields["startedAt"] = min(stamps, default=1)
        return {"sessionKey": record["sessionKey"], "agentId": "main",
                "sessionId": record["sessionId"], "updatedAt": max(stamps, default=1), **fields}

    # ----- the product methods --------------------------------------------------------

    def forward(self, method: str, params: Any) -> Any:
        if method == "sessions_search":
            requester = params.get("requester") or {}
            if set(requester) - {"sessionKey", "sandboxed"}:
                raise Skip("the adapter's tool call takes a requester key and sandbox flag only")
            params = {"requesterSessionKey": requester.get("sessionKey"),
                      "sandboxed": requester.get("sandboxed", False),
                      "arguments": params.get("arguments", {})}
        elif method == "sessions_history":
            arguments = {key: value for key, value in params.items()
                         if key != "requesterSessionKey"}
            requester = params.get("requesterSessionKey") or params.get("sessionKey")
            params = {"requesterSessionKey": requester if isinstance(requester, str)
                      else "agent:main:main", "arguments": arguments}
        return self.call(method, params)

    def call(self, method: str, params: Any) -> Any:
        """Call the adapter; its error as `RpcError`, a Gateway refusal with this engine's
        code (the adapter says the Gateway's code in the error's `data`)."""
        client = self.client()
        request_id = client._next_id
        client._next_id += 1
        client._send(client._request(method, params, request_id))
        response = client._receive()
        error = response.get("error")
        if isinstance(error, dict):
            code = error.get("code", -32000)
            gateway_code = (error.get("data") or {}).get("gatewayCode")
            if method == "gateway.sessions.search" and gateway_code == "INVALID_REQUEST":
                code = -32602
            raise RpcError(code, str(error.get("message", "")))
        return response.get("result")

    def configure(self, params: dict[str, Any]) -> dict[str, Any]:
        if "budgets" in params:
            raise Skip("OpenClaw 2026.9.6 has no request or reader time budgets (§7.3)")
        self.call("config.write", {"config": params.get("config", {})})
        return {}

    def answer(self, method: str, params: Any) -> Any:
        if method == "conformance.describe":
            return {"name": "openclaw", "version": OPENCLAW_VERSION, "protocol": 1,
                    "methods": METHODS, "unsupportedFeatures": UNSUPPORTED}
        if method == "conformance.reset":
            return self.reset()
        if method == "conformance.load":
            return self.load(params)
        if method == "conformance.configure":
            return self.configure(params)
        if method in METHODS:
            return self.forward(method, params)
        raise RpcError(-32601, f"unknown method {method!r}")


def main() -> None:
    backend = OpenClaw()
    try:
        for line in sys.stdin:
            if not line.strip():
                continue
            request = json.loads(line)
            response: dict[str, Any] = {"jsonrpc": "2.0", "id": request.get("id")}
            try:
                response["result"] = backend.answer(request["method"], request.get("params") or {})
            except Skip as skip:
                response["error"] = {"code": SKIPPED, "message": str(skip)}
            except RpcError as error:
                response["error"] = {"code": error.code, "message": error.message}
            sys.stdout.write(json.dumps(response, ensure_ascii=False) + "\n")
            sys.stdout.flush()
    finally:
        backend.close()


if __name__ == "__main__":
    main()
