"""The backend conformance suite: data-driven cases any `Backend` must pass.

Owns: the case format, loading `cases/*.json`, and `run_case`, which drives one fresh
backend through one case and asserts every expectation. Must not touch: any backend's
internals — it talks only to the `Backend` protocol (plus `reconcile()` for cases that
rebuild dirty windows).

Use from a backend's test module::

    from tests.conformance.suite import load_cases, run_case

    @pytest.mark.parametrize("case", load_cases(), ids=lambda case: case["name"])
    def test_conformance(case, tmp_path):
        run_case(lambda: MyBackend.create(tmp_path / "store"), case)

`backend_factory` takes no argument and returns a NEW, empty, writable backend; `run_case`
closes it at the end.

Case file (`cases/<name>.json`): `{"comment", "source", "steps": [...]}`; the steps run in
order, each write step in its own transaction:

* `{"window": {SessionWindow fields}}` — `put_window`;
* `{"message": {"session", "id", "role", "text", "timestamp"?, "parentId"?}}` — append a
  `type: "message"` event whose `content` is `text`. `text` is a string or a list of
  `[piece, count]` pairs (repeated and joined). Without `parentId` the event's parent is the
  previous tree entry the suite appended to that session (null for the first);
* `{"messages": {"session", "count", "id_format", "text", "roles", "timestamp_divisor"}}` —
  `count` chained messages; message i has id `id_format.format(i=i)`, role
  `roles[i % len(roles)]` and timestamp `i // timestamp_divisor`;
* `{"event": {"session", "event"}}` — append a raw event (it becomes the parent of the next
  chained message when it has an `id`);
* `{"replace": {"session", "events": [...]}}` — `replace_transcript` with the events
  listed: an item `{"event": {...}}` is a raw event, any other a message as in a
  `message` step (without `session`), chained from the previous tree entry of the
  replacement (null for the first);
* `{"delete_session": key, "expect": n}`; `{"reconcile": true, "expect": n?}`;
  `{"compact": true}` — `Compactable.compact` (reclaims deleted data; nothing a search
  sees may change);
* `{"archive": key, "expect": n?}`, `{"restore": key, "expect": n?}` —
  `engine.store.archives.set_session_archived`; `expect` is how many windows changed;
* `{"search": {SearchRequest fields}, "expect": {...}}` — `session_keys` may instead be
  `{"generate": n, "format": "...{i}...", "include": [...]}`, and `query` may be
  `{"repeat": text, "count": n}`. Expectations (all optional): `ids` (message ids, exact
  order), `ids_set`, `keys_set`, `session_ids`, `count`, `truncated`, `indexing`,
  `archived_transcripts_excluded`, `roles_set`, `snippet_contains`, `snippet` (exact, the
  first hit; a string or `[piece, count]` pairs), `snippet_max_utf16`, `score` (`{"value",
  "places"}`, the first hit), `same_score_as_step` (index of an earlier search step whose
  first score must be equal), `error` (the exact `QueryError` message).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from engine.errors import QueryError
from engine.model import SearchRequest, SearchResult, SessionWindow
from engine.store.archives import set_session_archived

CASES_DIRECTORY = Path(__file__).parent / "cases"

BackendFactory = Callable[[], Any]


def load_cases() -> list[dict[str, Any]]:
    """Every case file, sorted by name; each dict gets its `name` (the file stem)."""
    cases = []
    for path in sorted(CASES_DIRECTORY.glob("*.json")):
        case = json.loads(path.read_text(encoding="utf-8"))
        case["name"] = path.stem
        cases.append(case)
    return cases


def expand_text(text: str | list[list[Any]]) -> str:
    """A text given as a string or as `[piece, count]` pairs.

    >>> expand_text([["ab", 2], ["c", 1]])
    'ababc'
    """
    if isinstance(text, str):
        return text
    return "".join(piece * count for piece, count in text)


def utf16_units(text: str) -> int:
    return len(text) + sum(1 for character in text if ord(character) > 0xFFFF)


class CaseRunner:
    """Runs the steps of one case against one backend, remembering chains and results."""

    def __init__(self, backend: Any, case_name: str) -> None:
        self.backend = backend
        self.case_name = case_name
        self.last_entry: dict[str, str | None] = {}
        self.results: dict[int, SearchResult] = {}

    def run(self, steps: list[dict[str, Any]]) -> None:
        for index, step in enumerate(steps):
            where = f"{self.case_name} step {index}: {json.dumps(step, ensure_ascii=False)[:200]}"
            if "window" in step:
                with self.backend.transaction() as transaction:
                    transaction.put_window(SessionWindow(**step["window"]))
            elif "message" in step:
                self.append_messages([step["message"]])
            elif "messages" in step:
                self.append_messages(generate_messages(step["messages"]))
            elif "event" in step:
                self.append_event(step["event"]["session"], step["event"]["event"])
            elif "replace" in step:
                self.replace(step["replace"]["session"], step["replace"]["events"])
            elif "delete_session" in step:
                with self.backend.transaction() as transaction:
                    count = transaction.delete_session(step["delete_session"])
                if "expect" in step:
                    assert count == step["expect"], where
            elif "archive" in step or "restore" in step:
                archived = "archive" in step
                outcome = set_session_archived(self.backend, step["archive" if archived
                                                                  else "restore"],
                                               archived=archived)
                if "expect" in step:
                    assert outcome.changed == step["expect"], where
            elif "compact" in step:
                self.backend.compact()
            elif "reconcile" in step:
                rebuilt = self.backend.reconcile()
                if "expect" in step:
                    assert rebuilt == step["expect"], where
            elif "search" in step:
                self.search(index, step, where)
            else:
                raise ValueError(f"{where}: unknown step")

    def append_messages(self, messages: list[dict[str, Any]]) -> None:
        with self.backend.transaction() as transaction:
            for message in messages:
                session = message["session"]
                event = message_event(message, self.last_entry.get(session))
                transaction.append_event(session, event, created_at=message.get("created_at", 0.0))
                self.last_entry[session] = message["id"]

    def replace(self, session: str, items: list[dict[str, Any]]) -> None:
        events: list[dict[str, Any]] = []
        last: str | None = None
        for item in items:
            event = item["event"] if "event" in item else message_event(item, last)
            if isinstance(event.get("id"), str) and event.get("type") not in ("leaf", "session"):
                last = event["id"]
            events.append(event)
        with self.backend.transaction() as transaction:
            transaction.replace_transcript(session, events, created_at=0.0)
        self.last_entry[session] = last

    def append_event(self, session: str, event: dict[str, Any]) -> None:
        with self.backend.transaction() as transaction:
            transaction.append_event(session, event, created_at=0.0)
        if isinstance(event.get("id"), str) and event.get("type") not in ("leaf", "session"):
            self.last_entry[session] = event["id"]

    def search(self, index: int, step: dict[str, Any], where: str) -> None:
        request = build_request(step["search"])
        expect = step.get("expect", {})
        if "error" in expect:
            with pytest.raises(QueryError) as raised:
                self.backend.search(request)
            assert str(raised.value) == expect["error"], where
            return
        result = self.backend.search(request)
        self.results[index] = result
        check_result(result, expect, where, self.results)


def message_event(message: dict[str, Any], parent: str | None) -> dict[str, Any]:
    """The `type: "message"` event of a message spec (its `parentId`, else `parent`)."""
    event: dict[str, Any] = {
        "type": "message",
        "id": message["id"],
        "parentId": message.get("parentId", parent),
        "message": {"role": message["role"], "content": expand_text(message["text"])},
    }
    if "timestamp" in message:
        event["timestamp"] = message["timestamp"]
    return event


def generate_messages(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The messages of a `messages` step."""
    roles = spec.get("roles", ["user", "assistant"])
    divisor = spec.get("timestamp_divisor", 1)
    return [
        {
            "session": spec["session"],
            "id": spec["id_format"].format(i=i),
            "role": roles[i % len(roles)],
            "text": spec["text"],
            "timestamp": i // divisor,
        }
        for i in range(spec["count"])
    ]


def build_request(fields: dict[str, Any]) -> SearchRequest:
    """A `SearchRequest` from a case's `search` object (with the generators expanded)."""
    values = dict(fields)
    query = values["query"]
    if isinstance(query, dict):
        values["query"] = query["repeat"] * query["count"]
    keys = values.get("session_keys")
    if isinstance(keys, dict):
        generated = [keys["format"].format(i=i) for i in range(keys["generate"])]
        values["session_keys"] = tuple(keys.get("include", [])) + tuple(generated)
    elif keys is not None:
        values["session_keys"] = tuple(keys)
    return SearchRequest(**values)


def check_result(
    result: SearchResult, expect: dict[str, Any], where: str, earlier: dict[int, SearchResult]
) -> None:
    """Assert every expectation of a search step."""
    hits = result.hits
    ids = [hit.message_id for hit in hits]
    if "ids" in expect:
        assert ids == expect["ids"], where
    if "ids_set" in expect:
        assert sorted(ids) == sorted(expect["ids_set"]), where
    if "keys_set" in expect:
        assert sorted({hit.session_key for hit in hits}) == sorted(expect["keys_set"]), where
    if "session_ids" in expect:
        assert [hit.session_id for hit in hits] == expect["session_ids"], where
    if "count" in expect:
        assert len(hits) == expect["count"], where
    for flag in ("truncated", "indexing", "archived_transcripts_excluded"):
        if flag in expect:
            assert getattr(result, flag) == expect[flag], f"{where}: {flag}"
    if "roles_set" in expect:
        assert sorted({hit.role for hit in hits}) == sorted(expect["roles_set"]), where
    if "snippet_contains" in expect:
        for hit in hits:
            assert expect["snippet_contains"] in hit.snippet, where
    if "snippet" in expect:
        assert hits[0].snippet == expand_text(expect["snippet"]), where
    if "snippet_max_utf16" in expect:
        for hit in hits:
            assert utf16_units(hit.snippet) <= expect["snippet_max_utf16"], where
            assert not any(0xD800 <= ord(character) <= 0xDFFF for character in hit.snippet), where
    if "score" in expect:
        assert round(hits[0].score, expect["score"]["places"]) == expect["score"]["value"], where
    if "same_score_as_step" in expect:
        assert hits[0].score == earlier[expect["same_score_as_step"]].hits[0].score, where


def run_case(backend_factory: BackendFactory, case: dict[str, Any]) -> None:
    """Run one case on a fresh backend from `backend_factory`, then close it."""
    backend = backend_factory()
    try:
        CaseRunner(backend, case.get("name", "case")).run(case["steps"])
    finally:
        backend.close()
