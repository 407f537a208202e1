"""The explorer's web application: the page, its files, and one JSON endpoint per panel.

Owns: the Starlette application (`build_app`): its routes (`ENDPOINTS`, every one a
GET: the explorer has no write endpoint, and any other method is refused with 405), the
page and its two files served from the package (nothing from the network), the JSON
answers (UTF-8, numbers as numbers), the mapping of every refusal to a 4xx answer with a
message (`ParameterError` its own status; an engine `InputError` or `UsageError` 400;
an unknown session 404; a spent time budget 503), and the headers every answer carries:
a Content-Security-Policy that lets the page load only from this server, `nosniff`, no
referrer, no caching of the API. A `Host` other than this machine's names is refused
(a page of another site cannot reach the store through DNS rebinding). An unexpected
error is a 500 naming it, written to standard error with its traceback; the server goes
on. Must not touch: what a panel computes (`text_panels`, `search_panels`,
`index_panel`, `history_panel`, `compare_panel`, `case_file`), or serving (`server`).

The endpoints and their parameters are docs/explore.md's table; each panel of the page
shows exactly what its endpoint answers.
"""

from __future__ import annotations

import json
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.resources import files
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from engine import EngineError, InputError, ToolConfig, UnknownSession, UsageError
from engine.explorer import (
    case_file,
    compare_panel,
    history_panel,
    index_panel,
    search_panels,
    text_panels,
)
from engine.explorer.explored_store import ExploredStore
from engine.explorer.parameters import (
    HISTORY_PARAMETERS,
    SEARCH_PARAMETERS,
    Parameter,
    ParameterError,
    read_parameters,
)

#: The page's files: name -> media type (nothing else under `static/` is served).
STATIC_FILES = {"index.html": "text/html; charset=utf-8",
                "explorer.css": "text/css; charset=utf-8",
                "explorer.js": "text/javascript; charset=utf-8"}
SECURITY_HEADERS = {
    "content-security-policy": ("default-src 'none'; script-src 'self'; style-src 'self'; "
                                "img-src 'self' data:; connect-src 'self'; base-uri 'none'; "
                                "form-action 'none'; frame-ancestors 'none'"),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
}
#: The host names a request may name (the server listens on this machine only).
LOCAL_HOSTS = ["127.0.0.1", "localhost", "::1", "[::1]"]


@dataclass(frozen=True)
class ExplorerContext:
    """What every endpoint reads: the store, the tool configuration the Hits panel's tool
    calls obey, and that configuration's file content (a saved case carries it)."""

    explored: ExploredStore
    tool_config: ToolConfig = field(default_factory=ToolConfig)
    config_document: dict[str, Any] | None = None


Panel = Callable[[ExplorerContext, dict[str, Any]], Any]


@dataclass(frozen=True)
class Endpoint:
    """One JSON endpoint: its path, its parameters, the panel function, what it says."""

    path: str
    parameters: dict[str, Parameter]
    panel: Panel
    summary: str


ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint("/api/analysis", text_panels.ANALYSIS_PARAMETERS,
             lambda context, values: text_panels.analysis(values),
             "a text's tokens per profile, with offsets, folded terms and CJK runs"),
    Endpoint("/api/query", text_panels.QUERY_PARAMETERS,
             lambda context, values: text_panels.query_plan(values),
             "the query policy's plan of a query, with warnings"),
    Endpoint("/api/hits", SEARCH_PARAMETERS,
             lambda context, values: search_panels.hits(context.explored, values,
                                                        context.tool_config),
             "a search's answer (or the sessions_search tool's, with requester)"),
    Endpoint("/api/why", search_panels.WHY_PARAMETERS,
             lambda context, values: search_panels.why(context.explored, values),
             "why one hit ranks where it does: bm25, tie-breaks, excerpt"),
    Endpoint("/api/index/postings", index_panel.POSTINGS_PARAMETERS,
             lambda context, values: index_panel.postings(context.explored, values),
             "a term's postings in each partition"),
    Endpoint("/api/index/message", index_panel.MESSAGE_PARAMETERS,
             lambda context, values: index_panel.message(context.explored, values),
             "one message's index row and tokens"),
    Endpoint("/api/index/facts", {},
             lambda context, values: index_panel.facts(context.explored, values),
             "the store's partitions: generations, counts, segments"),
    Endpoint("/api/history", HISTORY_PARAMETERS,
             lambda context, values: history_panel.history(context.explored, values),
             "a history page around a message, with cursors"),
    Endpoint("/api/compare", SEARCH_PARAMETERS,
             lambda context, values: compare_panel.compare(context.explored, values,
                                                           context.tool_config),
             "the same request on both backends, and the differences"),
    Endpoint("/api/case", SEARCH_PARAMETERS, lambda context, values: None,
             "the request as a conformance case file (a download)"),
)


def json_response(value: Any, status: int = 200, headers: dict[str, str] | None = None
                  ) -> Response:
    """`value` as JSON, UTF-8 (text that cannot be UTF-8, a lone surrogate, escaped)."""
    try:
        body = json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except UnicodeEncodeError:
        body = json.dumps(value, ensure_ascii=True, allow_nan=False).encode("ascii")
    return Response(body, status_code=status, media_type="application/json",
                    headers={"cache-control": "no-store", **(headers or {})})


def error_response(message: str, status: int) -> Response:
    """A refusal: `{"error": message, "status": status}`."""
    return json_response({"error": message, "status": status}, status=status)


def refusal(error: Exception) -> Response:
    """The answer a failure of an endpoint's work maps to (module docstring)."""
    if isinstance(error, ParameterError):
        return error_response(error.message, error.status)
    if isinstance(error, UnknownSession):
        return error_response(str(error), 404)
    if isinstance(error, (InputError, UsageError)):
        return error_response(str(error), 400)
    if isinstance(error, EngineError):
        return error_response(str(error), 503 if type(error).__name__ == "SearchTimedOut"
                              else 500)
    traceback.print_exception(error, file=sys.stderr)  # the server goes on
    return error_response(f"internal error ({type(error).__name__}): {error}", 500)


def _endpoint(context: ExplorerContext, endpoint: Endpoint) -> Callable[[Request], Response]:
    def handle(request: Request) -> Response:
        try:
            values = read_parameters(request.query_params.multi_items(), endpoint.parameters,
                                     len(request.scope.get("query_string", b"")))
            if endpoint.path == "/api/case":
                return _case(context, values)
            return json_response(endpoint.panel(context, values))
        except Exception as error:  # noqa: BLE001 - every failure is an answer; the server goes on
            return refusal(error)

    return handle


def _case(context: ExplorerContext, values: dict[str, Any]) -> Response:
    name, document = case_file.case_document(context.explored, values, context.tool_config,
                                             context.config_document)
    response = json_response(document)
    response.headers["content-disposition"] = f'attachment; filename="{name}"'
    return response


def _static(name: str) -> Callable[[Request], Response]:
    body = (files("engine.explorer") / "static" / name).read_bytes()

    def handle(request: Request) -> Response:
        return Response(body, media_type=STATIC_FILES[name])

    return handle


def build_app(context: ExplorerContext, *, allowed_hosts: list[str] | None = None) -> Starlette:
    """The application over `context`: the page at `/`, its files, `ENDPOINTS`."""
    routes = [Route("/", _static("index.html"), methods=["GET"]),
              *(Route(f"/static/{name}", _static(name), methods=["GET"])
                for name in STATIC_FILES if name != "index.html"),
              *(Route(endpoint.path, _endpoint(context, endpoint), methods=["GET"])
                for endpoint in ENDPOINTS),
              Route("/api", lambda request: json_response(endpoint_list()), methods=["GET"])]
    app = Starlette(routes=routes, middleware=[
        Middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts or LOCAL_HOSTS)],
        exception_handlers={404: _not_found, 405: _not_allowed})
    app.add_middleware(_SecurityHeaders)
    return app


def endpoint_list() -> dict[str, Any]:
    """Every endpoint with its parameters and summary (`GET /api`)."""
    return {"endpoints": [{"path": endpoint.path, "summary": endpoint.summary,
                           "parameters": sorted(endpoint.parameters)}
                          for endpoint in ENDPOINTS]}


async def _not_found(request: Request, error: Exception) -> Response:
    return error_response(f"no such page: {request.url.path[:200]} (GET /api lists the "
                          "endpoints)", 404)


async def _not_allowed(request: Request, error: Exception) -> Response:
    return error_response(f"{request.method[:20]} is not allowed: the explorer is read-only "
                          "and answers GET only", 405)


class _SecurityHeaders:
    """Adds `SECURITY_HEADERS` to every answer (ASGI middleware)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                for name, value in SECURITY_HEADERS.items():
                    if name.encode() not in present:
                        headers.append((name.encode(), value.encode()))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)
