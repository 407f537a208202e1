"""`IndexedStore._incognito` keeps the answer for the window it was last asked about (a
window's events come together): the answer follows the window object, never only its
session id, so a window replaced under the same id is asked again."""

from __future__ import annotations

from engine.backends.reference.backend import ReferenceBackend
from engine.directory import MemoryDirectory
from engine.errors import UnknownSession
from engine.model import SessionWindow


class OneWindow:
    """Transaction windows holding at most one window (`current`), whatever its id."""

    def __init__(self) -> None:
        self.current: SessionWindow | None = None

    def window(self, session_id: str) -> SessionWindow:
        if self.current is None:
            raise UnknownSession(session_id)
        return self.current


def test_the_answer_follows_the_window_object() -> None:
    backend = ReferenceBackend.create_in(MemoryDirectory())
    windows = OneWindow()
    private = SessionWindow("w", "agent:main:main", incognito=True)
    public = SessionWindow("w", "agent:main:main")
    under_key = SessionWindow("w", "agent:main:dashboard:incognito-x")
    try:
        for window, expected in [(private, True), (private, True), (public, False),
                                 (None, False), (public, False), (under_key, True),
                                 (public, False)]:
            windows.current = window
            assert backend._incognito("w", windows) is expected  # type: ignore[arg-type]
    finally:
        backend.close()


def test_each_window_object_is_asked_once_in_a_row(monkeypatch) -> None:
    """The window's own rule runs once for a run of events of one window object, and
    again for the next object: the cache is what spares the per-event call."""
    asked: list[str] = []
    rule = SessionWindow.is_incognito.fget  # type: ignore[attr-defined]

    def counted(window: SessionWindow) -> bool:
        asked.append(window.session_key)
        return rule(window)

    monkeypatch.setattr(SessionWindow, "is_incognito", property(counted))
    backend = ReferenceBackend.create_in(MemoryDirectory())
    windows = OneWindow()
    private = SessionWindow("w", "agent:main:dashboard:incognito-x")
    public = SessionWindow("w", "agent:main:main")
    try:
        for window in [private, private, private, public, public]:
            windows.current = window
            backend._incognito("w", windows)  # type: ignore[arg-type]
    finally:
        backend.close()
    assert asked == ["agent:main:dashboard:incognito-x", "agent:main:main"]
