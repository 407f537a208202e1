"""From a case to the protocol calls that run it: the set-up steps and named corpora.

Owns: turning a `Case` into `Call`s (method, params, what to expect), so that a backend
under test sees only protocol methods (`conformance.load`, `.replace`, ... and the
product's), never the case file's shorthand: the chaining of messages into a tree, the
`messages` generator, the macros, and the named corpora (`demo`: the bundled demo
corpus; any other name: `corpora/NAME.json` beside this module). Must not touch: how a
call travels (`engine.conformance.targets`) or how a result is compared
(`engine.conformance.compare`).

The set-up steps (one key each; docs/conformance.md has examples):

* `{"window": RECORD}` - a window, as a line of a corpus's `sessions.jsonl`;
* `{"message": {"session", "id", "role", "text" | "content", "timestamp"?, "parentId"?,
  "createdAt"?}}` - a `type: "message"` event; without `parentId` its parent is the
  entry the case appended last to that window (null for the first);
* `{"messages": {"session", "count", "idFormat", "text", "roles"?, "timestampDivisor"?}}`
  - `count` chained messages; message i has id `idFormat.format(i=i)`, role
  `roles[i % len(roles)]` (default user, assistant) and timestamp `i // timestampDivisor`;
* `{"event": {"session", "event", "createdAt"?}}` - one raw event;
* `{"replace": {"session", "events": [{"event": RAW} | MESSAGE]}}` - the window's new
  transcript, messages chained from the replacement's own entries;
* `{"delete": KEY}`, `{"reconcile": true}`, `{"compact": true}`, `{"archive": KEY}`,
  `{"restore": KEY}`, `{"configure": PARAMS}`; `"expect": N` on the first four checks the
  count the method answers (windows deleted, windows rebuilt, windows changed).

A call's expectation is its step's `expect`, or, for a backend held to another
expectation set (`engine.conformance.case_files`, "Expectation sets"), the step's
`expectOn` entry for that set when it has one.

Consecutive `window`, `message`, `messages` and `event` steps become one
`conformance.load` (one transaction). Every event is stamped `createdAt` 0 unless the
step says otherwise, so a message without a timestamp is dated 0 on every backend.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine import DEMO_CORPUS
from engine.conformance.case_files import DEFAULT_EXPECTATION_SET, Case, CaseFileError
from engine.conformance.macros import MacroError, expand

#: The folder of the named corpora (`"corpus": "NAME"` reads `NAME.json` there).
CORPORA_FOLDER = Path(__file__).resolve().parent / "corpora"

#: Set-up step -> (method, the member of its answer an `"expect": N` checks).
COUNTED = {"delete": ("conformance.delete", "windows"),
           "reconcile": ("conformance.reconcile", "rebuilt"),
           "archive": ("conformance.archive", "changed"),
           "restore": ("conformance.archive", "changed")}

DATA_STEPS = ("window", "message", "messages", "event")


@dataclass(frozen=True, slots=True)
class Call:
    """One protocol call of a case: `expect` is what must hold (None: only that it
    answers without an error); `step` the case step it comes from (None: the corpus)."""

    method: str
    params: Any
    expect: dict[str, Any] | None
    step: int | None

    def label(self) -> str:
        """How reports name the call: `step 3: sessions.search {...}` (params cut short)."""
        where = "corpus" if self.step is None else f"step {self.step}"
        params = json.dumps(self.params, ensure_ascii=False)
        if len(params) > 160:
            params = params[:157] + "..."
        return f"{where}: {self.method} {params}"


def message_event(message: dict[str, Any], parent: str | None) -> dict[str, Any]:
    """The `type: "message"` event a message step stands for.

    >>> message_event({"id": "m2", "role": "user", "text": "hi", "timestamp": 5}, "m1")
    {'type': 'message', 'id': 'm2', 'parentId': 'm1', 'message': {'role': 'user', 'content': 'hi'}, 'timestamp': 5}
    """
    content = message["content"] if "content" in message else message.get("text", "")
    event: dict[str, Any] = {"type": "message", "id": message["id"],
                             "parentId": message.get("parentId", parent),
                             "message": {"role": message["role"], "content": content}}
    if "timestamp" in message:
        event["timestamp"] = message["timestamp"]
    return event


def is_tree_entry(event: dict[str, Any]) -> bool:
    """Whether an event becomes the parent of the next chained message (it has an id and
    is no leaf control or session header)."""
    return isinstance(event.get("id"), str) and event.get("type") not in ("leaf", "session")


class Planner:
    """Turns the steps of one case into calls, remembering each window's last entry;
    each call expects what `expectation_set` is held to."""

    def __init__(self, expectation_set: str = DEFAULT_EXPECTATION_SET) -> None:
        self.expectation_set = expectation_set
        self.last_entry: dict[str, str | None] = {}
        self.calls: list[Call] = []
        self._windows: list[dict[str, Any]] = []
        self._events: list[dict[str, Any]] = []
        self._data_step: int | None = None

    def add(self, step: dict[str, Any], index: int | None) -> None:
        """Add the calls of one step (`index`: its place in the case, None: corpus)."""
        step = expand(step)
        kind = next(key for key in step if key not in ("expect", "comment"))
        if kind in DATA_STEPS:
            if not (self._windows or self._events):
                self._data_step = index
            self._data(kind, step[kind])
            return
        self.flush()
        if kind == "call":
            expect = step.get("expectOn", {}).get(self.expectation_set, step.get("expect", {}))
            self.calls.append(Call(step["call"], step.get("params", {}), expect, index))
        elif kind == "replace":
            self._replace(step["replace"], index)
        elif kind == "compact":
            self.calls.append(Call("conformance.compact", {}, None, index))
        elif kind == "configure":
            self.calls.append(Call("conformance.configure", step["configure"], None, index))
        else:
            method, member = COUNTED[kind]
            params: dict[str, Any] = {}
            if kind in ("delete", "archive", "restore"):
                params = {"sessionKey": step[kind]}
            if kind in ("archive", "restore"):
                params["archived"] = kind == "archive"
            expect = {"match": {member: step["expect"]}} if "expect" in step else None
            self.calls.append(Call(method, params, expect, index))

    def _append(self, session: str, event: dict[str, Any], created_at: Any = 0) -> None:
        self._events.append({"sessionId": session, "event": event, "createdAt": created_at})
        if is_tree_entry(event):
            self.last_entry[session] = event["id"]

    def _data(self, kind: str, value: dict[str, Any]) -> None:
        if kind == "window":
            self._windows.append(value)
        elif kind == "message":
            session = value["session"]
            self._append(session, message_event(value, self.last_entry.get(session)),
                         value.get("createdAt", 0))
        elif kind == "event":
            self._append(value["session"], value["event"], value.get("createdAt", 0))
        else:
            roles = value.get("roles", ["user", "assistant"])
            divisor = value.get("timestampDivisor", 1)
            session = value["session"]
            for number in range(value["count"]):
                message = {"id": value["idFormat"].format(i=number),
                           "role": roles[number % len(roles)], "text": value["text"],
                           "timestamp": number // divisor}
                self._append(session, message_event(message, self.last_entry.get(session)))

    def _replace(self, value: dict[str, Any], index: int | None) -> None:
        events: list[dict[str, Any]] = []
        last: str | None = None
        for item in value["events"]:
            event = item["event"] if "event" in item else message_event(item, last)
            if is_tree_entry(event):
                last = event["id"]
            events.append(event)
        self.last_entry[value["session"]] = last
        self.calls.append(Call("conformance.replace",
                               {"sessionId": value["session"], "events": events}, None, index))

    def flush(self) -> None:
        """Send the windows and events gathered so far as one `conformance.load`."""
        if self._windows or self._events:
            self.calls.append(Call("conformance.load",
                                   {"windows": self._windows, "events": self._events},
                                   None, self._data_step))
            self._windows, self._events = [], []


def corpus_directory_steps(folder: Path) -> list[dict[str, Any]]:
    """A corpus directory (`sessions.jsonl` and `transcripts/<sessionId>.jsonl`, the form
    corpora/README.md documents) as set-up steps: its windows, then each transcript, then
    a reconcile (as `session-search import` ends: rewinds leave windows to rebuild)."""
    steps: list[dict[str, Any]] = []
    windows = [json.loads(line) for line in
               (folder / "sessions.jsonl").read_text(encoding="utf-8").splitlines()
               if line.strip()]
    steps.extend({"window": window} for window in windows)
    for window in windows:
        path = folder / "transcripts" / f"{window['sessionId']}.jsonl"
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                steps.append({"event": {"session": window["sessionId"],
                                        "event": json.loads(line)}})
    steps.append({"reconcile": True})
    return steps


def demo_corpus_steps() -> list[dict[str, Any]]:
    """The bundled demo corpus as set-up steps."""
    return corpus_directory_steps(DEMO_CORPUS)


def corpus_steps(corpus: tuple[dict[str, Any], ...] | str) -> list[dict[str, Any]]:
    """The set-up steps of a corpus: its own, or those of a named corpus."""
    if not isinstance(corpus, str):
        return list(corpus)
    if corpus == "demo":
        return demo_corpus_steps()
    path = CORPORA_FOLDER / f"{corpus}.json"
    if not path.is_file():
        raise CaseFileError(f"no corpus named {corpus!r} (the names are demo and the files "
                            f"of {CORPORA_FOLDER})")
    document = json.loads(path.read_text(encoding="utf-8"))
    return list(document["steps"])


def plan_case(case: Case, expectation_set: str = DEFAULT_EXPECTATION_SET) -> list[Call]:
    """Every call of `case`, in order: its corpus, its configuration, then its steps,
    each expecting what a backend held to `expectation_set` must answer."""
    planner = Planner(expectation_set)
    try:
        for step in corpus_steps(case.corpus):
            planner.add(step, None)
        planner.flush()
        if case.config is not None:
            planner.calls.append(Call("conformance.configure", expand(case.config), None, None))
        for index, step in enumerate(case.steps):
            planner.add(step, index)
        planner.flush()
    except MacroError as error:
        raise CaseFileError(f"{case.source} case {case.id}: {error}") from None
    except (KeyError, TypeError) as error:
        raise CaseFileError(f"{case.source} case {case.id}: a set-up step lacks or "
                            f"mistypes a member ({error})") from None
    return planner.calls
