"""A plain text progress bar on standard error (no dependencies).

Owns: drawing `[#####.....]  42/100  corpus 10k` lines. Must not touch: what is being
measured. When the stream is not a terminal the bar prints a full line only every 10%
(and at the end), so logs stay short; on a terminal it redraws one line with `\\r`.
"""

from __future__ import annotations

import sys
from typing import TextIO


def render_bar(done: int, total: int, width: int = 30) -> str:
    """The bar text for `done` of `total` steps.

    >>> render_bar(3, 10, width=10)
    '[###.......]   3/10'
    >>> render_bar(0, 0, width=4)
    '[####]   0/0'
    """
    fraction = 1.0 if total <= 0 else min(1.0, max(0.0, done / total))
    filled = round(fraction * width)
    return f"[{'#' * filled}{'.' * (width - filled)}] {done:>3}/{total}"


class ProgressBar:
    """Progress over a known number of steps; `advance()` after each, `close()` at the end."""

    def __init__(self, total: int, label: str = "", stream: TextIO | None = None,
                 enabled: bool = True) -> None:
        self.total = total
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.done = 0
        self.interactive = bool(getattr(self.stream, "isatty", lambda: False)())
        self._last_decile = -1

    def update(self, done: int, note: str = "") -> None:
        """Set the number of finished steps and redraw."""
        self.done = done
        if not self.enabled:
            return
        line = f"{self.label} {render_bar(done, self.total)} {note}".rstrip()
        if self.interactive:
            self.stream.write("\r" + line.ljust(100)[:100])
            self.stream.flush()
            return
        decile = 10 if self.total <= 0 else (10 * done) // self.total
        if decile != self._last_decile:
            self._last_decile = decile
            self.stream.write(line + "\n")
            self.stream.flush()

    def advance(self, note: str = "") -> None:
        """Mark one more step finished."""
        self.update(self.done + 1, note)

    def close(self) -> None:
        """End the bar's line on a terminal."""
        if self.enabled and self.interactive:
            self.stream.write("\n")
            self.stream.flush()
