"""The terms file of an index segment: its document table and its term dictionary.

Owns: the bytes of `index/segment-NNNNNN.terms`. Must not touch: files, posting lists
(they live in the segment's postings file; this file only says where).

Byte grammar (a `framing` file of kind `terms`)::

    terms file     := header(magic "SS.TERMS") documents_record terms_record* footer
    documents_record := ["documents", [row, ...]]
    row            := [doc_gap, session_id, message_id, role, timestamp, length, seq, text]
                      doc ids are the running sum of `doc_gap` (from 0; the first gap is
                      the first doc id, every later gap > 0); `timestamp` is a number,
                      a string or nil (the FTS5 column is untyped); `length` is the row's
                      token count; `seq` the transcript event the row came from
    terms_record   := ["terms", [entry, ...]]   at most TERMS_PER_RECORD entries each
    entry          := [term, document_frequency, offset, length]
                      terms strictly increase across all records; `offset`/`length` is
                      the byte range of the term's record in the postings file

Rows are plain tuples here (the codec never imports index types).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from engine.codec import FILE_KINDS
from engine.codec.framing import (
    DecodeError,
    decode_payload,
    decode_sealed_frames,
    encode_footer,
    encode_header,
    encode_record,
    update_crc,
)
from engine.errors import CorruptFile

MAGIC = FILE_KINDS["terms"].magic
TERMS_PER_RECORD = 4096

#: `(doc_id, session_id, message_id, role, timestamp, length, seq, text)`
DocumentRow = tuple[int, str, str, str, Any, int, int, str]
#: `(term, document_frequency, offset, length)`
TermEntry = tuple[str, int, int, int]


@dataclass(frozen=True, slots=True)
class TermsFile:
    """A decoded terms file."""

    documents: list[DocumentRow]
    terms: list[TermEntry]


def encode_terms_file(documents: Sequence[DocumentRow], terms: Iterable[TermEntry]) -> bytes:
    """The whole terms file.

    >>> rows = [(4, "w", "m1", "user", 1.5, 2, 0, "hi there")]
    >>> data = encode_terms_file(rows, [("hi", 1, 16, 20), ("there", 1, 36, 20)])
    >>> decoded = decode_terms_file(data, "t")
    >>> decoded.documents == rows, decoded.terms[1]
    (True, ('there', 1, 36, 20))
    """
    rows = []
    previous = 0
    for doc_id, session_id, message_id, role, timestamp, length, seq, text in documents:
        rows.append([doc_id - previous, session_id, message_id, role, timestamp, length, seq, text])
        previous = doc_id
    records = [encode_record(["documents", rows])]
    entries = [list(entry) for entry in terms]
    for begin in range(0, len(entries), TERMS_PER_RECORD):
        records.append(encode_record(["terms", entries[begin: begin + TERMS_PER_RECORD]]))
    crc = 0
    for record in records:
        crc = update_crc(crc, record)
    return encode_header(MAGIC) + b"".join(records) + encode_footer(len(records), crc)


def _decode_rows(rows: Any) -> list[DocumentRow]:
    if not isinstance(rows, list):
        raise DecodeError("document table is not an array")
    decoded: list[DocumentRow] = []
    doc_id = 0
    for row in rows:
        if not (isinstance(row, list) and len(row) == 8):
            raise DecodeError("document row is not an 8-element array")
        gap, session_id, message_id, role, timestamp, length, seq, text = row
        if not (isinstance(session_id, str) and isinstance(message_id, str)
                and isinstance(role, str) and isinstance(text, str)):
            raise DecodeError("document row has a non-string id, role or text")
        if not (isinstance(gap, int) and isinstance(length, int) and isinstance(seq, int)):
            raise DecodeError("document row has a non-integer gap, length or seq")
        if decoded and gap <= 0:
            raise DecodeError(f"document ids do not increase after {doc_id}")
        doc_id += gap
        decoded.append((doc_id, session_id, message_id, role, timestamp, length, seq, text))
    return decoded


def _decode_entries(entries: Any, previous: str | None) -> list[TermEntry]:
    if not isinstance(entries, list):
        raise DecodeError("term entries are not an array")
    decoded: list[TermEntry] = []
    for entry in entries:
        if not (isinstance(entry, list) and len(entry) == 4 and isinstance(entry[0], str)):
            raise DecodeError("term entry is not [term, frequency, offset, length]")
        if previous is not None and entry[0] <= previous:
            raise DecodeError(f"terms are not strictly increasing at {entry[0]!r}")
        previous = entry[0]
        decoded.append((entry[0], entry[1], entry[2], entry[3]))
    return decoded


def decode_terms_file(data: bytes, location: str) -> TermsFile:
    """Decode a terms file: CorruptFile (with the offset) on any damage."""
    frames = decode_sealed_frames(data, location, MAGIC)
    documents: list[DocumentRow] | None = None
    terms: list[TermEntry] = []
    for frame in frames:
        try:
            value = decode_payload(frame.payload)
            if not (isinstance(value, list) and len(value) == 2):
                raise DecodeError("record is not [kind, body]")
            kind, body = value
            if kind == "documents" and documents is None:
                documents = _decode_rows(body)
            elif kind == "terms" and documents is not None:
                terms.extend(_decode_entries(body, terms[-1][0] if terms else None))
            else:
                raise DecodeError(f"unexpected {kind!r} record")
        except DecodeError as error:
            raise CorruptFile(location, frame.offset, str(error)) from None
    if documents is None:
        raise CorruptFile(location, len(data), "terms file has no document table")
    return TermsFile(documents, terms)


def describe_payload(value: Any) -> dict[str, Any]:
    """A readable dict of one terms-file record, for `session-search dump`."""
    kind, body = value
    if kind == "documents":
        return {"kind": "documents", "rows": [list(row) for row in _decode_rows(body)]}
    return {"kind": "terms", "entries": [list(entry) for entry in _decode_entries(body, None)]}
