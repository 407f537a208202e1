"""The `chat.history` method: the Gateway's history read over JSON-RPC.

Owns: running `engine.history.pages.read_history` on the served backend for one
`chat.history` request. Must not touch: the params' rules and error strings
(`engine.history.request.HistoryRequest.from_json`), the read itself, or the envelope.

Params: `{sessionKey, limit?, offset?, cursor?, messageId?, sessionId?, maxBytes?}`.
Result: `HistoryPage.to_json()`. Rule errors (`offset and messageId cannot be used
together`, ...) and an unknown key are `InputError`s, which the server answers as
invalid params. A reader that sees a snapshot (`Refreshable`) is refreshed first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine import HistoryRequest, TranscriptReader, read_history, require_capability
from engine.rpc.refreshing import refreshed

if TYPE_CHECKING:
    from engine.rpc.methods import RpcContext

CHAT_HISTORY_METHOD = "chat.history"


def transcript_reader(context: RpcContext, action: str) -> TranscriptReader:
    """The served backend as a transcript reader, refreshed when it reads a snapshot."""
    return refreshed(require_capability(context.backend, TranscriptReader, action))


def chat_history(context: RpcContext, params: Any) -> dict[str, Any]:
    """Handler of `chat.history`."""
    request = HistoryRequest.from_json(params)
    return read_history(transcript_reader(context, CHAT_HISTORY_METHOD), request).to_json()
