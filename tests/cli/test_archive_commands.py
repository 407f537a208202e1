"""`session-search archive` and `restore`, run as users run them, on both backends; and
the two status messages the seed keeps apart: unconfirmed completeness (`indexing`) and
cold archived transcripts excluded, each exact, each present exactly when its flag is.

The store: the demo corpus imported with `--no-reconcile` (its rewound windows wait for
a rebuild, so every search says `indexing: true`), whose key `agent:work:recall` holds
the archived window `archived-session` ("What did we decide about cold storage?").
Then: restore (the archived notice goes, the indexing one stays, the hits come back),
reconcile (no notice at all), archive the whole key (two windows counted).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from engine.agent_tools.sessions_search import INDEXING_WARNING
from engine.agent_tools.ui_search import INDEXING_NOTICE, archived_notice
from tests.cli.conftest import CHECKOUT, Runner

KEY = "agent:work:recall"
#: The texts, written out here as the product writes them (behaviour.md §3.1, §10.1; the
#: tool's archived warning is the `openclaw` package's sessions-search tool).
PALETTE_INDEXING = "Indexing older messages — search again shortly."
PALETTE_ARCHIVED = ("1 archived transcripts excluded; open a session to restore its "
                    "searchable history.")
TOOL_INDEXING = ("Transcript indexing is in progress; results may be incomplete. Retry "
                 "sessions_search shortly.")
TOOL_ARCHIVED = ("Search excludes 1 archived transcripts. Restore a transcript to include "
                 "it in search.")
CLI_INDEXING = "indexing: search completeness could not be confirmed; run `session-search reconcile`"
CLI_ARCHIVED = ("1 archived window in scope was not searched (archived transcripts stay out "
                "of search until `session-search restore`)")


@pytest.fixture(params=["reference", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    path = tmp_path / request.param
    completed = subprocess.run(
        [sys.executable, "-m", "engine", "import", "--quiet", "--no-reconcile", "--backend",
         request.param, "--store", str(path), str(CHECKOUT / "engine" / "demo_corpus")],
        cwd=CHECKOUT, capture_output=True, text=True, timeout=120, check=False)
    assert (completed.returncode, completed.stderr) == (0, "")
    return str(path)


def answers(session_search: Runner, store: str) -> dict[str, object]:
    """What the three surfaces say for the query `cold`: the CLI search (plain and JSON),
    the palette and the agent tool (requester `agent:work:recall`)."""
    plain = session_search("search", "--store", store, "cold")
    kernel = session_search("search", "--store", store, "--json", "cold")
    palette = session_search("ui-search", "--store", store, "--json", "cold")
    tool = session_search("call", "sessions_search", "--store", store, "--requester", KEY,
                          '{"query": "cold"}')
    for run in (plain, kernel, palette, tool):
        assert (run.status, run.err) == (0, ""), run.err
    kernel_answer, palette_answer, tool_answer = (json.loads(run.out)
                                                  for run in (kernel, palette, tool))
    return {
        "notices": [line for line in plain.out.splitlines()
                    if line.startswith(("indexing:", "1 archived", "2 archived"))],
        "hits": [hit["messageId"] for hit in kernel_answer["hits"]],
        "archived": kernel_answer.get("archivedTranscriptsExcluded", 0),
        "palette": palette_answer["notices"],
        "tool": tool_answer.get("warning"),
        "tool hits": [hit["messageId"] for hit in tool_answer["results"]],
    }


def test_the_constants_are_the_products_texts() -> None:
    assert (INDEXING_NOTICE, archived_notice(1), INDEXING_WARNING) == (
        PALETTE_INDEXING, PALETTE_ARCHIVED, TOOL_INDEXING)
    assert len({PALETTE_INDEXING, PALETTE_ARCHIVED, TOOL_INDEXING, TOOL_ARCHIVED}) == 4


def test_archive_and_restore_move_a_session_out_of_search_and_back_with_exact_notices(
        session_search: Runner, store: str) -> None:
    assert answers(session_search, store) == {
        "notices": [CLI_INDEXING, CLI_ARCHIVED], "hits": [], "archived": 1,
        "palette": [PALETTE_INDEXING, PALETTE_ARCHIVED],
        "tool": f"{TOOL_INDEXING} {TOOL_ARCHIVED}", "tool hits": [],
    }
    assert answers(session_search, store)["archived"] == 1  # searching restores nothing

    restored = session_search("restore", "--store", store, KEY)
    assert (restored.status, restored.out, restored.err) == (
        0, f"restored {KEY}: 1 of 2 windows searchable again\n", "")
    assert answers(session_search, store) == {
        "notices": [CLI_INDEXING], "hits": ["archived-question", "archived-answer"],
        "archived": 0, "palette": [PALETTE_INDEXING], "tool": TOOL_INDEXING,
        "tool hits": ["archived-question", "archived-answer"],
    }

    assert session_search("reconcile", "--store", store, "--quiet").status == 0
    after_reconcile = answers(session_search, store)
    assert (after_reconcile["notices"], after_reconcile["palette"], after_reconcile["tool"]) == (
        [], [], None)

    archived = session_search("archive", "--store", store, "--json", KEY)
    assert (archived.status, archived.err) == (0, "")
    assert json.loads(archived.out) == {"sessionKey": KEY, "archived": True, "windows": 2,
                                        "changed": 2}
    plain = session_search("search", "--store", store, "--agent", "work", "quasar").out
    assert plain.splitlines() == [
        "no hits", ("2 archived windows in scope were not searched (archived transcripts "
        "stay out of search until `session-search restore`)")]
    again = session_search("archive", "--store", store, KEY)
    assert again.out == f"{KEY} was already archived (2 windows); nothing changed\n"


def test_a_key_the_store_does_not_hold_is_refused(session_search: Runner, store: str) -> None:
    for command in ("archive", "restore"):
        session_search(command, "--store", store, "agent:work:nothing").refused(
            2, "no session 'agent:work:nothing' in this store (no window has this key)")
