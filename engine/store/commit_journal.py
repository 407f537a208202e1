"""All or nothing across agents: the commit journal of a partitioned store.

Owns: when a transaction that wrote to several agents' partitions commits, the order of
its steps (journal, the decider's commit, the others' commits, the journal's removal);
writing, reading and removing `commit.journal` at the store's root (its bytes are
`engine.codec.journal_file`'s); and finishing or discarding an interrupted one
(`complete_interrupted_commit`) when the store is next opened. Must not touch: how a
partition writes or counts its commits (each is a whole backend with `Generational`),
which partition a write goes to (`engine.store.transaction` records the writes and hands
them here), the folders (`engine.store.layout`).

Why. Each agent's partition is a database of its own (as OpenClaw keeps one per agent),
and each commits all or nothing on its own; but an import that writes to three agents
commits three times, and a crash (or a SIGKILL) between two of them would keep one
agent's share and lose the rest, so that the same import run again fails as a
duplicate. The journal makes the whole transaction commit at one point:

1. Every write of the transaction is made in each partition's open transaction.
   One partition is the **decider**: the first the transaction wrote to, known from
   its first write on. Every write for another agent is recorded as it is made, in
   unnamed temporary files, one per agent (`OperationSpill`), not in memory: an
   import of any size keeps the memory it had. The decider's writes are not recorded:
   nothing but its own partition ever needs them, so the largest share of an import
   (its default agent's, which it meets first) is never encoded twice. Nothing is
   committed yet.
2. The journal is written at once (`write_atomic`: a temporary file, fsync, rename,
   fsync of the folder): each partition's commit generation before the transaction
   (`Generational.commit_generation`), the decider, the partitions the transaction
   made, and every write of every agent *except* the decider, copied from the files.
3. The decider commits. **This is the commit point**: from here on the transaction has
   happened, whatever comes next. (If the decider's share changed nothing, its
   generation cannot show that it committed, so the journal is written again, saying
   `decided`.)
4. The other partitions commit, one by one, in agent order.
5. The journal is removed.

Signals are held for steps 2 to 5 (`engine.held_signals`), so a Ctrl-C or SIGTERM
ends the command after the commit; a SIGKILL, a power cut or a failed commit at step 4
leaves the journal behind. Whoever next opens the store for writing (and a reader that
can take the writer's lock: the next `search`, `stats` or `verify` does) finishes it
before anything else:

* the decider's generation moved past the one the journal recorded, or the journal says
  `decided`: the transaction committed, so each other partition whose generation has
  not moved gets the journal's writes again, in a transaction of its own. A partition's
  generation that has not moved means it is exactly as the transaction found it, so the
  writes mean the same again (the `created_at` of an event stamped at the commit is the
  time of the second commit);
* otherwise the transaction never committed: the partitions it made are removed (they
  hold nothing) and the journal is deleted.

A journal that cannot be read (damaged) is never guessed at: the store refuses writes,
naming the file, and `verify` reports it. A transaction that writes to one partition
commits as before, without a journal: one partition is all or nothing already.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any, Protocol

from engine.backends.protocol import Backend, BackendTransaction, Generational
from engine.codec.journal_file import (
    CommitJournal,
    JournalOperation,
    decode_journal_file,
    encode_append_record,
    encode_journal_chunks,
    encode_operation_record,
    operations_for,
)
from engine.directory import FileDirectory
from engine.errors import StoreError
from engine.store.layout import JOURNAL_NAME


class JournalledPartitions(Protocol):
    """What finishing an interrupted commit needs of a store
    (`engine.store.partitioned.PartitionedStore` has it)."""

    def has_partition(self, agent_id: str) -> bool:
        """Whether `agent_id` has a partition."""
        ...

    def partition_for_writing(self, agent_id: str, created: set[str]) -> Backend:
        """`agent_id`'s partition, made now if it has none (its id added to `created`)."""
        ...

    def remove_partition(self, agent_id: str) -> None:
        """Delete a partition (one that holds nothing)."""
        ...


def commit_generation(partition: Backend) -> int:
    """How many transactions `partition` has committed (`Generational`)."""
    if not isinstance(partition, Generational):
        raise StoreError(f"backend {partition.name!r} does not count its commits, so a "
                         "transaction across agents cannot be made atomic on it")
    return partition.commit_generation()


def journal_path(root: Path) -> Path:
    """Where a store keeps its journal."""
    return root / JOURNAL_NAME


def has_journal(root: Path) -> bool:
    """Whether a transaction across agents was left unfinished in the store at `root`."""
    return journal_path(root).exists()


def write_journal(root: Path, pieces: Iterable[bytes]) -> None:
    """Write the journal made of `pieces` (`OperationSpill.journal`) at once and durably
    (a failure leaves no journal behind)."""
    FileDirectory(root).write_atomic(JOURNAL_NAME, pieces)


#: How much of a spill file is read at a time while it is copied into the journal.
_SPILL_BLOCK = 1 << 20
#: The write buffer of a spill file: a transaction's records reach the file in blocks
#: of this size (one system call each), not one call every few records.
_SPILL_BUFFER = 1 << 16


class OperationSpill:
    """The writes of a transaction across agents for every agent but its decider, as
    journal records, in one unnamed temporary file per agent: what the journal will
    need, kept on disk instead of in memory, so that an import's memory does not grow
    with its size. The files are unlinked from the start (`tempfile.TemporaryFile`), so
    a crash leaves nothing; `close` releases them."""

    def __init__(self) -> None:
        self._files: dict[str, IO[bytes]] = {}
        self._records: dict[str, int] = {}

    def add(self, agent_id: str, kind: str, arguments: tuple[Any, ...]) -> None:
        """Keep one write (`JournalOperation(agent_id, kind, arguments)`), after its
        partition took it."""
        spill = self._files.get(agent_id)
        if spill is None:
            spill = self._files[agent_id] = tempfile.TemporaryFile(  # noqa: SIM115 - closed by close()
                buffering=_SPILL_BUFFER)
            self._records[agent_id] = 0
        if kind == "append_event":
            spill.write(encode_append_record(agent_id, *arguments))
        else:
            spill.write(encode_operation_record(JournalOperation(agent_id, kind, arguments)))
        self._records[agent_id] += 1

    def journal(self, decider: str, generations: dict[str, int], created: Sequence[str],
                *, decided: bool = False) -> Iterator[bytes]:
        """The journal's bytes, in pieces: every agent's writes but the decider's."""
        others = sorted(agent for agent in self._files if agent != decider)
        return encode_journal_chunks(decider, generations, created, decided,
                                     self._blocks(others),
                                     sum(self._records[agent] for agent in others))

    def _blocks(self, agents: list[str]) -> Iterator[bytes]:
        for agent in agents:
            spill = self._files[agent]
            spill.flush()
            spill.seek(0)
            while block := spill.read(_SPILL_BLOCK):
                yield block
            spill.seek(0, os.SEEK_END)

    def close(self) -> None:
        """Release the files."""
        for spill in self._files.values():
            spill.close()
        self._files.clear()


def read_journal(root: Path) -> CommitJournal:
    """The journal of the store at `root` (CorruptFile naming it when it is damaged)."""
    path = journal_path(root)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise StoreError(f"{path}: cannot read the commit journal: "
                         f"{error.strerror or error}") from None
    return decode_journal_file(data, str(path))


def remove_journal(root: Path) -> None:
    """Delete the journal: the transaction it holds is whole in every partition (or in
    none). Not synced: a journal that comes back after a crash finds every generation
    moved on and is removed again."""
    try:
        os.unlink(journal_path(root))
    except FileNotFoundError:
        pass


def apply_operations(transaction: BackendTransaction,
                     operations: Sequence[JournalOperation]) -> None:
    """Make `operations` (one agent's share of a journal) in `transaction`."""
    for operation in operations:
        arguments: tuple[Any, ...] = operation.arguments
        match operation.kind:
            case "put_window":
                transaction.put_window(arguments[0])
            case "append_event":
                transaction.append_event(*arguments)
            case "replace_transcript":
                transaction.replace_transcript(*arguments)
            case "delete_session":
                transaction.delete_session(arguments[0])


def is_committed(journal: CommitJournal, store: JournalledPartitions) -> bool:
    """Whether the transaction of `journal` passed its commit point (the decider's)."""
    if journal.decided:
        return True
    if not store.has_partition(journal.decider):
        return False
    decider = store.partition_for_writing(journal.decider, set())
    return commit_generation(decider) > journal.generations[journal.decider]


def complete_interrupted_commit(root: Path, store: JournalledPartitions) -> str | None:
    """Finish or discard the transaction a journal at `root` holds (see the module
    docstring); return what was done, in words, or None when there was no journal."""
    if not has_journal(root):
        return None
    journal = read_journal(root)
    agents = sorted(journal.generations)
    if not is_committed(journal, store):
        for agent_id in journal.created:
            if store.has_partition(agent_id):
                partition = store.partition_for_writing(agent_id, set())
                if not partition.windows():
                    store.remove_partition(agent_id)
        remove_journal(root)
        return (f"{journal_path(root)}: a transaction across agents {agents} was cut "
                "before it committed; nothing of it was kept")
    finished: list[str] = []
    for agent_id in agents:
        if agent_id == journal.decider:
            continue
        partition = store.partition_for_writing(agent_id, set())
        if commit_generation(partition) > journal.generations.get(agent_id, 0):
            continue
        with partition.transaction() as transaction:
            apply_operations(transaction, operations_for(agent_id, journal.operations))
        finished.append(agent_id)
    remove_journal(root)
    return (f"{journal_path(root)}: a transaction across agents {agents} was cut after it "
            f"committed; finished it in {finished or 'none (all had it)'}")
