"""Speaking to a real `session-search explore` server: starting it, asking it, stopping it.

Owns: `Explorer` (a `python -m engine explore --port 0 --json` subprocess: its address
read from the line it prints, stopped with Ctrl-C (SIGINT), which must end it with status
0), `fetch` (one request with the standard library's client: status, headers, the body
and its JSON) and `run_engine` (a finished `python -m engine` command, for the answers
the endpoints are compared with). No mocks: every test speaks HTTP to uvicorn, as a
browser does.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

CHECKOUT = Path(__file__).resolve().parents[2]
#: Seconds the server may take to start, and to stop after Ctrl-C (a hang fails the test).
START_SECONDS = 60
STOP_SECONDS = 30


@dataclass(frozen=True)
class Answer:
    """One HTTP answer: status, headers (lower-case names), body, and the JSON it holds."""

    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body.decode("utf-8"))


def fetch(base: str, path: str, params: Any = None, *, method: str = "GET",
          headers: dict[str, str] | None = None, raw_query: str | None = None) -> Answer:
    """One request to the server at `base` (`params`: a dict or a list of pairs)."""
    query = raw_query if raw_query is not None else urllib.parse.urlencode(params or {},
                                                                            doseq=True)
    url = f"{base.rstrip('/')}{path}" + (f"?{query}" if query else "")
    request = urllib.request.Request(url, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return Answer(response.status, {k.lower(): v for k, v in response.headers.items()},
                          response.read())
    except urllib.error.HTTPError as error:
        return Answer(error.code, {k.lower(): v for k, v in error.headers.items()},
                      error.read())


class Explorer:
    """A running `explore` server (`url`, `pid`), started in `cwd` (a relative `store` is
    read from there); `stop()` sends Ctrl-C and returns its exit status and standard
    error."""

    def __init__(self, store: Path | str, *extra: str, stderr: Path,
                 cwd: Path = CHECKOUT) -> None:
        self._errors = stderr.open("w", encoding="utf-8")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "engine", "explore", "--store", str(store), "--port", "0",
             "--json", *extra],
            cwd=cwd, stdout=subprocess.PIPE, stderr=self._errors, text=True)
        self.stderr_path = stderr
        line = _read_line(self.process, START_SECONDS)
        self.url = json.loads(line)["url"]

    @property
    def pid(self) -> int:
        return self.process.pid

    def get(self, path: str, params: Any = None, **options: Any) -> Answer:
        return fetch(self.url, path, params, **options)

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> tuple[int, str]:
        if self.alive():
            self.process.send_signal(signal.SIGINT)
        try:
            status = self.process.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            self.process.kill()
            status = self.process.wait()
        self._errors.close()
        return status, self.stderr_path.read_text(encoding="utf-8")


def _read_line(process: subprocess.Popen[str], seconds: float) -> str:
    """The first line the server prints (its address), or a failure saying what it said."""
    import selectors

    assert process.stdout is not None
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    if not selector.select(timeout=seconds):
        process.kill()
        pytest.fail(f"explore printed no address within {seconds} s")
    line = process.stdout.readline()
    if not line:
        process.wait()
        pytest.fail(f"explore ended with status {process.returncode} before serving")
    return line


def run_engine(*argv: str) -> subprocess.CompletedProcess[str]:
    """`python -m engine ARGV`, finished (for the command-line answers compared with)."""
    environment = {name: value for name, value in os.environ.items() if name != "COLUMNS"}
    return subprocess.run([sys.executable, "-m", "engine", *argv], cwd=CHECKOUT, env=environment,
                          capture_output=True, text=True, timeout=120, check=False)
