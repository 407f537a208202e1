"""`session-search explore` as a user runs it: the address it prints, Ctrl-C, refusals.

* the line it prints names the page's address on 127.0.0.1, and the page answers there;
* Ctrl-C (SIGINT) and SIGTERM stop it with status 0 and one line on standard error;
* a port another program holds, a port out of range, a store that is not one: one error
  line, status 2, no traceback, nothing served;
* `--open` hands the address to the browser (`$BROWSER`, as Python's `webbrowser` reads it).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.explorer.client import CHECKOUT, Explorer, fetch, run_engine


def start(*argv: str, environment: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "engine", "explore", *argv], cwd=CHECKOUT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=environment)


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_it_prints_its_address_and_stops_cleanly(demo_store: Path, stop: int) -> None:
    process = start("--store", str(demo_store), "--port", "0")
    try:
        line = process.stdout.readline()
        assert line.startswith(f"session-search: exploring {demo_store} (backend reference) "
                               "at http://127.0.0.1:"), line
        url = line.split(" at ")[1].split()[0]
        page = fetch(url, "/")
        assert page.status == 200 and b"session-search" in page.body
        assert page.headers["content-type"].startswith("text/html")
        process.send_signal(stop)
        rest, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, err
    assert (rest, err) == ("", "session-search: explorer stopped\n")


def test_json_prints_the_address_as_json(demo_store: Path, tmp_path: Path) -> None:
    server = Explorer(demo_store, stderr=tmp_path / "stderr.txt")
    assert server.url.startswith("http://127.0.0.1:")
    assert server.get("/api/index/facts").json["store"] == str(demo_store)
    status, errors = server.stop()
    assert (status, errors) == (0, "session-search: explorer stopped\n")


def test_a_taken_port_is_refused(demo_store: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        port = holder.getsockname()[1]
        outcome = run_engine("explore", "--store", str(demo_store), "--port", str(port))
    assert outcome.returncode == 2 and outcome.stdout == ""
    assert outcome.stderr == (f"session-search: error: cannot listen on 127.0.0.1 port {port}: "
                              "Address already in use (pick another with --port N, or --port 0 "
                              "for a free one)\n")


@pytest.mark.parametrize("argv, message", [
    (["--port", "70000"], "--port must be from 0 to 65535 (got 70000)"),
    (["--host", "no-such-host.invalid"], "--host 'no-such-host.invalid' is not an address"),
])
def test_bad_options_are_refused(demo_store: Path, argv: list[str], message: str) -> None:
    outcome = run_engine("explore", "--store", str(demo_store), *argv)
    assert outcome.returncode == 2 and outcome.stdout == ""
    assert outcome.stderr.startswith(f"session-search: error: {message}"), outcome.stderr
    assert "Traceback" not in outcome.stderr


def test_a_folder_that_is_no_store_is_refused(tmp_path: Path) -> None:
    outcome = run_engine("explore", "--store", str(tmp_path / "missing"))
    assert outcome.returncode == 2 and outcome.stdout == ""
    assert outcome.stderr == (f"session-search: error: {tmp_path / 'missing'}: no "
                              "session-search store here\n")


def test_open_hands_the_address_to_the_browser(demo_store: Path, tmp_path: Path) -> None:
    opened = tmp_path / "opened.txt"
    environment = {**os.environ, "BROWSER": f"sh -c 'echo %s > {opened}'"}
    process = start("--store", str(demo_store), "--port", "0", "--open", "--json",
                    environment=environment)
    try:
        url = json.loads(process.stdout.readline())["url"]
        for _ in range(600):
            if opened.exists() and opened.read_text().strip():
                break
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert opened.read_text().strip() == url
    assert process.returncode == 0
