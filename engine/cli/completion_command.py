"""`session-search completion bash|zsh`: print a shell completion script.

Owns: the `completion` command. Must not touch: any other command's arguments (the
script is generated from the real parser of every command, so it never lists an option
that does not exist or misses a new one).

The script is written by shtab from the argparse parser; folders (`--store DIR`,
`--keep DIR`, ...) complete as folders and `SOURCE`/`FILE` arguments as files. Install it
with, for bash, `session-search completion bash > ~/.local/share/bash-completion/completions/session-search`,
and for zsh, `session-search completion zsh > "${fpath[1]}/_session-search"`.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator

from engine.cli.commands import add_command

SHELLS = ("bash", "zsh")
#: How an argument's metavar says what it names: a folder or a file.
FOLDER_METAVARS = frozenset({"DIR"})
FILE_METAVARS = frozenset({"SOURCE", "FILE"})


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `completion` command."""
    parser = add_command(
        subparsers, "completion",
        description="Print a completion script for SHELL, generated from every command's "
                    "arguments: commands, options, choices, folders for DIR and files for "
                    "SOURCE and FILE.",
        examples=[("session-search completion bash > "
                  "~/.local/share/bash-completion/completions/session-search"),
                  'session-search completion zsh > "${fpath[1]}/_session-search"',
                  'eval "$(session-search completion bash)"'],
    )
    parser.add_argument("shell", choices=SHELLS, metavar="SHELL",
                        help=f"the shell: {', '.join(SHELLS)}")
    parser.add_argument("--json", action="store_true",
                        help='print {"shell", "script"} as one JSON document')
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print the script for `args.shell`."""
    import shtab

    from engine.cli import build_parser

    parser = build_parser()
    for action in _actions(parser):
        if action.metavar in FOLDER_METAVARS:
            action.complete = shtab.DIRECTORY  # type: ignore[attr-defined]
        elif action.metavar in FILE_METAVARS:
            action.complete = shtab.FILE  # type: ignore[attr-defined]
    script = shtab.complete(parser, shell=args.shell)
    if args.json:
        from engine.cli.json_output import print_json

        print_json({"shell": args.shell, "script": script})
    else:
        print(script, end="")
    return 0


def _actions(parser: argparse.ArgumentParser) -> Iterator[argparse.Action]:
    """Every argument of `parser` and of its subcommands."""
    for action in parser._actions:
        yield action
        if isinstance(action, argparse._SubParsersAction):
            for subparser in action.choices.values():
                yield from _actions(subparser)
