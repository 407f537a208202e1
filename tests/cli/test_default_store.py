"""A default store: `$SESSION_SEARCH_STORE` stands for `--store DIR` (issue 32, item 3).

Every case runs `python -m engine` in a fresh process with the variable set, unset or
empty, on the demo store: the variable is used when `--store` is absent, an explicit
`--store` wins, and a command that needs a store and has neither is refused with one
line naming both.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.cli.commands import STORE_VARIABLE

NEITHER = "needs a store: pass --store DIR or set SESSION_SEARCH_STORE=DIR"


def test_the_variable_stands_for_store(session_search, demo_store: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    explicit = session_search("search", "--store", str(demo_store), "--json", "cafe")
    monkeypatch.setenv(STORE_VARIABLE, str(demo_store))
    implicit = session_search("search", "--json", "cafe")
    assert (implicit.status, implicit.err) == (0, "")
    assert implicit.out == explicit.out and '"cafe-communication"' in implicit.out
    stats = session_search("stats", "--json")
    assert stats.status == 0 and '"windows": 23' in stats.out
    history = session_search("history", "agent:work:recall", "--json")
    assert history.status == 0 and '"sessionKey": "agent:work:recall"' in history.out


def test_an_explicit_store_wins(session_search, demo_store: Path, tmp_path: Path,
                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(STORE_VARIABLE, str(tmp_path / "elsewhere"))
    outcome = session_search("search", "--store", str(demo_store), "--json", "cafe")
    assert (outcome.status, outcome.err) == (0, "")
    assert '"cafe-communication"' in outcome.out
    session_search("search", "cafe").refused(
        2, f"{tmp_path / 'elsewhere'}: no session-search store here")


# (`serve` given neither serves a scratch store: tests/conformance/test_conform_command.py)
@pytest.mark.parametrize("argv", [("search", "cafe"), ("stats",), ("dump",),
                                  ("history", "agent:main:main"),
                                  ("call", "sessions_search", "--requester",
                                   "agent:main:main", '{"query": "cafe"}')])
@pytest.mark.parametrize("value", [None, ""])
def test_neither_is_refused_naming_both(session_search, argv: tuple[str, ...],
                                        value: str | None,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    if value is None:
        monkeypatch.delenv(STORE_VARIABLE, raising=False)
    else:  # an empty variable is no store
        monkeypatch.setenv(STORE_VARIABLE, value)
    session_search(*argv).refused(2, f"{argv[0]} {NEITHER}")


def test_import_makes_the_default_store(session_search, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    store = tmp_path / "made"
    monkeypatch.setenv(STORE_VARIABLE, str(store))
    demo = Path(__file__).resolve().parents[2] / "engine" / "demo_corpus"
    outcome = session_search("import", "--quiet", str(demo))
    assert (outcome.status, outcome.err) == (0, "")
    assert (store / "store.meta").is_file()


def test_help_names_the_variable(session_search) -> None:
    outcome = session_search("search", "--help")
    assert outcome.status == 0
    assert "(default: $SESSION_SEARCH_STORE)" in " ".join(outcome.out.split())
