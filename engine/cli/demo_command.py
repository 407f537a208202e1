"""`session-search demo`: the main job on the bundled corpus, end to end.

Owns: the demo's story — which queries it runs and why — and its output. Must not touch:
import, search or comparison logic beyond calling the engine's public pieces
(`engine.ingest.import_into_store`, `engine.store.registry.open_backend`,
`Backend.search`).

What it does, in order:
1. imports the bundled demo corpus (the package data of `engine.demo_corpus`, found
   through `importlib.resources`, so it works from an installed package as from a
   source checkout) into a fresh store for every backend (the reference engine and
   SQLite FTS5), in temporary folders unless `--keep DIR` is given;
2. prints the store statistics;
3. runs the showcase queries below on every backend and prints the reference engine's
   hits, then whether every other backend returned the identical result (hits, order,
   scores, snippets, `truncated`, `indexing`) — the conformance oracle in miniature;
4. ends with one line: the conformance cases written on the bundled corpus
   (`engine.conformance`, whose `corpus` is `demo`) run on every backend, as
   `session-search conform` runs all of them.
"""

from __future__ import annotations

import argparse
import tempfile
from contextlib import AbstractContextManager
from dataclasses import dataclass
from importlib.resources import as_file, files
from pathlib import Path
from typing import Any

from engine.cli.commands import add_command
from engine.cli.json_output import print_json
from engine.cli.output import Column, format_score, format_table
from engine.cli.store_commands import format_stats, json_counts, ordered_stats
from engine.errors import EngineError
from engine.ingest import import_into_store
from engine.model import SearchRequest, SearchResult
from engine.store.registry import open_backend

DEMO_BACKENDS = ("reference", "sqlite")
#: The package whose data files are the demo corpus (see its docstring for why).
DEMO_CORPUS_PACKAGE = "engine.demo_corpus"


def demo_corpus() -> AbstractContextManager[Path]:
    """The demo corpus folder as a file-system path, for as long as the `with` lasts.

    Found through `importlib.resources`, so it is wherever the package is: a source
    checkout, an editable install, or site-packages after `pip install .` (a package
    imported from a zip archive is extracted to a temporary folder for the block).
    """
    return as_file(files(DEMO_CORPUS_PACKAGE))


@dataclass(frozen=True, slots=True)
class Showcase:
    """One demo query and the rule of the specification it shows."""

    rule: str
    request: SearchRequest


SHOWCASES: tuple[Showcase, ...] = (
    Showcase("diacritics are removed on both sides: `cafe` finds `Café`",
             SearchRequest("cafe", session_keys=())),
    Showcase("final sigma folds: `οσ` finds `ΟΣ ος`",
             SearchRequest("οσ", session_keys=())),
    Showcase("a term with punctuation is a phrase: `per-session` = `per session`",
             SearchRequest("per-session communication", session_keys=())),
    Showcase("exact mode needs whole words: `per session communi` finds nothing",
             SearchRequest("per session communi", session_keys=())),
    Showcase("prefix mode (Control UI) completes the last word only",
             SearchRequest("per session communi", session_keys=(), match="prefix")),
    Showcase("`OR` is a literal word, not an operator",
             SearchRequest("literal OR keyword", session_keys=())),
    Showcase("a punctuation-only term empties the whole AND query",
             SearchRequest("deployment - failed", session_keys=())),
    Showcase("CJK retry: `会议` is inside one unicode61 token, found as a substring",
             SearchRequest("会议", session_keys=())),
    Showcase("one partition per agent, the agent id literal: work_team sees its own keys "
             "only, not workxteam's",
             SearchRequest("namespace", agent_id="work_team")),
    Showcase("global and unknown live in the default agent's partition: main sees them",
             SearchRequest("namespace check", agent_id="main")),
    Showcase("recent order: newest first",
             SearchRequest("the", session_keys=(), order="recent", limit=3)),
)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `demo` command."""
    parser = add_command(
        subparsers, "demo",
        description="Import the bundled demo corpus into a reference store and a SQLite "
                    "FTS5 store, print their statistics, run showcase queries and compare "
                    "the backends.",
        examples=["session-search demo", "session-search demo --keep /tmp/demo-stores"])
    parser.add_argument("--keep", metavar="DIR",
                        help="keep the stores in DIR/<backend> instead of a temporary folder")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(run=run_demo)


def run_demo(args: argparse.Namespace) -> int:
    """Import, search and compare; exit 1 when the backends disagree anywhere."""
    with demo_corpus() as corpus:
        if not (corpus / "sessions.jsonl").is_file():
            raise EngineError(f"the demo corpus is missing from {corpus}: the package was "
                              "installed without its data files")
        if args.keep:
            report = demo_report(corpus, Path(args.keep))
        else:
            with tempfile.TemporaryDirectory(prefix="session-search-demo-") as folder:
                report = demo_report(corpus, Path(folder))
    if args.json:
        print_json({**report, "stats": {name: json_counts(counts)
                                        for name, counts in report["stats"].items()}})
    else:
        print(format_demo(report))
    conformance = report["conformance"]
    conforms = all(count == conformance["cases"] for count in conformance["passed"].values())
    return 0 if report["allBackendsAgree"] and conforms else 1


def demo_report(corpus: Path, folder: Path) -> dict[str, Any]:
    """Import the corpus under `folder/<backend>`, run every showcase, compare results."""
    stats: dict[str, Any] = {}
    for name in DEMO_BACKENDS:
        outcome = import_into_store(folder / name, name, [corpus], create_parents=True)
        stats[name] = ordered_stats(outcome.stats)
    backends = {name: open_backend(folder / name) for name in DEMO_BACKENDS}
    try:
        queries = [showcase_result(showcase, backends) for showcase in SHOWCASES]
    finally:
        for backend in backends.values():
            backend.close()
    conformance = demo_conformance()
    return {
        "corpus": str(corpus),
        "stats": stats,
        "queries": queries,
        "allBackendsAgree": all(query["agree"] for query in queries),
        "conformance": conformance,
    }


def demo_conformance() -> dict[str, Any]:
    """The conformance cases on the bundled corpus, run on every backend in-process:
    `{"cases": n, "passed": {backend: n}, "allCases": n}`."""
    from engine.conformance.case_files import load_cases
    from engine.conformance.runner import run_cases
    from engine.conformance.targets import InProcessTarget

    every_case = load_cases()
    cases = [case for case in every_case if case.corpus == "demo"]
    passed = {}
    for name in DEMO_BACKENDS:
        target = InProcessTarget(name)
        try:
            _, outcomes = run_cases(target, cases)
        finally:
            target.close()
        passed[name] = sum(outcome.status == "passed" for outcome in outcomes)
    return {"cases": len(cases), "passed": passed, "allCases": len(every_case)}


def showcase_result(showcase: Showcase, backends: dict[str, Any]) -> dict[str, Any]:
    """One showcase: the reference result and which backends returned the same."""
    results: dict[str, SearchResult] = {
        name: backend.search(showcase.request) for name, backend in backends.items()
    }
    reference = results["reference"]
    differing = [name for name, result in results.items() if result != reference]
    request = showcase.request
    return {
        "rule": showcase.rule,
        "query": request.query,
        "match": request.match,
        "order": request.order,
        "agentId": request.agent_id,
        "result": reference.to_json(),
        "agree": not differing,
        "differingBackends": differing,
    }


def format_demo(report: dict[str, Any]) -> str:
    """The plain-text demo report."""
    lines = [f"imported the demo corpus {report['corpus']} into: {', '.join(report['stats'])}",
             "", format_stats(report["stats"]["reference"]), ""]
    for query in report["queries"]:
        mode = f" [{query['match']}, {query['order']}]"
        scope = f" agent={query['agentId']}" if query["agentId"] else " all sessions"
        lines.append(f"» {query['rule']}")
        lines.append(f"  query {query['query']!r}{mode}{scope}")
        hits = query["result"]["hits"]
        if hits:
            rows = [[hit["sessionKey"], hit["messageId"], format_score(hit["score"]),
                     _one_line(hit["snippet"])] for hit in hits]
            table = format_table(["sessionKey", "messageId", Column("score", align="right"),
                                  "snippet"], rows)
            lines.extend("  " + row for row in table.splitlines())
        else:
            lines.append("  (no hits)")
        verdict = ("same result on " + ", ".join(DEMO_BACKENDS) if query["agree"]
                   else "DIFFERS on " + ", ".join(query["differingBackends"]))
        lines.append(f"  {verdict}")
        lines.append("")
    agreement = ("every backend returned identical results" if report["allBackendsAgree"]
                 else "the backends disagree (see above)")
    lines.append(agreement)
    conformance = report["conformance"]
    passed = ", ".join(f"{count} on {name}" for name, count in conformance["passed"].items())
    lines.append(f"conformance on the bundled corpus: {conformance['cases']} cases, passed "
                 f"{passed} (session-search conform runs all {conformance['allCases']})")
    return "\n".join(lines)


def _one_line(text: str, width: int = 60) -> str:
    """A snippet on one line, cut to `width` characters.

    >>> _one_line("a\\nb" + "c" * 80, width=8)
    'a bccccc…'
    """
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[:width] + "…"
