"""What the index stores per row besides postings: the FTS5 row's unindexed columns.

Owns: `DocumentRecord`, one searchable message as the index holds it. Must not touch:
transcripts (rows are made from `engine.model.IndexEntry` values handed in by the
backend), tokens, bytes.

Like the FTS5 table of upstream (`text`, `session_id`, `message_id`, `role`,
`timestamp`), a row keeps its text: snippets are cut from it and the CJK retry scans it,
and a stale row of a dirty window keeps the text it was indexed with until reconcile
replaces it. `length` is the row's exact token count (the bm25 `D`); `seq` is the
transcript event the row came from (used by the invariant checker and `verify`).

A row's text is stored as SQLite stores upstream's row (`fts_text`): JavaScript strings
are written as UTF-8, so a lone surrogate becomes U+FFFD. Both are separators to
`unicode61`, so terms and positions do not change; excerpts then match the SQLite
backend's, and the text is always encodable.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.model import IndexEntry


def fts_text(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD, as a UTF-8 column holds it.

    >>> fts_text("a\\ud800b") == "a\\ufffdb", fts_text("plain")
    (True, 'plain')
    """
    if not any("\ud800" <= character <= "\udfff" for character in text):
        return text
    return "".join("\ufffd" if "\ud800" <= character <= "\udfff" else character for character in text)


@dataclass(frozen=True, slots=True)
class DocumentRecord:
    """One index row: its id (insertion order), its message and its length in tokens."""

    doc_id: int
    session_id: str
    message_id: str
    role: str
    timestamp: float | str | None
    text: str
    length: int
    seq: int

    @classmethod
    def from_entry(cls, doc_id: int, entry: IndexEntry, length: int) -> DocumentRecord:
        """The row for `entry`, holding `length` tokens.

        >>> entry = IndexEntry("w1", "m1", "user", 12.0, "hello world", 3)
        >>> DocumentRecord.from_entry(7, entry, 2).message_id
        'm1'
        """
        return cls(
            doc_id=doc_id,
            session_id=entry.session_id,
            message_id=entry.message_id,
            role=entry.role,
            timestamp=entry.timestamp,
            text=fts_text(entry.text),
            length=length,
            seq=entry.seq,
        )
