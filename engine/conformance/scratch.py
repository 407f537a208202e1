"""The scratch store and the conformance set-up methods a backend under test answers.

Owns: `ScratchStore` (a store in a temporary folder that the set-up methods fill, empty
and remove), the set-up methods (`conformance.describe`, `.reset`, `.load`, `.replace`,
`.delete`, `.reconcile`, `.compact`, `.archive`, `.configure`) and `scratch_methods`, the
method table `session-search serve` answers when it has no `--store`: the product's
methods, each run on the scratch store's current backend and configuration, plus the
set-up methods. Must not touch: what a product method does (`engine.rpc`'s handlers),
the envelope or framing (`engine.rpc.server`, `engine.rpc.framing`), or the runner
(`engine.conformance.runner`), which calls these methods and never reaches in here.

Why a scratch store is deterministic: it is created with background reconciliation off
(`EngineConfig(background_reconcile=False)`), so a window left dirty stays dirty until
`conformance.reconcile`, and a case that expects `indexing: true` sees it on every run;
every event gets the `createdAt` the runner sends (0 when none), never the clock's time.

The set-up methods (`docs/conformance.md` is the protocol for porters):

| method | params | result |
|---|---|---|
| `conformance.describe` | none | `{"name", "version", "backend", "protocol": 1, "methods", "unsupportedFeatures", "expectationSet"}` |
| `conformance.reset` | none | `{}`: an empty store and the default tool configuration |
| `conformance.load` | `{"windows": [window record], "events": [{"sessionId", "event", "createdAt"?}]}` | `{"windows": n, "events": n}`, written in one transaction |
| `conformance.replace` | `{"sessionId", "events": [event], "createdAt"?}` | `{"events": n}` |
| `conformance.delete` | `{"sessionKey"}` | `{"windows": n}` |
| `conformance.reconcile` | none | `{"rebuilt": n}` |
| `conformance.compact` | none | `{}` |
| `conformance.archive` | `{"sessionKey", "archived": bool}` | `{"changed": n}` |
| `conformance.configure` | `{"config"?: openclaw.json object, "budgets"?: {"requestSeconds", "readerSeconds"}}` | `{}` |

Which expectations a scratch store is held to (`describe`'s `expectationSet`): those of
the backend it answers as (`expectation_set_of`): `postgres` for the postgres backend and
for `reference:postgres`, the reference engine in its postgres expectation mode (the
`pg` profile's tokens and `ts_rank`: `engine.backends.reference.backend`), which is how
the cases' postgres expectations are made and checked without a server; `sqlite` for
the others.

A window record is a line of a corpus's `sessions.jsonl` (`engine.ingest.records`); an
event is a transcript event as OpenClaw writes it.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from engine import __version__, open_backend
from engine.agent_tools.budgets import ReaderGate, TimeBudgets
from engine.agent_tools.tool_config import ToolConfig, tool_config_from_json
from engine.config import EngineConfig
from engine.conformance.case_files import DEFAULT_EXPECTATION_SET
from engine.errors import InputError
from engine.ingest.records import window_from_record
from engine.rpc.errors import INVALID_PARAMS, RpcError
from engine.rpc.methods import METHODS, Method, RpcContext, method_table
from engine.store.archives import set_session_archived
from engine.store.registry import discard_server_data

#: The version of the set-up protocol this module speaks (`conformance.describe`).
PROTOCOL_VERSION = 1

#: The prefix of every set-up method: the rest of a method table is the product's.
SETUP_PREFIX = "conformance."

#: A scratch store never reconciles behind the runner's back (module docstring).
SCRATCH_CONFIG = EngineConfig(background_reconcile=False)

#: Scratch backends that answer as another backend would: name -> (the backend the
#: store is made with, the expectation mode it answers in).
PREDICTING: dict[str, tuple[str, str]] = {"reference:postgres": ("reference", "postgres")}
#: The expectation set of each backend held to another set than the default.
BACKEND_EXPECTATION_SETS: dict[str, str] = {"postgres": "postgres"}


def expectation_set_of(backend_name: str) -> str:
    """The expectation set a scratch store of `backend_name` is held to.

    >>> [expectation_set_of(name) for name in ("sqlite", "postgres", "reference:postgres")]
    ['sqlite', 'postgres', 'postgres']
    """
    name, mode = PREDICTING.get(backend_name, (backend_name, None))
    return mode or BACKEND_EXPECTATION_SETS.get(name, DEFAULT_EXPECTATION_SET)


class ScratchStore:
    """A store in a temporary folder, emptied by `reset` and removed by `close`.

    `backend_name` is the backend of every store it makes (`reference`, `sqlite`,
    `postgres`, or `reference:postgres`: a reference store answering as postgres); the
    tool configuration and time budgets are those the product methods run under, set by
    `conformance.configure` and put back by `reset` (to `base_config`, the configuration
    the server was started with, and the default budgets). (A mutable holder,
    not a value: the set-up methods change what it holds.)
    """

    def __init__(self, backend_name: str = "reference",
                 base_config: ToolConfig | None = None) -> None:
        self.backend_name = backend_name
        self.base_config = base_config or ToolConfig()
        self.folder = Path(tempfile.mkdtemp(prefix="session-search-scratch-"))
        self.tool_config = self.base_config
        self.budgets = TimeBudgets()
        self.backend: Any = None
        self.generation = 0

    def reset(self) -> None:
        """Close the current store, remove its files and open a new, empty one."""
        self._close_backend()
        self.generation += 1
        store = self.folder / f"store-{self.generation}"
        backend_name, expectation = PREDICTING.get(self.backend_name, (self.backend_name, None))
        self.backend = open_backend(store, backend=backend_name, create=True, writer=True,
                                    config=SCRATCH_CONFIG, expectation=expectation)
        self.tool_config = self.base_config
        self.budgets = TimeBudgets()

    def context(self) -> RpcContext:
        """The context a product method runs in: the current store and configuration
        (a fresh reader gate each call: the runner never calls concurrently)."""
        if self.backend is None:
            self.reset()
        return RpcContext(self.backend, tool_config=self.tool_config, budgets=self.budgets,
                          reader_gate=ReaderGate())

    def _close_backend(self) -> None:
        if self.backend is not None:
            self.backend.close()
            self.backend = None
            store = self.folder / f"store-{self.generation}"
            discard_server_data(store)  # a postgres store's schemas
            shutil.rmtree(store, ignore_errors=True)

    def close(self) -> None:
        """Close the store and remove the whole temporary folder."""
        self._close_backend()
        shutil.rmtree(self.folder, ignore_errors=True)


# ----- reading params -----------------------------------------------------------------


def _object(params: Any, method: str, allowed: tuple[str, ...]) -> dict[str, Any]:
    """`params` as an object with only `allowed` members (None counts as `{}`)."""
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise RpcError(INVALID_PARAMS, f"{method}: params must be an object")
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise RpcError(INVALID_PARAMS, f"{method}: unknown params: {', '.join(unknown)} "
                       f"(expected: {', '.join(allowed) or 'none'})")
    return params


def _text(params: dict[str, Any], name: str, method: str) -> str:
    value = params.get(name)
    if not isinstance(value, str) or not value.strip():
        raise RpcError(INVALID_PARAMS, f"{method}: {name} must be a non-empty string")
    return value


def _list(params: dict[str, Any], name: str, method: str) -> list[Any]:
    value = params.get(name, [])
    if not isinstance(value, list):
        raise RpcError(INVALID_PARAMS, f"{method}: {name} must be an array")
    return value


def _created_at(value: Any, where: str) -> float:
    if value is None:
        return 0.0
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RpcError(INVALID_PARAMS, f"{where}: createdAt must be a number (epoch ms)")
    return float(value)


# ----- the set-up methods -------------------------------------------------------------


def describe(scratch: ScratchStore, params: Any) -> dict[str, Any]:
    """`conformance.describe`: who answers, which methods, which features it lacks."""
    _object(params, "conformance.describe", ())
    return {"name": "session-search", "version": __version__, "backend": scratch.backend_name,
            "protocol": PROTOCOL_VERSION, "methods": sorted(scratch_method_names()),
            "unsupportedFeatures": [],
            "expectationSet": expectation_set_of(scratch.backend_name)}


def reset(scratch: ScratchStore, params: Any) -> dict[str, Any]:
    """`conformance.reset`: an empty store and the default configuration."""
    _object(params, "conformance.reset", ())
    scratch.reset()
    return {}


def load(scratch: ScratchStore, params: Any) -> dict[str, int]:
    """`conformance.load`: put the windows, then append the events, in one transaction."""
    method = "conformance.load"
    params = _object(params, method, ("windows", "events"))
    windows = []
    for number, record in enumerate(_list(params, "windows", method)):
        if not isinstance(record, dict):
            raise RpcError(INVALID_PARAMS, f"{method}: windows[{number}] must be an object")
        try:
            windows.append(window_from_record(record))
        except ValueError as error:
            raise RpcError(INVALID_PARAMS, f"{method}: windows[{number}]: {error}") from None
    events = []
    for number, item in enumerate(_list(params, "events", method)):
        where = f"{method}: events[{number}]"
        if not isinstance(item, dict) or not isinstance(item.get("event"), dict):
            raise RpcError(INVALID_PARAMS, f"{where} must be {{\"sessionId\", \"event\": "
                           "{...}, \"createdAt\"?}")
        events.append((_text(item, "sessionId", where), item["event"],
                       _created_at(item.get("createdAt"), where)))
    with scratch.context().backend.transaction() as transaction:
        for window in windows:
            transaction.put_window(window)
        for session_id, event, created_at in events:
            transaction.append_event(session_id, event, created_at=created_at)
    return {"windows": len(windows), "events": len(events)}


def replace(scratch: ScratchStore, params: Any) -> dict[str, int]:
    """`conformance.replace`: replace a window's whole transcript."""
    method = "conformance.replace"
    params = _object(params, method, ("sessionId", "events", "createdAt"))
    session_id = _text(params, "sessionId", method)
    events = _list(params, "events", method)
    created_at = _created_at(params.get("createdAt"), method)
    with scratch.context().backend.transaction() as transaction:
        count = transaction.replace_transcript(session_id, events, created_at=created_at)
    return {"events": count}


def delete(scratch: ScratchStore, params: Any) -> dict[str, int]:
    """`conformance.delete`: delete every window of a session key."""
    method = "conformance.delete"
    session_key = _text(_object(params, method, ("sessionKey",)), "sessionKey", method)
    with scratch.context().backend.transaction() as transaction:
        return {"windows": transaction.delete_session(session_key)}


def reconcile(scratch: ScratchStore, params: Any) -> dict[str, int]:
    """`conformance.reconcile`: rebuild every window that needs it."""
    _object(params, "conformance.reconcile", ())
    return {"rebuilt": scratch.context().backend.reconcile()}


def compact(scratch: ScratchStore, params: Any) -> dict[str, Any]:
    """`conformance.compact`: reclaim deleted data (nothing a read sees may change)."""
    _object(params, "conformance.compact", ())
    scratch.context().backend.compact()
    return {}


def archive(scratch: ScratchStore, params: Any) -> dict[str, int]:
    """`conformance.archive`: archive (`archived: true`) or restore a session's windows."""
    method = "conformance.archive"
    params = _object(params, method, ("sessionKey", "archived"))
    archived = params.get("archived", True)
    if not isinstance(archived, bool):
        raise RpcError(INVALID_PARAMS, f"{method}: archived must be true or false")
    outcome = set_session_archived(scratch.context().backend,
                                   _text(params, "sessionKey", method), archived=archived)
    return {"changed": outcome.changed}


def configure(scratch: ScratchStore, params: Any) -> dict[str, Any]:
    """`conformance.configure`: the tool configuration and time budgets of the next calls."""
    method = "conformance.configure"
    params = _object(params, method, ("config", "budgets"))
    if "config" in params:
        try:
            scratch.tool_config = tool_config_from_json(params["config"], "config")
        except InputError as error:
            raise RpcError(INVALID_PARAMS, f"{method}: {error}") from None
    if "budgets" in params:
        budgets = _object(params["budgets"], f"{method}: budgets",
                          ("requestSeconds", "readerSeconds"))
        values = {}
        for name, attribute in (("requestSeconds", "request_seconds"),
                                ("readerSeconds", "reader_seconds")):
            if name in budgets:
                value = budgets[name]
                if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                    raise RpcError(INVALID_PARAMS, f"{method}: budgets.{name} must be a "
                                   "number of seconds, at least 0")
                values[attribute] = float(value)
        scratch.budgets = TimeBudgets(**values)
    return {}


SetupHandler = Callable[[ScratchStore, Any], Any]

#: The set-up methods, by name, with their summaries.
SETUP_METHODS: dict[str, tuple[SetupHandler, str]] = {
    "conformance.describe": (describe, "who answers: name, version, methods, features it lacks"),
    "conformance.reset": (reset, "an empty store and the default tool configuration"),
    "conformance.load": (load, "put windows and append events, in one transaction"),
    "conformance.replace": (replace, "replace a window's transcript"),
    "conformance.delete": (delete, "delete every window of a session key"),
    "conformance.reconcile": (reconcile, "rebuild every window that needs it"),
    "conformance.compact": (compact, "reclaim deleted data"),
    "conformance.archive": (archive, "archive or restore a session's windows"),
    "conformance.configure": (configure, "the tool configuration and budgets of next calls"),
}


def scratch_method_names() -> list[str]:
    """Every method a scratch server answers: the product's, then the set-up methods."""
    return [*METHODS, *SETUP_METHODS]


def scratch_methods(scratch: ScratchStore) -> Mapping[str, Method]:
    """The method table of a server on `scratch`: each product method runs on the
    scratch store's current backend and configuration (the context the server passes
    is not used), and the set-up methods change the scratch store."""

    def product(method: Method) -> Method:
        return Method(method.name, lambda _context, params: method.handler(
            scratch.context(), params), method.summary)

    def setup(name: str, handler: SetupHandler, summary: str) -> Method:
        return Method(name, lambda _context, params: handler(scratch, params), summary)

    return method_table(*(product(method) for method in METHODS.values()),
                        *(setup(name, handler, summary)
                          for name, (handler, summary) in SETUP_METHODS.items()))


def scratch_ready_line(backend_name: str) -> str:
    """What `serve` without a store says on standard error once it reads requests.

    >>> scratch_ready_line("sqlite").split(" over ")[0]
    'session-search: serving a scratch store (backend sqlite)'
    """
    return (f"session-search: serving a scratch store (backend {backend_name}) over "
            f"JSON-RPC 2.0, one request per line on standard input (methods: "
            f"{', '.join(METHODS)}; set-up methods: {', '.join(SETUP_METHODS)}); the store "
            "is removed when the input ends")


#: The longest request line a scratch server reads: a corpus travels in one
#: `conformance.load` line, and a case may load a transcript of several MiB (a store's
#: own server keeps the 1 MiB bound of `engine.rpc.framing`).
SETUP_LINE_BYTES = 64 * 1024 * 1024


def serve_scratch(backend_name: str, tool_config: ToolConfig | None = None, *,
                  ready: Callable[[str], None] | None = None) -> int:
    """Serve standard input on a new scratch store until the input ends, then remove it
    (`session-search serve` without `--store`); `ready` is told the ready line."""
    import sys

    from engine.rpc.framing import bounded_lines
    from engine.rpc.server import serve

    scratch = ScratchStore(backend_name, tool_config)
    try:
        scratch.reset()
        if ready is not None:
            ready(scratch_ready_line(backend_name))
        return serve(RpcContext(scratch.backend),
                     bounded_lines(sys.stdin.buffer, SETUP_LINE_BYTES), sys.stdout.buffer,
                     scratch_methods(scratch))
    finally:
        scratch.close()
