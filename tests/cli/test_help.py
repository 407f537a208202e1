"""Every command's `--help`: a description, its options, and examples that parse.

The help is rendered in-process (argparse exits after printing it). An example is a
line under `examples:` that runs `session-search COMMAND ...`; it must parse with the
real parser (after shell-style splitting), so an example cannot name an option that
does not exist.
"""

from __future__ import annotations

import re
import shlex

import pytest

from engine.cli import build_parser, main
from engine.cli.commands import COMMANDS


def help_of(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit) as exit:
        main([*argv, "--help"])
    assert exit.value.code == 0
    return capsys.readouterr().out


def examples_of(text: str) -> list[str]:
    """The example command lines under `examples:`.

    >>> examples_of("usage: x\\n\\nexamples:\\n  session-search a\\n  session-search b\\n")
    ['session-search a', 'session-search b']
    """
    _, _, tail = text.partition("\nexamples:\n")
    return [line.strip() for line in tail.splitlines() if line.startswith("  ")]


def without_assignments(command: str) -> str:
    """`command` without the `NAME=value` environment assignments it starts with.

    >>> without_assignments("A=1 B_2=x session-search search cafe")
    'session-search search cafe'
    >>> without_assignments("session-search search A=1")
    'session-search search A=1'
    """
    return re.sub(r"^(?:[A-Z_][A-Z0-9_]*=\S*\s+)+", "", command.strip())


def test_the_program_help_lists_every_command(capsys) -> None:
    text = help_of(capsys)
    for entry in COMMANDS:
        assert f"    {entry.name}" in text and entry.summary.split()[0] in text


@pytest.mark.parametrize("name", [entry.name for entry in COMMANDS])
def test_every_command_has_a_description(capsys, name: str) -> None:
    text = help_of(capsys, name)
    usage, description, *_ = text.split("\n\n")
    assert usage.startswith(f"usage: session-search {name}")
    assert len(description.split()) >= 8 and description.rstrip().endswith(".")


@pytest.mark.parametrize("name", [entry.name for entry in COMMANDS])
def test_every_command_has_an_example(capsys, name: str) -> None:
    examples = examples_of(help_of(capsys, name))
    assert examples
    parser = build_parser((name,))
    for example in examples:
        # the session-search stage of a pipeline (`echo ... | session-search serve`,
        # `session-search search --jsonl ... | jq ...`), after the environment
        # assignments a shell line may start with (`SESSION_SEARCH_PG_DSN=... session-search`)
        stage = next(part for part in map(without_assignments, example.split(" | "))
                     if part.startswith(("session-search", "eval")))
        words = shlex.split(stage.split(" > ")[0])
        if words[0] == "eval":  # eval "$(session-search ...)"
            words = shlex.split(words[1].removeprefix("$(").removesuffix(")"))
        assert words[:2] == ["session-search", name], example
        arguments = parser.parse_args(words[1:])  # exits (fails the test) when it does not parse
        assert arguments.command == name
