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
database); `--session-key` (repeatable) selects exactly those keys. `--all-sessions`
cannot be combined with `--session-key`. Searches over keys or every session merge the
partitions' answers (`engine.backends.partitioned`).

`serve` answers JSON-RPC 2.0 requests on stdin/stdout, one JSON object per line; the
protocol (methods, params, results, error codes) is `docs/protocol.md`, and the server
is `engine.rpc`. `reconcile` runs `engine.backends.maintenance.reconcile_store`.
"""

from __future__ import annotations

import argparse

from engine.backends.maintenance import reconcile_store
from engine.backends.protocol import Explainable
from engine.backends.registry import open_backend
from engine.cli.output import format_table, print_json
from engine.errors import UsageError
from engine.model import MATCH_MODES, ORDERS, SEARCHABLE_ROLES, SearchRequest, SearchResult
from engine.rpc.server import serve_stdio

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
    parser.add_argument("--limit", type=int, default=None, help="1..25 (default 10)")
    parser.add_argument("query", nargs="+", metavar="QUERY", help="words to find (joined by spaces)")


def request_from_args(args: argparse.Namespace) -> SearchRequest:
    """The `SearchRequest` a command line asks for (scope rule in the module docstring)."""
    if args.all_sessions and args.session_keys:
        raise UsageError("--all-sessions cannot be combined with --session-key")
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


# ----- search -------------------------------------------------------------------------


def _one_line(text: str) -> str:
    return " ".join(text.split())


def print_result(result: SearchResult) -> None:
    """The plain-text view of a kernel result."""
    rows = [
        [f"{hit.score:.6g}", f"{hit.timestamp:.0f}", hit.session_key, hit.session_id,
         hit.message_id, hit.role, _one_line(hit.snippet)]
        for hit in result.hits
    ]
    headers = ["score", "timestamp", "sessionKey", "sessionId", "messageId", "role", "snippet"]
    print(format_table(headers, rows) if rows else "no hits")
    if result.truncated:
        print("more hits than the limit (truncated); refine the query or raise --limit")
    if result.indexing:
        print("indexing: search completeness could not be confirmed; run `session-search reconcile`")
    if result.archived_transcripts_excluded:
        print(f"{result.archived_transcripts_excluded} archived transcript(s) excluded")


def run_search(args: argparse.Namespace) -> int:
    """`session-search search`."""
    request = request_from_args(args)
    backend = open_backend(args.store)
    try:
        result = backend.search(request)
    finally:
        backend.close()
    if args.json:
        print_json(result.to_json())
    else:
        print_result(result)
    return 0


# ----- explain ------------------------------------------------------------------------


def run_explain(args: argparse.Namespace) -> int:
    """`session-search explain` (reference stores only)."""
    request = request_from_args(args)
    backend = open_backend(args.store)
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
    backend = open_backend(args.store)
    try:
        serve_stdio(backend)
    finally:
        backend.close()
    return 0


# ----- reconcile and verify -----------------------------------------------------------


def run_reconcile(args: argparse.Namespace) -> int:
    """`session-search reconcile`: rebuild windows that need it (writer)."""
    outcome = reconcile_store(args.store)
    if args.json:
        print_json(outcome.to_json())
    else:
        print(f"reconciled {outcome.reconciled} window(s); indexing "
              f"{'still needed' if outcome.indexing else 'complete'}")
    return 0


def run_verify(args: argparse.Namespace) -> int:
    """`session-search verify`: rebuild the index in memory and compare (exit 1 on a mismatch)."""
    from engine.diagnostics.verify import verify_store

    backend = open_backend(args.store, writer=args.repair)
    try:
        report = verify_store(backend, repair=args.repair)
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
    search = subparsers.add_parser(
        "search", help="search messages in a store",
        description="Search user and assistant messages (behaviour.md §5). Without "
        "--agent/--session-key every session of the store is searched.",
    )
    _add_query_arguments(search)
    search.set_defaults(run=run_search)

    explain = subparsers.add_parser(
        "explain", help="show why each hit ranks where it does (reference stores)",
        description="Like search, plus each hit's bm25 inputs (N, n, f, D, avgdl, idf) "
        "and how its excerpt window was chosen.",
    )
    _add_query_arguments(explain)
    explain.set_defaults(run=run_explain)

    serve_parser = subparsers.add_parser(
        "serve", help="JSON-RPC 2.0 sessions.search over stdin/stdout",
        description="One JSON-RPC 2.0 request per input line, one response per output line.",
    )
    _add_store(serve_parser)
    serve_parser.set_defaults(run=run_serve)

    reconcile = subparsers.add_parser(
        "reconcile", help="reindex windows that need it (imports, rewinds)",
    )
    _add_store(reconcile)
    reconcile.set_defaults(run=run_reconcile)

    verify = subparsers.add_parser(
        "verify", help="rebuild the index from transcripts in memory and report differences",
    )
    _add_store(verify)
    verify.add_argument(
        "--repair", action="store_true",
        help="first rebuild the committed index from the transcripts (writer)",
    )
    verify.set_defaults(run=run_verify)
