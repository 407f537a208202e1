"""A readable view of any store file, for `session-search dump`.

Owns: summarising a store's files (name, kind, size, version, record count) and
decoding every record of one framed file into plain values. Must not touch: store
state (it opens no `TranscriptStore`, takes no lock and never repairs; it reads bytes
through a `Directory` and decodes them with `engine.codec` only), or printing (the
command module formats what this returns).

A file's kind comes from the magic in its header (`engine.codec.FILE_KINDS`); its
records are rendered by the `describe_payload` function of the codec module that
`engine.codec.DECODERS` names for that kind and the header's version. A file of a
version this build does not read is not decoded: `UnsupportedVersion` names it (in the
listing, as the file's note).
A torn tail (bytes an interrupted append left, see `engine.codec.framing`) is shown as
a note; any other damage, or a footer that does not match the records, raises
`CorruptFile` naming the file and the byte offset.

A store's listing walks every folder: the root's `store.meta` (kind `partitioned`) and
lock, then each agent's partition under `agents/<agentId>/` (a reference partition's
framed files, or a SQLite partition's database, listed as an unframed file). Any folder
with a `store.meta` can be listed, a single partition's folder included.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from engine.backends.sqlite.backend import DATABASE_NAME
from engine.codec import check_version, kind_of_magic
from engine.codec.framing import (
    HEADER_SIZE,
    Damage,
    DecodeError,
    Footer,
    Frame,
    decode_header,
    decode_payload,
    iter_frames,
    update_crc,
)
from engine.directory import Directory, FileDirectory, check_name
from engine.errors import CorruptFile, StoreError

META_NAME = "store.meta"
#: Files a store holds that are not framed, by file name (in any folder), and what they
#: are: the writer's locks (the store's and each reference partition's) and a SQLite
#: partition's database and its rollback journal, and the live import's marks (JSON,
#: `engine/ingest/live_marks.py`, a sibling layer, hence the name written here).
UNFRAMED_FILES = {
    "LOCK": "lock",
    "live-import.json": "live import marks",
    DATABASE_NAME: "sqlite database",
    DATABASE_NAME + "-journal": "sqlite journal",
}


def unframed_kind(name: str) -> str | None:
    """What the unframed file `name` (a path inside the store) is, or None if framed.

    >>> unframed_kind("agents/main/LOCK"), unframed_kind("agents/main/store.meta")
    ('lock', None)
    """
    return UNFRAMED_FILES.get(name.rsplit("/", 1)[-1])


@dataclass(frozen=True, slots=True)
class FileSummary:
    """One line of the store listing; `note` explains an unreadable file."""

    name: str
    kind: str
    size: int
    version: int | None
    records: int | None
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The summary as a JSON object."""
        return {"name": self.name, "kind": self.kind, "size": self.size,
                "version": self.version, "records": self.records, "note": self.note}


@dataclass(frozen=True, slots=True)
class RecordView:
    """One decoded record: where it is, its framing, and its fields."""

    offset: int
    length: int
    crc: int
    kind: str
    fields: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        """The record as a JSON object (`crcOk` is always true for a shown record). The
        framing's keys are the engine's JSON style; `fields` are the record's own, named
        as the file's grammar names them (`docs/file-formats.md`), since a dump shows
        what the file holds."""
        return {"offset": self.offset, "length": self.length, "crc": f"{self.crc:08x}",
                "crcOk": True, "kind": self.kind, "fields": self.fields}


@dataclass(frozen=True, slots=True)
class FileView:
    """Every record of one framed file, its footer and any torn tail."""

    name: str
    kind: str
    size: int
    version: int
    flags: int
    records: tuple[RecordView, ...]
    footer: Footer | None
    torn_tail: Damage | None

    def to_json(self) -> dict[str, Any]:
        """The file as a JSON object."""
        footer = None if self.footer is None else {
            "offset": self.footer.offset, "recordCount": self.footer.record_count,
            "recordsCrc": f"{self.footer.records_crc:08x}", "version": self.footer.version,
        }
        tail = None if self.torn_tail is None else {
            "offset": self.torn_tail.offset, "reason": self.torn_tail.reason}
        return {"file": self.name, "kind": self.kind, "size": self.size,
                "version": self.version, "flags": self.flags,
                "records": [record.to_json() for record in self.records],
                "footer": footer, "tornTail": tail}


def open_store_files(path: str) -> Directory:
    """The files of the store folder at `path`, as the dump reads them; StoreError
    unless the folder holds a store."""
    directory = FileDirectory(path)
    require_store(directory)
    return directory


def require_store(directory: Directory) -> None:
    """Raise StoreError unless `directory` holds a store."""
    if not directory.exists(META_NAME):
        raise StoreError(f"{directory.location(META_NAME)}: no store here (missing metadata)")


def summarize_store(directory: Directory) -> list[FileSummary]:
    """One summary per file of the store, sorted by name; damage becomes a note."""
    require_store(directory)
    summaries = []
    for name in directory.list_names():
        size = directory.size(name)
        unframed = unframed_kind(name)
        if unframed is not None:
            summaries.append(FileSummary(name, unframed, size, None, None))
            continue
        try:
            view = read_file(directory, name)
        except StoreError as error:
            summaries.append(FileSummary(name, _kind_guess(directory, name), size, None, None,
                                         str(error)))
            continue
        note = None if view.torn_tail is None else (
            f"torn tail at byte offset {view.torn_tail.offset}: {view.torn_tail.reason}")
        summaries.append(FileSummary(name, view.kind, size, view.version, len(view.records),
                                     note))
    return summaries


def read_file(directory: Directory, name: str) -> FileView:
    """Decode every record of the framed file `name` (a path relative to the store)."""
    check_name(name)
    location = directory.location(name)
    if not directory.exists(name):
        raise StoreError(f"{location}: no such store file")
    unframed = unframed_kind(name)
    if unframed is not None:
        raise StoreError(f"{location}: a {unframed} file has no records to show")
    data = directory.read_bytes(name)
    header = decode_header(data, location)
    kind = kind_of_magic(header.magic)
    if kind is None:
        raise CorruptFile(location, 0, f"unknown file kind (magic {header.magic!r})")
    decoder = importlib.import_module(check_version(kind, header.version, location))
    records: list[RecordView] = []
    footer: Footer | None = None
    torn_tail: Damage | None = None
    crc = 0
    for item in iter_frames(data, HEADER_SIZE):
        if isinstance(item, Frame):
            records.append(_describe(decoder, kind.name, item, location))
            crc = update_crc(crc, data[item.offset: item.end])
        elif isinstance(item, Footer):
            if (item.record_count, item.records_crc) != (len(records), crc):
                raise CorruptFile(location, item.offset, "footer does not match the records")
            footer = item
        elif item.at_tail:
            torn_tail = item
        else:
            raise CorruptFile(location, item.offset, item.reason)
    return FileView(name, kind.name, len(data), header.version, header.flags, tuple(records),
                    footer, torn_tail)


def _describe(decoder: ModuleType, kind_name: str, frame: Frame, location: str) -> RecordView:
    try:
        fields = dict(decoder.describe_payload(decode_payload(frame.payload)))
    except (DecodeError, ValueError, TypeError, KeyError) as error:
        raise CorruptFile(location, frame.offset, f"undecodable record: {error}") from None
    record_kind = str(fields.pop("kind", kind_name))
    return RecordView(frame.offset, frame.length, frame.crc, record_kind, jsonable(fields))


def _kind_guess(directory: Directory, name: str) -> str:
    """The kind named by a file's magic even when the rest is unreadable."""
    kind = kind_of_magic(directory.read_bytes(name, 0, 8))
    return kind.name if kind is not None else "unknown"


def jsonable(value: Any) -> Any:
    """`value` with bytes as hex strings and tuples as lists, so JSON can hold it.

    >>> jsonable({"a": (1, b"\\x01\\xff")})
    {'a': [1, '01ff']}
    """
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, dict):
        return {str(key): jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(item) for item in value]
    return value

