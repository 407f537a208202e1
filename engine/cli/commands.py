"""The light table of commands: each command's name, its module, and its `--help` line.

Owns: which commands exist, in the order `--help` lists them, and which module registers
each one. Must not touch: any command's arguments or work (its module's `register`), and
it imports nothing of the engine, so that `session-search --version`, `--help` and a
command's start-up do not load the modules of the other commands (the benchmark's charts,
the importers, the RPC server).

A command module's `register(subparsers)` adds its commands with `add_command`, which
takes the summary from this table, so the summary is written once, and writes the
command's examples under its `--help` (every command has a description and at least
one example; `tests/cli/test_help.py` checks them).

`CommandEntry` is a NamedTuple, not a frozen dataclass: every command's start-up builds
this table, and a NamedTuple's class costs a fraction of a frozen dataclass's to make.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any, NamedTuple


class CommandEntry(NamedTuple):
    """One command: its name, the module whose `register` adds it, its one-line summary."""

    name: str
    module: str
    summary: str


COMMANDS: tuple[CommandEntry, ...] = (
    CommandEntry("import", "engine.cli.store_commands",
                 "import transcripts (corpus, flat messages, OpenClaw state) into a store"),
    CommandEntry("watch", "engine.cli.watch_command",
                 "keep a store in step with an OpenClaw state folder until interrupted"),
    CommandEntry("stats", "engine.cli.store_commands",
                 "count a store's agents, sessions, windows, events and bytes"),
    CommandEntry("demo", "engine.cli.demo_command",
                 "import the demo corpus into every backend, search it, compare"),
    CommandEntry("tokenize", "engine.cli.tokenize_command",
                 "show the tokens an analysis profile makes of a text"),
    CommandEntry("search", "engine.cli.search_commands", "search messages in a store"),
    CommandEntry("history", "engine.cli.history_command",
                 "show a session's history: its tail, or the rows around a message"),
    CommandEntry("explain", "engine.cli.search_commands",
                 "show why each hit ranks where it does (reference stores)"),
    CommandEntry("explore", "engine.cli.explore_command",
                 "a local web page that shows why every hit is a hit (read-only)"),
    CommandEntry("call", "engine.cli.tool_commands",
                 "run an agent tool (sessions_search) once as a requester session"),
    CommandEntry("ui-search", "engine.cli.ui_search_command",
                 "search as the Control UI's command palette: titles, then messages"),
    CommandEntry("serve", "engine.cli.search_commands",
                 "JSON-RPC 2.0 search, the agent tools and history over stdin/stdout"),
    CommandEntry("mcp", "engine.cli.mcp_command",
                 "serve sessions_search and sessions_history to an MCP client over stdio"),
    CommandEntry("conform", "engine.cli.conform_command",
                 "run the specification's conformance cases against a backend (or a program)"),
    CommandEntry("diff", "engine.cli.diff_command",
                 "compare two backends on generated searches; shrink a difference to a case"),
    CommandEntry("reconcile", "engine.cli.search_commands",
                 "reindex windows that need it (imports, rewinds)"),
    CommandEntry("compact", "engine.cli.compact_command",
                 "reclaim the space deleted sessions still take (log compaction, VACUUM)"),
    CommandEntry("archive", "engine.cli.archive_commands",
                 "leave a session's windows out of search (a cold archive)"),
    CommandEntry("restore", "engine.cli.archive_commands",
                 "make an archived session's windows searchable again"),
    CommandEntry("verify", "engine.cli.search_commands",
                 "rebuild the index from transcripts in memory and report differences"),
    CommandEntry("delete", "engine.cli.delete_command",
                 "delete a session: every window of its key, with events and index rows"),
    CommandEntry("dump", "engine.cli.dump_command",
                 "show a store's files, or every record of one file, in readable form"),
    CommandEntry("bench", "engine.cli.bench_command",
                 "benchmark the backends on a generated corpus"),
    CommandEntry("completion", "engine.cli.completion_command",
                 "print a bash or zsh completion script"),
)

COMMANDS_BY_NAME: dict[str, CommandEntry] = {entry.name: entry for entry in COMMANDS}


class HelpFormatter(argparse.HelpFormatter):
    """argparse's help formatter, sized to the terminal without importing `shutil`.

    argparse makes a formatter for every `add_argument` call, and the stock one imports
    `shutil` (which loads the compression modules) to ask for the terminal's width: a few
    milliseconds of every start-up that no command needs. The width rule is shutil's:
    `$COLUMNS`, else the terminal of standard output, else 80 columns.
    """

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position,
                         width if width is not None else terminal_columns() - 2)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        """Reflow each paragraph of a description or epilog, except a paragraph with
        indented lines (the examples), which is kept line for line."""
        paragraphs = []
        for paragraph in text.split("\n\n"):
            if any(line.startswith("  ") for line in paragraph.splitlines()):
                paragraphs.append("\n".join(indent + line for line in paragraph.splitlines()))
            else:
                paragraphs.append(super()._fill_text(paragraph, width, indent))
        return "\n\n".join(paragraphs)


def warn(message: str) -> None:
    """One warning line on standard error (the store still answers; the exit status is
    the command's own): what a command says of a folder its store ignores."""
    print(f"session-search: warning: {message}", file=sys.stderr)


def note(message: str) -> None:
    """One note line on standard error: what the reader of JSON Lines on standard
    output should still know (a truncated result, how to page on)."""
    print(f"session-search: note: {message}", file=sys.stderr)


def add_json_arguments(parser: argparse.ArgumentParser, *, records: str | None = None,
                       help: str = "print JSON") -> None:
    """`--json` (one JSON document), and for a command that prints many `records`,
    `--jsonl` (JSON Lines: one JSON object per record and line, for `jq` and
    `sqlite-utils insert`); the two exclude each other."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--json", action="store_true", help=help)
    if records is not None:
        group.add_argument("--jsonl", action="store_true",
                           help=f"print {records} as JSON Lines: one JSON object per line")


def terminal_columns() -> int:
    """The width of the terminal: `$COLUMNS`, else standard output's terminal, else 80."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns > 0:
        return columns
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80
    except (AttributeError, ValueError, OSError):
        return 80


#: The values of every command's `--color` (`engine.cli.output` reads them).
COLOR_CHOICES = ("auto", "always", "never")


def add_command(subparsers: Any, name: str, *, description: str, examples: Sequence[str],
                **options: Any) -> argparse.ArgumentParser:
    """Add command `name`'s parser, with its summary from the table as its `help`, its
    `description` above the options and its `examples` (command lines) below them, and
    the `--color` every command takes."""
    if not examples:
        raise ValueError(f"command {name!r} needs at least one example")
    options.setdefault("formatter_class", HelpFormatter)
    epilog = "examples:\n" + "\n".join(f"  {example}" for example in examples)
    parser = subparsers.add_parser(name, help=COMMANDS_BY_NAME[name].summary,
                                   description=description, epilog=epilog, **options)
    parser.add_argument("--color", choices=COLOR_CHOICES, default="auto",
                        help="colour matched words: auto (on a terminal, unless NO_COLOR is "
                             "set), always (also in a pipe, whatever NO_COLOR says), never")
    return parser


#: The environment variable that names the store of a command given no `--store`.
STORE_VARIABLE = "SESSION_SEARCH_STORE"


def add_store_argument(parser: argparse.ArgumentParser,
                       help: str = "the store folder") -> None:
    """`--store DIR`, for a command that needs a store: without it the store is
    `$SESSION_SEARCH_STORE` (`main` fills it in through `store_or_default`; an explicit
    `--store` wins), and with neither the command is refused naming both."""
    parser.add_argument("--store", metavar="DIR", default=None,
                        help=f"{help} (default: ${STORE_VARIABLE})")
    parser.add_argument("--dsn", metavar="DSN", default=None,
                        help="the PostgreSQL server of a postgres store (default: "
                             "$SESSION_SEARCH_PG_DSN, then the server the store names)")
    parser.set_defaults(store_needed=True)


def store_or_default(store: str | None, command: str) -> str:
    """The store a command uses: `store` (its `--store`) when given, else a non-empty
    `$SESSION_SEARCH_STORE`, else a `UsageError` naming both.

    >>> store_or_default("mine", "search")
    'mine'
    """
    if store is not None:
        return store
    from_environment = os.environ.get(STORE_VARIABLE, "")
    if from_environment:
        return from_environment
    from engine.errors import UsageError

    raise UsageError(f"{command} needs a store: pass --store DIR or set {STORE_VARIABLE}=DIR")


def add_read_only_arguments(parser: argparse.ArgumentParser, backends: Sequence[str]) -> None:
    """`--backend NAME` (the store must have it) and `--read-only` (also open a state
    folder OpenClaw wrote, and never write), for the commands that only read a store."""
    parser.add_argument("--backend", choices=tuple(backends), default=None,
                        help="the backend the store must have (an OpenClaw state: sqlite)")
    parser.add_argument("--read-only", action="store_true",
                        help="never write; DIR may also be a state folder the real OpenClaw "
                             "wrote (with --backend sqlite), read without changing a byte")


def add_new_store_arguments(parser: argparse.ArgumentParser, backends: Sequence[str],
                            default: str) -> None:
    """`--backend NAME` (of a store made here; an existing one must match) and
    `--create` (also make DIR's missing parents), for the commands that write a store."""
    parser.add_argument("--backend", choices=tuple(backends), default=None,
                        help=f"backend of a new store (default: {default}; an existing "
                             "store must match)")
    parser.add_argument("--create", action="store_true",
                        help="also create DIR's missing parent folders (without it a "
                             "missing parent is an error)")


def requested_command(argv: list[str]) -> str | None:
    """The command a command line names: its first word that is not an option, when it
    is a known command (the top-level options take no value).

    >>> requested_command(["--version"]), requested_command(["search", "--store", "s", "q"])
    (None, 'search')
    >>> requested_command(["nonsense"]) is None
    True
    """
    for word in argv:
        if not word.startswith("-"):
            return word if word in COMMANDS_BY_NAME else None
    return None
