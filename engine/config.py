"""The engine's tunables, in one frozen value.

Owns: every size, threshold and time budget that is a choice rather than a fact of the
specification's wire format. Must not touch: the environment, files or any other engine
module (it reads nothing; callers build an `EngineConfig` and pass it down). Tests shrink
the sizes to reach boundary code (a log file that rolls after a few hundred bytes).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.errors import UsageError

MEBIBYTE = 1024 * 1024


@dataclass(frozen=True, slots=True)
class EngineConfig:
    """Tunables; the defaults are the production values.

    >>> EngineConfig().log_roll_bytes
    67108864
    >>> EngineConfig(log_roll_bytes=0)
    Traceback (most recent call last):
    ...
    engine.errors.UsageError: log_roll_bytes must be a positive integer, not 0
    """

    #: A transcript log file is sealed and a new one started once it holds at least this
    #: many bytes, at the next transaction boundary (a transaction never spans two files).
    log_roll_bytes: int = 64 * MEBIBYTE
    #: After sealing a log file and on a clean writer close, save the catalog to
    #: `transcripts/catalog.ckpt`; on open, start from it instead of decoding every
    #: record (see `engine.transcript.checkpoint`).
    catalog_checkpoints: bool = True
    #: Deferred versus synchronous index rebuild (behaviour.md §8): a rebuild of at most
    #: this many events and bytes runs inside the request that needs it.
    sync_rebuild_max_events: int = 4000
    sync_rebuild_max_bytes: int = 4 * MEBIBYTE
    #: Time budgets of a transcript search request and of its reader (seconds).
    search_budget_seconds: float = 90.0
    reader_budget_seconds: float = 60.0
    #: Reference index (`engine.index.writer`): rows the buffer takes before it is
    #: flushed to a segment, segments that trigger a merge.
    index_flush_documents: int = 2000
    index_merge_segments: int = 8

    def __post_init__(self) -> None:
        for name in ("log_roll_bytes", "sync_rebuild_max_events", "sync_rebuild_max_bytes",
                     "index_flush_documents", "index_merge_segments"):
            _require_positive(name, getattr(self, name))
        for name in ("search_budget_seconds", "reader_budget_seconds"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or value <= 0:
                raise UsageError(f"{name} must be a positive number, not {value!r}")


def _require_positive(name: str, value: object) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise UsageError(f"{name} must be a positive integer, not {value!r}")
