"""Byte layouts of every file the engine writes, the version of each, and their decoders.

Owns: `FILE_KINDS` (each kind's magic, name pattern and the format version written),
`DECODERS` (per kind, the codec module that reads each version) and the rule that
refuses any other version (`check_version`). Must not touch: files (codec modules
encode and decode bytes; they never open anything). This package is the only one that
imports `msgpack`, `struct` or `zlib`.

Every engine file is framed by `engine.codec.framing` (a header with an 8-byte magic
naming the file kind and the kind's format version; CRC32-checked records; an optional
footer). The magic tells `session-search dump` which kind a file is; the version says
which module of `DECODERS` reads its records.

| kind        | magic      | version | file name                        | records (decoder module)   |
| ----------- | ---------- | ------- | -------------------------------- | -------------------------- |
| `store`     | `SS.STORE` | 1       | `store.meta`                     | one metadata map (`meta_file`) |
| `partitioned` | `SS.PARTS` | 2     | `store.meta` at a store's root   | one metadata map with the list of agents (`meta_file`) |
| `segment`   | `SS.SEGMT` | 2       | `transcripts/segment-NNNNNN.log` | window / event / replace / delete_session / commit (`log_file`) |
| `catalog`   | `SS.CATLG` | 2       | `transcripts/catalog.ckpt`       | catalog checkpoint (`catalog_file`) |
| `compaction` | `SS.COMPT` | 1      | `transcripts/compaction.state`   | compactions begun, one running (`compaction_file`) |
| `postings`  | `SS.POSTS` | 2       | `index/segment-NNNNNN.postings`  | posting lists (`postings_file`) |
| `terms`     | `SS.TERMS` | 2       | `index/segment-NNNNNN.terms`     | documents and term dictionary (`terms_file`) |
| `manifest`  | `SS.MANIF` | 2       | `index/manifest`                 | index commit point (`manifest_file`) |
| `journal`   | `SS.JOURN` | 2       | `commit.journal` at a store's root | a transaction across agents, until every partition committed it (`journal_file`) |
| `generations` | `SS.GENER` | 1     | `generations` at a store's root  | each partition's commit count after the store's last commit to it (`generations_file`) |

A store's root holds the `partitioned` kind (the backend of its partitions, one per
agent under `agents/<agentId>/`, see `engine.store.layout`); a reference
partition's folder holds the `store` kind and the files below it. The two kinds have
different magics so that no reader can take a store's root for a partition or the
other way round.

Files that are not framed: `LOCK` (the writer's pid, text) and a SQLite partition's
database.

Versions. Each kind has one format version, the one its module's grammar describes; a
reader refuses a file of any other version (`UnsupportedVersion`, naming the file) and
never converts it. The package is unreleased: while it was being written, catalog,
postings, terms and manifest files went through several layouts, all with version 1 in
their header; the layouts of today are version 2 of those kinds, so a store written by
an earlier build is refused with a message that says to re-import it (a partition's
`store.meta` never changed, and is still version 1; the root's `store.meta` is version 2
since it lists the agents that have a partition; the transcript log is version 2 since
it gained the `replace` record, for a replaced transcript). A catalog checkpoint
is derived data: one of another version is ignored and the log replayed, as a damaged
one is. To change a layout, give its kind the next version here, add the decoder of the
new version to `DECODERS` (keep the old one only once a release has written it) and a
fixture of it under `tests/codec/compat/`. To add a file kind, add one line to each
table (its record module needs a `describe_payload(value) -> dict` function).
"""

from __future__ import annotations

from typing import NamedTuple

from engine.errors import UnsupportedVersion

#: Length of the magic that opens every framed file.
MAGIC_LENGTH = 8


class FileKind(NamedTuple):
    """One kind of engine file: its magic (`MAGIC_LENGTH` bytes: tests/codec/
    test_file_kind_magics.py checks every kind's), its name pattern, and the version
    written. A NamedTuple, not a frozen dataclass: every command that opens a store
    imports this table, and a NamedTuple's class costs a fraction of a dataclass's to
    make."""

    name: str
    magic: bytes
    pattern: str
    description: str
    #: The format version written into the header of every file of this kind.
    version: int


FILE_KINDS: dict[str, FileKind] = {
    "store": FileKind("store", b"SS.STORE", "store.meta", "store metadata (backend, creation time)", 1),
    "partitioned": FileKind("partitioned", b"SS.PARTS", "store.meta", "partitioned store metadata (backend of its per-agent partitions, creation time, the agents that have one)", 2),
    "segment": FileKind("segment", b"SS.SEGMT", "transcripts/segment-NNNNNN.log", "transcript log file (append-only)", 2),
    "catalog": FileKind("catalog", b"SS.CATLG", "transcripts/catalog.ckpt", "transcript catalog checkpoint (derived; speeds up reopening)", 2),
    "compaction": FileKind("compaction", b"SS.COMPT", "transcripts/compaction.state", "transcript log compaction state (how many began, one running)", 1),
    "postings": FileKind("postings", b"SS.POSTS", "index/segment-NNNNNN.postings", "index segment posting lists", 2),
    "terms": FileKind("terms", b"SS.TERMS", "index/segment-NNNNNN.terms", "index segment documents and term dictionary", 2),
    "manifest": FileKind("manifest", b"SS.MANIF", "index/manifest", "index manifest (commit point)", 2),
    "journal": FileKind("journal", b"SS.JOURN", "commit.journal", "commit journal of a transaction across agents (present only until every partition committed it)", 2),
    "generations": FileKind("generations", b"SS.GENER", "generations", "each partition's commit count after the store's last commit to it (a witness that a partition did not go back)", 1),
}

#: Per kind, per format version this build reads, the dotted name of the codec module
#: that decodes that version (its `describe_payload(value)` renders a record for
#: `dump`). One version per kind: the one `FILE_KINDS` writes.
DECODERS: dict[str, dict[int, str]] = {
    "store": {1: "engine.codec.meta_file"},
    "partitioned": {2: "engine.codec.meta_file"},
    "segment": {2: "engine.codec.log_file"},
    "catalog": {2: "engine.codec.catalog_file"},
    "compaction": {1: "engine.codec.compaction_file"},
    "postings": {2: "engine.codec.postings_file"},
    "terms": {2: "engine.codec.terms_file"},
    "manifest": {2: "engine.codec.manifest_file"},
    "journal": {1: "engine.codec.journal_file", 2: "engine.codec.journal_file"},
    "generations": {1: "engine.codec.generations_file"},
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


def check_version(kind: FileKind, version: int, location: str) -> str:
    """The decoder module of `version` of `kind`; UnsupportedVersion, naming the file
    at `location`, when this build reads no such version.

    >>> check_version(FILE_KINDS["terms"], 2, "index/x.terms")
    'engine.codec.terms_file'
    >>> check_version(FILE_KINDS["terms"], 1, "index/x.terms")
    Traceback (most recent call last):
    ...
    engine.errors.UnsupportedVersion: index/x.terms: unsupported version 1 of a terms file (this build reads version 2); it was written by an earlier build of session-search: re-import the store
    """
    decoders = DECODERS[kind.name]
    if version in decoders:
        return decoders[version]
    readable = ", ".join(map(str, sorted(decoders)))
    plural = "s" if len(decoders) > 1 else ""
    advice = ("an earlier build of session-search: re-import the store"
              if version < min(decoders) else "a newer build of session-search")
    raise UnsupportedVersion(
        f"{location}: unsupported version {version} of a {kind.name} file "
        f"(this build reads version{plural} {readable}); it was written by {advice}")
