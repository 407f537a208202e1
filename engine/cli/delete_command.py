"""`session-search delete --store DIR SESSION_KEY`: delete a session with all its windows.

Owns: the `delete` command's arguments and output. Must not touch: how a backend deletes
(`BackendTransaction.delete_session`: the key's windows, their events, index rows and
index state go in one transaction, so a crash leaves all of them or none; behaviour.md
§8.4), how a store is opened (`engine.store.registry.open_store`, which refuses a path
it cannot use with one line naming it).

A key the store does not hold is an error (exit 2) naming it: nothing is deleted, and a
mistyped key is not taken for a deletion that happened. The output says how many windows
went (`--json`: `{"store", "sessionKey", "deleted"}`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from engine.cli.commands import add_command, add_store_argument, warn
from engine.cli.json_output import print_json
from engine.cli.output import open_output
from engine.errors import UnknownSession


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `delete` command."""
    parser = add_command(
        subparsers, "delete",
        description="Delete the session SESSION_KEY from the store at DIR: every window of "
                    "the key (the current one and the retained ones), their events, their "
                    "index rows and index state, in one transaction. Searches no longer "
                    "find any of its messages.",
        examples=["session-search delete --store demo agent:main:main",
                  "session-search delete --store demo --json agent:work:discord:general"],
    )
    add_store_argument(parser)
    parser.add_argument("session_key", metavar="SESSION_KEY",
                        help="the session key, e.g. agent:main:main")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(run=run_delete)


def run_delete(args: argparse.Namespace) -> int:
    """`delete`: remove the key's windows in one transaction and say how many."""
    from engine.store.registry import open_store

    backend = open_store(Path(args.store), "delete", writer=True, warn=warn)
    try:
        with backend.transaction() as transaction:
            deleted = transaction.delete_session(args.session_key)
        if not deleted:
            raise UnknownSession(f"no session key {args.session_key!r} in the store "
                                 f"{args.store}; nothing was deleted")
    finally:
        backend.close()
    if args.json:
        print_json({"store": str(args.store), "sessionKey": args.session_key,
                    "deleted": deleted})
    else:
        open_output(colour=args.color).line(f"deleted session {args.session_key}: {deleted} "
                           f"window{'' if deleted == 1 else 's'} with their events and "
                           "index rows")
    return 0
