"""The backends a conformance run drives: this engine in-process, or any external program.

Owns: `Target` (what the runner needs of a backend: call a method and get its answer,
start again after a failure, stop), `Reply`, `TargetFailure`, and the two kinds:
`InProcessTarget` (`--backend reference|sqlite|postgres|reference:postgres`: a scratch
store and its method table in this process, every request and answer passed through JSON
exactly as over a pipe) and
`ExecTarget` (`--backend exec:COMMAND`: a process that speaks JSON-RPC 2.0 lines on its
standard input and output, with a timeout on every answer). Must not touch: what a case
is or expects (the runner and `engine.conformance.compare`), or the methods themselves
(`engine.conformance.scratch`, `engine.rpc`).

An external process is started with the caller's environment minus
`SESSION_SEARCH_STORE`: a backend under test works on its own scratch data, so
`exec:session-search serve` serves a scratch store even where a default store is set.
Its standard error goes to a temporary file, whose last lines a failure quotes.
"""

from __future__ import annotations

import json
import os
import selectors
import shlex
import subprocess
import tempfile
import time
from dataclasses import dataclass
from typing import IO, Any, Protocol

from engine.conformance.scratch import ScratchStore, scratch_methods
from engine.rpc.framing import FramingError, decode_message, encode_message
from engine.rpc.methods import RpcContext
from engine.rpc.server import handle_line

#: The error code a backend answers for a call it cannot run: the case is skipped.
SKIPPED = -32002

#: Seconds an external process may take to answer one call (`conform --timeout`).
DEFAULT_TIMEOUT = 60.0


@dataclass(frozen=True, slots=True)
class Reply:
    """A backend's answer to one call: its `result`, or its `error` (`{code, message}`)."""

    result: Any = None
    error: dict[str, Any] | None = None


class TargetFailure(Exception):
    """The backend did not answer: it crashed, hung, or wrote something that is not a
    JSON-RPC answer. The message says which; the runner restarts the backend."""


class Target(Protocol):
    """What the runner drives."""

    name: str

    def call(self, method: str, params: Any) -> Reply:
        """Call `method`; `TargetFailure` when no answer came."""
        ...

    def restart(self) -> None:
        """Start again after a `TargetFailure` (a new process, an empty store)."""
        ...

    def close(self) -> None:
        """Stop, removing what the backend made."""
        ...


def reply_of(response: Any, request_id: int) -> Reply:
    """The reply a decoded response line carries (`TargetFailure` when it is none)."""
    if not isinstance(response, dict) or response.get("jsonrpc") != "2.0":
        raise TargetFailure(f"answered something that is not a JSON-RPC 2.0 response: "
                            f"{json.dumps(response, ensure_ascii=False)[:200]}")
    error = response.get("error")
    if isinstance(error, dict):
        return Reply(error={"code": error.get("code"), "message": error.get("message")})
    if response.get("id") != request_id:
        raise TargetFailure(f"answered id {response.get('id')!r}, expected {request_id}")
    if "result" not in response:
        raise TargetFailure("answered with neither result nor error")
    return Reply(result=response["result"])


class InProcessTarget:
    """This engine's `backend` (`reference`, `sqlite`, `postgres`, `reference:postgres`) on
    a scratch store in this process."""

    def __init__(self, backend: str) -> None:
        self.name = backend
        self._scratch = ScratchStore(backend)
        self._methods = scratch_methods(self._scratch)
        self._next_id = 0

    def call(self, method: str, params: Any) -> Reply:
        self._next_id += 1
        line = encode_message({"jsonrpc": "2.0", "id": self._next_id, "method": method,
                               "params": params})
        response = handle_line(RpcContext(self._scratch.backend), line, self._methods)
        return reply_of(decode_message(encode_message(response)), self._next_id)

    def restart(self) -> None:
        self._scratch.reset()

    def close(self) -> None:
        self._scratch.close()


class ExecTarget:
    """An external program speaking the protocol on its standard input and output."""

    def __init__(self, command: str, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.name = f"exec:{command}"
        self.argv = shlex.split(command)
        if not self.argv:
            raise ValueError("exec: needs a command, e.g. exec:'session-search serve'")
        self.timeout = timeout
        self._process: subprocess.Popen[bytes] | None = None
        self._stderr: IO[bytes] | None = None
        self._buffer = b""
        self._next_id = 0

    # ----- the process --------------------------------------------------------------

    def _start(self) -> subprocess.Popen[bytes]:
        environment = {name: value for name, value in os.environ.items()
                       if name != "SESSION_SEARCH_STORE"}
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - open while the process runs
        try:
            self._process = subprocess.Popen(self.argv, stdin=subprocess.PIPE,
                                             stdout=subprocess.PIPE, stderr=self._stderr,
                                             env=environment)
        except OSError as error:
            raise TargetFailure(f"cannot start {self.argv[0]}: {error.strerror or error}") from None
        self._buffer = b""
        return self._process

    def _stop(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            try:
                if process.stdin is not None:
                    process.stdin.close()
                process.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                process.kill()
                process.wait()
            if process.stdout is not None:
                process.stdout.close()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def _kill(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.wait()
        self._stop()

    def stderr_tail(self, lines: int = 5) -> str:
        """The last lines the process wrote on its standard error."""
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        text = self._stderr.read().decode("utf-8", "replace").strip()
        return "\n".join(text.splitlines()[-lines:])

    def _failure(self, what: str, *, ended: bool = False) -> TargetFailure:
        """The failure to raise (the process is ended first); `ended`: its output closed,
        so its exit status is waited for (briefly) to be named."""
        status = None
        if self._process is not None:
            try:
                status = self._process.wait(timeout=5) if ended else self._process.poll()
            except subprocess.TimeoutExpired:
                status = None
        tail = self.stderr_tail()
        self._kill()
        exited = f" (it exited with status {status})" if status is not None else ""
        return TargetFailure(what + exited + (f"; its standard error ended with:\n{tail}"
                                              if tail else ""))

    # ----- calling ------------------------------------------------------------------

    def call(self, method: str, params: Any) -> Reply:
        process = self._process or self._start()
        self._next_id += 1
        request = encode_message({"jsonrpc": "2.0", "id": self._next_id, "method": method,
                                  "params": params})
        assert process.stdin is not None
        try:
            process.stdin.write(request)
            process.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._failure(f"the backend closed its input before {method}",
                                ended=True) from None
        line = self._read_line(method)
        try:
            return reply_of(decode_message(line), self._next_id)
        except FramingError as error:
            raise self._failure(f"the backend answered {method} with a line that is not "
                                f"JSON ({error}): {line[:200]!r}") from None
        except TargetFailure as failure:
            raise self._failure(f"{method}: {failure}") from None

    def _read_line(self, method: str) -> bytes:
        """The next non-blank line of the process's output, within the timeout."""
        process = self._process
        assert process is not None and process.stdout is not None
        deadline = time.monotonic() + self.timeout
        descriptor = process.stdout.fileno()
        with selectors.DefaultSelector() as selector:
            selector.register(descriptor, selectors.EVENT_READ)
            while True:
                if b"\n" in self._buffer:
                    line, self._buffer = self._buffer.split(b"\n", 1)
                    if line.strip():
                        return line
                    continue
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not selector.select(remaining):
                    raise self._failure(f"the backend did not answer {method} within "
                                        f"{self.timeout:g} s (timed out)")
                chunk = os.read(descriptor, 65536)
                if not chunk:
                    raise self._failure(f"the backend ended before answering {method}",
                                        ended=True)
                self._buffer += chunk

    def restart(self) -> None:
        self._kill()

    def close(self) -> None:
        self._stop()


def open_target(backend: str, *, timeout: float = DEFAULT_TIMEOUT) -> Target:
    """The target `--backend` names: an in-process backend (`reference`, `sqlite`,
    `postgres`, `reference:postgres`) or `exec:COMMAND`."""
    if backend.startswith("exec:"):
        return ExecTarget(backend[len("exec:"):], timeout=timeout)
    return InProcessTarget(backend)
