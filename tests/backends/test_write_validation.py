"""Every backend refuses the same writes with the same error (`engine.transcript.validation`).

Each case was accepted by one backend and refused (or crashed) in the other before the
checks moved to one module; now both must raise the identical class and message, and
the refused transaction must leave nothing behind.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.backends.reference.backend import ReferenceBackend
from engine.backends.sqlite.backend import SqliteBackend
from engine.directory import MemoryDirectory
from engine.errors import EngineError, InputError, UnknownSession, UsageError
from engine.model import SessionWindow

MESSAGE = {"type": "message", "id": "m1", "parentId": None,
           "message": {"role": "user", "content": "hello"}}

DEEP: list[Any] = []
for _ in range(600):
    DEEP = [DEEP]

BAD_WINDOWS: dict[str, tuple[Any, type[EngineError], str]] = {
    "reason reboot": (
        SessionWindow("s1", "global", reason="reboot"), InputError,
        ('unknown window reason "reboot" (expected one of: initial, reset, rollover, fork, '
         "rewind, switch, recovery, compaction)")),
    "unknown kind": (
        SessionWindow("s1", "global", kind="robot"), InputError,
        'unknown session kind "robot" (expected one of: chat, subagent, cron, system, dock)'),
    "blank session id": (
        SessionWindow(" ", "global"), InputError, "a session id must be a non-blank string"),
    "session id with a slash": (
        SessionWindow("a/b", "global"), InputError,
        'session id "a/b" must not contain "/", "\\\\" or NUL'),
    "malformed key": (
        SessionWindow("s1", "agent:main"), InputError,
        'session key "agent:main" must be "agent:<agentId>:<rest>", "global" or "unknown"'),
    "window follows itself": (
        SessionWindow("s1", "global", previous_session_id="s1"), InputError,
        'window "s1" cannot follow itself'),
    "integer session id": (
        SessionWindow(5, "global"), InputError, "session_id must be a string (got int)"),
    "integer title": (
        SessionWindow("s1", "global", title=5), InputError,
        "title must be a string or null (got int)"),
    "string flag": (
        SessionWindow("s1", "global", current="yes"), InputError,
        "current must be true or false (got str)"),
    "integer flag": (
        SessionWindow("s1", "global", incognito=1), InputError,
        "incognito must be true or false (got int)"),
    "lone surrogate in the title": (
        SessionWindow("s1", "global", title="t\ud800"), InputError,
        "title holds a lone surrogate (U+D800), which cannot be stored as UTF-8 text"),
    "NaN creation time": (
        SessionWindow("s1", "global", created_at=float("nan")), InputError,
        "created_at must be a finite number of epoch milliseconds or null (got nan)"),
    "set in extra": (
        SessionWindow("s1", "global", extra={"tags": {"a"}}), InputError,
        'extra["tags"] is a set, not a JSON value'),
    "tuple in extra": (
        SessionWindow("s1", "global", extra={"tags": ("a",)}), InputError,
        'extra["tags"] is a tuple, not a JSON value'),
    "integer key in extra": (
        SessionWindow("s1", "global", extra={1: "a"}), InputError,
        "extra has a key that is not a string (int 1)"),
    "not a window": (
        {"session_id": "s1"}, UsageError, "put_window needs a SessionWindow, not dict"),
}

BAD_EVENTS: dict[str, tuple[Any, Any, str]] = {
    "type 5": ({"type": 5}, None, 'session s1: an event needs a non-blank string "type"'),
    "a list": ([1, 2], None, "session s1: an event must be a JSON object"),
    "message without id": (
        {"type": "message", "message": {"role": "user"}}, None,
        'session s1: a message event needs a non-blank string "id"'),
    "leaf without parentId": (
        {"type": "leaf", "id": "l1", "targetId": "m1"}, None,
        'session s1: a leaf event needs "parentId" (a non-blank string, or null)'),
    "bytes value": (
        {**MESSAGE, "raw": b"x"}, None, 'session s1: event["raw"] is a bytes, not a JSON value'),
    "nested set": (
        {**MESSAGE, "meta": {"tags": [{"a"}]}}, None,
        'session s1: event["meta"]["tags"][0] is a set, not a JSON value'),
    "tuple value": (
        {**MESSAGE, "pair": (1, 2)}, None, 'session s1: event["pair"] is a tuple, not a JSON value'),
    "integer key": (
        {**MESSAGE, 1: "x"}, None, "session s1: event has a key that is not a string (int 1)"),
    "integer beyond 64 bits": (
        {**MESSAGE, "big": 2**70}, None,
        'session s1: event["big"] is an integer outside the 64-bit range'),
    "nested too deep": (
        {**MESSAGE, "deep": DEEP}, None, "session s1: event is nested more than 512 levels deep"),
    "string receipt time": (
        MESSAGE, "5", ("session s1: created_at must be a finite number of epoch milliseconds "
                       "or null (got str)")),
    "NaN receipt time": (
        MESSAGE, float("nan"), ("session s1: created_at must be a finite number of epoch "
                                "milliseconds or null (got nan)")),
}

BackendFactory = Callable[[Path], Any]

FACTORIES: dict[str, BackendFactory] = {
    "reference": lambda folder: ReferenceBackend.create_in(MemoryDirectory()),
    "sqlite": lambda folder: SqliteBackend.create(folder / "sqlite"),
}


@pytest.fixture(params=sorted(FACTORIES))
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    opened = FACTORIES[request.param](tmp_path)
    yield opened
    opened.close()


def refusal(write: Callable[[], None]) -> tuple[type, str]:
    with pytest.raises(EngineError) as raised:
        write()
    return type(raised.value), str(raised.value)


def test_the_two_named_inputs_are_refused_by_both(backend: Any) -> None:
    with pytest.raises(InputError, match='unknown window reason "reboot"'), \
            backend.transaction() as transaction:
        transaction.put_window(SessionWindow("s1", "global", reason="reboot"))
    with backend.transaction() as transaction:
        transaction.put_window(SessionWindow("s1", "global"))
    with pytest.raises(InputError, match='needs a non-blank string "type"'), \
            backend.transaction() as transaction:
        transaction.append_event("s1", {"type": 5})
    assert [window.reason for window in backend.windows()] == ["initial"]
    assert backend.event_count("s1") == 0


@pytest.mark.parametrize("case", sorted(BAD_WINDOWS))
def test_bad_windows_get_the_same_error_on_every_backend(case: str, tmp_path: Path) -> None:
    window, error_class, message = BAD_WINDOWS[case]
    for name, factory in FACTORIES.items():
        opened = factory(tmp_path / name)
        try:
            def write(opened: Any = opened) -> None:
                with opened.transaction() as transaction:
                    transaction.put_window(window)
            assert refusal(write) == (error_class, message), name
            assert opened.windows() == [], name
        finally:
            opened.close()


@pytest.mark.parametrize("case", sorted(BAD_EVENTS))
def test_bad_events_get_the_same_error_on_every_backend(case: str, tmp_path: Path) -> None:
    event, created_at, message = BAD_EVENTS[case]
    for name, factory in FACTORIES.items():
        opened = factory(tmp_path / name)
        try:
            with opened.transaction() as transaction:
                transaction.put_window(SessionWindow("s1", "global"))

            def write(opened: Any = opened) -> None:
                with opened.transaction() as transaction:
                    transaction.append_event("s1", MESSAGE)
                    transaction.append_event("s1", event, created_at)
            assert refusal(write) == (InputError, message), name
            assert opened.event_count("s1") == 0, name  # the good event went with it
        finally:
            opened.close()


def test_an_append_to_a_missing_window_has_one_wording(backend: Any) -> None:
    def write() -> None:
        with backend.transaction() as transaction:
            transaction.append_event("nope", MESSAGE)
    assert refusal(write) == (UnknownSession, "unknown session id 'nope'")


def test_values_both_backends_keep_are_still_accepted(backend: Any) -> None:
    window = SessionWindow("s1", "global", title="café", created_at=5.0,
                           extra={"tags": ["a", "b"], "ratio": float("inf")})
    event = {**MESSAGE, "lone": "\ud800", "nested": [[{"ok": None}]], "n": -(2**63)}
    with backend.transaction() as transaction:
        transaction.put_window(window)
        transaction.append_event("s1", event, created_at=7)
    assert backend.windows()[0].extra == {"tags": ["a", "b"], "ratio": float("inf")}
    assert backend.events("s1")[0].event == {**event}
