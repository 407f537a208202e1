"""`JournalledWrites`: the partitioned store's side of its commit journal.

Owns: when the store finishes a transaction across agents that a crash cut short (when
a writer opens it, and before each transaction), what it keeps of that (`finished_commit`),
the refusal of every transaction while the journal is damaged, and setting a damaged
journal aside (`verify --repair`). Must not touch: the journal's steps and what
finishing one does (`engine.store.commit_journal`), the store's partitions and routing
(`engine.store.partitioned`, which this class is a base of).

Why apart: the partitioned store is about routing reads and writes to partitions; how
a commit across them survives a crash is one concept of its own, and the store only
needs to call it at the two moments above.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

from engine.errors import CorruptFile
from engine.store.layout import JOURNAL_NAME

if TYPE_CHECKING:  # the journal's modules load only when a store writes across agents
    from collections.abc import Iterable

    from engine.store.layout import FolderPartitions
    from engine.transcript.evidence import StoreProblem


class JournalledWrites:
    """The journal's moments in a store's life (a base of `PartitionedStore`, which
    provides `space`, `is_writer`, `_in_transaction` and `_owners`)."""

    space: FolderPartitions
    is_writer: bool
    _in_transaction: bool
    _owners: dict[str, str] | None
    #: What finishing an interrupted commit did when the store opened, in words.
    finished_commit: str | None = None

    def write_journal(self, pieces: Iterable[bytes]) -> None:
        """Write the journal of a transaction across agents, durably and at once."""
        from engine.store.commit_journal import write_journal

        write_journal(self.space.root, pieces)

    def remove_journal(self) -> None:
        """Delete the journal: its transaction is in every partition."""
        from engine.store.commit_journal import remove_journal

        remove_journal(self.space.root)

    def complete_interrupted_commit(self) -> str | None:
        """Finish (or discard) the transaction across agents a journal left behind
        (`engine.store.commit_journal`); what was done, in words, or None."""
        from engine.store.commit_journal import complete_interrupted_commit

        try:
            return complete_interrupted_commit(self.space.root, self)  # type: ignore[arg-type]
        finally:
            self._owners = None

    def _finish_interrupted_commit(self) -> None:
        """A writer's first step, and each transaction's: finish what a transaction cut
        short left in the journal. A damaged journal is never guessed at: the writer
        still opens (reads, `verify` and `verify --repair` work), but every transaction
        is refused, naming the file, until `verify --repair` sets it aside."""
        if self.space.meta is None or not (self.space.root / JOURNAL_NAME).exists():
            return
        try:
            self.finished_commit = self.complete_interrupted_commit()
        except CorruptFile:
            if self._in_transaction:
                raise

    def journal_problems(self) -> list[StoreProblem]:
        """A transaction across agents left unfinished (`commit.journal`), when there is
        one: a writer opening the store finishes it (`engine.store.commit_journal`)."""
        from engine.store.commit_journal import read_journal
        from engine.transcript.evidence import StoreProblem

        path = self.space.root / JOURNAL_NAME
        if not path.exists():
            return []
        try:
            read_journal(self.space.root)
        except CorruptFile as damage:
            return [StoreProblem(str(path), (
                f"{damage}: the commit journal is damaged, so a transaction across agents "
                "it holds cannot be finished, and the store refuses writes"), advice=(
                "`session-search verify --repair` sets the journal aside; the partitions "
                "keep what they hold"))]
        return [StoreProblem(str(path), (
            f"{path}: a transaction across agents was cut short; it is finished (or "
            "discarded, if it had not committed) when the store is next opened for "
            "writing (run `session-search reconcile`)"))]

    def set_damaged_journal_aside(self) -> str | None:
        """`verify --repair`: rename a journal that cannot be read to
        `commit.journal.damaged-<time>` (the partitions keep what they hold, which may
        be part of a transaction), so that writes go on; what was done, or None."""
        from engine.store.commit_journal import read_journal

        path = self.space.root / JOURNAL_NAME
        if not path.exists():
            return None
        try:
            read_journal(self.space.root)
        except CorruptFile as damage:
            aside = path.with_name(f"{JOURNAL_NAME}.damaged-{time.strftime('%Y%m%dT%H%M%S')}")
            os.replace(path, aside)
            return (f"{path}: set the damaged commit journal aside as {aside.name} ({damage}); "
                    "the partitions keep what they hold, which may be part of one "
                    "transaction across agents")
        return None
