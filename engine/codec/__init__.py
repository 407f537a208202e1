"""Byte layouts of every file the engine writes, and the table that names them.

Owns: `FORMAT_VERSION` and `FILE_KINDS`. Must not touch: files (codec modules encode and
decode bytes; they never open anything). This package is the only one that imports
`msgpack`, `struct` or `zlib`.

Every engine file is framed by `engine.codec.framing` (header with an 8-byte magic naming
the file kind and the format version; CRC32-checked records; an optional footer). The
magic tells `session-search dump` which kind a file is and which module describes its
records. To add a file kind, add one line to `FILE_KINDS` below (and write its record
module with a `describe_payload(value) -> dict` function).

| kind        | magic      | file name                                 | records (module)           |
| ----------- | ---------- | ----------------------------------------- | -------------------------- |
| `store`     | `SS.STORE` | `store.meta`                              | one metadata map (`meta_file`) |
| `segment`   | `SS.SEGMT` | `transcripts/segment-NNNNNN.log`          | window / event / delete_session / commit (`log_file`) |
| `catalog`   | `SS.CATLG` | `transcripts/catalog.ckpt`                | catalog checkpoint (`catalog_file`) |
| `postings`  | `SS.POSTS` | `index/segment-NNNNNN.postings`           | posting lists (`postings_file`) |
| `terms`     | `SS.TERMS` | `index/segment-NNNNNN.terms`              | documents and term dictionary (`terms_file`) |
| `manifest`  | `SS.MANIF` | `index/manifest`                          | index commit point (`manifest_file`) |

Files that are not framed: `LOCK` (the writer's pid, text).
"""

from __future__ import annotations

from dataclasses import dataclass

#: The format version written into every header and footer; readers refuse other versions.
FORMAT_VERSION = 1

#: Length of the magic that opens every framed file.
MAGIC_LENGTH = 8


@dataclass(frozen=True, slots=True)
class FileKind:
    """One kind of engine file: its magic, its name pattern, and its record describer."""

    name: str
    magic: bytes
    pattern: str
    description: str
    #: Dotted name of the codec module whose `describe_payload(value)` renders a record.
    record_module: str

    def __post_init__(self) -> None:
        if len(self.magic) != MAGIC_LENGTH:
            raise ValueError(f"magic of {self.name!r} must be {MAGIC_LENGTH} bytes")


FILE_KINDS: dict[str, FileKind] = {
    "store": FileKind("store", b"SS.STORE", "store.meta", "store metadata (backend, creation time)", "engine.codec.meta_file"),
    "segment": FileKind("segment", b"SS.SEGMT", "transcripts/segment-NNNNNN.log", "transcript log file (append-only)", "engine.codec.log_file"),
    "catalog": FileKind("catalog", b"SS.CATLG", "transcripts/catalog.ckpt", "transcript catalog checkpoint (derived; speeds up reopening)", "engine.codec.catalog_file"),
    "postings": FileKind("postings", b"SS.POSTS", "index/segment-NNNNNN.postings", "index segment posting lists", "engine.codec.postings_file"),
    "terms": FileKind("terms", b"SS.TERMS", "index/segment-NNNNNN.terms", "index segment documents and term dictionary", "engine.codec.terms_file"),
    "manifest": FileKind("manifest", b"SS.MANIF", "index/manifest", "index manifest (commit point)", "engine.codec.manifest_file"),
}


def kind_of_magic(magic: bytes) -> FileKind | None:
    """The file kind whose magic is `magic`, or None.

    >>> kind_of_magic(b"SS.SEGMT").name
    'segment'
    >>> kind_of_magic(b"NOTMAGIC") is None
    True
    """
    for kind in FILE_KINDS.values():
        if kind.magic == magic:
            return kind
    return None
