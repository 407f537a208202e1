"""The torn tail of the transcript log, and the rule that tells it from damaged commits.

Owns: `LogTail` (the bytes after the last commit of the last log file, which a reader
leaves out and a writer cuts) and the rule that decides between a torn tail and
corruption (`check_damage`). Must not touch: the reading (`log_reader` applies the rule
to what it reads), the cutting (`LogWriter.recover` truncates what the reader reported)
or the bytes (`engine.codec.framing` finds the damage). Why apart: the rule is the one
judgement about bytes that a crash may have left, and the store reports the tail it
finds (`engine.transcript.evidence` weighs it against what was committed).

Torn tail or corruption? The rule, applied to the bytes of the *last* log file:

    Damage (see `engine.codec.framing`) is a torn tail when no intact commit record
    follows it; then the writer truncates the file back to the end of the last commit
    before the damage. If an intact commit record follows the damage, committed data
    was damaged: `CorruptFile(path, offset of the damage, reason)`.

Why: the writer only promises durability at fsync after a commit record, and the bytes of
an unfinished transaction may reach the disk in any order (a later page before an
earlier one), so any mess after the last commit is the unfinished transaction. A commit
record that survives beyond a damaged spot proves the spot was once committed and
synced. Damage in a sealed (non-last) log file, a missing footer on a non-last log file,
a footer that does not match its records, a record that passes its CRC but breaks the
payload grammar, or a gap in transaction ids is always `CorruptFile`.

The bytes alone cannot tell the last commit damaged in place (bit rot after its fsync),
or a log cut back into committed transactions, from a commit that never finished. The
store can: a catalog checkpoint or an index manifest saved after those commits records
them, and a log that holds less is refused (`engine.transcript.evidence`), before a
writer cuts anything. Only damage after everything any such record covers is taken for a
torn tail; `LogReader.tail` reports what was cut.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.codec.framing import Damage, find_frame_after
from engine.codec.log_file import MAX_COMMIT_PAYLOAD_LENGTH, is_commit_payload
from engine.errors import CorruptFile


@dataclass(frozen=True, slots=True)
class LogTail:
    """Bytes after the last commit of the last log file (uncommitted or torn)."""

    file_number: int
    committed_end: int
    file_size: int
    reason: str

    @property
    def cut_bytes(self) -> int:
        """How many bytes a writer truncates."""
        return self.file_size - self.committed_end


def check_damage(damage: Damage, base: int, data: bytes, is_last: bool,
                 location: str) -> None:
    """Raise CorruptFile unless `damage` is a torn tail (see the module docstring)."""
    offset = base + damage.offset
    if not is_last:
        raise CorruptFile(location, offset, damage.reason)
    later_commit = find_frame_after(data, damage.offset + 1, is_commit_payload,
                                    MAX_COMMIT_PAYLOAD_LENGTH)
    if later_commit is not None:
        raise CorruptFile(location, offset,
                          f"{damage.reason} (committed data follows at byte offset "
                          f"{base + later_commit})")
