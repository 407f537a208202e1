"""`session-search watch` and `import --openclaw-state` as a user runs them (engine.cli.watch_command).

`watch` runs as a subprocess: the test appends to a transcript file of the state and
polls `search` until the new text is found (a bounded number of polls, no timing
asserted), adds a file, then sends SIGINT: the watch exits 0 with its summary line, and
the state's files are unchanged by it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.cli.conftest import CHECKOUT
from tests.ingest.test_live_state import append_lines, digests, sessions_of
from tests.ingest.test_openclaw_state import build_state, message, write_jsonl

#: How many times a poll looks for the watched text before the test gives up.
POLLS = 600


def found(session_search, store: Path, text: str) -> bool:
    outcome = session_search("search", "--store", str(store), "--json", text)
    return outcome.status == 0 and bool(json.loads(outcome.out)["hits"])


def _as_a_terminal_job() -> None:
    """In the child before it runs: SIGINT's default action, as a terminal's foreground
    job has it. A shell without job control starts background jobs with SIGINT ignored,
    and Python keeps an inherited SIG_IGN (no KeyboardInterrupt at all), so a test run
    started with `&` would otherwise send its Ctrl-C to a process that cannot hear it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@contextmanager
def watching(*argv: str) -> Iterator[subprocess.Popen]:
    """`session-search watch ARGV` as a subprocess (killed if the test leaves it running)."""
    watcher = subprocess.Popen(
        [sys.executable, "-m", "engine", "watch", *argv, "--interval", "0.2"], cwd=CHECKOUT,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"}, preexec_fn=_as_a_terminal_job)
    try:
        yield watcher
    finally:
        if watcher.poll() is None:
            watcher.kill()
            watcher.communicate()


def interrupted(watcher: subprocess.Popen) -> tuple[str, str]:
    """Send SIGINT; what the watch printed until it exited."""
    watcher.send_signal(signal.SIGINT)
    return watcher.communicate(timeout=120)


def wait_until_found(session_search, store: Path, text: str, watcher: subprocess.Popen) -> None:
    for _ in range(POLLS):
        if (store / "store.meta").exists() and found(session_search, store, text):
            return
        assert watcher.poll() is None, watcher.communicate()
        time.sleep(0.1)
    pytest.fail(f"the watch did not import {text!r} in {POLLS} polls")


@pytest.mark.parametrize("backend", ["reference", "sqlite"])
def test_watch_keeps_the_store_in_step_until_interrupted(
        session_search, tmp_path: Path, backend: str) -> None:
    state = build_state(tmp_path / "state")
    store = tmp_path / "store"
    with watching("--openclaw-state", str(state), "--store", str(store), "--backend",
                  backend) as watcher:
        wait_until_found(session_search, store, "digest", watcher)
        append_lines(sessions_of(state) / "uuid-2.jsonl",
                     [message("c0ffee01", "c0ffee00", "user", "zanzibar follow-up")])
        wait_until_found(session_search, store, "zanzibar", watcher)
        write_jsonl(sessions_of(state) / "uuid-3.jsonl", [message("f00d0001", None, "user", "quokka")])
        wait_until_found(session_search, store, "quokka", watcher)
        before = digests(state)
        out, err = interrupted(watcher)
    assert watcher.returncode == 0, err
    assert "Traceback" not in err
    summary = out.splitlines()[-1]
    assert summary.startswith(f"watched {state} into {store}: ")
    assert "events imported; windows: 6 added, 1 extended, 0 replaced" in summary
    assert digests(state) == before
    stats = json.loads(session_search("stats", "--store", str(store), "--json").out)
    assert (stats["windows"], stats["events"]) == (6, 9)


def test_watch_warns_about_a_bad_line_and_goes_on(session_search, tmp_path: Path) -> None:
    state = build_state(tmp_path / "state")
    store = tmp_path / "store"
    bad = sessions_of(state) / "uuid-2.jsonl"
    append_lines(bad, [{"type": "message", "id": "z"}])
    with watching("--openclaw-state", str(state), "--store", str(store)) as watcher:
        first_warning = watcher.stderr.readline()
        bad.write_text(bad.read_text(encoding="utf-8").splitlines(keepends=True)[0],
                       encoding="utf-8")
        wait_until_found(session_search, store, "digest", watcher)
        out, err = interrupted(watcher)
    assert first_warning.startswith(
        f'session-search: warning: {bad}:2: a message event needs a "message" object')
    assert "set aside" in first_warning and first_warning not in err  # warned once
    assert watcher.returncode == 0
    assert "Traceback" not in first_warning + err
    assert out.splitlines()[-1].endswith("windows: 5 added, 0 extended, 0 replaced")


def test_watch_refuses_a_folder_that_is_no_state(session_search, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    session_search("watch", "--openclaw-state", str(tmp_path / "empty"), "--store",
                   str(tmp_path / "store")).refused(
        2, f"{tmp_path / 'empty'}: not an OpenClaw state directory (no agents/<agentId>/sessions/ "
           "nor agents/<agentId>/agent/openclaw-agent.sqlite)")
    assert not (tmp_path / "store").exists()


def test_import_openclaw_state_says_what_is_new(session_search, tmp_path: Path) -> None:
    state = build_state(tmp_path / "state")
    store = tmp_path / "store"
    first = session_search("import", "--store", str(store), "--openclaw-state", str(state))
    assert first.status == 0, first.err
    assert first.out.startswith(f"imported into {store} from state {state}: 7 new events; "
                                "windows: 5 added, 0 extended, 0 replaced, 0 updated, 0 unchanged")
    again = session_search("import", "--store", str(store), "--openclaw-state", str(state))
    assert again.out.startswith(f"imported into {store} from state {state}: nothing new "
                                "(5 windows unchanged)")
    append_lines(sessions_of(state) / "uuid-2.jsonl",
                 [message("c0ffee01", "c0ffee00", "user", "zanzibar")])
    document = json.loads(session_search("import", "--store", str(store), "--openclaw-state",
                                         str(state), "--json").out)
    assert (document["imported"]["extended"], document["imported"]["events"]) == (1, 1)
    assert document["stats"]["events"] == 8


def test_import_takes_sources_or_a_state_not_both(session_search, tmp_path: Path) -> None:
    state = build_state(tmp_path / "state")
    session_search("import", "--store", str(tmp_path / "store"), "--openclaw-state", str(state),
                   str(state)).refused(2, "give SOURCEs or --openclaw-state PATH, not both")
    session_search("import", "--store", str(tmp_path / "store")).refused(
        2, "nothing to import: give at least one SOURCE, or --openclaw-state PATH")


def test_import_openclaw_state_names_a_bad_line_and_sets_its_file_aside(
        session_search, tmp_path: Path) -> None:
    state = build_state(tmp_path / "state")
    store = tmp_path / "store"
    assert session_search("import", "--store", str(store), "--openclaw-state", str(state),
                          "--quiet").status == 0
    bad = sessions_of(state) / "uuid-2.jsonl"
    with bad.open("a", encoding="utf-8") as handle:
        handle.write("{not json\n")
    outcome = session_search("import", "--store", str(store), "--openclaw-state", str(state))
    assert outcome.status == 0 and "Traceback" not in outcome.err
    assert outcome.err == (
        f"session-search: warning: {bad}:2: invalid JSON: Expecting property name enclosed "
        "in double quotes at column 2; this source is set aside (the rest was imported) "
        "until it changes\n")
    assert "1 source set aside" in outcome.out
    stats = json.loads(session_search("stats", "--store", str(store), "--json").out)
    assert (stats["windows"], stats["events"]) == (5, 7)
