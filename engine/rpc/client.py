"""`RpcClient`: call the methods of a JSON-RPC server over a pair of byte streams.

Owns: the client side of the protocol — request ids, writing a request, reading its
answer, turning an error answer into `RpcError`, and starting (and ending) a server
process. Must not touch: framing details (`engine.rpc.framing`) or any method's meaning.

Two ways to get a client:

* `RpcClient.spawn(command)` starts a server process (`session-search serve --store DIR`,
  or any program that speaks the protocol, e.g. another implementation under test) and
  talks to it over its standard input and output; `RpcClient.serve_store(store)` spawns
  this engine's own `python -m engine serve --store DIR` (`engine_command`: no folder in
  the working directory can shadow the package);
* `RpcClient(reader, writer)` talks over streams the caller already has (a socket's
  files, the ends of a pipe).

Calls are synchronous and answered in order: `call` writes one request and reads lines
until its answer (a server that answers a request with another id is an
`RpcConnectionError`). There is no timeout: a server that never answers blocks the
caller, so tests run under their own timeout. The server's standard error is not read
(it goes where the caller's goes).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Self

from engine.errors import EngineError
from engine.rpc.errors import RpcError
from engine.rpc.framing import FramingError, decode_message, encode_message, is_blank_line
from engine.rpc.server import JSONRPC_VERSION

#: How long a closed connection waits for the server's exit status, for the message.
EXIT_WAIT_SECONDS = 5.0


class RpcConnectionError(EngineError):
    """The server cannot be reached, closed the connection, or answered out of protocol."""


class RpcClient:
    """A JSON-RPC 2.0 client over one reader and one writer (bytes, one message a line)."""

    def __init__(
        self,
        reader: IO[bytes],
        writer: IO[bytes],
        process: subprocess.Popen[bytes] | None = None,
    ) -> None:
        """Use `reader` for answers and `writer` for requests; `process`, when given, is
        the server this client started and ends on `close`."""
        self._reader = reader
        self._writer = writer
        self.process = process
        self._next_id = 1
        self._closed = False

    @classmethod
    def spawn(
        cls,
        command: Sequence[str | os.PathLike[str]],
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> RpcClient:
        """Start `command` as the server and talk to it over its stdin and stdout."""
        try:
            process = subprocess.Popen(
                [os.fspath(part) for part in command], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, cwd=cwd, env=None if env is None else dict(env),
            )
        except OSError as error:
            raise RpcConnectionError(f"cannot start the server {command[0]!s}: {error}") from None
        assert process.stdin is not None and process.stdout is not None
        return cls(process.stdout, process.stdin, process)

    @classmethod
    def serve_store(
        cls, store: str | os.PathLike[str], *, cwd: str | os.PathLike[str] | None = None
    ) -> RpcClient:
        """Spawn this engine's server for the store folder `store` (`python -m engine
        serve`, with the interpreter running this code and this very `engine` package:
        `engine_command`), in the working folder `cwd`."""
        folder = Path(store).resolve()  # the server's working folder may differ
        command, environment = engine_command("serve", "--store", folder)
        return cls.spawn(command, cwd=cwd, env=environment)

    # ----- calling ------------------------------------------------------------------

    def call(self, method: str, params: Any = None) -> Any:
        """Call `method` with `params` (omitted when None); return the result.

        An error answer raises `RpcError` with the server's code and message.
        """
        request_id = self._next_id
        self._next_id += 1
        self._send(self._request(method, params, request_id))
        response = self._receive()
        if not isinstance(response, dict) or response.get("jsonrpc") != JSONRPC_VERSION:
            raise RpcConnectionError(f"the server answered out of protocol: {response!r}")
        error = response.get("error")
        if response.get("id") != request_id and not (isinstance(error, dict)
                                                     and response.get("id") is None):
            raise RpcConnectionError(
                f"the answer has id {response.get('id')!r}, expected {request_id!r}")
        if isinstance(error, dict):
            raise RpcError(int(error.get("code", 0)), str(error.get("message", "")))
        if "result" not in response:
            raise RpcConnectionError(f"the answer has neither result nor error: {response!r}")
        return response["result"]

    def notify(self, method: str, params: Any = None) -> None:
        """Send `method` as a notification (no id): the server runs it and does not answer."""
        self._send(self._request(method, params, None))

    @staticmethod
    def _request(method: str, params: Any, request_id: int | None) -> dict[str, Any]:
        request: dict[str, Any] = {"jsonrpc": JSONRPC_VERSION, "method": method}
        if params is not None:
            request["params"] = params
        if request_id is not None:
            request["id"] = request_id
        return request

    def _send(self, message: dict[str, Any]) -> None:
        if self._closed:
            raise RpcConnectionError("the client is closed")
        try:
            self._writer.write(encode_message(message))
            self._writer.flush()
        except (BrokenPipeError, ValueError) as error:
            raise RpcConnectionError(f"the server closed the connection ({error})") from None

    def _receive(self) -> Any:
        while True:
            line = self._reader.readline()
            if not line:
                raise RpcConnectionError(f"the server closed the connection{self._exit_note()}")
            if not is_blank_line(line):
                break
        try:
            return decode_message(line)
        except FramingError as error:
            raise RpcConnectionError(f"the server sent a line that is not JSON: {error}") from None

    def _exit_note(self) -> str:
        """How the spawned server ended, when it has (its output closing comes first)."""
        if self.process is None:
            return ""
        try:
            status = self.process.wait(timeout=EXIT_WAIT_SECONDS)
        except subprocess.TimeoutExpired:
            return ""
        return f" (it exited with status {status})"

    # ----- ending -------------------------------------------------------------------

    def close(self, timeout: float = 60.0) -> int | None:
        """Close the connection; a spawned server sees its input end and exits. Returns
        its exit status (None when this client did not start one). Idempotent."""
        if not self._closed:
            self._closed = True
            try:
                self._writer.close()
            except (BrokenPipeError, OSError):
                pass
        if self.process is None:
            return None
        try:
            status = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            status = self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()
        return status

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exception: object) -> None:
        self.close()


def engine_command(*arguments: str | os.PathLike[str]) -> tuple[list[str], dict[str, str]]:
    """The command line and environment that run this engine's `python -m engine
    ARGUMENTS` in another process: the interpreter running this code, with `-P` (Python
    3.11: the working folder is not put first on the module path, so a folder named
    `engine/` there cannot shadow the package) and the folder holding this `engine`
    first on `PYTHONPATH` (so a checkout that is not installed still runs itself)."""
    import engine

    root = str(Path(engine.__file__).resolve().parent.parent)
    environment = dict(os.environ)
    environment["PYTHONPATH"] = os.pathsep.join(
        part for part in (root, environment.get("PYTHONPATH", "")) if part)
    return [sys.executable, "-P", "-m", "engine", *map(os.fspath, arguments)], environment
