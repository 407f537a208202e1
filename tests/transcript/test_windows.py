"""Session keys, window validation and window chains (engine.transcript.windows)."""

from __future__ import annotations

import pytest

from engine.model import SessionWindow
from engine.transcript.windows import (
    chain_problems,
    current_window,
    session_key_problem,
    window_chain,
    window_problem,
)


@pytest.mark.parametrize("key", ["agent:main:main", "agent:work_team:main", "global",
                                 "unknown", "agent:main:dashboard:incognito-private"])
def test_valid_session_keys(key: str) -> None:
    assert session_key_problem(key) is None


@pytest.mark.parametrize("key", ["main", "agent:main", "agent::main", "agent:main:", "", 7])
def test_invalid_session_keys(key: object) -> None:
    assert session_key_problem(key) is not None


def test_window_problem_names_the_bad_field() -> None:
    assert window_problem(SessionWindow("s", "global")) is None
    assert "reason" in window_problem(SessionWindow("s", "global", reason="boot"))
    assert "kind" in window_problem(SessionWindow("s", "global", kind="robot"))
    assert "follow itself" in window_problem(
        SessionWindow("s", "global", previous_session_id="s"))
    assert window_problem(SessionWindow("a/b", "global")) is not None
    assert window_problem(SessionWindow(" ", "global")) is not None
    problem = window_problem(SessionWindow("s", "global", spawned_by="nope"))
    assert problem is not None and problem.startswith("spawned_by:")


def test_chain_orders_windows_along_links() -> None:
    first = SessionWindow("w1", "agent:a:main", current=False, created_at=30)
    second = SessionWindow("w2", "agent:a:main", "w1", "reset", current=False, created_at=10)
    third = SessionWindow("w3", "agent:a:main", "w2", "rollover", created_at=20)
    chain = window_chain([third, second, first])
    assert [w.session_id for w in chain] == ["w1", "w2", "w3"]
    assert current_window(chain).session_id == "w3"
    assert chain_problems(chain) == []


def test_link_to_another_key_starts_a_chain() -> None:
    fork = SessionWindow("f", "agent:a:fork", previous_session_id="other", reason="fork")
    assert [w.session_id for w in window_chain([fork])] == ["f"]
    assert chain_problems([fork]) == []


def test_two_current_windows_and_cycles_are_problems() -> None:
    a = SessionWindow("a", "global", previous_session_id="b", reason="reset")
    b = SessionWindow("b", "global", previous_session_id="a", reason="reset")
    problems = chain_problems([a, b])
    assert problems == ['key "global" has 2 current windows: a, b',
                        'key "global" has a cycle of previous windows: a -> b -> a']
    assert sorted(w.session_id for w in window_chain([a, b])) == ["a", "b"]


def test_duplicate_session_ids_are_a_problem() -> None:
    a = SessionWindow("a", "global")
    assert chain_problems([a, SessionWindow("a", "unknown")]) == ['session id "a" appears twice']
