"""The `search`, `explain`, `serve`, `reconcile` and `verify` commands.

Owns: their arguments and how results are printed. Must not touch: search, storage,
index or protocol logic (they call the backend through
`engine.backends.registry.open_backend`, so `search`, `serve` and `reconcile` work for
every backend; `explain` needs an `Explainable` backend and `verify` the reference one).

Session scope on the command line (a decision for CLI users, who own the store they
point at): with no `--agent` and no `--session-key`, `search` looks at every session in
the store (`sessionKeys: []`), like `--all-sessions`. `--agent ID` alone selects that
agent's partition, its namespace (plus `global` and `unknown` for the default agent
`main`, whose partition holds them: the kernel's omitted-filter rule inside one agent's
database); `--session-key` (repeatable) selects exactly those keys. Searches over keys or
every session merge the partitions' answers (`engine.backends.partitioned`). Refused, as
contradictions: `--all-sessions` with `--session-key` or with `--agent`, and `--agent ID`
with a key of another agent. `--limit` must be 1..25 (the query policy's range; a limit
outside it is refused rather than clamped).

Stores are opened through `engine.backends.registry.open_store`, which refuses a path
the command cannot use with one line naming it (exit 2). Each command imports what it
runs when it runs (the RPC server for `serve`, the verifier for `verify`), so `search`
starts without them.

`serve` answers JSON-RPC 2.0 requests on stdin/stdout, one JSON object per line; the
protocol (methods, params, results, error codes) is `docs/protocol.md`, and the server
is `engine.rpc`. `reconcile` runs `engine.backends.maintenance.reconcile_store`, with a
progress bar on a terminal (`--quiet`: no bar and no summary line).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence

from engine.backends.registry import open_store
from engine.cli.commands import add_command
from engine.cli.output import format_table, print_json
from engine.errors import UsageError
from engine.model import (
    MATCH_MODES,
    ORDERS,
    SEARCHABLE_ROLES,
    SearchRequest,
    SearchResult,
    agent_id_of,
)
from engine.query.user_query import DEFAULT_LIMIT, MAX_LIMIT

#: The range of `--limit` (the query policy's `clamp_limit` range, checked here instead).
LIMIT_RANGE = range(1, MAX_LIMIT + 1)

# ----- shared arguments ---------------------------------------------------------------


def _add_store(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--store", required=True, metavar="DIR", help="the store directory")
    parser.add_argument("--json", action="store_true", help="print JSON")


def _add_query_arguments(parser: argparse.ArgumentParser) -> None:
    _add_store(parser)
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


def _one_line(text: str) -> str:
    return " ".join(text.split())


def print_result(result: SearchResult, limit: int | None = None) -> None:
    """The plain-text view of a kernel result (`limit`: the `--limit` asked for)."""
    rows = [
        [f"{hit.score:.6g}", f"{hit.timestamp:.0f}", hit.session_key, hit.session_id,
         hit.message_id, hit.role, _one_line(hit.snippet)]
        for hit in result.hits
    ]
    headers = ["score", "timestamp", "sessionKey", "sessionId", "messageId", "role", "snippet"]
    print(format_table(headers, rows) if rows else "no hits")
    if result.truncated:
        print(truncation_hint(limit))
    if result.indexing:
        print("indexing: search completeness could not be confirmed; run `session-search reconcile`")
    if result.archived_transcripts_excluded:
        print(f"{result.archived_transcripts_excluded} archived transcript(s) excluded")


def truncation_hint(limit: int | None) -> str:
    """What to do about a truncated result: raise `--limit` while it can be raised.

    >>> truncation_hint(None)
    'more hits than the limit (truncated); refine the query or raise --limit (up to 25)'
    >>> truncation_hint(25)
    'more hits than the limit (truncated); refine the query (25 is the largest --limit)'
    """
    if (DEFAULT_LIMIT if limit is None else limit) < MAX_LIMIT:
        return ("more hits than the limit (truncated); refine the query or raise --limit "
                f"(up to {MAX_LIMIT})")
    return f"more hits than the limit (truncated); refine the query ({MAX_LIMIT} is the " \
           "largest --limit)"


def run_search(args: argparse.Namespace) -> int:
    """`session-search search`."""
    request = request_from_args(args)
    backend = open_store(args.store, "search")
    try:
        result = backend.search(request)
    finally:
        backend.close()
    if args.json:
        print_json(result.to_json())
    else:
        print_result(result, args.limit)
    return 0


# ----- explain ------------------------------------------------------------------------


def run_explain(args: argparse.Namespace) -> int:
    """`session-search explain` (reference stores only)."""
    from engine.backends.protocol import Explainable

    request = request_from_args(args)
    backend = open_store(args.store, "explain")
    try:
        if not isinstance(backend, Explainable):
            raise UsageError(f"explain needs a reference store; this one uses {backend.name!r}")
        explanation = backend.explain(request)
    finally:
        backend.close()
    plan = explanation.plan
    phrases = [
        {"terms": list(phrase.terms), "prefix": phrase.prefix} for phrase in plan.phrases
    ]
    substrings = [term.text for term in plan.substrings]
    if args.json:
        print_json(explanation.to_json())
        return 0
    print(f"phrases: {phrases}" + (f"  substrings: {substrings}" if substrings else ""))
    if explanation.retried:
        print("no word match in scope: CJK terms retried as literal substrings")
    if not explanation.hits:
        print("no hits")
    for number, item in enumerate(explanation.hits, 1):
        hit = item.hit
        print(f"#{number} {hit.session_key} {hit.session_id} {hit.message_id} ({hit.role}) "
              f"score {hit.score!r} doc {item.doc_id}")
        print(f"  partition {item.partition!r}: scored with that agent's own statistics")
        for line in item.bm25.lines() if item.bm25 is not None else ["no bm25 (substring-only hit): rank 0"]:
            print(f"  {line}")
        print("  excerpt window:")
        for line in item.snippet_lines:
            print(f"    {line}")
        print(f"  snippet: {hit.snippet!r}")
    return 0


# ----- serve --------------------------------------------------------------------------


def run_serve(args: argparse.Namespace) -> int:
    """`session-search serve`."""
    from engine.rpc.server import serve_stdio

    backend = open_store(args.store, "serve")
    try:
        serve_stdio(backend)
    finally:
        backend.close()
    return 0


# ----- reconcile and verify -----------------------------------------------------------


def run_reconcile(args: argparse.Namespace) -> int:
    """`session-search reconcile`: rebuild windows that need it (writer)."""
    from engine.backends.maintenance import reconcile_store
    from engine.cli.progress_display import ProgressDisplay

    started = time.perf_counter()
    with ProgressDisplay.for_command(args.quiet) as progress:
        outcome = reconcile_store(args.store, progress.steps("reconcile"))
    seconds = time.perf_counter() - started
    if args.json:
        print_json(outcome.to_json())
    elif not args.quiet:
        print(f"reconciled {outcome.reconciled} window(s) in {seconds:.3g} s; indexing "
              f"{'still needed' if outcome.indexing else 'complete'}")
    return 0


def run_verify(args: argparse.Namespace) -> int:
    """`session-search verify`: report what is wrong with each partition's files
    (committed transactions missing from the log, a checkpoint that disagrees with it,
    damage), rebuild each index in memory and compare; exit 1 on any problem. `--repair`
    first drops what cannot be recovered (saying what) and rebuilds the indexes, then
    verifies."""
    from engine.backends.registry import store_backend_name
    from engine.diagnostics.verify import repair_store, verify_store

    name = store_backend_name(args.store, "verify", writer=args.repair)
    if name != "reference":
        raise UsageError(
            f"verify needs a reference store; this one uses {name!r} (it keeps transcripts "
            "and index in one SQLite database per agent, committed by SQLite's journal: "
            "there are no transcript logs or index files here to check or repair)")
    repairs: dict[str, list[str]] = {}
    if args.repair:
        writer = open_store(args.store, "verify", writer=True, accept_lost_commits=True)
        try:
            repairs = repair_store(writer)
        finally:
            writer.close()
    backend = open_store(args.store, "verify", accept_lost_commits=True)
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
    search = add_command(
        subparsers, "search",
        description="Search user and assistant messages (behaviour.md §5). Without "
        "--agent/--session-key every session of the store is searched.",
    )
    _add_query_arguments(search)
    search.set_defaults(run=run_search)

    explain = add_command(
        subparsers, "explain",
        description="Like search, plus each hit's bm25 inputs (N, n, f, D, avgdl, idf) "
        "and how its excerpt window was chosen.",
    )
    _add_query_arguments(explain)
    explain.set_defaults(run=run_explain)

    serve_parser = add_command(
        subparsers, "serve",
        description="One JSON-RPC 2.0 request per input line, one response per output line.",
    )
    _add_store(serve_parser)
    serve_parser.set_defaults(run=run_serve)

    reconcile = add_command(subparsers, "reconcile")
    _add_store(reconcile)
    reconcile.add_argument("--quiet", "-q", action="store_true",
                           help="no progress bar and no summary (errors are still printed)")
    reconcile.set_defaults(run=run_reconcile)

    verify = add_command(subparsers, "verify")
    _add_store(verify)
    verify.add_argument(
        "--repair", action="store_true",
        help="first drop what cannot be recovered (saying what) and rebuild the index "
             "from the transcripts (writer)",
    )
    verify.set_defaults(run=run_verify)
