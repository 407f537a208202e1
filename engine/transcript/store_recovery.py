"""What a store's log must hold, and what is wrong with it: lost commits, torn tails, verify.

Owns: `StoreRecovery`: checking the claims of what was committed against the log
(`check_committed`; the refusal of a log that lost committed transactions, or their
record in `lost_commits`), the unfinished tail of the log (`unfinished_tail`), the
problems opening found (`problems()`) and the thorough check of the log bytes
(`verify_log`). Must not touch: the rule that a log holding less lost commits
(`engine.transcript.lost_commits`) and the problem values (`engine.transcript.evidence`),
the torn-tail rule and the cutting (`log_tail`, `LogWriter.recover`), or the checks of
the bytes (`log_checks`). Why apart: what opening finds decides whether a store may be opened at all, and it is what
`session-search verify` and `stats` report.

Opening compares what the log holds with what was committed: the checkpoint (even one
that is not trusted) and any claim the opener passes (a search index's manifest) record
it, and a log that holds less lost committed transactions, which opening refuses, naming
the file and the missing range (`engine.transcript.evidence`; `accept_lost_commits`
opens all the same, for verify, stats and repair). Only then does a writer cut a torn or
uncommitted tail off the last log file (`LogWriter.recover`): what it cuts is never
covered by a claim. `problems()` lists what opening found, for `session-search verify`
and `stats`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.errors import StoreError
from engine.transcript.checkpoint import CHECKPOINT_NAME
from engine.transcript.evidence import CommittedClaim
from engine.transcript.log_checks import check_covered_log, find_damaged_record
from engine.transcript.store_reads import StoreReads

if TYPE_CHECKING:
    from engine.transcript.log_tail import LogTail
    from engine.transcript.store_problem import StoreProblem


class StoreRecovery(StoreReads):
    """Claims of what was committed, the unfinished tail, and the problems found."""

    def verify_log(self) -> str | None:
        """Check every byte of committed data this handle has seen; return what is wrong
        (naming the file, and the offset of the first damaged record when one is found),
        or None.

        The thorough check that opening skips (`session-search verify` runs it): the
        CRC32 of all record bytes of every log file against its footer, and of the open
        log file against the running CRC kept by the writer (saved in the checkpoint) or
        by the replay. Cost: O(bytes of the log), CRC in C, no record decoding.
        """
        self._check_open()
        problem = check_covered_log(self.directory, self._cursor)
        if problem is None:
            return None
        damaged = find_damaged_record(self.directory, self._cursor)
        return problem if damaged is None else str(damaged)

    def check_committed(self, claim: CommittedClaim) -> None:
        """Refuse a log that holds fewer transactions than `claim` says were committed
        (StoreError naming the file and what is missing), or record it in `lost_commits`
        when the store was opened with `accept_lost_commits`.

        A reader first catches up with the writer (`refresh`): a claim written after it
        opened may cover commits it has not read yet.
        """
        self._check_open()
        if claim.transaction_id > self.generation and self._writer is None:
            self.refresh()
        self._check_claim(claim)

    def _check_claim(self, claim: CommittedClaim) -> None:
        if claim.transaction_id <= self.generation:
            return  # the log holds every transaction the claim names
        from engine.transcript.lost_commits import find_lost_commits  # only when some are not

        lost = find_lost_commits(self.directory, claim, self.generation, self._cursor,
                                 self.unfinished_tail, self._catalog.event_total)
        if lost is None:
            return
        if not self._accepts_lost_commits:
            raise StoreError(lost.problem.with_advice())
        if self.lost_commits is None or lost.last_lost > self.lost_commits.last_lost:
            self.lost_commits = lost

    @property
    def unfinished_tail(self) -> LogTail | None:
        """The bytes after the last commit of the log: what a writer cut off on open
        (`recovered_tail`), or what a reader left out at its last replay (an interrupted
        write, or the open transaction of a live writer); None when there are none."""
        return self.recovered_tail if self._writer is not None else self._reader.tail

    def problems(self) -> list[StoreProblem]:
        """What is wrong with the store's files, as found on open and since (for
        `session-search verify` and `stats`): committed transactions missing from the
        log (which covers the checkpoint and the tail it leaves), a checkpoint that was
        damaged, disagreed with the log or whose positions had to be rebuilt, and, only
        worth knowing, an unfinished transaction at the end of the log."""
        if self.lost_commits is not None:
            return [self.lost_commits.problem]
        from engine.transcript.store_problem import StoreProblem  # here: opening needs none

        found = [] if self._checkpoint_problem is None else [self._checkpoint_problem]
        rebuilt = self.checkpoint_positions_rebuilt
        if rebuilt is not None:
            found.append(StoreProblem(self.directory.location(CHECKPOINT_NAME), rebuilt))
        tail = self.unfinished_tail
        if tail is not None:
            location = self._log_file_location(tail.file_number)
            span = f"bytes {tail.committed_end}..{tail.file_size}: {tail.reason}"
            found.append(StoreProblem(location, (
                f"{location}: {tail.cut_bytes} bytes of an unfinished transaction were cut "
                f"off at open ({span})" if self._writer is not None else
                f"{location}: {tail.cut_bytes} bytes after the last commit are an unfinished "
                f"transaction, left out ({span}); the next writer cuts them off"),
                serious=False))
        return found
