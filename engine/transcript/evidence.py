"""Evidence of what was committed, and what is wrong when the log falls short of it.

Owns: `CommittedClaim` (what a file written after a commit says the log holds); the
one-line reports of what is wrong with a store's files (`StoreProblem`) that opening
raises and `session-search verify` and `stats` print are
`engine.transcript.store_problem`'s, loaded where one is made (a store that opens
without a problem defines no dataclass of it; the name is still offered here); the rule that decides that
committed transactions are missing from the log, and what it finds (`LostCommits`), are
`engine.transcript.lost_commits`'s, imported only when a claim names more transactions
than the log holds. Must not touch: files, the catalog, or any index (a search index's
manifest is read by its backend, which hands its claim down).

Why. The torn-tail rule of `engine.transcript.log_tail` ("damage after the last intact
commit is an interrupted write: cut it off") is sound only for bytes that may never have
been committed. Two files are written strictly after the commits they describe were
fsynced, so each proves that those commits were durable:

* the catalog checkpoint (`transcripts/catalog.ckpt`, saved at a seal, every
  `EngineConfig.checkpoint_after_records` records, when a reconcile ends with
  `EngineConfig.checkpoint_idle_records` records behind it, and at a writer's close):
  transactions 1..`transaction_id` were committed, the last one ending at byte `offset`
  of log file `segment`;
* a search index's manifest (`index/manifest` of the reference backend, written at each
  flush and at close): transactions 1..`generation` were committed.

So when the replay of the log ends at a generation below a claim, what is missing was
committed: the log was cut, a log file removed, or committed bytes damaged. That is
never cut off silently; opening raises `StoreError` naming the file and the missing
range (or records it, for `verify`, `stats` and `verify --repair`, which open with
`accept_lost_commits`). A crash cannot produce it: a crash loses at most what no claim
covers yet, which the torn-tail rule still cuts silently. The evidence costs nothing
extra on disk: both files are written anyway; the checks read the checkpoint's head and
index (which opening reads in any case) and the manifest's generation.

Known limit: commits after the last checkpoint and the last manifest are covered by no
claim; if the log is later cut back into them, the cut looks like a crash's torn tail.

`CommittedClaim` is a NamedTuple, not a frozen dataclass: a search's start-up imports
this module, and a NamedTuple's class costs a fraction of a frozen dataclass's to make.
"""

from __future__ import annotations

from typing import Any, NamedTuple


class CommittedClaim(NamedTuple):
    """What the file at `source` says was committed: transactions 1 ..
    `transaction_id`, the last ending at byte `end` of log file `file_number` (both None
    when the file does not say where), holding `event_count` events (None: not said)."""

    source: str
    transaction_id: int
    file_number: int | None = None
    end: int | None = None
    event_count: int | None = None


def counted(count: int, noun: str) -> str:
    """`count` and `noun`, plural unless one.

    >>> counted(1, "transaction"), counted(3, "event")
    ('1 transaction', '3 events')
    """
    return f"{count} {noun}{'' if count == 1 else 's'}"


def __getattr__(name: str) -> Any:
    """`StoreProblem`, defined in `engine.transcript.store_problem` and loaded on first
    use of the name here (PEP 562)."""
    if name == "StoreProblem":
        from engine.transcript.store_problem import StoreProblem

        return StoreProblem
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
