"""How `import` and `reconcile` show their progress: a rich bar per phase on a terminal.

Owns: drawing the progress the engine reports (`engine.progress` callbacks) while long
work runs. Must not touch: what is counted or when (the importer and the backends'
`reconcile` call back), or the summary a command prints when it is done.

Rules: the bar is drawn on standard error, only when it is a terminal and `--quiet` was
not given; each phase with work to do gets a line with its rows done and expected, the
rate (rows per second) and the time left. Anywhere else nothing is drawn and the command's one summary
line is the whole report. rich is imported only when a bar is drawn, so commands pay
nothing for it in scripts and pipes.
"""

from __future__ import annotations

import sys
from functools import partial
from types import TracebackType
from typing import Any, Self, TextIO

from engine.progress import StepProgress

#: phase -> what its bar says and what its rows are, None for a phase whose rows are
#: not worth counting (the phases of `engine.ingest.import_into_store`; `reconcile` alone
#: has the last).
PHASES: dict[str, tuple[str, str | None]] = {
    "read": ("reading records", "rows"),
    "commit": ("writing the index", None),
    "reconcile": ("reconciling windows", "windows"),
    "conform": ("running conformance cases", "cases"),
    "diff": ("comparing backends", "queries"),
}


class ProgressDisplay:
    """Progress bars for one command run; a do-nothing callback target when disabled.

    Use as a context manager around the work, and pass the instance (a
    `PhasedProgress`) or `steps(phase)` (a `StepProgress`) to the engine.
    """

    def __init__(self, *, enabled: bool, stream: TextIO | None = None) -> None:
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self._progress: Any = None
        self._tasks: dict[str, Any] = {}

    @classmethod
    def for_command(cls, quiet: bool) -> ProgressDisplay:
        """Enabled when standard error is a terminal and the user did not ask for quiet."""
        return cls(enabled=not quiet and _is_terminal(sys.stderr))

    def __enter__(self) -> Self:
        if self.enabled:
            self._progress = _rich_progress(self.stream)
            self._progress.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        if self._progress is not None:
            if kind is None:
                self._finish_all()
            self._progress.stop()
            self._progress = None

    def __call__(self, phase: str, done: int, total: int | None) -> None:
        """Record that `done` of `total` rows of `phase` are finished."""
        if self._progress is None:
            return
        task = self._tasks.get(phase)
        if task is None:
            if total == 0:  # nothing to do in this phase: no bar for it
                return
            self._finish_all()
            label, unit = PHASES.get(phase, (phase, "rows"))
            task = self._progress.add_task(label, total=total, unit=unit)
            self._tasks[phase] = task
        self._progress.update(task, completed=done, total=total)

    def steps(self, phase: str) -> StepProgress | None:
        """A `(done, total)` callback for one phase, or None when nothing is drawn."""
        return partial(self, phase) if self.enabled else None

    def _finish_all(self) -> None:
        """Show every started phase as complete (the next one began, or the work ended)."""
        for task_id in self._tasks.values():
            task = self._progress.tasks[task_id]
            total = task.total if task.total is not None else max(task.completed, 1)
            self._progress.update(task_id, completed=total, total=total)


def _is_terminal(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty()) if isatty is not None else False


def _rich_progress(stream: TextIO) -> Any:
    """A rich `Progress`: label, bar, rows done/expected, rows per second, time left."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        Progress,
        ProgressColumn,
        TextColumn,
        TimeRemainingColumn,
    )
    from rich.text import Text

    class CountColumn(ProgressColumn):
        """`done/expected` rows (`?` while the total is unknown); nothing without a unit."""

        def render(self, task: Any) -> Text:
            if task.fields.get("unit") is None:
                return Text("")
            total = "?" if task.total is None else f"{int(task.total):,}"
            return Text(f"{int(task.completed):,}/{total}", style="progress.download")

    class RateColumn(ProgressColumn):
        """Rows per second (in the task's unit), as rich measures it over the last seconds;
        for a finished task too short to measure that way, its rows over its time."""

        def render(self, task: Any) -> Text:
            unit = task.fields.get("unit")
            speed = task.finished_speed or task.speed
            if speed is None and task.finished and task.finished_time:
                speed = task.completed / task.finished_time
            return Text("" if speed is None or unit is None else f"{speed:,.0f} {unit}/s",
                        style="progress.data.speed")

    return Progress(
        TextColumn("{task.description}"), BarColumn(), CountColumn(), RateColumn(),
        TimeRemainingColumn(), console=Console(file=stream),
    )
