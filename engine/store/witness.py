"""The store's witness that no partition went back: `generations` at the store's root.

Owns: `WitnessedPartitions`, the part of the partitioned store that records each
partition's commit count (`Generational.commit_generation`) after every transaction
the store committed to it, checks it when a partition opens, and says so when a
partition holds fewer commits than that; reading and writing the file (its bytes are
`engine.codec.generations_file`'s). Must not touch: how a partition counts its commits
or stores anything (each is a whole backend), the routing of reads and writes
(`engine.store.partitioned`, which this class is a base of), the commit journal
(`engine.store.journalled`).

Why. Every partition's files check themselves (checksums, a log's commit records,
SQLite's own structure), but a file can be whole and still hold less than was
committed: a log cut after a commit record, a database put back from an older copy, a
write-ahead log lost. Only a count kept outside the partition shows that it went back.

Rules:
* after each commit, the store writes every committed partition's count (atomically,
  after the partitions' own commits, so the file never claims more than they hold;
  a failure to write it is ignored: the next commit writes it again);
* a partition that opens with a lower count than the file records is refused, with one
  line naming its files and both counts (a reader and a writer alike); `verify` and
  `stats` (which open with `accept_missing`) report it instead (unless the partition
  reports its own damage already, as a reference log that lost commits does), and
  `verify --repair`
  records what the partitions hold now (accepting the loss, as it does for lost
  commits);
* a count higher than recorded is normal (a crash between a commit and the file's
  write, a reconcile or a repair that commits in the partition directly);
* a store without the file (made by an earlier build) starts one at its next commit; a
  damaged file is reported as a note and replaced at the next commit, and checks nothing
  meanwhile (it is a witness, not data: nothing is lost with it);
* a partition removed (its making transaction rolled back) is dropped from the file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.backends.protocol import Backend, Diagnosable, Generational
from engine.errors import CorruptFile, StoreError
from engine.store.layout import WITNESS_NAME

if TYPE_CHECKING:
    from engine.store.layout import FolderPartitions
    from engine.transcript.evidence import StoreProblem


class WentBack(StoreError):
    """A partition holds fewer commits than the store recorded for it."""


class WitnessedPartitions:
    """The witness's moments in a store's life (a base of `PartitionedStore`, which
    provides `space`, `is_writer` and `_partitions`)."""

    space: FolderPartitions
    is_writer: bool
    _partitions: dict[str, Backend]
    #: The counts the file records (None: no file, or a store without one: nothing checked).
    _recorded: dict[str, int] | None = None
    #: What is wrong, for `problems()`: the file damaged, partitions that went back.
    _witness_problems: list[StoreProblem]

    def _load_witness(self) -> None:
        """Read the file, once, before any partition opens."""
        from engine.codec.generations_file import decode_generations_file

        self._witness_problems = []
        if self.space.meta is None:  # an OpenClaw state: no root of ours
            return
        path = self.space.root / WITNESS_NAME
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            self._recorded = {}
            return
        except OSError as error:
            raise StoreError(f"{path}: cannot read: {error.strerror or error}") from None
        try:
            self._recorded = decode_generations_file(data, str(path))
        except (CorruptFile, StoreError) as damage:
            self._recorded = None
            self._note_witness_damage(str(path), damage)

    def _note_witness_damage(self, path: str, damage: StoreError) -> None:
        from engine.transcript.evidence import StoreProblem

        self._witness_problems.append(StoreProblem(path, (
            f"{damage}: the store's record of each partition's commits is damaged; "
            "nothing is checked against it until the next commit writes it again"),
            serious=False))

    def _check_generation(self, agent_id: str, partition: Backend) -> None:
        """Refuse (or, for `verify` and `stats`, report) a partition that went back."""
        if not self._recorded or agent_id not in self._recorded \
                or not isinstance(partition, Generational):
            return
        recorded, holds = self._recorded[agent_id], partition.commit_generation()
        if holds >= recorded:
            return
        message = (f"{partition.generation_files()}: holds {holds} committed transactions, "
                   f"but the store recorded {recorded} for agent {agent_id!r}: the file was "
                   "replaced by an older copy or lost its newest commits")
        if self.space.reports_damage:
            from engine.transcript.evidence import StoreProblem

            if isinstance(partition, Diagnosable) and any(
                    problem.serious for problem in partition.problems()):
                return  # the partition names its own damage (lost commits), in its words
            self._witness_problems.append(StoreProblem(
                str(self.space.root / WITNESS_NAME), message,
                advice="`session-search verify --repair` accepts what the partition holds"))
            return
        partition.close()
        raise WentBack(f"{message}; restore it from a backup, or run `session-search verify "
                       "--repair` to accept what it holds")

    def _record_generations(self, agents: list[str]) -> None:
        """After a commit: write the counts of `agents`' partitions (with the others')."""
        if not agents or self.space.meta is None:
            return
        counts = dict(self._recorded or {})
        for agent_id in agents:
            partition = self._partitions.get(agent_id)
            if isinstance(partition, Generational):
                counts[agent_id] = partition.commit_generation()
        self._write_witness(counts)

    def record_all_generations(self) -> None:
        """`verify --repair`: record what every partition holds now."""
        self._recorded = {}
        self._witness_problems = []
        self._record_generations(list(self._partitions))

    def _forget_generation(self, agent_id: str) -> None:
        """A partition removed: its count goes with it."""
        if self._recorded and agent_id in self._recorded:
            self._write_witness({agent: count for agent, count in self._recorded.items()
                                 if agent != agent_id})

    def _write_witness(self, counts: dict[str, int]) -> None:
        from engine.codec.generations_file import encode_generations_file
        from engine.directory import FileDirectory

        try:
            FileDirectory(self.space.root).write_atomic(
                WITNESS_NAME, encode_generations_file(counts))
        except StoreError:
            return  # checked again after the next commit; no data depends on it
        self._recorded = counts

    def witness_problems(self) -> list[StoreProblem]:
        """The file damaged, or partitions that went back (when opened to report them)."""
        return list(self._witness_problems)
