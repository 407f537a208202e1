"""What a history page's rows are, as a readable history view reads them.

Owns: nothing of its own but the list of what a view of a `chat.history` page needs of
the history stage and the transcript: a row's seq (`message_seq`), the view a page comes
from (`CURRENT`), the rows a reader leaves out (`without_tool_messages`) and the kinds of
separator rows (`RESET`, `COMPACTION`, `CUSTOM_MESSAGE`). Must not touch: how a page is
cut (`engine.history`).
"""

from __future__ import annotations

from engine.history.byte_caps import message_seq
from engine.history.sanitize import without_tool_messages
from engine.history.views import CURRENT
from engine.transcript.events import COMPACTION, CUSTOM_MESSAGE, RESET

__all__ = ["COMPACTION", "CURRENT", "CUSTOM_MESSAGE", "RESET", "message_seq",
           "without_tool_messages"]
