"""The `search`, `explain`, `serve`, `reconcile` and `verify` commands.

Owns: their arguments and how results are printed. Must not touch: search, storage,
index or protocol logic (they call the backend through
`engine.store.registry.open_backend`, so `search`, `serve` and `reconcile` work for
every backend; `explain` needs an `Explainable` backend; `verify` checks every backend's
partitions, `engine.diagnostics.verify`).

Session scope on the command line (a decision for CLI users, who own the store they
point at): with no `--agent` and no `--session-key`, `search` looks at every session in
the store (`sessionKeys: []`), like `--all-sessions`. `--agent ID` alone selects that
agent's partition, its namespace (plus `global` and `unknown` for the default agent
`main`, whose partition holds them: the kernel's omitted-filter rule inside one agent's
database); `--session-key` (repeatable) selects exactly those keys. Searches over keys or
every session merge the partitions' answers (`engine.store.fan_out`). Refused, as
contradictions: `--all-sessions` with `--session-key` or with `--agent`, and `--agent ID`
with a key of another agent. `--limit` must be 1..25 (the query policy's range; a limit
outside it is refused rather than clamped).

Stores are opened through `engine.store.registry.open_store`, which refuses a path
the command cannot use with one line naming it (exit 2). `search` and `explain` take
`--backend NAME` (the store must have it) and `--read-only`: `search` never writes
anyway, and with `--read-only` DIR may also be a state folder the real OpenClaw wrote,
searched through its agents' databases without changing a byte of it (`explain` then
refuses, as for every SQLite store). Each command imports what it
runs when it runs (the RPC server for `serve`, the verifier for `verify`), so `search`
starts without them.

Output: `search --jsonl` prints one hit a line (JSON Lines), and the notices of the
readable view (truncated, indexing, archived windows) as notes on standard error; a
search without hits says why when its query's words do (`engine.inspection.no_hits`),
under "no hits", or as notes on standard error with `--json` and `--jsonl` (their wording:
`engine.cli.search_notices`, which loads none of the readable view's modules);
`--json` prints the kernel result, a whole-millisecond timestamp as an integer
(`engine.cli.json_output`); the readable view of a search is `engine.cli.search_view`,
of an explanation `engine.cli.explain_view`, both imported only when they are shown.

`serve` answers JSON-RPC 2.0 requests on stdin/stdout, one JSON object per line, after
one line on standard error saying it is ready (`--quiet`: none); the protocol (methods,
params, results, error codes) is `docs/protocol.md`, and the server is `engine.rpc`
(`--json` is accepted, as every command accepts it: every answer is JSON already). `reconcile` runs `engine.store.maintenance.reconcile_store`, with a
progress bar on a terminal (`--quiet`: no bar and no summary line).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Collection, Sequence
from functools import partial
from typing import TYPE_CHECKING

from engine import MAX_LIMIT
from engine.cli.commands import (
    STORE_VARIABLE,
    add_command,
    add_json_arguments,
    add_read_only_arguments,
    add_store_argument,
    note,
    warn,
)
from engine.cli.json_output import print_json, print_json_lines
from engine.errors import UsageError
from engine.model import MATCH_MODES, ORDERS, SEARCHABLE_ROLES, SearchRequest, agent_id_of
from engine.store.registry import BACKEND_NAMES, open_store

if TYPE_CHECKING:  # the partitioned store is loaded when a store is opened
    from engine.store.maintenance import ReconcileOutcome
    from engine.store.partitioned import PartitionedStore

#: The range of `--limit` (the query policy's `clamp_limit` range, checked here instead).
LIMIT_RANGE = range(1, MAX_LIMIT + 1)

# ----- shared arguments ---------------------------------------------------------------


def _add_store(parser: argparse.ArgumentParser, records: str | None = None) -> None:
    add_store_argument(parser)
    add_json_arguments(parser, records=records)


def _add_query_arguments(parser: argparse.ArgumentParser, records: str | None = None) -> None:
    _add_store(parser, records)
    add_read_only_arguments(parser, BACKEND_NAMES)
    parser.add_argument("--agent", metavar="ID", help="search this agent's partition (main's holds global, unknown)")
    parser.add_argument(
        "--session-key", action="append", metavar="KEY", dest="session_keys",
        help="search only this session key (repeatable)",
    )
    parser.add_argument(
        "--all-sessions", action="store_true",
        help="search every session in the store (the default without --agent/--session-key)",
    )
    parser.add_argument("--session-id", metavar="ID", help="only this session window")
    parser.add_argument("--role", choices=SEARCHABLE_ROLES)
    parser.add_argument("--match", choices=MATCH_MODES, default="exact")
    parser.add_argument("--order", choices=ORDERS, default="relevance")
    parser.add_argument("--limit", type=int, default=None,
                        help=f"{LIMIT_RANGE.start}..{LIMIT_RANGE.stop - 1} (default 10)")
    parser.add_argument("query", nargs="+", metavar="QUERY", help="words to find (joined by spaces)")


def request_from_args(args: argparse.Namespace) -> SearchRequest:
    """The `SearchRequest` a command line asks for (scope rule in the module docstring)."""
    check_scope(args.agent, args.session_keys or (), args.all_sessions)
    check_limit(args.limit)
    if args.session_keys:
        session_keys: tuple[str, ...] | None = tuple(args.session_keys)
    elif args.agent is not None and not args.all_sessions:
        session_keys = None
    else:
        session_keys = ()
    return SearchRequest(
        query=" ".join(args.query),
        agent_id=args.agent,
        limit=args.limit,
        session_keys=session_keys,
        session_id=args.session_id,
        role=args.role,
        match=args.match,
        order=args.order,
    )


def check_scope(agent: str | None, session_keys: Sequence[str], all_sessions: bool) -> None:
    """Refuse scope options that contradict each other (`UsageError`).

    >>> check_scope("main", ["agent:main:main", "global"], False)
    >>> check_scope("main", ["agent:work:main"], False)
    Traceback (most recent call last):
    ...
    engine.errors.UsageError: --session-key agent:work:main belongs to agent 'work', not to --agent main
    """
    if all_sessions and session_keys:
        raise UsageError("--all-sessions cannot be combined with --session-key")
    if all_sessions and agent is not None:
        raise UsageError("--all-sessions cannot be combined with --agent (--agent searches "
                         "one agent's namespace, --all-sessions every session)")
    if agent is None:
        return
    for key in session_keys:
        owner = agent_id_of(key)
        if owner is not None and owner != agent:
            raise UsageError(f"--session-key {key} belongs to agent {owner!r}, "
                             f"not to --agent {agent}")


def check_limit(limit: int | None) -> None:
    """Refuse a `--limit` outside 1..25 (`UsageError` naming the range).

    >>> check_limit(25)
    >>> check_limit(0)
    Traceback (most recent call last):
    ...
    engine.errors.UsageError: --limit must be between 1 and 25 (got 0)
    """
    if limit is not None and limit not in LIMIT_RANGE:
        raise UsageError(f"--limit must be between {LIMIT_RANGE.start} and "
                         f"{LIMIT_RANGE.stop - 1} (got {limit})")


# ----- search -------------------------------------------------------------------------

def run_search(args: argparse.Namespace) -> int:
    """`session-search search`."""
    request = request_from_args(args)
    backend = open_store(args.store, "search", backend=args.backend, read_only=args.read_only,
                         warn=warn)
    try:
        result = backend.search(request)
    finally:
        backend.close()
    if args.json or args.jsonl:  # what the readable view would add: standard error
        if args.json:
            print_json(result.to_json())
        else:
            print_json_lines(hit.to_json() for hit in result.hits)
        if not result.hits or args.jsonl:
            # Only without hits or with --jsonl: a JSON search with hits loads none of it.
            from engine.cli.search_notices import miss_reasons, result_notices

            for line in (*miss_reasons(result, request),
                         *(result_notices(result, request.limit) if args.jsonl else ())):
                note(line)
    else:  # the readable view (and rich, on a terminal) only when it is shown
        from engine.cli.output import open_output
        from engine.cli.search_view import print_result

        print_result(open_output(colour=args.color), result, request)
    return 0


# ----- explain ------------------------------------------------------------------------


def run_explain(args: argparse.Namespace) -> int:
    """`session-search explain` (reference stores only)."""
    from engine import Explainable

    request = request_from_args(args)
    backend = open_store(args.store, "explain", backend=args.backend, read_only=args.read_only,
                         warn=warn)
    try:
        if not isinstance(backend, Explainable):
            raise UsageError(f"explain needs a reference store; this one uses {backend.name!r}")
        explanation = backend.explain(request)
    finally:
        backend.close()
    if args.json:
        print_json(explanation.to_json())
        return 0
    from engine.cli.explain_view import print_explanation
    from engine.cli.output import open_output

    print_explanation(open_output(colour=args.color), explanation, request)
    return 0


# ----- serve --------------------------------------------------------------------------


def run_serve(args: argparse.Namespace) -> int:
    """`session-search serve`: the store of `--store` (else `$SESSION_SEARCH_STORE`), or,
    with neither, a scratch store speaking the conformance set-up methods."""
    from engine.agent_tools.tool_config import ToolConfig, load_tool_config
    from engine.cli.tool_commands import with_link_base
    from engine.rpc.methods import METHODS, RpcContext
    from engine.rpc.server import serve_stdio

    config = with_link_base(load_tool_config(args.config) if args.config else ToolConfig(),
                            args.session_link_base)
    args.store = args.store or os.environ.get(STORE_VARIABLE) or None
    if args.store is None:  # a scratch store, with the conformance set-up methods
        from engine.conformance.scratch import serve_scratch

        serve_scratch(args.backend or "reference", config,
                      ready=None if args.quiet else partial(print, file=sys.stderr, flush=True))
        return 0
    backend = open_store(args.store, "serve", backend=args.backend, warn=warn, pooled=True)
    try:
        if not args.quiet:
            print(ready_line(args.store, backend.name, METHODS), file=sys.stderr, flush=True)
        serve_stdio(RpcContext(backend, tool_config=config))
    finally:
        backend.close()
    return 0


def ready_line(store: str, backend_name: str, methods: Collection[str]) -> str:
    """What `serve` says on standard error once the store is open and requests are read.

    >>> ready_line("demo", "reference", ["sessions.search"])
    'session-search: serving demo (backend reference) over JSON-RPC 2.0, one request per line on standard input (methods: sessions.search); end the input to stop'
    """
    return (f"session-search: serving {store} (backend {backend_name}) over JSON-RPC 2.0, "
            f"one request per line on standard input (methods: {', '.join(methods)}); "
            "end the input to stop")


# ----- reconcile and verify -----------------------------------------------------------


def run_reconcile(args: argparse.Namespace) -> int:
    """`session-search reconcile`: rebuild windows that need it (writer)."""
    from engine.cli.progress_display import ProgressDisplay
    from engine.store.maintenance import reconcile_store

    started = time.perf_counter()
    with ProgressDisplay.for_command(args.quiet) as progress:
        outcome = reconcile_store(args.store, progress.steps("reconcile"))
    seconds = time.perf_counter() - started
    if args.json:
        print_json(outcome.to_json())
    elif not args.quiet:
        print(reconcile_summary(outcome, seconds))
    return 0


def reconcile_summary(outcome: ReconcileOutcome, seconds: float) -> str:
    """The one line `reconcile` prints: windows rebuilt, their rows, orphans, seconds.

    >>> from engine.store.maintenance import ReconcileOutcome
    >>> reconcile_summary(ReconcileOutcome(3, False, rows=41, orphans=1), 0.25)
    'reconciled 3 window(s), 41 row(s), 1 orphaned window(s) swept in 0.25 s; indexing complete'
    """
    return (f"reconciled {outcome.reconciled} window(s), {outcome.rows} row(s), "
            f"{outcome.orphans} orphaned window(s) swept in {seconds:.3g} s; indexing "
            f"{'still needed' if outcome.indexing else 'complete'}")


def open_verified_store(store: str, *, writer: bool, backend: str | None = None,
                        read_only: bool = False) -> PartitionedStore:
    """The store `verify` checks, opened even when a log lost committed transactions
    (`read_only`: also a state folder OpenClaw wrote)."""
    return open_store(store, "verify", writer=writer, accept_lost_commits=True,
                      backend=backend, read_only=read_only)


def run_verify(args: argparse.Namespace) -> int:
    """`session-search verify`: report what is wrong with each partition's files
    (committed transactions missing from the log, a checkpoint that disagrees with it,
    damage), rebuild each index in memory and compare; exit 1 on any problem. `--repair`
    first drops what cannot be recovered (saying what) and rebuilds the indexes, then
    verifies."""
    from engine.diagnostics.verify import repair_store, verify_store

    repairs: dict[str, list[str]] = {}
    if args.repair and args.read_only:
        raise UsageError("--repair writes to the store; it cannot be combined with --read-only")
    if args.repair:
        writer = open_verified_store(args.store, writer=True, backend=args.backend)
        try:
            repairs = repair_store(writer)
        finally:
            writer.close()
    backend = open_verified_store(args.store, writer=False, backend=args.backend,
                                  read_only=args.read_only)
    try:
        report = verify_store(backend, repairs=repairs)
    finally:
        backend.close()
    if args.json:
        print_json(report.to_json())
    else:
        print("\n".join(report.lines()))
    return 0 if report.ok else 1


# ----- registration -------------------------------------------------------------------


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the five commands."""
    for name in COMMAND_REGISTERS:
        register_command(subparsers, name)


def register_command(subparsers: argparse._SubParsersAction, name: str) -> None:
    """Add command `name` alone (`engine.cli.build_parser` builds only the command a
    command line names: a search need not build the four others' arguments)."""
    COMMAND_REGISTERS[name](subparsers)


def _register_search(subparsers: argparse._SubParsersAction) -> None:
    search = add_command(
        subparsers, "search",
        description="Search the user and assistant messages of the store at DIR: every "
        "word of QUERY must occur in the message (literal words, no operators; a word with "
        "punctuation is a phrase), best bm25 first or newest first. Without "
        "--agent/--session-key every session of the store is searched. On a terminal the "
        "matched words are coloured (not with NO_COLOR set). The rules are docs/rules.md.",
        examples=["session-search search --store demo cafe",
                  "session-search search --store demo --agent main --match prefix per session communi",
                  "session-search search --store demo --order recent --limit 3 --json deployment",
                  "session-search search --store demo --jsonl cafe | jq -r .messageId",
                  "session-search search --store ~/.openclaw --backend sqlite --read-only deployment"],
    )
    _add_query_arguments(search, records="the hits")
    search.set_defaults(run=run_search)


def _register_explain(subparsers: argparse._SubParsersAction) -> None:
    explain = add_command(
        subparsers, "explain",
        description="Search as `search` does (same arguments), then show the plan the "
        "query became and, per hit, its bm25 inputs (N, D, avgdl; per phrase n, f, idf) "
        "and how its excerpt window was chosen. Reference stores only.",
        examples=["session-search explain --store demo cafe",
                  "session-search explain --store demo --json '会议'"],
    )
    _add_query_arguments(explain)
    explain.set_defaults(run=run_explain)


def _register_serve(subparsers: argparse._SubParsersAction) -> None:
    serve_parser = add_command(
        subparsers, "serve",
        description="Answer JSON-RPC 2.0 requests (methods sessions.search, "
        "sessions_search, chat.history, sessions_history, ui.search) read from standard "
        "input, one "
        "request per line, with one response line each on standard output, until the input "
        "ends. sessions_search obeys the tool configuration of --config (OpenClaw's "
        "openclaw.json shape). A line on standard error says when the server is ready. The "
        "protocol is docs/protocol.md.",
        examples=["session-search serve --store demo",
                  ("echo '{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"sessions.search\", "
                  "\"params\": {\"sessionKeys\": [], \"query\": \"cafe\"}}' | "
                  "session-search serve --store demo")],
    )
    add_store_argument(serve_parser, help="the store folder; without it (and without "
                       f"${STORE_VARIABLE}) a scratch store that the conformance set-up "
                       "methods fill, removed when the input ends (docs/conformance.md)")
    serve_parser.set_defaults(store_needed=False)
    serve_parser.add_argument("--backend", choices=BACKEND_NAMES, default=None,
                              help="the backend of the scratch store (default reference); "
                                   "with --store, the backend the store must have")
    add_json_arguments(serve_parser, help="every answer is a JSON-RPC line already; "
                                           "accepted for scripts that pass --json to every "
                                           "command")
    serve_parser.add_argument("--quiet", "-q", action="store_true",
                              help="no ready line on standard error")
    serve_parser.add_argument("--session-link-base", metavar="URL",
                              help="the Control UI's address: sessions_search answers then "
                              "carry a sessionLinkRule")
    serve_parser.add_argument("--config", metavar="FILE",
                              help="session-tool configuration for sessions_search "
                              "(OpenClaw's openclaw.json shape, JSON or TOML)")
    serve_parser.set_defaults(run=run_serve)


def _register_reconcile(subparsers: argparse._SubParsersAction) -> None:
    reconcile = add_command(
        subparsers, "reconcile",
        description="Rebuild the index of every window that needs it (imported with "
        "--no-reconcile, rewound, or left dirty), so that searches stop reporting indexing. "
        "Takes the store's writer lock.",
        examples=["session-search reconcile --store demo",
                  "session-search reconcile --store demo --quiet --json"])
    _add_store(reconcile)
    reconcile.add_argument("--quiet", "-q", action="store_true",
                           help="no progress bar and no summary (errors are still printed)")
    reconcile.set_defaults(run=run_reconcile)


def _register_verify(subparsers: argparse._SubParsersAction) -> None:
    verify = add_command(
        subparsers, "verify",
        description="Check a store, agent by agent: report damaged files (a reference "
        "store: committed transactions missing from its log, a checkpoint that disagrees "
        "with it; a SQLite one: what PRAGMA integrity_check and FTS5's integrity-check "
        "say), then rebuild the index from the transcripts in memory and compare it with "
        "the stored one (missing, unexpected, differing and orphan rows). Exit status 1 on "
        "any difference.",
        examples=["session-search verify --store demo",
                  "session-search verify --store demo --repair",
                  "session-search verify --store ~/.openclaw --backend sqlite --read-only"])
    _add_store(verify)
    add_read_only_arguments(verify, BACKEND_NAMES)
    verify.add_argument(
        "--repair", action="store_true",
        help="first drop what cannot be recovered (saying what) and rebuild the index "
             "from the transcripts (writer)",
    )
    verify.set_defaults(run=run_verify)


#: Each command's registration, in `--help` order.
COMMAND_REGISTERS: dict[str, Callable[[argparse._SubParsersAction], None]] = {
    "search": _register_search, "explain": _register_explain, "serve": _register_serve,
    "reconcile": _register_reconcile, "verify": _register_verify,
}
