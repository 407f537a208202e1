"""What a compaction reports: `CompactionOutcome`.

Owns: the value `compact()` returns, of the transcript log (`TranscriptStore.compact`),
of a SQLite or postgres database, and summed over a store's partitions, with its one
summary line and its JSON. Must not touch: how a compaction is planned or run
(`engine.transcript.compaction`, `engine.transcript.compaction_plan`). Why a module of
its own: `engine.transcript.compaction` is loaded by every store that opens (its state
file and `catalog_state`), and a search never compacts, so it need not define this
frozen dataclass at start-up (`tests/cli/test_progress_and_startup.py` pins it as not
loaded by a reference search); `engine.transcript.compaction` still offers the name.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.transcript.evidence import counted


@dataclass(frozen=True, slots=True)
class CompactionOutcome:
    """What a compaction did: files rewritten (`kind` names them: `log` files of the
    reference store, a SQLite `database`), bytes reclaimed, dead records dropped.

    >>> CompactionOutcome(2, 300, 7).summary()
    'compacted 2 log files, reclaimed 300 bytes'
    >>> (CompactionOutcome(1, 5) + CompactionOutcome(0, 0)).summary()
    'compacted 1 log file, reclaimed 5 bytes'
    """

    files_compacted: int = 0
    bytes_reclaimed: int = 0
    records_dropped: int = 0
    kind: str = "log"

    def __add__(self, other: CompactionOutcome) -> CompactionOutcome:
        return CompactionOutcome(self.files_compacted + other.files_compacted,
                                 self.bytes_reclaimed + other.bytes_reclaimed,
                                 self.records_dropped + other.records_dropped, self.kind)

    def summary(self) -> str:
        """The one-line summary `session-search compact` prints."""
        return (f"compacted {counted(self.files_compacted, f'{self.kind} file')}, "
                f"reclaimed {counted(self.bytes_reclaimed, 'byte')}")

    def to_json(self) -> dict[str, int | str]:
        """`{"filesCompacted", "bytesReclaimed", "recordsDropped", "kind"}`."""
        return {"filesCompacted": self.files_compacted, "bytesReclaimed": self.bytes_reclaimed,
                "recordsDropped": self.records_dropped, "kind": self.kind}
