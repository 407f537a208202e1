"""Tests of `session-search tokenize` (`engine.cli.tokenize_command`).

The command runs through `engine.cli.main`, the real entry point, with the command list
narrowed to this one command so that the test does not depend on other commands.
"""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import io
import json
import sys

import pytest

import engine.cli
from engine.analysis.icu_words import IcuWordAnalyzer


@pytest.fixture
def session_search(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """Run `session-search ARGS...`; return (exit status, stdout, stderr)."""
    monkeypatch.setattr(engine.cli, "COMMAND_MODULES", ("engine.cli.tokenize_command",))

    def run(*arguments: str, stdin: bytes | None = None) -> tuple[int, str, str]:
        if stdin is not None:
            monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
        status = engine.cli.main(["tokenize", *arguments])
        captured = capsys.readouterr()
        return status, captured.out, captured.err

    return run


def require_module(module_name: str) -> None:
    """Every profile module must exist: a missing one is a failure, never a skip."""
    assert importlib.util.find_spec(module_name) is not None, f"{module_name} is missing"


def test_the_command_is_registered() -> None:
    assert "engine.cli.tokenize_command" in engine.cli.COMMAND_MODULES


def test_plain_output_shows_stages_marked_spans_and_a_table(session_search) -> None:
    status, out, err = session_search("--profile", "icu", "Café 東京都 😀 l’été")
    assert (status, err) == (0, "")
    stages = IcuWordAnalyzer().describe()
    expected_head = ["profile: icu", "stages:"]
    expected_head += [f"  {number}. {stage}" for number, stage in enumerate(stages, start=1)]
    lines = out.splitlines()
    assert lines[: len(expected_head)] == expected_head
    assert lines[len(expected_head) :] == [
        "",
        "text:  Café 東京都 😀 l’été",
        "       ^^^^ ~~~~^^    ~~~~~",
        "",
        "pos  term   start  end  bytes  kind         source  ascii",
        "---  -----  -----  ---  -----  -----------  ------  ---------",
        "0    cafe   0      4    0-5    word         Café",
        "1    東京   5      7    6-12   ideographic  東京    Dong Jing",
        "2    都     7      8    12-15  ideographic  都      Du",
        "3    l’ete  11     16   21-30  word         l’été   l'ete",
        "4 tokens",
    ]


def test_json_output(session_search) -> None:
    status, out, _ = session_search("--profile", "icu", "--json", "Straße 3.14")
    assert status == 0
    document = json.loads(out)
    assert list(document) == ["profile", "options", "stages", "tokens"]
    assert document["profile"] == "icu"
    assert document["options"] == {}
    assert document["stages"] == IcuWordAnalyzer().describe()
    assert document["tokens"] == [
        {
            "position": 0,
            "text": "strasse",
            "start": 0,
            "end": 6,
            "byteStart": 0,
            "byteEnd": 7,
            "kind": "word",
            "source": "Straße",
            "ascii": "strasse",
        },
        {
            "position": 1,
            "text": "3.14",
            "start": 7,
            "end": 11,
            "byteStart": 8,
            "byteEnd": 12,
            "kind": "number",
            "source": "3.14",
            "ascii": "3.14",
        },
    ]


def test_text_from_stdin_with_invalid_utf8(session_search) -> None:
    status, out, _ = session_search("--profile", "icu", "--json", "-", stdin=b"caf\xe9 ok\n")
    assert status == 0
    tokens = json.loads(out)["tokens"]
    # The invalid byte decodes to U+FFFD (a separator); offsets index the decoded text.
    assert [(t["text"], t["start"], t["end"], t["byteStart"]) for t in tokens] == [
        ("caf", 0, 3, 0),
        ("ok", 5, 7, 7),
    ]


def test_lone_surrogates_print_as_replacement_characters(session_search) -> None:
    status, out, _ = session_search("--profile", "icu", "a\udc80b")
    assert status == 0
    assert "text:  a⟨U+DC80⟩b" in out.splitlines()
    status, out, _ = session_search("--profile", "icu", "--json", "x\ud800")
    assert status == 0
    assert json.loads(out)["tokens"][0]["source"] == "x"


def test_control_and_format_characters_are_made_visible(session_search) -> None:
    status, out, _ = session_search("--profile", "icu", "a\u00adb\nc")
    assert status == 0
    lines = out.splitlines()
    marked = lines.index("text:  a⟨U+00AD⟩b␊c")
    assert lines[marked + 1] == "       ^^^^^^^^^^ ~"


def test_empty_text(session_search) -> None:
    status, out, _ = session_search("--profile", "icu", "")
    assert status == 0
    assert out.splitlines()[-3:] == ["text:  (empty)", "", "0 tokens"]


def test_long_text_wraps_with_its_marks(session_search) -> None:
    status, out, _ = session_search("--profile", "icu", "word " * 30)
    assert status == 0
    lines = out.splitlines()
    first = lines.index("text:  " + ("word " * 20).rstrip())
    assert lines[first + 1] == "       " + "^^^^ ~~~~ " * 9 + "^^^^ ~~~~"
    assert lines[first + 2] == "       " + ("word " * 10).rstrip()
    assert lines[-1] == "30 tokens"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            ["--profile", "icu", "--remove-diacritics", "1", "x"],
            "--remove-diacritics does not apply to the icu profile",
        ),
        (
            ["--profile", "pg", "--tokenchars", "-", "x"],
            "--tokenchars does not apply to the pg profile",
        ),
        (
            ["--profile", "unicode61", "--locale", "ja", "x"],
            "--locale does not apply to the unicode61 profile",
        ),
        (
            ["--profile", "icu", "--locale", "not a locale", "x"],
            "icu profile: unknown locale 'not a locale' (use 'root' or e.g. 'ja', 'th')",
        ),
    ],
)
def test_misplaced_options_are_usage_errors(session_search, arguments, message) -> None:
    status, out, err = session_search(*arguments)
    assert (status, out) == (2, "")
    assert err == f"session-search: error: {message}\n"


def test_unknown_profile_is_rejected_by_the_parser(session_search) -> None:
    with pytest.raises(SystemExit) as raised:
        session_search("--profile", "lucene", "x")
    assert raised.value.code == 2


def test_default_profile_is_the_search_profile(session_search) -> None:
    require_module("engine.analysis.unicode61")
    status, out, _ = session_search("--json", "Café ǖ 中文字符测试")
    assert status == 0
    document = json.loads(out)
    assert (document["profile"], document["options"]) == ("unicode61", {"remove_diacritics": 2})
    assert [t["text"] for t in document["tokens"]] == ["cafe", "u", "中文字符测试"]
    status, out, _ = session_search("--remove-diacritics", "1", "--json", "ǖ")
    assert json.loads(out)["options"] == {"remove_diacritics": 1}
    assert [t["text"] for t in json.loads(out)["tokens"]] == ["ǖ"]


def test_pg_profile(session_search) -> None:
    require_module("engine.analysis.pg_profile")
    status, out, _ = session_search("--profile", "pg", "--json", "Æsir ﬁle ŒUVRE")
    assert status == 0
    assert [t["text"] for t in json.loads(out)["tokens"]] == ["aesir", "file", "oeuvre"]


def test_module_doctests_pass() -> None:
    # Plain `pytest` (the CI command) does not collect doctests from `engine/`.
    results = doctest.testmod(importlib.import_module("engine.cli.tokenize_command"))
    assert results.attempted > 0
    assert results.failed == 0


def test_text_starting_with_a_dash_after_double_dash(session_search) -> None:
    status, out, _ = session_search("--profile", "icu", "--json", "--", "-42 -x")
    assert status == 0
    assert [(t["text"], t["kind"]) for t in json.loads(out)["tokens"]] == [
        ("42", "number"),
        ("x", "word"),
    ]
