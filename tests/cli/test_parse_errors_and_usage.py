"""A JSON parse error names the line and column Python's own error names; an unknown option
is refused with the command's usage (issue 32, item 3).

Every case runs `python -m engine` in a fresh process. The expected place is computed by
Python's `json` on the same text (a line without its line end), so the test says what
"the right column" means instead of copying a number.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.cli.commands import COMMANDS

REQUESTER = ("--requester", "agent:main:main")
EXPECTED_OBJECT = "expected an object such as '{\"query\": \"cafe\"}'"


def python_error(text: str) -> json.JSONDecodeError:
    """The error Python's `json` raises for `text`."""
    with pytest.raises(json.JSONDecodeError) as caught:
        json.loads(text)
    return caught.value


def test_a_truncated_argument_names_pythons_column(session_search,
                                                   demo_store: Path) -> None:
    text = '{"query": "deployment failed on fri'
    error = python_error(text)
    assert (error.msg, error.colno) == ("Unterminated string starting at", 11)
    session_search("call", "sessions_search", "--store", str(demo_store), *REQUESTER,
                   text).refused(2, f"ARGS_JSON is not JSON (Unterminated string starting "
                                    f"at column {error.colno}); {EXPECTED_OBJECT}")
    error = python_error('{"query": "cafe" "limit": 3}')
    session_search("call", "sessions_search", "--store", str(demo_store), *REQUESTER,
                   '{"query": "cafe" "limit": 3}').refused(
        2, f"ARGS_JSON is not JSON (Expecting ',' delimiter at column {error.colno}); "
           f"{EXPECTED_OBJECT}")


def test_an_argument_of_many_lines_names_the_line(session_search, demo_store: Path) -> None:
    text = '{\n  "query": "cafe",\n  "limit" 3\n}'
    error = python_error(text)
    assert (error.lineno, error.colno) == (3, 11)
    session_search("call", "sessions_search", "--store", str(demo_store), *REQUESTER,
                   text).refused(2, "ARGS_JSON is not JSON (Expecting ':' delimiter at "
                                    f"line 3, column 11); {EXPECTED_OBJECT}")


def test_a_truncated_request_line_names_pythons_place(session_search,
                                                      demo_store: Path) -> None:
    line = '{"jsonrpc": "2.0", "id": 1, "method": "sessions.search", "params": {"query": "caf'
    outcome = session_search("serve", "--store", str(demo_store), "--quiet",
                             stdin=line + "\n")
    answer = json.loads(outcome.out)
    assert answer["error"] == {"code": -32700, "message": f"parse error: {python_error(line)}"}
    assert "Unterminated string starting at: line 1 column 78" in answer["error"]["message"]


def test_a_truncated_config_file_names_line_and_column(session_search, demo_store: Path,
                                                      tmp_path: Path) -> None:
    config = tmp_path / "openclaw.json"
    text = '{\n  "tools": {\n    "sessions": {"visibility": "al'
    config.write_text(text + "\n", encoding="utf-8")
    error = python_error(text)
    session_search("call", "sessions_search", "--store", str(demo_store), "--config",
                   str(config), *REQUESTER, '{"query": "cafe"}').refused(
        2, f"{config}: not valid JSON at line {error.lineno}, column {error.colno}: "
           f"{error.msg}")


def test_a_truncated_import_line_names_pythons_column(session_search,
                                                      tmp_path: Path) -> None:
    whole = json.dumps({"sessionKey": "agent:main:main", "sessionId": "s1",
                        "messageId": "m1", "role": "user", "timestamp": 1772359260000,
                        "text": "the deployment failed on friday"})
    for cut in (len(whole) - 12, whole.index('"sessionId"') - 2):  # in a string; after a key
        line = whole[:cut]
        source = tmp_path / f"cut-{cut}.jsonl"
        source.write_text(whole + "\n" + line + "\n", encoding="utf-8")
        error = python_error(line)
        reason = (f"{error.msg} column {error.colno}" if error.msg.endswith(" at")
                  else f"{error.msg} at column {error.colno}")
        session_search("import", "--store", str(tmp_path / f"store-{cut}"),
                       str(source)).refused(2, f"{source}:2: invalid JSON: {reason}")


@pytest.mark.parametrize("name", [entry.name for entry in COMMANDS
                                  if entry.name not in ("completion", "bench")])
def test_an_unknown_option_gets_the_commands_usage(session_search, name: str) -> None:
    outcome = session_search(name, "--no-such-option")
    assert outcome.status == 2 and outcome.out == ""
    assert outcome.err.startswith(f"usage: session-search {name} "), outcome.err
    last = outcome.err.splitlines()[-1]
    assert last in (f"session-search {name}: error: unrecognized arguments: --no-such-option",
                    # a command whose required arguments are missing says that first
                    *(line for line in [last] if line.startswith(
                        f"session-search {name}: error: the following arguments are "
                        "required")))


def test_an_unknown_option_after_valid_ones(session_search, demo_store: Path) -> None:
    outcome = session_search("search", "--store", str(demo_store), "--bogus", "cafe")
    assert outcome.status == 2 and outcome.out == ""
    assert outcome.err.startswith("usage: session-search search ")
    assert outcome.err.endswith(
        "session-search search: error: unrecognized arguments: --bogus\n")
