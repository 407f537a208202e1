"""A Compare request saved as a conformance case file, in the format of `engine/conformance`.

Owns: `case_document`, the case file of one request (docs/conformance.md's format: a
file object with a `comment`, a `corpus` and one case whose step calls the protocol
method with the request's params and expects the reference backend's answer, the
oracle), and the corpus it carries: `"demo"` when the store holds exactly the bundled
demo corpus (its windows and events; a case then reads as a short file), else the
store's own windows and events as set-up steps (`window`, `event` with its stored
`createdAt`, then `reconcile` when the store was fully indexed). Every document is
checked by the conformance package's own reader (`cases_of_file`) before it is handed
out, so a saved case always loads. Must not touch: the case format (the conformance
package's: its keys, feature tags and spec units are read from there), running cases,
or writing files: the page downloads the document; the server writes nothing.

What a case pins: a store search pins §5.1 and §5.4 (§5.3 with a scope other than every
session; features: `ranking` or `recent-order`, `prefix`, `role-filter`, `scope`,
`cjk-retry` when the plan has CJK terms); a tool call pins §3.4.3 and §3.4.7
(`agent-tool`). The id is `explorer/` + the query's ASCII words + a short hash of the
params, so two different requests never share one.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from engine import ToolConfig
from engine.conformance.case_files import FEATURES, cases_of_file
from engine.conformance.plan import demo_corpus_steps
from engine.explorer.compare_panel import Comparison, run_comparison
from engine.explorer.explored_store import ExploredStore
from engine.explorer.parameters import ParameterError
from engine.ingest.records import WINDOW_FIELDS, window_from_record
from engine.inspection.tokens import cjk_runs
from engine.model import SessionWindow, json_number
from engine.store.partitioned import PartitionedStore

#: The largest corpus a saved case carries, in bytes of JSON.
MAX_CORPUS_BYTES = 8 * 1024 * 1024
REFERENCE = "reference"
_WORDS = re.compile(r"[a-z0-9]+")


def case_document(explored: ExploredStore, values: dict[str, Any], config: ToolConfig,
                  config_document: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
    """The file name and the case file of the request the parameters ask for (module
    docstring); `config_document` is the tool configuration file's content, given to the
    case as its `config` when the request is a tool call."""
    comparison = run_comparison(explored, values, config)
    corpus = explored.read(store_corpus)
    case_id = identifier(comparison)
    found = comparison.differences()
    agreed = ("both backends answered alike" if not found else
              f"the backends differed at {', '.join(item['path'] for item in found[:5])}"
              + (f" and {len(found) - 5} more" if len(found) > 5 else "")
              + "; the expectation is the reference backend's answer")
    case: dict[str, Any] = {
        "id": case_id,
        "spec": spec_units(comparison),
        "features": features(comparison),
        "comment": (f"Saved from session-search explore ({', '.join(comparison.backends)}): "
                    f"{comparison.method} {json.dumps(comparison.params, ensure_ascii=False)}; "
                    f"{agreed}."),
        "steps": [{"call": comparison.method, "params": comparison.params,
                   "expect": {"result": comparison.answer_of(REFERENCE)}}],
    }
    if comparison.method == "sessions_search" and config_document is not None:
        case["config"] = {"config": config_document}
    document = {"comment": "A request saved from the explorer's Compare panel "
                           "(docs/explore.md); run it with `session-search conform --cases "
                           "FOLDER`.",
                "corpus": corpus, "cases": [case]}
    file_name = case_id.replace("/", "-") + ".json"
    cases_of_file(json.loads(json.dumps(document)), file_name)  # it loads, or it is a bug
    return file_name, document


def identifier(comparison: Comparison) -> str:
    """`explorer/<the query's ASCII words>-<8 hex digits of the params>`.

    >>> identifier(Comparison("sessions.search", {"query": "Café per-session 会议"},
    ...                       ("reference", "sqlite"), ({}, {})))
    'explorer/caf-per-session-8873faca'
    """
    params = comparison.params.get("arguments", comparison.params)
    words = _WORDS.findall(str(params.get("query", "")).lower())
    slug = "-".join(words)[:40].strip("-") or "search"
    digest = hashlib.sha256(json.dumps([comparison.method, comparison.params],
                                       sort_keys=True).encode("utf-8")).hexdigest()[:8]
    return f"explorer/{slug}-{digest}"


def spec_units(comparison: Comparison) -> list[str]:
    """The parts of the specification the saved request pins (module docstring)."""
    if comparison.method == "sessions_search":
        return ["§3.4.3", "§3.4.7"]
    units = ["§5.1", "§5.4"]
    if comparison.params.get("sessionKeys") != [] or "sessionId" in comparison.params:
        units.insert(1, "§5.3")
    return units


def features(comparison: Comparison) -> list[str]:
    """The feature tags a backend needs for the saved request (module docstring)."""
    params = comparison.params
    if comparison.method == "sessions_search":
        tags = ["agent-tool"]
    else:
        tags = ["recent-order" if params.get("order") == "recent" else "ranking"]
        if params.get("match") == "prefix":
            tags.append("prefix")
        if params.get("role"):
            tags.append("role-filter")
        if params.get("sessionKeys") != [] or "sessionId" in params:
            tags.append("scope")
    query = str(params.get("arguments", params).get("query", ""))
    if cjk_runs(query):
        tags.append("cjk-retry")
    assert all(tag in FEATURES for tag in tags)
    return tags


def store_corpus(store: PartitionedStore) -> str | list[dict[str, Any]]:
    """`"demo"` when the store holds the demo corpus, else its windows and events as
    set-up steps; `ParameterError` (413) when those are larger than `MAX_CORPUS_BYTES`."""
    windows = store.windows()
    if holds_demo_corpus(store, windows):
        return "demo"
    steps: list[dict[str, Any]] = [{"window": window_record(window)} for window in windows]
    size = 0
    for window in windows:
        for event in store.events(window.session_id):
            step = {"event": {"session": window.session_id, "event": event.event,
                              "createdAt": json_number(event.created_at)}}
            size += len(json.dumps(step, ensure_ascii=False))
            if size > MAX_CORPUS_BYTES:
                raise ParameterError(
                    f"the store's transcripts are more than {MAX_CORPUS_BYTES} bytes of JSON: "
                    "too large for one case file; save the case from a smaller store",
                    status=413)
            steps.append(step)
    if not store.index_status():
        steps.append({"reconcile": True})
    return steps


def window_record(window: SessionWindow) -> dict[str, Any]:
    """A window as a `sessions.jsonl` record: the fields that differ from their defaults,
    then its extra fields.

    >>> window_record(SessionWindow("w1", "agent:main:main", title="T", created_at=5.0))
    {'sessionId': 'w1', 'sessionKey': 'agent:main:main', 'title': 'T', 'createdAt': 5}
    """
    defaults = SessionWindow(window.session_id, window.session_key)
    record: dict[str, Any] = {}
    for name, (attribute, _) in WINDOW_FIELDS.items():
        value = getattr(window, attribute)
        if name in ("sessionId", "sessionKey") or value != getattr(defaults, attribute):
            record[name] = json_number(value) if name == "createdAt" else value
    record.update(window.extra)
    return record


def holds_demo_corpus(store: PartitionedStore, windows: list[SessionWindow]) -> bool:
    """Whether the store's windows and events are the demo corpus's (receipt times aside:
    the demo's messages carry their own timestamps)."""
    steps = demo_corpus_steps()
    demo_windows = [window_from_record(step["window"]) for step in steps if "window" in step]
    if {window.session_id: window for window in windows} != \
            {window.session_id: window for window in demo_windows}:
        return False
    demo_events: dict[str, list[dict[str, Any]]] = {}
    for step in steps:
        if "event" in step:
            demo_events.setdefault(step["event"]["session"], []).append(step["event"]["event"])
    return all([event.event for event in store.events(window.session_id)]
               == demo_events.get(window.session_id, []) for window in windows)

