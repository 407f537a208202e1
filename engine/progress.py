"""How long engine work reports how far it got, to whoever shows it.

Owns: the callback types that imports and reconciles call as they advance. Must not
touch: how progress is shown (the command line draws a bar with rich, or prints one
summary line) or when it is worth showing; the engine only counts. Callers that pass
no callback pay nothing.
"""

from __future__ import annotations

from collections.abc import Callable

#: `(done, total)`: `done` steps of `total` are finished.
StepProgress = Callable[[int, int], None]

#: `(phase, done, total)`: the same for work in named phases; `total` is None while it is
#: not known (the import's "index" phase: the commit that writes the index).
PhasedProgress = Callable[[str, int, "int | None"], None]
