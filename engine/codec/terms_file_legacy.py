"""Terms files of layouts 1 and 2 (written before issue 5's lazily read table), read only.

Owns: decoding the whole of an old terms file. Must not touch: files, and never writes
these layouts (`engine.codec.terms_file` writes layout 3; its reader converts an old
file by decoding it here and encoding it again in memory).

Byte grammar (a `framing` file of kind `terms`), layout 2::

    terms file     := header(magic "SS.TERMS") documents_record texts_record*
                      terms_record* footer
    documents_record := ["documents/2", [row, ...]]
    row            := [doc_gap, session_id, message_id, role, timestamp, length, seq, flags]
                      doc ids are the running sum of `doc_gap` (from 0; the first gap is
                      the first doc id, every later gap > 0); `flags` bit 0 set = the
                      row's text holds a non-ASCII character
    texts_record   := ["texts", [text, ...]]   the texts of rows k*256 .. k*256 + 255

Layout 1 differs only in the documents record, which holds the texts inline::

    documents_record := ["documents", [row1, ...]]
    row1           := [doc_gap, session_id, message_id, role, timestamp, length, seq, text]

The term dictionary, in both::

    terms_record   := ["terms", [entry, ...]]
    entry          := [term, document_frequency, offset, length]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.codec import FILE_KINDS
from engine.codec.framing import (
    RECORD_HEAD_SIZE,
    DecodeError,
    decode_payload,
    decode_sealed_frames,
)
from engine.errors import CorruptFile

MAGIC = FILE_KINDS["terms"].magic
TEXTS_PER_RECORD = 256
NON_ASCII_FLAG = 1

#: `(doc_id, session_id, message_id, role, timestamp, length, seq, text)`; decoded from
#: layout 2 the text is None (read it with `TermsFile.text_block`).
DocumentRow = tuple[int, str, str, str, Any, int, int, str | None]
#: `(term, document_frequency, offset, length)`
TermEntry = tuple[str, int, int, int]


@dataclass(frozen=True, slots=True)
class TermsFile:
    """A decoded terms file.

    For layout 2, `text_blocks` are the `(offset, length)` of each texts record's payload
    in `data` and `non_ascii` the flag of each row; for layout 1 both are empty (the
    rows hold their texts).
    """

    documents: list[DocumentRow]
    terms: list[TermEntry]
    data: bytes = b""
    location: str = ""
    text_blocks: tuple[tuple[int, int], ...] = ()
    non_ascii: tuple[bool, ...] = ()

    def text_block(self, block: int) -> list[str]:
        """The texts of rows `block * TEXTS_PER_RECORD ..` (layout 2), decoded now.

        CorruptFile when the block is not a list of strings of the expected size.
        """
        offset, length = self.text_blocks[block]
        expected = min(TEXTS_PER_RECORD, len(self.documents) - block * TEXTS_PER_RECORD)
        try:
            kind, texts = decode_payload(self.data[offset: offset + length])
            if not (kind == "texts" and isinstance(texts, list) and len(texts) == expected
                    and all(isinstance(text, str) for text in texts)):
                raise DecodeError(f"texts record {block} is not {expected} strings")
        except (DecodeError, ValueError) as error:
            raise CorruptFile(self.location, offset - RECORD_HEAD_SIZE, str(error)) from None
        return texts


def _decode_rows(rows: Any, *, inline_texts: bool) -> tuple[list[DocumentRow], list[bool]]:
    """The rows of a documents record (layout 1 when `inline_texts`) and, for layout 2,
    each row's non-ASCII flag."""
    if not isinstance(rows, list):
        raise DecodeError("document table is not an array")
    decoded: list[DocumentRow] = []
    non_ascii: list[bool] = []
    shared: dict[str, str] = {}
    doc_id = 0
    for row in rows:
        if not (isinstance(row, list) and len(row) == 8):
            raise DecodeError("document row is not an 8-element array")
        gap, session_id, message_id, role, timestamp, length, seq, last = row
        if not (isinstance(session_id, str) and isinstance(message_id, str)
                and isinstance(role, str)):
            raise DecodeError("document row has a non-string id or role")
        if inline_texts and not isinstance(last, str):
            raise DecodeError("document row has a non-string text")
        if not inline_texts and not isinstance(last, int):
            raise DecodeError("document row has non-integer flags")
        if not (isinstance(gap, int) and isinstance(length, int) and isinstance(seq, int)):
            raise DecodeError("document row has a non-integer gap, length or seq")
        if decoded and gap <= 0:
            raise DecodeError(f"document ids do not increase after {doc_id}")
        doc_id += gap
        # Rows of one window share one session id and role object (memory, not meaning).
        session_id = shared.setdefault(session_id, session_id)
        role = shared.setdefault(role, role)
        if inline_texts:
            decoded.append((doc_id, session_id, message_id, role, timestamp, length, seq, last))
        else:
            decoded.append((doc_id, session_id, message_id, role, timestamp, length, seq, None))
            non_ascii.append(bool(last & NON_ASCII_FLAG))
    return decoded, non_ascii


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
    non_ascii: list[bool] = []
    text_blocks: list[tuple[int, int]] = []
    expected_blocks = 0
    terms: list[TermEntry] = []
    for frame in frames:
        try:
            if documents is not None and len(text_blocks) < expected_blocks:
                # Layout 2's texts stay undecoded here: only where they are is kept.
                text_blocks.append((frame.offset + RECORD_HEAD_SIZE, frame.length))
                continue
            value = decode_payload(frame.payload)
            if not (isinstance(value, list) and len(value) == 2):
                raise DecodeError("record is not [kind, body]")
            kind, body = value
            if kind in ("documents", "documents/2") and documents is None:
                documents, non_ascii = _decode_rows(body, inline_texts=kind == "documents")
                if kind == "documents/2":
                    expected_blocks = -(-len(documents) // TEXTS_PER_RECORD)
            elif kind == "terms" and documents is not None:
                terms.extend(_decode_entries(body, terms[-1][0] if terms else None))
            else:
                raise DecodeError(f"unexpected {kind!r} record")
        except DecodeError as error:
            raise CorruptFile(location, frame.offset, str(error)) from None
    if documents is None:
        raise CorruptFile(location, len(data), "terms file has no document table")
    if len(text_blocks) < expected_blocks:
        raise CorruptFile(location, len(data), "terms file lacks texts records")
    return TermsFile(documents, terms, data, location, tuple(text_blocks), tuple(non_ascii))


def decode_all_texts(terms_file: TermsFile) -> list[str]:
    """Every row's text, in row order, whichever the layout (decodes every block)."""
    if not terms_file.text_blocks:
        return [row[7] for row in terms_file.documents]  # type: ignore[misc]
    texts: list[str] = []
    for block in range(len(terms_file.text_blocks)):
        texts.extend(terms_file.text_block(block))
    return texts


def describe_payload(value: Any) -> dict[str, Any]:
    """A readable dict of one terms-file record, for `session-search dump`."""
    kind, body = value
    if kind in ("documents", "documents/2"):
        rows, non_ascii = _decode_rows(body, inline_texts=kind == "documents")
        if kind == "documents":
            return {"kind": kind, "rows": [list(row) for row in rows]}
        return {"kind": kind, "rows": [[*row[:7], {"non_ascii": flag}]
                                       for row, flag in zip(rows, non_ascii)]}
    if kind == "texts":
        return {"kind": "texts", "texts": list(body)}
    return {"kind": "terms", "entries": [list(entry) for entry in _decode_entries(body, None)]}
