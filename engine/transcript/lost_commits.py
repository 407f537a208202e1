"""Committed transactions missing from the transcript log: the rule, and what it finds.

Owns: `find_lost_commits` (the rule that decides that the transactions a
`CommittedClaim` names are missing from the log, and which file to name) and
`LostCommits` (what it finds, with its `StoreProblem`). Must not touch: files beyond
their names and sizes (the caller replays the log and passes where it stopped), the
catalog, or any index. Why apart: a store whose log holds every claimed transaction (a
search's, on every open) never needs it; `StoreRecovery` imports it when a claim names
more transactions than the log holds. Why the claims are evidence: see
`engine.transcript.evidence`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from engine.directory import Directory
from engine.transcript.evidence import CommittedClaim, counted
from engine.transcript.log_files import log_file_name
from engine.transcript.log_positions import LogCursor
from engine.transcript.log_tail import LogTail
from engine.transcript.store_problem import StoreProblem


@dataclass(frozen=True, slots=True)
class LostCommits:
    """Committed transactions `first_lost` .. `last_lost` that the log no longer holds.

    `problem` says where (the file and byte range); the log holds transactions 1 ..
    `first_lost - 1` with `events_left` events; the claim counted `events_claimed`
    events (None when it does not say).
    """

    problem: StoreProblem
    first_lost: int
    last_lost: int
    events_left: int
    events_claimed: int | None

    @property
    def count(self) -> int:
        """How many committed transactions are lost."""
        return self.last_lost - self.first_lost + 1

    def describe_loss(self) -> str:
        """Which transactions are lost and what remains, in words.

        >>> lost = LostCommits(StoreProblem("f", "f: missing"), 3, 4, 10, 25)
        >>> for part in lost.describe_loss().split("; "):
        ...     print(part)
        committed transactions 3..4 (2 of 4) are lost
        what remains: 2 transactions, 10 events (the claim counted 25)
        """
        claimed = "" if self.events_claimed is None else \
            f" (the claim counted {self.events_claimed})"
        return (f"committed transactions {self.first_lost}..{self.last_lost} ({self.count} of "
                f"{self.last_lost}) are lost; what remains: {self.remains()}{claimed}")

    def remains(self) -> str:
        """What the log still holds, in words.

        >>> LostCommits(StoreProblem("f", "f: missing"), 2, 2, 1, None).remains()
        '1 transaction, 1 event'
        """
        return f"{counted(self.first_lost - 1, 'transaction')}, " \
               f"{counted(self.events_left, 'event')}"


def store_folder(directory: Directory) -> str:
    """The store's folder as the user names it (for the `--store` of a hint).

    A transcript store is usually one partition of a partitioned store, in
    `<store>/agents/<agentId>/` beside the root's own `store.meta`; commands refuse a
    partition's folder and take the root's, so the hint names the root then. (Only the
    hint's text reads the layout; nothing here opens or depends on the root.)

    >>> from engine.directory import MemoryDirectory
    >>> store_folder(MemoryDirectory())
    'memory:'
    """
    location = directory.location("store.meta")
    folder = location[: -len("store.meta")].rstrip("/\\")
    if not folder:
        return location
    path = Path(folder)
    if path.parent.name == "agents" and (path.parent.parent / "store.meta").is_file():
        return str(path.parent.parent)
    return folder


def find_lost_commits(
    directory: Directory,
    claim: CommittedClaim,
    generation: int,
    cursor: LogCursor,
    tail: LogTail | None,
    events_left: int,
) -> LostCommits | None:
    """The committed transactions `claim` names that the log does not hold, or None.

    The log was replayed to `generation`, ending at `cursor` (the end of the last intact
    commit), with `tail` the damaged or uncommitted bytes after it (None: none). The
    problem names the file where committed data stops: a missing log file; a file shorter
    than the claim's committed end (the missing byte range); committed bytes that are
    there but do not replay (the damaged offset); or, for a claim that says no position
    (a manifest), the end of the log. Cost: a few `exists`/`size` calls.
    """
    if claim.transaction_id <= generation:
        return None
    location, where = _where_committed_data_stops(directory, claim, cursor, tail)
    message = (f"{where}; {claim.source} records "
               f"{counted(claim.transaction_id, 'committed transaction')}, the log holds "
               f"{generation}")
    advice = (f"run `session-search verify --store {store_folder(directory)}` to see what "
              "is lost and what `verify --repair` can recover")
    return LostCommits(StoreProblem(location, message, advice=advice), generation + 1,
                       claim.transaction_id, events_left, claim.event_count)


def _where_committed_data_stops(
    directory: Directory, claim: CommittedClaim, cursor: LogCursor, tail: LogTail | None,
) -> tuple[str, str]:
    """`(location, "location: what is wrong")` for `find_lost_commits`."""
    if claim.file_number is None or claim.end is None:
        return _where_the_log_ends(directory, cursor, tail)
    number, end = claim.file_number, claim.end
    if not directory.exists(log_file_name(number)):
        first_missing = next(candidate for candidate in range(1, number + 1)
                             if not directory.exists(log_file_name(candidate)))
        location = directory.location(log_file_name(first_missing))
        later = "" if first_missing == number else \
            f" (and every later log file up to {log_file_name(number)})"
        return location, f"{location}: missing{later}, but it held committed transactions"
    location = directory.location(log_file_name(number))
    size = directory.size(log_file_name(number))
    if size < end:
        verb = "is" if end - size == 1 else "are"
        return location, (f"{location}: {counted(end - size, 'byte')} of committed "
                          f"transactions {verb} missing (bytes {size}..{end} were committed, "
                          f"the file ends at {size})")
    if tail is not None and tail.file_number == number:
        return location, (f"{location}: committed transactions are damaged after byte "
                          f"{tail.committed_end} ({tail.reason})")
    return location, (f"{location}: the committed transactions after byte {cursor.offset} "
                      f"of {log_file_name(cursor.file_number)} do not replay")


def _where_the_log_ends(
    directory: Directory, cursor: LogCursor, tail: LogTail | None,
) -> tuple[str, str]:
    """Where the replayed log stops, for a claim that says no position."""
    name = log_file_name(cursor.file_number)
    if not directory.exists(name):
        location = directory.location(name)
        return location, f"{location}: missing, but the log held committed transactions"
    if cursor.sealed:
        location = directory.location(log_file_name(cursor.file_number + 1))
        return location, (f"{location}: missing, but the log continued after the sealed "
                          f"{name}")
    location = directory.location(name)
    if tail is not None:
        return location, (f"{location}: the log ends after byte {tail.committed_end} in "
                          f"{tail.cut_bytes} bytes that do not replay ({tail.reason})")
    return location, (f"{location}: the log ends at byte {cursor.offset}, after the last "
                      "transaction it holds")
