"""Generate a synthetic benchmark corpus into the cache: `python corpora/generate.py --size 10k`.

A thin wrapper around `engine.bench.corpus_generator` (the code lives in the package so
that `session-search bench` works from an installed engine). The corpus lands in
`$SESSION_SEARCH_CACHE/<size>-<seed>/`, else `corpora/cache/<size>-<seed>/` (gitignored),
or in `--out DIR`; the same size and seed always give byte-identical files.

Options: `--size tiny|10k|100k|1m` (default 10k), `--seed N`, `--out DIR` (a directory
that must not exist yet), `--real-text` (write the chatterbot-corpus dialogs instead;
needs `pip install chatterbot-corpus pyyaml`). Prints the corpus folder and its counts.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from engine.bench.corpus_generator import (
    CORPUS_SIZES,
    DEFAULT_SEED,
    corpus_size,
    ensure_corpus,
    generate_corpus,
    read_manifest,
)
from engine.bench.progress import ProgressBar


def main(argv: list[str] | None = None) -> int:
    """Parse the options, write the corpus, print where it is."""
    parser = argparse.ArgumentParser(prog="python corpora/generate.py", description=__doc__)
    parser.add_argument("--size", default="10k", choices=list(CORPUS_SIZES))
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--out", type=Path, help="write here instead of the cache")
    parser.add_argument("--real-text", action="store_true",
                        help="write the chatterbot-corpus dialogs (real text) instead")
    args = parser.parse_args(argv)
    if args.real_text:
        from engine.bench.adapters import CapabilityMissing
        from engine.bench.real_text import ensure_chatterbot_corpus, write_chatterbot_corpus

        try:
            if args.out is not None:
                write_chatterbot_corpus(args.out)
                directory = args.out
            else:
                directory = ensure_chatterbot_corpus()
        except CapabilityMissing as missing:
            print(f"generate.py: error: {missing}", file=sys.stderr)
            return 2
    else:
        size = corpus_size(args.size)
        bar = ProgressBar(size.messages, f"corpus {size.name}")

        def progress(done: int, _total: int) -> None:
            bar.update(done)

        if args.out is not None:
            if args.out.exists():
                print(f"generate.py: error: {args.out} already exists", file=sys.stderr)
                return 2
            generate_corpus(size, args.seed, args.out, progress)
            directory = args.out
        else:
            directory = ensure_corpus(size, args.seed, progress=progress)
        bar.close()
    print(directory)
    print(json.dumps(read_manifest(directory)["counts"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
