"""The error codes of the JSON-RPC protocol, and the exception that carries one.

Owns: every code a response may carry (the JSON-RPC 2.0 standard codes, then the
application's own) and `RpcError`. Must not touch: when each is used (the server and
the method handlers decide) or framing.

| code   | name               | when |
|--------|--------------------|------|
| -32700 | `PARSE_ERROR`      | the line is not JSON (or not UTF-8) |
| -32600 | `INVALID_REQUEST`  | not a JSON-RPC 2.0 request object (also a batch's member), or an empty batch |
| -32601 | `METHOD_NOT_FOUND` | no method of that name |
| -32602 | `INVALID_PARAMS`   | params of the wrong shape or type, or input the engine rejects (`InputError`: a query the policy refuses, ...); the message is the product's wording |
| -32603 | `INTERNAL_ERROR`   | a bug in the engine met while answering: the message names the exception, its traceback goes to standard error, and the server goes on with the next line |
| -32000 | `ENGINE_ERROR`     | the engine failed (a store error); the message says why |
| -32001 | `TIMED_OUT`        | a tool's request or reader budget ran out (`engine.agent_tools.budgets`); the message says that no match is not implied and how to retry |

The numbers -32700 to -32603 are JSON-RPC 2.0's; -32000 and -32001 are in the range it
leaves to servers. They are stable: clients may compare them.
"""

from __future__ import annotations

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
ENGINE_ERROR = -32000
TIMED_OUT = -32001

#: code -> its name, for messages and the protocol document.
ERROR_NAMES: dict[int, str] = {
    PARSE_ERROR: "parse error",
    INVALID_REQUEST: "invalid request",
    METHOD_NOT_FOUND: "method not found",
    INVALID_PARAMS: "invalid params",
    INTERNAL_ERROR: "internal error",
    ENGINE_ERROR: "engine error",
    TIMED_OUT: "timed out",
}


class RpcError(Exception):
    """A JSON-RPC error: raised by a method handler to answer with `code`, and by
    `RpcClient.call` when the server answered with one.

    >>> str(RpcError(METHOD_NOT_FOUND, "unknown method 'x'"))
    "unknown method 'x' (JSON-RPC error -32601, method not found)"
    """

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __str__(self) -> str:
        name = ERROR_NAMES.get(self.code, "application error")
        return f"{self.message} (JSON-RPC error {self.code}, {name})"

    def to_json(self) -> dict[str, object]:
        """The `error` member of a response: `{"code", "message"}`."""
        return {"code": self.code, "message": self.message}
