"""A search with no hit says why when its query's words do (issue 32, item 3).

Every case runs `python -m engine` in a fresh process on the demo store (both backends
for `search`): `caf*` is a literal word (prefix matching is the palette's), an emoji or
a punctuation-only word has no tokens, an upper-case `OR` is a literal word. A miss whose
words give no reason prints only "no hits"; a search with hits prints no reason.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import CHECKOUT

DEMO = CHECKOUT / "engine" / "demo_corpus"
STAR = ('`caf*` is searched as the literal word "caf": `*` is no wildcard here; prefix '
        "matching is the Control UI palette's (try `session-search ui-search caf`) or "
        "`--match prefix`'s, for the last word")


def no_tokens(word: str) -> str:
    return (f"`{word}` has no tokens (emoji and punctuation only separate words), so it "
            "matches nothing, and neither does the query: leave it out")


LITERAL_OR = ("`OR` is a literal word here, not an operator: every word of the query must "
              "occur in the message")


@pytest.fixture(scope="module", params=["reference", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    folder = tmp_path_factory.mktemp(f"misses-{request.param}") / "store"
    completed = subprocess.run(
        [sys.executable, "-m", "engine", "import", "--quiet", "--store", str(folder),
         "--backend", request.param, str(DEMO)],
        cwd=CHECKOUT, capture_output=True, text=True, timeout=120, check=False)
    assert (completed.returncode, completed.stderr) == (0, "")
    return str(folder)


@pytest.mark.parametrize("query, reasons", [
    (["caf*"], [STAR]),
    (["cafe", "🎉"], [no_tokens("🎉")]),
    (["deployment", "...", "failed"], [no_tokens("...")]),
    (["cafe", "OR", "tea"], [LITERAL_OR]),
    (["zzzq"], []),
], ids=["star", "emoji", "punctuation", "or", "no-reason"])
def test_a_miss_says_why(session_search, store: str, query: list[str],
                         reasons: list[str]) -> None:
    outcome = session_search("search", "--store", store, "--agent", "main", *query)
    assert (outcome.status, outcome.err) == (0, "")
    assert outcome.out.splitlines() == ["no hits", *reasons]


def test_json_keeps_its_document_and_says_why_on_standard_error(session_search,
                                                                store: str) -> None:
    outcome = session_search("search", "--store", store, "--agent", "main", "--json", "caf*")
    assert outcome.status == 0
    assert json.loads(outcome.out) == {"hits": [], "truncated": False, "indexing": False}
    assert outcome.err == f"session-search: note: {STAR}\n"
    lines = session_search("search", "--store", store, "--agent", "main", "--jsonl", "🎉")
    assert (lines.out, lines.err) == ("", f"session-search: note: {no_tokens('🎉')}\n")


def test_the_advice_holds(session_search, store: str) -> None:
    """What the reason advises finds what `caf*` meant: the palette, and --match prefix."""
    palette = json.loads(session_search("ui-search", "--store", store, "--json", "caf").out)
    assert {entry["hit"]["messageId"] for entry in palette["messages"]} == {
        "cafe-communication", "french"}
    prefix = session_search("search", "--store", store, "--match", "prefix", "--json", "caf*")
    assert len(json.loads(prefix.out)["hits"]) == 2 and prefix.err == ""


def test_hits_give_no_reason(session_search, store: str) -> None:
    found = session_search("search", "--store", store, "--agent", "main", "cafe")
    assert found.status == 0 and "no wildcard" not in found.out and found.err == ""


def test_explain_says_why_too(session_search, demo_store: Path) -> None:
    outcome = session_search("explain", "--store", str(demo_store), "--agent", "main", "caf*")
    assert outcome.out.splitlines() == ['phrases: "caf"', "no hits", STAR]
