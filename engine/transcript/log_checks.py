"""Checks of the committed log bytes a catalog checkpoint covers, which no replay reads.

Owns: `check_checkpoint_log` (the cheap check on every open with a checkpoint),
`check_covered_log` (the thorough one, for verify) and `find_damaged_record` (which
names the first damaged record once the thorough check found damage). Must not touch:
what the records mean (`engine.transcript.catalog`), their bytes (`engine.codec`), or
when a checkpoint is trusted (`engine.transcript.checkpoint` decides, with these checks).
Why apart: these read the log files without replaying them, to vouch for bytes the
store did not decode.

The torn-tail rule (`log_tail`) applies to bytes that are *read*: a replay reads them
all. Bytes covered by a trusted catalog checkpoint are not read at open; three checks of
different cost decide about them:

* `check_checkpoint_log` (every open with a checkpoint): O(log files) bytes read,
  sizes, headers, footers and the last covered commit record; it cannot see damage
  inside the records.
* each record's frame CRC, checked whenever the record is read (`LogReader`, and
  `LogReader.read_events` for the store's event reads);
* `check_covered_log` (verify): every covered byte CRC-checked against footers and
  the running CRC, O(bytes); `find_damaged_record` then names the first damaged record.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.codec.framing import (
    FOOTER_SIZE,
    HEADER_SIZE,
    DecodeError,
    Footer,
    Frame,
    count_frames,
    decode_footer_at_end,
    decode_frame_at,
    decode_header,
    iter_frames,
    update_crc,
)
from engine.codec.log_file import CommitRecord, decode_log_payload
from engine.directory import Directory
from engine.errors import CorruptFile, StoreError
from engine.transcript.log_files import LOG_MAGIC, log_file_name
from engine.transcript.log_positions import LogCursor, SealedLogFile, sealed_log_file_of


def check_covered_log(directory: Directory, cursor: LogCursor) -> str | None:
    """Check every byte of committed data up to `cursor` against what was written;
    return what is wrong, or None. The thorough check (`session-search verify`).

    Log files before `cursor.file_number` must be sealed with a footer whose CRC matches
    their record bytes. In log file `cursor.file_number`, the record bytes up to
    `cursor.offset` must have the CRC `cursor.records_crc` (the running CRC the writer
    or a replay kept), and when `cursor.sealed` the footer must follow at `cursor.offset`
    and agree. Cost: reads every covered byte once and CRCs it in C (no record decoding);
    O(bytes), which is why opening does `check_checkpoint_log` instead.
    """
    for number in range(1, cursor.file_number + 1):
        name = log_file_name(number)
        location = directory.location(name)
        if number == cursor.file_number and cursor == LogCursor(
                number, transaction_id=cursor.transaction_id):
            # Nothing was committed in it, and not even its header was read: absent (a
            # store with no commit yet), or cut short by a crash or a full disk while
            # its header was written (`problems` notes an unfinished write).
            return None
        if not directory.exists(name):
            return f"{location}: missing"
        data = directory.read_bytes(name)
        try:
            if decode_header(data, location).magic != LOG_MAGIC:
                return f"{location}: not a transcript segment"
        except StoreError as error:
            return str(error)
        if number < cursor.file_number or cursor.sealed:
            footer = decode_footer_at_end(data)
            if len(data) < HEADER_SIZE + FOOTER_SIZE or footer is None:
                return f"{location}: not sealed"
            end, expected = len(data) - FOOTER_SIZE, footer.records_crc
            if number == cursor.file_number and (end, footer.record_count, footer.records_crc) != (
                    cursor.offset, cursor.record_count, cursor.records_crc):
                return f"{location}: footer does not match the checkpoint"
        else:
            end, expected = cursor.offset, cursor.records_crc
            if len(data) < end:
                return f"{location}: shorter than the checkpoint says"
            if count_frames(data, HEADER_SIZE, end) != cursor.record_count:
                return f"{location}: record count does not match the checkpoint"
        if update_crc(0, memoryview(data)[HEADER_SIZE:end]) != expected:
            return f"{location}: records do not match the expected CRC"
    return None


def find_damaged_record(directory: Directory, cursor: LogCursor) -> CorruptFile | None:
    """The first record up to `cursor` that fails its own frame check (bad CRC, impossible
    length, a footer that does not match its records), as a `CorruptFile` naming the file
    and offset; None when every frame is intact. Used to say *where* the damage is once
    `check_covered_log` has said that there is some. Cost: O(covered bytes).
    """
    for number in range(1, cursor.file_number + 1):
        name = log_file_name(number)
        if not directory.exists(name):
            continue  # check_covered_log names a missing log file
        data = directory.read_bytes(name)
        location = directory.location(name)
        end = len(data) if number < cursor.file_number or cursor.sealed else cursor.offset
        try:
            decode_header(data, location)
        except CorruptFile as error:
            return error
        except StoreError:
            continue  # another format version: check_covered_log said so
        count, crc = 0, 0
        for item in iter_frames(data[:end], HEADER_SIZE):
            if isinstance(item, Frame):
                count += 1
                crc = update_crc(crc, data[item.offset: item.end])
            elif isinstance(item, Footer):
                if (item.record_count, item.records_crc) != (count, crc):
                    return CorruptFile(location, item.offset, "footer does not match the records")
            else:
                return CorruptFile(location, item.offset, item.reason)
    return None


def check_checkpoint_log(
    directory: Directory, cursor: LogCursor, sealed_files: Sequence[SealedLogFile],
) -> str | None:
    """Check cheaply that the log files a catalog checkpoint covers are still the files it
    saw; return what is wrong, or None.

    Reads a few dozen bytes per log file and never the records between: every sealed
    log file (each one before `cursor.file_number`, and that one too when `cursor.sealed`)
    must have the size, record count and footer CRC the checkpoint recorded for it, an
    intact header and an intact footer; an unsealed `cursor.file_number` must have an intact
    header, reach `cursor.offset`, and hold there, from `cursor.commit_offset`, an intact
    commit record of transaction `cursor.transaction_id`. A file that was replaced,
    truncated or extended behind a seal fails this. Damage *inside* covered records is
    not looked for: each record's own CRC is checked when it is read, and
    `check_covered_log` (verify) checks every byte. Cost: O(log files).
    """
    expected = cursor.file_number if cursor.sealed else cursor.file_number - 1
    if len(sealed_files) != expected:
        return f"the checkpoint lists {len(sealed_files)} sealed segments, expected {expected}"
    for number, sealed in enumerate(sealed_files, start=1):
        problem = _check_sealed_log_file(directory, number, sealed)
        if problem is not None:
            return problem
    if cursor.sealed:
        if sealed_files[-1] != sealed_log_file_of(cursor):
            return f"{directory.location(log_file_name(cursor.file_number))}: footer does not " \
                   "match the checkpoint"
        return None
    return _check_open_log_file(directory, cursor)


def _check_log_file_header(directory: Directory, name: str, location: str) -> str | None:
    try:
        if decode_header(directory.read_bytes(name, 0, HEADER_SIZE), location).magic \
                != LOG_MAGIC:
            return f"{location}: not a transcript segment"
    except StoreError as error:
        return str(error)
    return None


def _check_sealed_log_file(directory: Directory, number: int, sealed: SealedLogFile) -> str | None:
    name = log_file_name(number)
    location = directory.location(name)
    size = directory.size(name)
    if size != sealed.size:
        return f"{location}: {size} bytes, the checkpoint says {sealed.size}"
    problem = _check_log_file_header(directory, name, location)
    if problem is not None:
        return problem
    footer = decode_footer_at_end(directory.read_bytes(name, size - FOOTER_SIZE, FOOTER_SIZE)) \
        if size >= HEADER_SIZE + FOOTER_SIZE else None
    if footer is None:
        return f"{location}: not sealed"
    if (footer.record_count, footer.records_crc) != (sealed.record_count, sealed.records_crc):
        return f"{location}: footer does not match the checkpoint"
    return None


def _check_open_log_file(directory: Directory, cursor: LogCursor) -> str | None:
    name = log_file_name(cursor.file_number)
    location = directory.location(name)
    if directory.size(name) < cursor.offset:
        return f"{location}: shorter than the checkpoint says"
    problem = _check_log_file_header(directory, name, location)
    if problem is not None:
        return problem
    if cursor.record_count == 0:
        if cursor.offset != HEADER_SIZE:
            return f"{location}: the checkpoint has no records before byte {cursor.offset}"
        return None
    start = cursor.commit_offset
    if not HEADER_SIZE <= start < cursor.offset:
        return f"{location}: the checkpoint's last commit offset {start} is out of range"
    try:
        frame = decode_frame_at(directory.read_bytes(name, start, cursor.offset - start))
        record = decode_log_payload(frame.payload)
    except DecodeError as error:
        return f"{location}: the last commit the checkpoint covers, at byte {start}: {error}"
    if frame.end != cursor.offset - start or not isinstance(record, CommitRecord) \
            or record.transaction_id != cursor.transaction_id:
        return (f"{location}: the record at byte {start} is not the commit of transaction "
                f"{cursor.transaction_id} ending at byte {cursor.offset}")
    return None
