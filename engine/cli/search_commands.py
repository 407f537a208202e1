"""The `search`, `explain`, `serve`, `reconcile` and `verify` commands.

Owns: their arguments, the JSON-RPC framing of `serve`, and how results are printed.
Must not touch: search, storage or index logic (they call the backend through
`engine.backends.registry.open_backend`, so `search`, `serve` and `reconcile` work for
every backend; `explain` and `verify` need the reference backend).

Session scope on the command line (a decision for CLI users, who own the store they
point at): with no `--agent` and no `--session-key`, `search` looks at every session in
the store (`sessionKeys: []`), like `--all-sessions`. `--agent ID` alone selects that
agent's namespace plus `global` and `unknown` (the kernel's omitted-filter rule);
`--session-key` (repeatable) selects exactly those keys. `--all-sessions` cannot be
combined with `--session-key`.

`serve` speaks JSON-RPC 2.0 over stdin/stdout, one JSON object per line, and answers
each request on one line. Method `sessions.search`, params
`{agentId?, query, limit?, sessionKeys?, sessionId?, role?, match?, order?}`; the result
is the kernel result. `sessionKeys` omitted needs an `agentId` (as in the kernel). Errors
keep the server serving and use stable codes:

| code   | when |
|--------|------|
| -32700 | the line is not JSON |
| -32600 | not a JSON-RPC 2.0 request object (batches are not supported) |
| -32601 | unknown method |
| -32602 | params of the wrong shape or type, or a query the policy rejects (the message is the product's wording, e.g. `query must not be empty`) |
| -32000 | the engine failed (store error); the message says why |

A request without an `id` is a notification: it runs and gets no answer.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import IO, Any

from engine.backends.registry import open_backend
from engine.cli.output import format_table, print_json
from engine.errors import EngineError, InputError, UsageError
from engine.model import MATCH_MODES, ORDERS, SEARCHABLE_ROLES, SearchRequest, SearchResult

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
ENGINE_ERROR = -32000

SEARCH_METHOD = "sessions.search"


# ----- shared arguments ---------------------------------------------------------------


def _add_store(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--store", required=True, metavar="DIR", help="the store directory")
    parser.add_argument("--json", action="store_true", help="print JSON")


def _add_query_arguments(parser: argparse.ArgumentParser) -> None:
    _add_store(parser)
    parser.add_argument("--agent", metavar="ID", help="search this agent's namespace (+ global, unknown)")
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
        explain = getattr(backend, "explain", None)
        if explain is None:
            raise UsageError(f"explain needs a reference store; this one uses {backend.name!r}")
        run, explanations = explain(request)
    finally:
        backend.close()
    phrases = [
        {"terms": list(phrase.terms), "prefix": phrase.prefix} for phrase in run.plan.phrases
    ]
    substrings = [term.text for term in run.plan.substrings]
    if args.json:
        print_json({
            "phrases": phrases,
            "substrings": substrings,
            "cjkRetry": run.retried,
            "truncated": len(run.rows) > run.limit,
            "hits": [
                {
                    **item.hit.to_json(),
                    "docId": item.doc_id,
                    "bm25": item.bm25.lines() if item.bm25 is not None else None,
                    "excerpt": list(item.snippet_lines),
                }
                for item in explanations
            ],
        })
        return 0
    print(f"phrases: {phrases}" + (f"  substrings: {substrings}" if substrings else ""))
    if run.retried:
        print("no word match in scope: CJK terms retried as literal substrings")
    if not explanations:
        print("no hits")
    for number, item in enumerate(explanations, 1):
        hit = item.hit
        print(f"#{number} {hit.session_key} {hit.session_id} {hit.message_id} ({hit.role}) "
              f"score {hit.score!r} doc {item.doc_id}")
        for line in item.bm25.lines() if item.bm25 is not None else ["no bm25 (substring-only hit): rank 0"]:
            print(f"  {line}")
        print("  excerpt window:")
        for line in item.snippet_lines:
            print(f"    {line}")
        print(f"  snippet: {hit.snippet!r}")
    return 0


# ----- serve --------------------------------------------------------------------------


class RpcError(Exception):
    """A JSON-RPC error with its code."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


PARAM_TYPES: dict[str, tuple[type, ...]] = {
    "agentId": (str,),
    "query": (str,),
    "limit": (int,),
    "sessionKeys": (list,),
    "sessionId": (str,),
    "role": (str,),
    "match": (str,),
    "order": (str,),
}


def request_from_params(params: Any) -> SearchRequest:
    """Check `sessions.search` params and build the request (RpcError -32602 otherwise)."""
    if not isinstance(params, dict):
        raise RpcError(INVALID_PARAMS, "params must be an object")
    unknown = sorted(set(params) - set(PARAM_TYPES))
    if unknown:
        raise RpcError(INVALID_PARAMS, f"unknown params: {', '.join(unknown)}")
    for name, value in params.items():
        if value is None and name != "query":
            continue
        if not isinstance(value, PARAM_TYPES[name]) or isinstance(value, bool):
            raise RpcError(INVALID_PARAMS, f"{name} has the wrong type")
    if "query" not in params:
        raise RpcError(INVALID_PARAMS, "query is required")
    keys = params.get("sessionKeys")
    if keys is not None and not all(isinstance(key, str) for key in keys):
        raise RpcError(INVALID_PARAMS, "sessionKeys must be an array of strings")
    choices = {"role": SEARCHABLE_ROLES, "match": MATCH_MODES, "order": ORDERS}
    for name, allowed in choices.items():
        value = params.get(name)
        if value is not None and value not in allowed:
            raise RpcError(INVALID_PARAMS, f"{name} must be one of: {', '.join(allowed)}")
    if keys is None and params.get("agentId") is None:
        raise RpcError(INVALID_PARAMS, "agentId is required when sessionKeys is omitted")
    return SearchRequest(
        query=params["query"],
        agent_id=params.get("agentId"),
        limit=params.get("limit"),
        session_keys=tuple(keys) if keys is not None else None,
        session_id=params.get("sessionId"),
        role=params.get("role"),
        match=params.get("match") or "exact",
        order=params.get("order") or "relevance",
    )


def handle_line(backend: Any, line: str) -> dict[str, Any] | None:
    """The JSON-RPC response to one input line (None for a notification)."""
    try:
        message = json.loads(line)
    except ValueError as error:
        return _error_response(None, PARSE_ERROR, f"parse error: {error}")
    if not isinstance(message, dict):
        reason = "batch requests are not supported" if isinstance(message, list) else (
            "a request must be a JSON object")
        return _error_response(None, INVALID_REQUEST, reason)
    request_id = message.get("id")
    is_notification = "id" not in message
    if message.get("jsonrpc") != "2.0" or not isinstance(message.get("method"), str) or not (
        request_id is None or isinstance(request_id, (str, int)) and not isinstance(request_id, bool)
    ):
        return _error_response(
            request_id if isinstance(request_id, (str, int)) else None,
            INVALID_REQUEST, "expected {\"jsonrpc\": \"2.0\", \"method\": str, \"id\": str|int}",
        )
    try:
        if message["method"] != SEARCH_METHOD:
            raise RpcError(METHOD_NOT_FOUND, f"unknown method {message['method']!r}")
        request = request_from_params(message.get("params", {}))
        refresh = getattr(backend, "refresh", None)
        if refresh is not None:
            refresh()
        result = backend.search(request).to_json()
    except RpcError as error:
        response = _error_response(request_id, error.code, error.message)
    except InputError as error:
        response = _error_response(request_id, INVALID_PARAMS, str(error))
    except EngineError as error:
        response = _error_response(request_id, ENGINE_ERROR, str(error))
    else:
        response = {"jsonrpc": "2.0", "id": request_id, "result": result}
    return None if is_notification else response


def _error_response(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def serve(backend: Any, lines: IO[str], output: IO[str]) -> int:
    """Answer JSON-RPC lines until the input ends; return how many were answered."""
    answered = 0
    for line in lines:
        if not line.strip():
            continue
        response = handle_line(backend, line)
        if response is not None:
            output.write(json.dumps(response, ensure_ascii=False) + "\n")
            output.flush()
            answered += 1
    return answered


def run_serve(args: argparse.Namespace) -> int:
    """`session-search serve`."""
    backend = open_backend(args.store)
    try:
        serve(backend, sys.stdin, sys.stdout)
    finally:
        backend.close()
    return 0


# ----- reconcile and verify -----------------------------------------------------------


def run_reconcile(args: argparse.Namespace) -> int:
    """`session-search reconcile`: rebuild windows that need it (writer)."""
    backend = open_backend(args.store, writer=True)
    try:
        reconcile = getattr(backend, "reconcile", None)
        if reconcile is None:
            raise UsageError(f"backend {backend.name!r} has no reconcile")
        count = reconcile()
        status = getattr(backend, "index_status", lambda: False)()
    finally:
        backend.close()
    if args.json:
        print_json({"reconciled": count, "indexing": status})
    else:
        print(f"reconciled {count} window(s); indexing {'still needed' if status else 'complete'}")
    return 0


def run_verify(args: argparse.Namespace) -> int:
    """`session-search verify`: report what is wrong with the store's files (committed
    transactions missing from the log, a checkpoint that disagrees with it, damage),
    rebuild the index in memory and compare; exit 1 on any problem. `--repair` first
    drops what cannot be recovered (saying what) and rebuilds the index, then verifies."""
    from engine.backends.reference import ReferenceBackend
    from engine.backends.registry import detect_backend
    from engine.diagnostics.verify import repair_backend, verify_backend
    from engine.directory import FileDirectory

    name = detect_backend(args.store)
    if name != ReferenceBackend.name:
        raise UsageError(
            f"verify needs a reference store; this one uses {name!r} (it keeps transcripts "
            "and index in one SQLite database, committed by SQLite's journal: there are no "
            "transcript logs or index files here to check or repair)")
    directory = FileDirectory(args.store)
    repairs: list[str] = []
    if args.repair:
        backend = ReferenceBackend.open_in(directory, writer=True, accept_lost_commits=True)
        try:
            repairs = repair_backend(backend)
        finally:
            backend.close()
    backend = ReferenceBackend.open_in(directory, accept_lost_commits=True)
    try:
        report = verify_backend(backend)
    finally:
        backend.close()
    report.repairs = repairs
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
        help="first drop what cannot be recovered (saying what) and rebuild the index "
             "from the transcripts (writer)",
    )
    verify.set_defaults(run=run_verify)
