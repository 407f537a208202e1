"""Directional history cursors: what an `older` or `newer` cursor remembers.

Owns: the `HistoryCursor` value and its opaque text form (`encode`, `decode`). Must not
touch: which rows a cursor page holds (`window_math.py`) or how a page is read
(`pages.py`).

A cursor names the row a page continues from and the view it was taken in, so that a
later read can tell whether the window moved under it: the window (`sessionId`), the
view's latest reset (its event `seq`, -1 without one), and the anchor row (its id, its
display ordinal in the view and its event `seq`). When any of them no longer holds (the
key rotated to a new window, a new reset started a new view, a rewind moved the anchor),
the page says `windowReset` instead of guessing.

The text form is opaque to clients: the base64url (no padding) of a compact JSON array
`[1, direction, sessionId, resetSeq, anchorId, anchorOrdinal, anchorSeq]` (1 is the
version). It is text, not a byte layout, so it lives here rather than in `engine.codec`.
Anything that does not decode to that shape is refused with one message.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass

from engine.errors import InputError

OLDER = "older"
NEWER = "newer"
DIRECTIONS = (OLDER, NEWER)
VERSION = 1

INVALID_CURSOR = "cursor is not a history cursor (pass back a cursor a history page returned)"


@dataclass(frozen=True, slots=True)
class HistoryCursor:
    """Where a directional page continues from (see the module docstring)."""

    direction: str
    session_id: str
    reset_seq: int
    anchor_id: str
    anchor_ordinal: int
    anchor_seq: int

    def encode(self) -> str:
        """The opaque text form.

        >>> cursor = HistoryCursor("older", "s1", -1, "m7", 7, 12)
        >>> HistoryCursor.decode(cursor.encode()) == cursor
        True
        """
        document = [VERSION, self.direction, self.session_id, self.reset_seq, self.anchor_id,
                    self.anchor_ordinal, self.anchor_seq]
        text = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
        raw = text.encode("utf-8", "surrogatepass")
        return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")

    @classmethod
    def decode(cls, text: str) -> HistoryCursor:
        """The cursor `text` encodes; `InputError(INVALID_CURSOR)` for anything else.

        >>> HistoryCursor.decode("bm90IGEgY3Vyc29y")
        Traceback (most recent call last):
        ...
        engine.errors.InputError: cursor is not a history cursor (pass back a cursor a history page returned)
        """
        try:
            padded = text + "=" * (-len(text) % 4)
            document = json.loads(base64.urlsafe_b64decode(padded.encode("ascii"))
                                  .decode("utf-8", "surrogatepass"))
        except (ValueError, UnicodeError, binascii.Error):
            raise InputError(INVALID_CURSOR) from None
        if not (isinstance(document, list) and len(document) == 7 and document[0] == VERSION
                and document[1] in DIRECTIONS and isinstance(document[2], str)
                and isinstance(document[4], str)
                and all(isinstance(value, int) and not isinstance(value, bool)
                        for value in (document[3], document[5], document[6]))):
            raise InputError(INVALID_CURSOR)
        return cls(document[1], document[2], document[3], document[4], document[5],
                   document[6])
