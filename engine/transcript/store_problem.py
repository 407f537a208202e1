"""What is wrong with a store's files, one line each: `StoreProblem`.

Owns: the value opening raises (as its `with_advice` line) and `session-search verify`
and `stats` print: the problems of the catalog checkpoint, of lost commits
(`engine.transcript.lost_commits`), of a partitioned store's folders, witness and
journal. Must not touch: the rules that find them (`engine.transcript.evidence`, the
store modules). Why a module of its own: a store that opens without a problem need not
define this frozen dataclass (`tests/cli/test_progress_and_startup.py` pins it as not
loaded by a reference search); `engine.transcript.evidence` still offers the name.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class StoreProblem:
    """One thing wrong with a store's files: `message` is one line naming the file at
    `location`; `serious` is False for what is only worth knowing (an unfinished
    transaction cut off, a checkpoint of another layout), which changes no exit status;
    `advice` says what to do, where the reader of an error needs it (`with_advice`).

    >>> problem = StoreProblem("s/x.log", "s/x.log: missing", advice="run verify")
    >>> str(problem), problem.with_advice()
    ('s/x.log: missing', 's/x.log: missing; run verify')
    """

    location: str
    message: str
    serious: bool = True
    advice: str | None = None

    def __str__(self) -> str:
        return self.message

    def with_advice(self) -> str:
        """The message followed by the advice, one line (what opening raises)."""
        return self.message if self.advice is None else f"{self.message}; {self.advice}"
