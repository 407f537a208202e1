"""The transcript log's files: their names, their numbering, and how transactions lie in them.

Owns: the append-only log files `transcripts/segment-NNNNNN.log` (numbered from 1,
contiguous): their folder, names, numbers and magic, and the layout and invariants below,
which every reader (`log_reader`) and the writer (`log_writer`) keep. Must not touch: what
records mean for the store's state (that is `engine.transcript.catalog`) or their bytes
(that is `engine.codec.log_file`). Why apart: every part of the transcript that names a
log file (the checkpoint, the evidence, compaction, verify) needs the names without the
reading or writing.

The files keep the name `segment-NNNNNN.log`, the magic `SS.SEGMT` and the file kind
`segment` (what `session-search dump` shows) that they had when the log's files were
called segments; the error messages about them keep their wording too. In the code,
"segment" means an index segment only (see `engine.transcript`).

Layout and invariants:

* A transaction is its records followed by one `commit` record, all in one log file.
  The writer flushes and fsyncs after the commit record; nothing before a commit counts.
* Commit records carry transaction ids 1, 2, 3, ... in file order, across log files.
* After a commit, once the log file holds `EngineConfig.log_roll_bytes` or more, the
  writer seals it (footer with the record count and the CRC32 of all record bytes, then
  fsync) and the next transaction starts log file N+1. So every log file but the last is
  sealed, and a sealed log file ends with a commit record followed by its footer.

Damage in the last log file is judged by the torn-tail rule (`log_tail`); the checks of
the bytes a catalog checkpoint covers are `log_checks`.
"""

from __future__ import annotations

import re

from engine.codec import FILE_KINDS
from engine.directory import Directory
from engine.errors import CorruptFile

LOG_FOLDER = "transcripts"
LOG_MAGIC = FILE_KINDS["segment"].magic
_LOG_FILE_NAME = re.compile(r"^transcripts/segment-(\d{6,})\.log$")


def log_file_name(number: int) -> str:
    """The file name of log file `number`.

    >>> log_file_name(12)
    'transcripts/segment-000012.log'
    """
    return f"{LOG_FOLDER}/segment-{number:06d}.log"


def log_file_number(name: str) -> int | None:
    """The number of a log file name, or None for other names.

    >>> log_file_number("transcripts/segment-000012.log"), log_file_number("store.meta")
    (12, None)
    """
    match = _LOG_FILE_NAME.match(name)
    return int(match.group(1)) if match else None


def list_log_file_numbers(directory: Directory) -> list[int]:
    """The log file numbers present, checked to be exactly 1..N (CorruptFile otherwise)."""
    numbers = sorted(
        number for name in directory.list_names(LOG_FOLDER + "/")
        if (number := log_file_number(name)) is not None
    )
    for expected, number in enumerate(numbers, start=1):
        if number != expected:
            raise CorruptFile(directory.location(log_file_name(expected)), 0,
                              "segment file missing (segment numbers must be contiguous)")
    return numbers
