"""A search printing JSON says why it has no hits, and what its flags mean with `--jsonl`,
without loading the readable view (`engine.cli.search_notices` holds the notes' wording,
apart from `engine.cli.search_view`, its table, and the output and highlighting under
it). Every case runs in a fresh process on the demo corpus in a reference store."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.cli.conftest import CHECKOUT

DEMO = CHECKOUT / "engine" / "demo_corpus"
#: The readable view and what it loads: a JSON search needs none of them.
READABLE_VIEW = {"engine.cli.search_view", "engine.cli.output", "engine.cli.highlight"}
STAR = ('`caf*` is searched as the literal word "caf": `*` is no wildcard here; prefix '
        "matching is the Control UI palette's (try `session-search ui-search caf`) or "
        "`--match prefix`'s, for the last word")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> str:
    folder = tmp_path_factory.mktemp("json-notes") / "store"
    completed = subprocess.run(
        [sys.executable, "-m", "engine", "import", "--quiet", "--store", str(folder),
         "--backend", "reference", str(DEMO)],
        cwd=CHECKOUT, capture_output=True, text=True, timeout=120, check=False)
    assert (completed.returncode, completed.stderr) == (0, "")
    return str(folder)


def search_loading(*argv: str) -> tuple[str, str, set[str]]:
    """Standard output, standard error and the `engine` modules loaded of a fresh
    process that ran `session-search search ARGV`."""
    program = ("import sys; from engine.cli import main; status = main(sys.argv[1:]); "
               "sys.stdout.flush(); "
               "print('MODULES', ' '.join(m for m in sys.modules if m.startswith('engine')), "
               "file=sys.stderr); sys.exit(status)")
    completed = subprocess.run([sys.executable, "-c", program, "search", *argv],
                               cwd=CHECKOUT, capture_output=True, text=True, timeout=120,
                               check=False)
    assert completed.returncode == 0, completed.stderr
    errors, _, modules = completed.stderr.rpartition("MODULES ")
    return completed.stdout, errors, set(modules.split())


def test_json_without_hits_says_why_without_the_readable_view(store: str) -> None:
    out, err, loaded = search_loading("--store", store, "--agent", "main", "--json", "caf*")
    assert json.loads(out) == {"hits": [], "truncated": False, "indexing": False}
    assert err == f"session-search: note: {STAR}\n"
    assert "engine.cli.search_notices" in loaded and "engine.inspection.no_hits" in loaded
    assert loaded & READABLE_VIEW == set()


def test_json_lines_say_what_a_truncated_result_means_without_the_readable_view(
        store: str) -> None:
    out, err, loaded = search_loading("--store", store, "--jsonl", "--limit", "1", "the")
    assert len(out.splitlines()) == 1 and json.loads(out)["messageId"]
    assert err.splitlines() == [
        ("session-search: note: more hits than the limit (truncated); refine the query or "
        "raise --limit (up to 25)"),
        ("session-search: note: 1 archived window in scope was not searched (archived "
        "transcripts stay out of search until `session-search restore`)")]
    assert loaded & READABLE_VIEW == set()


def test_json_with_hits_loads_no_notes(store: str) -> None:
    out, err, loaded = search_loading("--store", store, "--json", "cafe")
    assert json.loads(out)["hits"] and err == ""
    assert loaded & {*READABLE_VIEW, "engine.cli.search_notices",
                     "engine.inspection.no_hits"} == set()


def test_the_readable_view_prints_the_same_notes(store: str) -> None:
    out, err, loaded = search_loading("--store", store, "--agent", "main", "caf*")
    assert (out.splitlines(), err) == (["no hits", STAR], "")
    assert READABLE_VIEW <= loaded

