"""`session-search conform`: run the conformance cases against a backend and report.

Owns: the command's arguments, choosing the cases (`--cases`, `--features`, `--case`),
opening the target (`--backend reference|sqlite|postgres|reference:postgres|exec:COMMAND`), the progress bar, and
where each part of the report goes: the readable report (every unexpected result with
its diff, the summary by spec section, one summary line) on standard output, or the JSON
report with `--json`; JUnit XML to `--junit FILE`. Must not touch: what a case is, how it
runs or how it is compared (`engine.conformance`).

Exit status: 0 when every result was expected (passed, skipped, or a failure the
`--expectations` file lists), 1 on any unexpected result (a failure, or a listed
failure that now passes), 2 for bad usage (an unreadable case folder or expectations
file, a backend that does not speak the protocol's set-up methods).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from engine.cli.commands import add_command, add_json_arguments
from engine.cli.json_output import print_json
from engine.errors import EngineError, UsageError

#: The backends this engine runs in-process (`reference:postgres`: the reference engine
#: answering as the postgres backend, held to the cases' postgres expectations).
IN_PROCESS = ("reference", "sqlite", "postgres", "reference:postgres")


def backend_argument(value: str) -> str:
    """`--backend`: `reference`, `sqlite`, `postgres`, `reference:postgres` or
    `exec:COMMAND` (argparse's type)."""
    if value in IN_PROCESS or (value.startswith("exec:") and value[len("exec:"):].strip()):
        return value
    raise argparse.ArgumentTypeError(
        f"{value!r} is no backend: choose reference, sqlite, postgres, reference:postgres "
        "or exec:COMMAND (e.g. exec:'session-search serve')")


def run_conform(args: argparse.Namespace) -> int:
    """`session-search conform`."""
    from engine.cli.progress_display import ProgressDisplay
    from engine.conformance.case_files import CaseFileError, load_cases
    from engine.conformance.report import json_report, junit_xml, text_report
    from engine.conformance.runner import Expectations, run_cases, select_cases
    from engine.conformance.targets import TargetFailure, open_target

    try:
        cases = select_cases(load_cases(Path(args.cases) if args.cases else None),
                             args.features or (), args.case or ())
        expectations = Expectations.read(Path(args.expectations)) if args.expectations else None
    except CaseFileError as error:
        raise UsageError(str(error)) from None
    if not cases:
        raise UsageError("no case matches --features/--case")
    target = open_target(args.backend, timeout=args.timeout)
    try:
        with ProgressDisplay.for_command(args.quiet or args.json) as progress:
            def advance(done: int, total: int, _outcome: object) -> None:
                progress("conform", done, total)
            try:
                description, outcomes = run_cases(target, cases, expectations=expectations,
                                                  progress=advance)
            except TargetFailure as failure:
                raise UsageError(f"{args.backend}: {failure}") from None
    finally:
        target.close()
    if args.junit:
        try:
            Path(args.junit).write_text(junit_xml(description, outcomes), encoding="utf-8")
        except OSError as error:
            raise EngineError(f"{args.junit}: cannot write the JUnit report "
                              f"({error.strerror or error})") from None
    if args.json:
        print_json(json_report(description, outcomes))
    else:
        print(text_report(description, outcomes))
    return 1 if any(outcome.unexpected for outcome in outcomes) else 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `conform`."""
    parser = add_command(
        subparsers, "conform",
        description="Run the conformance cases (the specification's behaviour as data: "
        "docs/conformance.md) against a backend: this engine's reference, sqlite or postgres "
        "backend in-process, or any program that speaks the JSON-RPC protocol of `serve` plus the "
        "conformance set-up methods (exec:COMMAND; `session-search serve` without --store "
        "is one). Prints each unexpected result with a diff of what was expected and what "
        "came, a summary by spec section and one summary line; exit status 1 on any "
        "unexpected result.",
        examples=["session-search conform --backend reference",
                  "session-search conform --backend \"exec:session-search serve\"",
                  "session-search conform --backend sqlite --features cjk-retry prefix",
                  ("SESSION_SEARCH_PG_DSN=postgresql://app@db/test session-search conform "
                   "--backend postgres"),
                  ("session-search conform --backend exec:'node my-backend.mjs' "
                   "--expectations my-expectations.json --junit report.xml")])
    parser.add_argument("--backend", type=backend_argument, required=True,
                        metavar="reference|sqlite|postgres|reference:postgres|exec:COMMAND",
                        help="the backend under test: in-process (postgres on the server "
                             "of $SESSION_SEARCH_PG_DSN; reference:postgres is the "
                             "reference engine predicting it), or a command started "
                             "once (and again after a crash or a hang) that speaks the "
                             "protocol on its standard input and output; a backend is "
                             "held to the cases' expectations of the set it names "
                             "(postgres for both postgres backends, else sqlite)")
    parser.add_argument("--cases", metavar="DIR",
                        help="a folder of case files (default: the cases shipped with "
                             "session-search)")
    parser.add_argument("--features", nargs="+", metavar="FEATURE",
                        help="only the cases tagged with one of these features")
    parser.add_argument("--case", nargs="+", metavar="ID",
                        help="only the cases whose id starts with one of these")
    parser.add_argument("--expectations", metavar="FILE",
                        help="the backend's known failures and skips, each with its reason "
                             "(JSON: docs/conformance.md)")
    parser.add_argument("--junit", metavar="FILE", help="also write the results as JUnit XML")
    parser.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS",
                        help="how long an exec: backend may take to answer one call before "
                             "the case fails and the backend is restarted (default 60)")
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    add_json_arguments(parser, help="print the report as one JSON document")
    parser.set_defaults(run=run_conform)

