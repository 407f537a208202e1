"""Writing test transcripts into real stores of both backends, and reading them back.

Owns: `Transcript` (a window's events built with the parent chain kept, as a writer
appends them: messages, resets, compactions, custom messages, rewinds), `BACKENDS` and
`new_store` (an empty store of one backend under a folder), `write` (windows and their
events in one transaction). Must not touch: engine internals; only the writer and reader
protocols every backend offers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.model import SessionWindow
from engine.store.registry import open_backend

BACKENDS = ("reference", "sqlite", "postgres")
BASE_TIME = 1_790_000_000_000


@dataclass
class Transcript:
    """The events of one window, appended in order; `leaf` is the entry the next one
    hangs from (None at the start)."""

    session_id: str
    session_key: str
    window: dict[str, Any] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)
    leaf: str | None = None

    def _append(self, event: dict[str, Any], parent: str | None | type = ...) -> str:
        event = {"parentId": self.leaf if parent is ... else parent, **event}
        event.setdefault("timestamp", BASE_TIME + 1000 * len(self.events))
        self.events.append(event)
        if event["type"] != "leaf":
            self.leaf = event["id"]
        return event["id"]

    def message(self, entry_id: str, role: str = "user", text: str | None = None,
                **message: Any) -> str:
        body = {"role": role, "content": text if text is not None else f"text of {entry_id}"}
        body.update(message)
        return self._append({"type": "message", "id": entry_id, "message": body})

    def messages(self, prefix: str, count: int) -> list[str]:
        return [self.message(f"{prefix}{index}", "user" if index % 2 == 0 else "assistant")
                for index in range(count)]

    def reset(self, entry_id: str, first_kept: str | None = None) -> str:
        event: dict[str, Any] = {"type": "reset", "id": entry_id}
        if first_kept is not None:
            event["firstKeptEntryId"] = first_kept
        return self._append(event)

    def compaction(self, entry_id: str, summary: str = "summary") -> str:
        return self._append({"type": "compaction", "id": entry_id, "summary": summary})

    def custom(self, entry_id: str, display: bool, custom_type: str = "notice") -> str:
        return self._append({"type": "custom_message", "id": entry_id, "display": display,
                             "customType": custom_type, "content": f"custom {entry_id}"})

    def other(self, entry_id: str, kind: str = "model_change") -> str:
        return self._append({"type": kind, "id": entry_id})

    def rewind(self, entry_id: str, target: str | None) -> None:
        """A leaf control: the next entry hangs from `target`."""
        self._append({"type": "leaf", "id": entry_id, "targetId": target})
        self.leaf = target


def new_store(folder: Path, backend: str) -> Any:
    """An empty writable store of `backend` in `folder/backend`."""
    return open_backend(folder / backend, backend=backend, create=True)


def write(store: Any, *transcripts: Transcript) -> None:
    """Put each transcript's window and append its events, in one transaction."""
    with store.transaction() as transaction:
        for transcript in transcripts:
            transaction.put_window(SessionWindow(transcript.session_id, transcript.session_key,
                                                 **transcript.window))
            for index, event in enumerate(transcript.events):
                transaction.append_event(transcript.session_id, event,
                                         created_at=float(BASE_TIME + index))
