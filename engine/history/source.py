"""What history reads: the `HistorySource` interface over the stored transcripts.

Owns: the narrow `typing.Protocol` the history reader takes as its source. Must not
touch: any backend or index (`engine.history` sits below `engine.backends`, so it names
the two reads it needs instead of importing the backends' `TranscriptReader`).

Every backend's transcript reader (`engine.backends.protocol.TranscriptReader`: the
reference backend, SQLite, the partitioned store that `open_store` returns) and a bare
`engine.transcript.store.TranscriptStore` have these methods, so history reads every
backend the same way and gives the same answers: it only ever sees the windows of a key
and the events of a window, in `seq` order, exactly as they were stored.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from engine.model import SessionWindow, StoredEvent


@runtime_checkable
class HistorySource(Protocol):
    """The transcript reads history needs (a subset of `TranscriptReader`)."""

    def windows_of(self, session_key: str) -> list[SessionWindow]:
        """The windows of one session key, in the order they joined it."""
        ...

    def events(self, session_id: str) -> list[StoredEvent]:
        """Every event of a window, in `seq` order."""
        ...
