"""Readable output as users meet it: colour and width on a terminal, plain text in a pipe,
JSON numbers, the archived notice, `serve`'s ready line, shell completion.

Every case runs `python -m engine` in a fresh process on the demo corpus
(`engine/demo_corpus`); terminal cases put standard output on a pseudo-terminal.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from engine.cli.commands import COMMANDS
from tests.cli.conftest import CHECKOUT, output_on_terminal

#: One SGR escape sequence, and a styled run: the escape, the text, the reset.
SGR = re.compile(r"\x1b\[[0-9;]*m")
STYLED_RUN = re.compile(r"\x1b\[1;33m(.*?)\x1b\[0m")


@pytest.fixture
def demo(demo_store: Path) -> str:
    return str(demo_store)


def styled_runs(text: str) -> list[str]:
    """The texts a terminal shows in the match style, in order."""
    return STYLED_RUN.findall(text)


def test_matched_terms_are_coloured_on_a_terminal(demo: str) -> None:
    shown = output_on_terminal("search", "--store", demo, "--agent", "main", "--match",
                               "prefix", "per-session", "communi", columns=120,
                               environment={})
    assert shown.status == 0
    assert styled_runs(shown.out) == ["Per-session", "communication"]
    cafe = output_on_terminal("search", "--store", demo, "CAFE", columns=120, environment={})
    assert styled_runs(cafe.out) == ["Café", "café"]  # folded as the index folds them
    cjk = output_on_terminal("search", "--store", demo, "会议", columns=120, environment={})
    assert styled_runs(cjk.out) == ["会议"]  # inside its token, as the retry matched it
    explained = output_on_terminal("explain", "--store", demo, "--limit", "1", "cafe",
                                   columns=120, environment={})
    assert styled_runs(explained.out) == ["Café"]


@pytest.mark.parametrize("no_color", ["1", "anything"])
def test_no_color_turns_every_escape_off(demo: str, no_color: str) -> None:
    shown = output_on_terminal("search", "--store", demo, "cafe", columns=120,
                               environment={"NO_COLOR": no_color})
    assert (shown.status, SGR.search(shown.out)) == (0, None)
    assert "Café meeting notes" in shown.out


def test_an_empty_no_color_leaves_colour_on(demo: str) -> None:
    shown = output_on_terminal("search", "--store", demo, "cafe", columns=120,
                               environment={"NO_COLOR": ""})
    assert styled_runs(shown.out) == ["Café", "café"]


def test_a_pipe_gets_plain_rows_and_no_escapes(session_search, demo: str) -> None:
    outcome = session_search("search", "--store", demo, "cafe")
    assert outcome.status == 0 and "\x1b" not in outcome.out
    header, _rule, first, second, _notice = outcome.out.splitlines()
    assert header.split() == ["score", "timestamp", "sessionKey", "sessionId", "messageId",
                              "role", "snippet"]
    assert first.split(maxsplit=6) == [
        "2.738", "2026-09-03T10:00:40Z", "agent:main:ui-search", "ui-search",
        "cafe-communication", "user", ("Café meeting notes: a communication plan for the "
        "palette.")]
    assert second.split()[:2] == ["2.396", "2026-09-04T08:00:00Z"]


@pytest.mark.parametrize("columns", [40, 60, 80])
@pytest.mark.parametrize("argv", [
    ("search", "--store", "<demo>", "cafe"),
    ("search", "--store", "<demo>", "--order", "recent", "--limit", "25", "the"),
    ("explain", "--store", "<demo>", "cafe"),
    ("stats", "--store", "<demo>"),
    ("dump", "--store", "<demo>"),
    ("dump", "--store", "<demo>", "agents/main/index/manifest"),
])
def test_terminal_output_fits_the_width(demo: str, columns: int, argv: tuple[str, ...]) -> None:
    from rich.cells import cell_len

    shown = output_on_terminal(*(demo if word == "<demo>" else word for word in argv),
                               columns=columns, environment={"NO_COLOR": "1"})
    assert shown.status == 0, shown.err
    lines = shown.out.splitlines()
    assert lines and max(cell_len(line) for line in lines) <= columns


@pytest.mark.parametrize("columns", [40, 50])
def test_a_narrow_terminal_folds_cells_and_cuts_no_character(demo: str, columns: int) -> None:
    shown = output_on_terminal("search", "--store", demo, "cafe", columns=columns,
                               environment={"NO_COLOR": "1"})
    lines = shown.out.splitlines()
    rule = next(index for index, line in enumerate(lines) if line.startswith("─"))
    headers = lines[rule - 1]  # the header's last line: where each column starts
    starts = [headers.index(word) for word in ("score", "role", "message", "excerpt")]
    row = lines[rule + 1:lines.index("", rule)]  # the first of two rows, a blank between
    cells = ["".join("".join(line[start:end].split()) for line in row)
             for start, end in zip(starts, [*starts[1:], None])]
    assert cells == ["2.738", "2026-09-03T10:00:40Zuser",
                     "agent:main:ui-searchui-searchcafe-communication",
                     "Cafémeetingnotes:acommunicationplanforthepalette."]


def test_json_keeps_whole_millisecond_times_as_integers(session_search, demo: str) -> None:
    for command in ("search", "explain"):
        outcome = session_search(command, "--store", demo, "--json", "cafe")
        assert '"timestamp": 1788429640000,' in outcome.out
        hits = json.loads(outcome.out)["hits"]
        assert [type(hit["timestamp"]) for hit in hits] == [int, int]
        assert all(isinstance(hit["score"], float) for hit in hits)


def test_explain_json_gives_numbers_as_numbers(session_search, demo: str) -> None:
    report = json.loads(session_search("explain", "--store", demo, "--json", "cafe").out)
    bm25 = report["hits"][0]["bm25"]
    assert [type(bm25[key]) for key in ("N", "D", "avgdl", "k1", "b", "bm25")] == [
        int, int, float, float, float, float]


@pytest.mark.parametrize("scope, archived", [
    ((), 1),  # no scope option: every session, the archived window among them
    (("--all-sessions",), 1),
    (("--all-sessions", "--session-id", "ui-search"), 0),  # the archived window is not it
    (("--agent", "main"), 0),  # the archived window belongs to agent work
    (("--agent", "work"), 1),
    (("--session-key", "agent:main:ui-search"), 0),
])
def test_archived_windows_are_reported_only_when_in_scope(
        session_search, demo: str, scope: tuple[str, ...], archived: int) -> None:
    result = json.loads(session_search("search", "--store", demo, *scope, "--json",
                                       "cafe").out)
    assert result.get("archivedTranscriptsExcluded", 0) == archived
    assert ("archivedTranscriptsExcluded" in result) == (archived > 0)
    plain = session_search("search", "--store", demo, *scope, "cafe").out
    notice = "1 archived window in scope was not searched"
    assert (notice in plain) == (archived > 0)


def test_json_and_plain_output_do_not_import_rich(demo: str) -> None:
    program = ("import sys; from engine.cli import main; status = main(sys.argv[1:]); "
               "print('rich' in sys.modules, file=sys.stderr); sys.exit(status)")
    for extra in (("--json",), ()):
        completed = subprocess.run(
            [sys.executable, "-c", program, "search", "--store", demo, *extra, "cafe"],
            cwd=CHECKOUT, capture_output=True, text=True, timeout=120, check=False)
        assert (completed.returncode, completed.stderr) == (0, "False\n")


def test_serve_says_on_standard_error_that_it_is_ready(demo: str) -> None:
    request = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "sessions.search",
                          "params": {"sessionKeys": [], "query": "cafe"}})
    server = subprocess.Popen([sys.executable, "-m", "engine", "serve", "--store", demo],
                              cwd=CHECKOUT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        ready = server.stderr.readline()  # before any request is sent
        assert ready == (f"session-search: serving {demo} (backend reference) over JSON-RPC "
                         "2.0, one request per line on standard input (methods: "
                         "sessions.search, sessions_search, chat.history, sessions_history, "
                         "ui.search, gateway.sessions.search); end the input to stop\n")
        out, err = server.communicate(request + "\n", timeout=60)
    finally:
        server.kill()
    assert (server.returncode, err) == (0, "")
    assert json.loads(out)["result"]["hits"][0]["messageId"] == "cafe-communication"
    quiet = subprocess.run([sys.executable, "-m", "engine", "serve", "--quiet", "--store", demo],
                           cwd=CHECKOUT, input=request + "\n", capture_output=True, text=True,
                           timeout=60, check=False)
    assert (quiet.returncode, quiet.stderr, len(quiet.stdout.splitlines())) == (0, "", 1)


def completion_script(session_search, shell: str) -> str:
    outcome = session_search("completion", shell)
    assert (outcome.status, outcome.err) == (0, "")
    return outcome.out


def test_bash_completion_completes_commands_options_and_choices(
        session_search, tmp_path: Path) -> None:
    script = tmp_path / "session-search.bash"
    script.write_text(completion_script(session_search, "bash"), encoding="utf-8")

    def complete(*words: str) -> list[str]:
        program = (f"source {script}; COMP_WORDS=(session-search {' '.join(words)}); "
                   f"COMP_CWORD={len(words)}; _shtab_session_search; "
                   "printf '%s\\n' \"${COMPREPLY[@]}\"")
        completed = subprocess.run(["bash", "-c", program], capture_output=True, text=True,
                                   timeout=60, check=True)
        return sorted(completed.stdout.split())

    assert complete("") == sorted(entry.name for entry in COMMANDS)
    assert complete("se") == ["search", "serve"]
    assert complete("search", "--ma") == ["--match"]
    assert complete("search", "--match", "") == ["exact", "prefix"]
    assert complete("completion", "") == ["bash", "zsh"]


def test_zsh_completion_defines_the_command(session_search, tmp_path: Path) -> None:
    text = completion_script(session_search, "zsh")
    assert text.startswith("#compdef session-search\n")
    for entry in COMMANDS:
        assert f"\n    {entry.name}:'" in text  # in the list of commands
    zsh = shutil.which("zsh")
    if zsh is None:
        return  # the structure above is all that can be checked without zsh
    script = tmp_path / "_session-search"
    script.write_text(text, encoding="utf-8")
    checked = subprocess.run([zsh, "-n", str(script)], capture_output=True, text=True,
                             timeout=60, check=False)
    assert (checked.returncode, checked.stderr) == (0, "")
