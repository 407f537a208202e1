"""`session-search archive` and `restore`: move a session's windows out of search and back.

Owns: these two commands' arguments and outputs. Must not touch: what archiving does
(`engine.store.archives`: the flag, the rows that stay, why), search, storage.

* `archive --store DIR [--json] SESSION_KEY` — every window of the key leaves search (a
  cold archive): searches whose scope selects it count it in
  `archivedTranscriptsExcluded` instead;
* `restore --store DIR [--json] SESSION_KEY` — every window of the key is searchable
  again, at once (its index rows were kept): what opening a session does in the product.
  Search never restores by itself.

Both take the store's writer lock, print one summary line (`--json`: `sessionKey`,
`archived`, `windows`, `changed`), and are idempotent (a key already in the asked state
changes nothing, exit status 0). A key the store does not hold is refused (exit 2).
"""

from __future__ import annotations

import argparse

from engine.cli.commands import add_command, add_store_argument
from engine.cli.json_output import print_json


def run_archive(args: argparse.Namespace) -> int:
    """`session-search archive` or `restore` (`args.archived` says which)."""
    from engine.store.archives import archive_in_store

    outcome = archive_in_store(args.store, args.session_key, archived=args.archived)
    if args.json:
        print_json(outcome.to_json())
    else:
        print(outcome.summary())
    return 0


#: (command, archived, description, examples) of the two commands.
COMMAND_TEXTS = (
    ("archive", True,
     ("Archive a session: every window of SESSION_KEY leaves search (a cold archive) until "
     "`restore`; searches whose scope selects it count it in archivedTranscriptsExcluded. "
     "The transcripts and their index rows are kept. Takes the store's writer lock."),
     ["session-search archive --store demo agent:work:recall",
      "session-search archive --store demo --json agent:main:main"]),
    ("restore", False,
     ("Restore an archived session: every window of SESSION_KEY is searchable again at "
     "once, without a rebuild (its index rows were kept). This is what opening a session "
     "does in the product; search never restores by itself. Takes the store's writer lock."),
     ["session-search restore --store demo agent:work:recall",
      "session-search restore --store demo --json agent:work:recall"]),
)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `archive` and `restore` commands."""
    for name, archived, description, examples in COMMAND_TEXTS:
        parser = add_command(subparsers, name, description=description, examples=examples)
        add_store_argument(parser)
        parser.add_argument("--json", action="store_true", help="print JSON")
        parser.add_argument("session_key", metavar="SESSION_KEY",
                            help="the session whose windows move (e.g. agent:work:recall)")
        parser.set_defaults(run=run_archive, archived=archived)
