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

A row read from a flushed segment does not hold its text in memory: it holds the
segment's rows (`engine.index.segment_rows.SegmentRows`, a `TextSource`), which read the
record of texts the row is in when `text` is first asked for (so that opening a store
decodes only the small per-row columns; a small cache keeps the records read last).
`text_is_ascii` answers from a stored flag without reading the text.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol

from engine.model import IndexEntry


def fts_text(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD, as a UTF-8 column holds it.

    >>> fts_text("a\\ud800b") == "a\\ufffdb", fts_text("plain")
    (True, 'plain')
    """
    if not any("\ud800" <= character <= "\udfff" for character in text):
        return text
    return "".join("\ufffd" if "\ud800" <= character <= "\udfff" else character for character in text)


def postgres_text(text: str) -> str:
    """`text` as a PostgreSQL row of the postgres backend holds it (and as the reference
    engine's PostgreSQL expectation reads it): NUL, which PostgreSQL text cannot hold, and
    lone surrogates, which UTF-8 cannot, become U+FFFD (a separator to every parser here).

    >>> postgres_text("a\\x00b\\ud800c") == "a\\ufffdb\\ufffdc", postgres_text("plain")
    (True, 'plain')
    """
    if "\x00" not in text:
        return fts_text(text)
    return fts_text(text).replace("\x00", "\ufffd")


class TextSource(Protocol):
    """Where a flushed row's text is read from (`engine.index.segment_rows.SegmentRows`)."""

    def text_of(self, doc_id: int) -> str:
        """The text of row `doc_id` (KeyError when there is no such row)."""
        ...


class DocumentRecord(NamedTuple):
    """One index row: its id (insertion order), its message and its length in tokens.

    `stored_text` is the text itself, or the `TextSource` (the segment's rows) the
    row was read from (then `non_ascii` is the stored flag). Read the text as `text`; two
    records are equal when their fields and texts are.

    A `NamedTuple`, not a frozen dataclass: every hit is a record made when a search
    reads it, and a tuple is made in one C call (`tuple.__new__`, as
    `engine.index.segment_rows` makes them) where a frozen dataclass sets each of its
    nine fields through `object.__setattr__`. Equality and hashing stay the record's own
    (below), not the tuple's: the text is compared, not where it is read from.
    """

    doc_id: int
    session_id: str
    message_id: str
    role: str
    timestamp: float | str | None
    stored_text: str | TextSource
    length: int
    seq: int
    non_ascii: bool | None = None

    @property
    def text(self) -> str:
        """The row's text (read from its segment's file when not in memory)."""
        stored = self.stored_text
        if stored.__class__ is str:
            return stored  # type: ignore[return-value]
        return stored.text_of(self.doc_id)  # type: ignore[union-attr]

    @property
    def text_is_ascii(self) -> bool:
        """Whether the text is ASCII only, without reading a text that is not in memory.

        >>> DocumentRecord(0, "w", "m", "user", None, "café", 1, 0).text_is_ascii
        False
        """
        if self.non_ascii is not None and self.stored_text.__class__ is not str:
            return not self.non_ascii
        return self.text.isascii()

    def _key(self) -> tuple:
        return (self.doc_id, self.session_id, self.message_id, self.role, self.timestamp,
                self.text, self.length, self.seq)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DocumentRecord):
            # Not a tuple's comparison: a record equals no other tuple (as a dataclass).
            return False if isinstance(other, tuple) else NotImplemented
        return self._key() == other._key()

    def __ne__(self, other: object) -> bool:
        if not isinstance(other, DocumentRecord):
            return True if isinstance(other, tuple) else NotImplemented
        return self._key() != other._key()

    def __hash__(self) -> int:
        return hash((self.doc_id, self.session_id, self.message_id, self.length, self.seq))

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
            stored_text=fts_text(entry.text),
            length=length,
            seq=entry.seq,
        )
