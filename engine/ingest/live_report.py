"""What one live import of an OpenClaw state did: the `LiveReport` value.

Owns: the report's fields, its JSON form (`import --openclaw-state --json`) and its line
for people. Must not touch: the import itself (`live_state.py` decides and writes, and
makes the report), the store, the marks. Why apart: the command line and `watch` read
reports without the import's machinery, and the value is one concept of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class LiveReport:
    """What one live import did: windows added, extended (new events appended),
    replaced, updated (metadata only) and unchanged, events written, and notes."""

    state: str
    added: int = 0
    extended: int = 0
    replaced: int = 0
    updated: int = 0
    unchanged: int = 0
    events: int = 0
    notes: tuple[str, ...] = ()
    unindexed_roles: tuple[tuple[str, int], ...] = ()
    #: Every source left out of this import, with why (relative name, error), and the
    #: errors of those set aside by this import (the others were already).
    set_aside: tuple[tuple[str, str], ...] = ()
    newly_set_aside: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        """Whether the import wrote anything."""
        return bool(self.added or self.extended or self.replaced or self.updated)

    def to_json(self) -> dict[str, Any]:
        """The report as the `import --openclaw-state --json` output."""
        return {"state": self.state, "added": self.added, "extended": self.extended,
                "replaced": self.replaced, "updated": self.updated,
                "unchanged": self.unchanged, "events": self.events,
                "unindexedRoles": dict(self.unindexed_roles), "notes": list(self.notes),
                "setAside": [{"source": name, "reason": reason}
                             for name, reason in self.set_aside]}

    def summary(self) -> str:
        """One line for people.

        >>> LiveReport("s", added=1, extended=2, events=7, unchanged=3).summary()
        'state s: 7 new events; windows: 1 added, 2 extended, 0 replaced, 0 updated, 3 unchanged'
        >>> LiveReport("s", unchanged=3).summary()
        'state s: nothing new (3 windows unchanged)'
        """
        aside = (f"; {len(self.set_aside)} source{'' if len(self.set_aside) == 1 else 's'} "
                 "set aside" if self.set_aside else "")
        if not self.changed:
            return (f"state {self.state}: nothing new ({self.unchanged} windows "
                    f"unchanged){aside}")
        return (f"state {self.state}: {self.events} new events; windows: {self.added} added, "
                f"{self.extended} extended, {self.replaced} replaced, {self.updated} updated, "
                f"{self.unchanged} unchanged{aside}")
