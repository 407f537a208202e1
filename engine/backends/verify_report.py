"""The report of one verification: what `verify` found in one partition, on any backend.

Owns: `VerifyReport` (counts, problems, notes, repairs; its JSON and readable forms) and
`MAX_LISTED`. Must not touch: how a backend is checked (`engine.diagnostics.verify` for a
reference partition, `engine.backends.sqlite.verify` for a SQLite one): both fill this
one report, so a store's report reads the same on every backend, and neither imports the
other to get it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: At most this many differences of each kind are listed in a report.
MAX_LISTED = 20


@dataclass(slots=True)
class VerifyReport:
    """The outcome of one verify run."""

    windows: int = 0
    rows_committed: int = 0
    rows_expected: int = 0
    stale_rows: int = 0
    windows_needing_reconcile: int = 0
    problems: list[str] = field(default_factory=list)
    #: Worth knowing, not wrong (an unfinished transaction at the end of the log, what
    #: `--repair` would do): shown, but the report is still ok.
    notes: list[str] = field(default_factory=list)
    #: What `--repair` did before this verification.
    repairs: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when the committed index matches the rebuild (stale rows are allowed)."""
        return not self.problems

    def to_json(self) -> dict[str, object]:
        """The report as a JSON object."""
        return {
            "ok": self.ok,
            "windows": self.windows,
            "rowsCommitted": self.rows_committed,
            "rowsExpected": self.rows_expected,
            "staleRows": self.stale_rows,
            "windowsNeedingReconcile": self.windows_needing_reconcile,
            "problems": list(self.problems),
            "notes": list(self.notes),
            "repairs": list(self.repairs),
        }

    def lines(self) -> list[str]:
        """A readable report."""
        status = "OK: the index matches its transcripts" if self.ok else (
            f"MISMATCH: {len(self.problems)} problem(s)"
        )
        counts = (
            f"windows {self.windows}, rows committed {self.rows_committed}, "
            f"expected {self.rows_expected}, stale {self.stale_rows}, "
            f"windows needing reconcile {self.windows_needing_reconcile}"
        )
        lines = [f"repaired: {repair}" for repair in self.repairs]
        lines += [status, counts]
        lines.extend(f"  {problem}" for problem in self.problems)
        lines.extend(f"  note: {note}" for note in self.notes)
        return lines
