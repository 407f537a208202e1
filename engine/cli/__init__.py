"""The `session-search` command line (also `python -m engine`).

Owns: the argument parser, the list of command modules, and the mapping from engine
errors to exit statuses (2 for bad usage or input, 1 for other failures). Must not touch:
any search, storage or analysis logic; each command module only parses its arguments,
calls the engine and prints.

Adding a command: write `engine/cli/<name>_command.py` with a `register(subparsers)`
function that adds its parser and sets `run=<callable(args) -> int>` as a default, then
add the module's name to `COMMAND_MODULES` below. Every command takes `--json`.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from engine import __version__
from engine.errors import EngineError
from engine.gc_policy import use_bulk_work_policy

#: Command modules, in the order their commands appear in `--help`.
COMMAND_MODULES: tuple[str, ...] = (
    "engine.cli.store_commands",
    "engine.cli.demo_command",
    "engine.cli.tokenize_command",
    "engine.cli.search_commands",
    "engine.cli.dump_command",
    "engine.cli.bench_command",
)


def build_parser() -> argparse.ArgumentParser:
    """Build the full parser with every registered command."""
    parser = argparse.ArgumentParser(
        prog="session-search",
        description="Search and page AI-agent session transcripts; compare backends.",
    )
    parser.add_argument("--version", action="version", version=f"session-search {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return its exit status instead of raising.

    The process's garbage-collector policy is set here, at the program's edge
    (`engine.gc_policy`): library code never changes it.
    """
    use_bulk_work_policy()
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except EngineError as error:
        print(f"session-search: error: {error}", file=sys.stderr)
        return error.exit_status
    except KeyboardInterrupt:
        print("session-search: interrupted", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 1
