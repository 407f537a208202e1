"""The `session-search` command line (also `python -m engine`).

Owns: the argument parser, which command modules are loaded, and the mapping from
engine errors to exit statuses (2 for bad usage or input, 1 for other failures). Must
not touch: any search, storage or analysis logic; each command module only parses its
arguments, calls the engine and prints.

Start-up: the commands are listed in the light table `engine.cli.commands.COMMANDS`
(name, module, summary). Only the module of the command being run is imported and
registers its full parser; every other command is a stub that shows its summary in
`--help`. So `session-search --version` imports no command module and `search` imports
what a search needs, not the benchmark's charts or the importers. A module that adds
several commands may also offer `register_command(subparsers, name)`, which adds one:
then only the command being run gets its parser built (`search` does not build the
arguments of `explain`, `serve`, `reconcile` and `verify`, its module's other commands).

Adding a command: write `engine/cli/<name>_command.py` with a `register(subparsers)`
function that adds its parser with `engine.cli.commands.add_command` and sets
`run=<callable(args) -> int>` as a default, then add a row to `COMMANDS`. Every command
takes `--json`.

A command that needs a store adds `--store` with `engine.cli.commands.add_store_argument`:
without it, `main` takes `$SESSION_SEARCH_STORE` (`store_or_default`), and with neither
the command is refused (exit status 2) naming both.

An argument no command knows (`search --bogus`) is refused by the command's parser, with
the command's usage line, as a missing or invalid one is (argparse would give the
program's usage).

A Ctrl-C ends the program with `session-search: interrupted` and exit status 1 whenever
it comes once this module starts loading (while its own imports run, the command line is
read, or a command runs), never with a traceback. One that comes once the command has
ended (its work done and said, its status known) is ignored: the program's entry
(`program`, the console script's and `python -m engine`'s) stops listening for it before
the interpreter shuts down, where it would be printed as an exception ignored in
`threading._shutdown`.

A reader that closes standard output early (`session-search search ... | head -1`) ends
the command quietly with exit status 0: no traceback, no "Exception ignored" line.

No traceback for a problem with a path: the store path is checked by
`engine.store.registry.open_store` (a `StorePathError` names it); an `OSError` that
still reaches `main` is printed as one line naming its file (permission denied: exit
status 2, anything else: 1).
"""

from __future__ import annotations

import sys

try:  # a Ctrl-C while the program is still loading ends it as one during a command does
    import argparse
    import importlib
    import os
    import signal
    from collections.abc import Collection, Sequence

    from engine import __version__
    from engine.cli.commands import (
        COMMANDS,
        HelpFormatter,
        requested_command,
        store_or_default,
    )
    from engine.errors import EngineError
    from engine.gc_policy import use_bulk_work_policy
except KeyboardInterrupt:
    raise SystemExit("session-search: interrupted") from None

#: The modules that may register commands, in table order (tests narrow it to one).
COMMAND_MODULES: tuple[str, ...] = tuple(dict.fromkeys(entry.module for entry in COMMANDS))


def build_parser(commands: Collection[str] | None = None, *,
                 stubs: bool = True) -> argparse.ArgumentParser:
    """The parser; the commands named in `commands` (default: all) get their full parser,
    the others a stub with their summary (enough for `--help`, never run). `stubs=False`
    leaves the stubs out: a command line that names a known command never shows them,
    and each stub is a parser made for nothing (`main` makes them only when no known
    command was named: for `--help`, `-V` or a mistyped command's error)."""
    parser = argparse.ArgumentParser(
        prog="session-search",
        description="Search and page AI-agent session transcripts; compare backends.",
        formatter_class=HelpFormatter,
    )
    parser.add_argument("-V", "--version", action="version",
                        version=f"session-search {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    available = [entry for entry in COMMANDS if entry.module in COMMAND_MODULES]
    wanted = [entry for entry in available if commands is None or entry.name in commands]
    for module_name in dict.fromkeys(entry.module for entry in wanted):
        module = importlib.import_module(module_name)
        one_command = getattr(module, "register_command", None)
        if commands is None or one_command is None:  # all of the module's commands
            module.register(subparsers)
        else:  # a module of several commands builds only those named
            for entry in wanted:
                if entry.module == module_name:
                    one_command(subparsers, entry.name)
    for entry in available if stubs else ():
        if entry.name not in subparsers.choices:
            subparsers.add_parser(entry.name, help=entry.summary, add_help=False,
                                  formatter_class=HelpFormatter)
    return parser


def command_parser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    """The parser of command `name` under the program's `parser`."""
    subparsers = next(action for action in parser._actions
                      if isinstance(action, argparse._SubParsersAction))
    return subparsers.choices[name]


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return its exit status instead of raising.

    The process's garbage-collector policy is set here, at the program's edge
    (`engine.gc_policy`): library code never changes it.
    """
    use_bulk_work_policy()
    try:
        try:
            return _run(list(sys.argv[1:] if argv is None else argv))
        finally:  # what is still buffered goes now, while a closed pipe can be caught
            sys.stdout.flush()
    except BrokenPipeError:
        return _closed_pipe()
    except KeyboardInterrupt:  # a Ctrl-C while the command line is still being read
        print("session-search: interrupted", file=sys.stderr)
        return 1


def program() -> int:
    """The program's entry (the console script, `python -m engine`): `main` on the
    process's arguments; then a Ctrl-C no longer interrupts (the command has ended, and
    only the interpreter's shutdown is left), so a late one prints nothing."""
    status = main()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the program's process only, never a caller's
    return status


def _run(arguments: list[str]) -> int:
    """Parse the command line and run the command; errors become one line and a status."""
    command = requested_command(arguments)
    parser = build_parser(() if command is None else (command,), stubs=command is None)
    args, unknown = parser.parse_known_args(arguments)
    if unknown:  # told by the command's parser: its usage, not the program's
        command_parser(parser, args.command).error(
            f"unrecognized arguments: {' '.join(unknown)}")
    try:
        if getattr(args, "store_needed", False):
            args.store = store_or_default(args.store, args.command)
        if getattr(args, "dsn", None):  # a store command's --dsn, for this command only
            from engine.store.servers import given_dsn_for

            with given_dsn_for(args.dsn):
                return int(args.run(args) or 0)
        return int(args.run(args) or 0)
    except EngineError as error:
        return _fail(str(error), error.exit_status)
    except KeyboardInterrupt:
        print("session-search: interrupted", file=sys.stderr)
        return 1
    except BrokenPipeError:  # an OSError, but no failure: `main` ends it quietly
        raise
    except PermissionError as error:
        return _fail(f"{_where(error)}: permission denied", 2)
    except OSError as error:
        return _fail(f"{_where(error)}: {error.strerror or error}", 1)


def _closed_pipe() -> int:
    """Standard output was closed by its reader (`session-search ... | head -1`): that
    reader has what it wanted, so the command ends quietly with status 0. Standard
    output is pointed at the null device, so that the interpreter's last flush at exit
    has nowhere to fail (no "Exception ignored" line on standard error)."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError, AttributeError):  # not a real file (a test's buffer)
        pass
    return 0


def _fail(message: str, status: int) -> int:
    print(f"session-search: error: {message}", file=sys.stderr)
    return status


def _where(error: OSError) -> str:
    return str(error.filename) if error.filename is not None else "session-search"
