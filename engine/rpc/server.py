"""The JSON-RPC 2.0 server loop: read request lines, dispatch to the method table, answer.

Owns: the request/response envelope (what a valid request is, notifications, ids), the
mapping from exceptions to error codes, and the loop over an input stream. Must not
touch: framing details (`engine.rpc.framing`), what a method does (`engine.rpc.methods`
and the handlers), or opening stores (the caller passes an open backend).

Envelope rules (`docs/protocol.md` has the whole protocol):

* a request is an object with `"jsonrpc": "2.0"`, a string `method`, optionally
  `params`, and an `id` that is a string, an integer or null; anything else is
  `INVALID_REQUEST`;
* a request without an `id` member is a notification: it runs and gets no answer;
* every other request gets exactly one response line, in the order the requests came:
  `{"jsonrpc": "2.0", "id", "result"}` or `{"jsonrpc": "2.0", "id", "error": {"code",
  "message"}}`; when the id cannot be read (a parse error), it is null;
* a batch (a line holding a JSON array) is answered as JSON-RPC 2.0 says
  (`handle_batch`): one line holding the array of the responses of its members, in
  their order (each member is handled as a line's request is: a member that is no
  request object gets its own `INVALID_REQUEST`), with nothing for its notifications;
  a batch of notifications only gets no line at all, and an empty array is one
  `INVALID_REQUEST` response, not an array;
* a line longer than `framing.MAX_LINE_BYTES` is skipped unread and answered with
  `INVALID_REQUEST` (id null): `request line too long: N bytes (a line holds at most M)`;
* no error stops the server: it serves until its input ends.

Exceptions become codes: `RpcError` keeps its own; `InputError` (bad input, e.g. a query
the policy rejects) is `INVALID_PARAMS`; any other `EngineError` is `ENGINE_ERROR`. Any
other exception is a bug in the engine, and it is still answered: `INTERNAL_ERROR` with
the exception's type and message, its traceback on standard error, and the server goes on
with the next line. A server that many clients share must not let one hostile or unlucky
line end it (deep nesting, lone surrogates and raw bytes once did); the traceback on
standard error keeps the bug easy to find.
"""

from __future__ import annotations

import io
import sys
import traceback
from collections.abc import Iterable, Mapping
from typing import IO, Any

from engine import SearchBackend
from engine.errors import EngineError, InputError
from engine.rpc.errors import (
    ENGINE_ERROR,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    RpcError,
)
from engine.rpc.framing import (
    FramingError,
    OversizedLine,
    bounded_lines,
    decode_message,
    encode_message,
    is_blank_line,
    message_line,
)
from engine.rpc.methods import METHODS, Method, RpcContext

JSONRPC_VERSION = "2.0"
ENVELOPE_HINT = 'expected {"jsonrpc": "2.0", "method": str, "id": str|int}'


def error_response(request_id: Any, code: int, message: str) -> dict[str, Any]:
    """A response carrying an error.

    >>> error_response(3, METHOD_NOT_FOUND, "unknown method 'x'")
    {'jsonrpc': '2.0', 'id': 3, 'error': {'code': -32601, 'message': "unknown method 'x'"}}
    """
    return {"jsonrpc": JSONRPC_VERSION, "id": request_id,
            "error": {"code": code, "message": message}}


def _is_request_id(value: Any) -> bool:
    return value is None or isinstance(value, (str, int)) and not isinstance(value, bool)


def handle_message(
    context: RpcContext, message: Any, methods: Mapping[str, Method] = METHODS
) -> dict[str, Any] | None:
    """The response to one decoded message (None for a notification)."""
    if not isinstance(message, dict):
        return error_response(None, INVALID_REQUEST, "a request must be a JSON object")
    request_id = message.get("id")
    is_notification = "id" not in message
    if (message.get("jsonrpc") != JSONRPC_VERSION or not isinstance(message.get("method"), str)
            or not _is_request_id(request_id)):
        readable_id = request_id if _is_request_id(request_id) else None  # never a bool
        return error_response(readable_id, INVALID_REQUEST, ENVELOPE_HINT)
    try:
        method = methods.get(message["method"])
        if method is None:
            raise RpcError(METHOD_NOT_FOUND, f"unknown method {message['method']!r}")
        result = method.handler(context, message.get("params", {}))
    except RpcError as error:
        response = error_response(request_id, error.code, error.message)
    except InputError as error:
        response = error_response(request_id, INVALID_PARAMS, str(error))
    except EngineError as error:
        response = error_response(request_id, ENGINE_ERROR, str(error))
    except Exception as error:  # noqa: BLE001 - every line is answered (module docstring)
        traceback.print_exc(file=sys.stderr)
        response = error_response(request_id, INTERNAL_ERROR,
                                  f"internal error: {type(error).__name__}: {error}")
    else:
        response = {"jsonrpc": JSONRPC_VERSION, "id": request_id, "result": result}
    return None if is_notification else response


#: What an empty batch is told (JSON-RPC 2.0, section 6: one response, not an array).
EMPTY_BATCH = "an empty batch (an array with no request) is not a request"

#: What a line answers: one response, a batch's array of them, or nothing.
Answer = dict[str, Any] | list[dict[str, Any]] | None


def handle_batch(context: RpcContext, messages: list[Any],
                 methods: Mapping[str, Method] = METHODS) -> Answer:
    """The answer to a batch: the responses of its members in order, without those of
    its notifications; None when every member is a notification; one `INVALID_REQUEST`
    response for an empty batch.

    >>> handle_batch(RpcContext(None), [])["error"]["message"]
    'an empty batch (an array with no request) is not a request'
    >>> [response["error"]["code"] for response in handle_batch(RpcContext(None), [1, 2])]
    [-32600, -32600]
    """
    if not messages:
        return error_response(None, INVALID_REQUEST, EMPTY_BATCH)
    responses = [response for response in (handle_message(context, message, methods)
                                            for message in messages) if response is not None]
    return responses or None


def handle_line(
    backend: SearchBackend | RpcContext, line: bytes | str,
    methods: Mapping[str, Method] = METHODS,
) -> Answer:
    """The answer to one input line (None for a notification, or a batch of them);
    `backend` may be a whole `RpcContext` (a backend alone gets the default tool
    configuration)."""
    try:
        message = decode_message(line)
    except FramingError as error:
        return error_response(None, PARSE_ERROR, str(error))
    context = backend if isinstance(backend, RpcContext) else RpcContext(backend)
    if isinstance(message, list):
        return handle_batch(context, message, methods)
    return handle_message(context, message, methods)


def serve(
    backend: SearchBackend | RpcContext,
    lines: Iterable[bytes | str | OversizedLine],
    output: IO[str] | IO[bytes],
    methods: Mapping[str, Method] = METHODS,
) -> int:
    """Answer request lines until the input ends; return how many were answered.

    `lines` may yield text or UTF-8 bytes; `output` may be a text stream (lines are
    written as text) or a binary one (UTF-8). Each answer is flushed at once, so a
    client can wait for it before it writes the next request.
    """
    binary = not isinstance(output, io.TextIOBase)
    context = backend if isinstance(backend, RpcContext) else RpcContext(backend)
    answered = 0
    for line in lines:
        if isinstance(line, OversizedLine):
            response: dict[str, Any] | list[Any] | None = error_response(
                None, INVALID_REQUEST, line.reason())
        elif is_blank_line(line):
            continue
        else:
            response = handle_line(context, line, methods)
        if response is not None:
            output.write(encode_message(response) if binary  # type: ignore[arg-type]
                         else message_line(response))
            output.flush()
            answered += 1
    return answered


def serve_stdio(backend: SearchBackend | RpcContext,
                methods: Mapping[str, Method] = METHODS) -> int:
    """Serve standard input to standard output, as bytes (UTF-8 whatever the locale);
    a line over `framing.MAX_LINE_BYTES` is answered unread. The process then serves
    until its input ends (`engine.store.serving.compile_when_first_needed`)."""
    from engine.store.serving import compile_when_first_needed

    compile_when_first_needed()
    return serve(backend, bounded_lines(sys.stdin.buffer), sys.stdout.buffer, methods)
