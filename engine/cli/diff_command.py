"""`session-search diff`: two backends on generated corpora and queries, and the
metamorphic relations of each; a difference is shrunk and printed as a case file.

Owns: the command's arguments, the run (load the corpus into both backends, then for
each query: compare them, and check each one's relations), the progress bar, and what
is printed: the shrunk difference as a ready-to-save case file (JSON) on standard output
and one line on standard error saying what differed; with no difference, one summary
line. Must not touch: generating, comparing or shrinking (`engine.conformance.
differential`, `engine.conformance.shrink`) or the targets.

Reproducible: the same `--seed` (and the same other options) generates the same corpus
and queries and finds the same first difference. Exit status 1 when a difference was
found, 0 when none, 2 for bad usage.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

from engine.cli.commands import add_command, add_json_arguments
from engine.cli.conform_command import backend_argument
from engine.errors import UsageError


def backends_argument(value: str) -> list[str]:
    """`--backends A,B`: two backends (an `exec:` command may hold commas after the first
    comma that separates it: `reference,exec:prog --flag a,b`)."""
    first, separator, second = value.partition(",")
    if not separator:
        raise argparse.ArgumentTypeError("--backends needs two backends: A,B")
    return [backend_argument(first.strip()), backend_argument(second.strip())]


def run_diff(args: argparse.Namespace) -> int:
    """`session-search diff`."""
    from engine.cli.progress_display import ProgressDisplay
    from engine.conformance.differential import (
        answer,
        compare_backends,
        generate_corpus,
        generate_query,
        load,
        metamorphic_findings,
    )
    from engine.conformance.plan import corpus_directory_steps
    from engine.conformance.shrink import case_file, predicate, shrink
    from engine.conformance.targets import TargetFailure, open_target

    rng = random.Random(args.seed)
    if args.corpus:
        folder = Path(args.corpus)
        if not (folder / "sessions.jsonl").is_file():
            raise UsageError(f"{folder}: no corpus directory here (it needs sessions.jsonl)")
        corpus = corpus_directory_steps(folder)
    else:
        corpus = generate_corpus(rng, args.generate)
    targets = [open_target(name, timeout=args.timeout) for name in args.backends]
    finding = None
    try:
        try:
            for target in targets:
                load(target, corpus)
        except (TargetFailure, ValueError) as error:
            raise UsageError(f"loading the corpus failed: {error}") from None
        with ProgressDisplay.for_command(args.quiet) as progress:
            for number in range(args.queries):
                params = generate_query(rng, corpus)
                finding = compare_backends(targets, corpus, params, loaded=True)
                if finding is None:
                    for position, target in enumerate(targets):
                        broken = metamorphic_findings(target, corpus, params, rng)
                        if broken:
                            finding = broken[0]
                            if position:  # the relation is checked on the first target
                                targets.reverse()
                                args.backends.reverse()
                            break
                progress("diff", number + 1, args.queries)
                if finding is not None:
                    break
        if finding is None:
            print(f"session-search diff: {args.queries} queries on {len(corpus)} set-up "
                  f"steps (seed {args.seed}): {args.backends[0]} and {args.backends[1]} "
                  "agree, and every relation held")
            return 0
        shrunk, params = (list(finding.corpus), finding.params) if args.no_shrink else shrink(
            finding, predicate(finding, targets))
        for target in targets:
            load(target, shrunk)
        call = {name: value for name, value in params.items() if name != "subject"}
        answers = [answer(target, call) for target in targets]
        detail = shrunk_detail(finding.kind, targets, params, answers) or finding.detail
    finally:
        for target in targets:
            target.close()
    document = case_file(finding, shrunk, params, args.backends, answers, detail, args.seed,
                         number)
    messages = sum(1 for step in shrunk if "message" in step)
    print(f"session-search diff: {finding.kind} after {number + 1} queries (seed "
          f"{args.seed}): {detail}; shrunk to {messages} message(s) and the query "
          f"{params['query']!r}; the case file follows on standard output", file=sys.stderr)
    print(json.dumps(document, ensure_ascii=False, indent=2))
    return 1


def shrunk_detail(kind: str, targets: list, params: dict, answers: list) -> str | None:
    """What differs on the shrunk input (the first target holds its corpus)."""
    from engine.conformance.differential import RELATIONS, difference

    if kind.startswith("metamorphic:"):
        return RELATIONS[kind.split(":", 1)[1]](targets[0], params)
    found = difference(answers[0], answers[1])
    return None if found is None else found[1]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `diff`."""
    parser = add_command(
        subparsers, "diff",
        description="Run generated queries (multilingual words, exact and prefix) on a "
        "generated corpus, or on a corpus directory, against two backends, comparing their "
        "answers (hits, order, scores within 1e-9, excerpts, flags), and check relations "
        "that need no oracle on each: the top k is a prefix of the top k+1, term order and "
        "case keep the hit set, a message is found by its own words, searching each agent "
        "apart gives the same hits and scores as searching them together. The first "
        "difference is shrunk to the fewest messages, words and query terms that still "
        "differ the same way and printed as a case file (docs/conformance.md). Exit status "
        "1 when a difference was found.",
        examples=["session-search diff --backends reference,sqlite --generate 60 --queries 200",
                  ("session-search diff --backends reference,\"exec:session-search serve\" "
                   "--seed 7"),
                  "session-search diff --backends reference,sqlite --corpus engine/demo_corpus"])
    parser.add_argument("--backends", type=backends_argument, required=True,
                        metavar="A,B", help="the two backends: reference, sqlite or "
                                            "exec:COMMAND (the first is the expected side)")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--corpus", metavar="DIR", help="a corpus directory to search")
    source.add_argument("--generate", type=int, default=60, metavar="N",
                        help="generate a corpus of N messages (default 60)")
    parser.add_argument("--queries", type=int, default=100, metavar="N",
                        help="how many queries to generate (default 100)")
    parser.add_argument("--seed", type=int, default=0, help="the random seed (default 0)")
    parser.add_argument("--no-shrink", action="store_true",
                        help="print the difference on the whole corpus, unshrunk")
    parser.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS",
                        help="how long an exec: backend may take to answer one call")
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    add_json_arguments(parser, help="accepted for scripts: the case file is JSON already")
    parser.set_defaults(run=run_diff)
