"""Start-up: `main` builds only the parser of the command a command line names, also
within a module that adds several (`register_command`), and that parser is the one the
full parser holds for it (the full build is the oracle)."""

from __future__ import annotations

import argparse
import importlib

import pytest

from engine.cli import build_parser, command_parser
from engine.cli.commands import COMMANDS, COMMANDS_BY_NAME


def subcommands(parser: argparse.ArgumentParser) -> list[str]:
    """The command names `parser` has a parser for (stubs included)."""
    action = next(action for action in parser._actions
                  if isinstance(action, argparse._SubParsersAction))
    return list(action.choices)


@pytest.mark.parametrize("name", [entry.name for entry in COMMANDS])
def test_one_command_alone_is_the_full_parsers_command(name: str) -> None:
    alone = build_parser((name,), stubs=False)
    module = importlib.import_module(COMMANDS_BY_NAME[name].module)
    if hasattr(module, "register_command"):  # a module of several builds the one named
        assert subcommands(alone) == [name]
    else:  # a module's `register` adds all of its commands
        assert name in subcommands(alone)
    full = build_parser()
    assert command_parser(alone, name).format_help() == command_parser(full, name).format_help()
    assert command_parser(alone, name).get_default("run") is \
        command_parser(full, name).get_default("run")


def test_search_builds_none_of_its_modules_other_commands(monkeypatch) -> None:
    from engine.cli import search_commands

    built = []
    for name, register in search_commands.COMMAND_REGISTERS.items():
        monkeypatch.setitem(search_commands.COMMAND_REGISTERS, name,
                            lambda subparsers, name=name, register=register: (
                                built.append(name), register(subparsers)))
    args = build_parser(("search",), stubs=False).parse_args(["search", "--store", "s", "q"])
    assert built == ["search"]
    assert (args.command, args.query, args.store) == ("search", ["q"], "s")


def test_help_still_lists_every_command() -> None:
    assert subcommands(build_parser(())) == [entry.name for entry in COMMANDS]
    assert sorted(subcommands(build_parser(("search",)))) == sorted(
        entry.name for entry in COMMANDS)
