"""One write transaction across the partitions of a partitioned store.

Owns: `PartitionedTransaction`: each write routed to the partition of its window's
agent, one partition transaction per agent written to, their commit in agent order or
the rollback of them all, and the removal of the partitions a transaction made that did
not commit. Must not touch: how a partition writes (each partition transaction is a
whole backend's), the folders (`engine.store.layout`, through the store), the store's
lock, its partitions and its map from session to agent (`engine.store.partitioned`:
the transaction asks the store through `PartitionsForWriting`, so it does not import
the store that makes it), which key belongs to which agent
(`engine.model.owner_agent_id`).

Writes are routed by the agent of the window's key (`owner_agent_id`); an append or a
transcript replacement goes to the partition holding its window. A session id names one
window in the whole store, so putting a window of one agent under a key of another agent
is refused (in OpenClaw the two would be rows of different databases). An agent id names
a folder, so it must be one safe path component (`engine.model.agent_id_problem`): a
window whose key's agent id is `..`, holds `/`, `\\` or NUL is refused at `put_window`
with that message, and nothing is written.

A transaction across agents opens one partition transaction per agent lazily, at the
first write for that agent (reading the partition's commit generation then), and only
after the `with` block succeeded commits them; an exception anywhere in the block (a
validation error included) rolls every one of them back, so nothing is written. The
commit is all or nothing across agents too, through a crash or a SIGKILL between two
partitions' commits: a transaction that wrote to several partitions commits through the
store's journal (`engine.store.commit_journal`: the order of the steps and how an
interrupted one is finished); one that wrote to one partition commits it directly. The
first agent a transaction writes to is its **decider** (its partition commits first);
every write for another agent is recorded as it is made, for the journal, and the
decider's writes are never recorded (its partition holds them), so a transaction that
writes to one agent records nothing. Ctrl-C and SIGTERM wait until the commit is over
(`engine.held_signals`). The first write for an agent without a partition makes
one, and a transaction that does not commit removes the partitions it made again (how
both are done: `engine.store.layout`, "Creating a partition").
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

from engine.backends.protocol import Backend, BackendTransaction
from engine.errors import InputError, StoreError, unknown_session
from engine.model import SessionWindow, agent_id_problem, canonical_window, owner_agent_id

if TYPE_CHECKING:  # the journal's modules load with the first write (a search never needs them)
    from collections.abc import Iterable

    from engine.store.commit_journal import OperationSpill


class PartitionsForWriting(Protocol):
    """What a `PartitionedTransaction` needs of the store that made it
    (`engine.store.partitioned.PartitionedStore` has it)."""

    def has_partition(self, agent_id: str) -> bool:
        """Whether `agent_id` has a partition."""
        ...

    def agent_of_session(self, session_id: str) -> str | None:
        """The agent whose partition holds window `session_id`, or None."""
        ...

    def partition_for_writing(self, agent_id: str, created: set[str]) -> Backend:
        """`agent_id`'s partition, made now if it has none (its id added to `created`)."""
        ...

    def remove_partition(self, agent_id: str) -> None:
        """Delete a partition whose making transaction did not commit."""
        ...

    def committed(self, placed: dict[str, str], agents: list[str], deleted_in: set[str]) -> None:
        """Bring the session map up to date after the partitions of `agents` committed."""
        ...

    def write_journal(self, pieces: Iterable[bytes]) -> None:
        """Write the journal of a transaction across agents (durably, at once)."""
        ...

    def remove_journal(self) -> None:
        """Delete the journal: its transaction is in every partition."""
        ...

    def complete_interrupted_commit(self) -> str | None:
        """Finish (or discard) the transaction a journal left behind."""
        ...


class PartitionedTransaction(BackendTransaction):
    """One write transaction over the store: a partition transaction per agent written
    to, opened at its first write, committed in agent order by `commit` (the routing
    rules are in the module docstring)."""

    def __init__(self, store: PartitionsForWriting) -> None:
        self._store = store
        self._contexts: dict[str, AbstractContextManager[BackendTransaction]] = {}
        self._transactions: dict[str, BackendTransaction] = {}
        self._partitions: dict[str, Backend] = {}
        #: Partitions this transaction made (removed again unless it commits).
        self._created: set[str] = set()
        #: session id -> agent of the windows put in this transaction.
        self._placed: dict[str, str] = {}
        #: Agents whose partition had a session deleted in this transaction.
        self._deleted_in: set[str] = set()
        #: Each partition's commit generation when this transaction first wrote to it.
        self._generations: dict[str, int] = {}
        #: Every write made for an agent other than the decider, on disk (what the
        #: journal holds of a commit across agents); made at the first such write.
        self._spill: OperationSpill | None = None
        #: The first agent written to: its partition commits first, and its writes are
        #: not recorded (`engine.store.commit_journal`, step 2).
        self._decider: str | None = None

    def put_window(self, window: SessionWindow) -> None:
        """Insert or update a window in the partition of its key's agent; its keys are
        stored in OpenClaw's form (`engine.model.canonical_window`), as OpenClaw's writer
        stores them."""
        from engine.transcript.validation import check_window

        window = canonical_window(window)
        check_window(window)
        agent_id = owner_agent_id(window.session_key)
        assert agent_id is not None  # check_window accepted the key
        problem = agent_id_problem(agent_id)
        if problem is not None:
            raise InputError(problem)
        holder = self._agent_of(window.session_id)
        if holder is not None and holder != agent_id:
            raise InputError(
                f'window "{window.session_id}" belongs to agent "{holder}" and cannot move '
                f'to key "{window.session_key}" of agent "{agent_id}" (each agent is a '
                "partition of its own)")
        self._partition_transaction(agent_id).put_window(window)
        self._placed[window.session_id] = agent_id
        self._record(agent_id, "put_window", (window,))

    def append_event(
        self, session_id: str, event: dict[str, Any], created_at: float | None = None
    ) -> int:
        """Append an event to the window's partition; return its seq."""
        agent_id = self._agent_of(session_id)
        if agent_id is None:
            from engine.transcript.validation import check_event

            check_event(session_id, event, created_at)
            raise unknown_session(session_id)
        seq = self._partition_transaction(agent_id).append_event(session_id, event, created_at)
        self._record(agent_id, "append_event", (session_id, event, created_at))
        return seq

    def append_shaped_event(self, session_id: str, event: dict[str, Any],
                            created_at: float | None = None) -> int:
        """`append_event` of an event an importer already checked with
        `events.validation_problem` (`engine.ingest.batch.ShapedAppender`): the
        partition's `append_shaped_event` when it has one, else its `append_event`."""
        agent_id = self._agent_of(session_id)
        if agent_id is None:
            from engine.transcript.validation import check_shaped_event

            check_shaped_event(session_id, event, created_at)
            raise unknown_session(session_id)
        transaction = self._partition_transaction(agent_id)
        appender = getattr(transaction, "append_shaped_event", None)
        seq = (appender(session_id, event, created_at) if appender is not None
               else transaction.append_event(session_id, event, created_at))
        self._record(agent_id, "append_event", (session_id, event, created_at))
        return seq

    def append_transcript(self, session_id: str, events: Sequence[dict[str, Any]],
                          created_at: Sequence[float | None]) -> int:
        """Append the whole transcript of a window that holds no event yet, its events
        already checked (`engine.ingest.batch.TranscriptAppender`), to its partition, by
        the partition's `append_transcript` when it has one, else event by event; return
        how many. The journal records them as appends."""
        agent_id = self._agent_of(session_id)
        if agent_id is None:
            raise unknown_session(session_id)
        transaction = self._partition_transaction(agent_id)
        events = list(events)
        appender = getattr(transaction, "append_transcript", None)
        if appender is not None:
            appender(session_id, events, created_at)
        else:
            for event, stamp in zip(events, created_at, strict=True):
                transaction.append_event(session_id, event, stamp)
        if agent_id != self._decider:
            for event, stamp in zip(events, created_at, strict=True):
                self._record(agent_id, "append_event", (session_id, event, stamp))
        return len(events)

    def replace_transcript(
        self, session_id: str, events: Sequence[dict[str, Any]],
        created_at: float | Sequence[float | None] | None = None,
    ) -> int:
        """Replace the events of a window in its partition (`created_at`: one stamp for
        all, or one per event); return how many."""
        agent_id = self._agent_of(session_id)
        if agent_id is None:
            raise unknown_session(session_id)
        events = list(events)
        if created_at is not None and not isinstance(created_at, (int, float)):
            created_at = list(created_at)
        count = self._partition_transaction(agent_id).replace_transcript(
            session_id, events, created_at)
        self._record(agent_id, "replace_transcript", (session_id, events, created_at))
        return count

    def delete_session(self, session_key: str) -> int:
        """Delete every window of `session_key` (in its agent's partition); the count."""
        agent_id = owner_agent_id(session_key) if isinstance(session_key, str) else None
        if agent_id is None or agent_id_problem(agent_id) is not None:
            return 0
        if agent_id not in self._transactions and not self._store.has_partition(agent_id):
            return 0
        self._deleted_in.add(agent_id)
        count = self._partition_transaction(agent_id).delete_session(session_key)
        self._record(agent_id, "delete_session", (session_key,))
        return count

    def _record(self, agent_id: str, kind: str, arguments: tuple[Any, ...]) -> None:
        """Keep a write the partition of `agent_id` took, for the journal, unless that
        partition is the decider's (the journal never holds the decider's writes)."""
        if agent_id == self._decider:
            return
        spill = self._spill
        if spill is None:  # the journal's modules are imported once, at the first write kept
            from engine.store.commit_journal import OperationSpill

            spill = self._spill = OperationSpill()
        spill.add(agent_id, kind, arguments)

    def _agent_of(self, session_id: str) -> str | None:
        placed = self._placed.get(session_id)
        return placed if placed is not None else self._store.agent_of_session(session_id)

    def _partition_transaction(self, agent_id: str) -> BackendTransaction:
        transaction = self._transactions.get(agent_id)
        if transaction is not None:
            return transaction
        from engine.store.commit_journal import commit_generation

        partition = self._store.partition_for_writing(agent_id, self._created)
        self._generations[agent_id] = commit_generation(partition)
        context = partition.transaction()
        transaction = context.__enter__()
        self._partitions[agent_id] = partition
        self._contexts[agent_id] = context
        self._transactions[agent_id] = transaction
        if self._decider is None:
            self._decider = agent_id
        return transaction

    def commit(self) -> None:
        """Commit every partition transaction, all or nothing across agents (through the
        journal when there are several: `engine.store.commit_journal`), with Ctrl-C and
        SIGTERM held until it is over."""
        from engine.held_signals import signals_held

        agents = sorted(self._contexts)
        with signals_held():
            try:
                if len(agents) > 1:
                    self._commit_across(agents)
                else:
                    self._commit_one(agents)
            finally:
                self._close_spill()

    def _close_spill(self) -> None:
        if self._spill is not None:
            self._spill.close()
            self._spill = None

    def _commit_one(self, agents: list[str]) -> None:
        """Commit the one partition written to (all or nothing on its own)."""
        for agent_id in agents:
            try:
                self._contexts[agent_id].__exit__(None, None, None)
            except BaseException:
                self._remove_created([agent_id])
                self._store.committed(self._placed, [], self._deleted_in)
                raise
        self._store.committed(self._placed, agents, self._deleted_in)

    def _commit_across(self, agents: list[str]) -> None:
        """The steps of a commit across agents (`engine.store.commit_journal`)."""
        from engine.store.commit_journal import OperationSpill, commit_generation

        decider = self._decider
        assert decider is not None  # set when the first partition transaction opened
        others = [agent_id for agent_id in agents if agent_id != decider]
        spill = self._spill if self._spill is not None else OperationSpill()
        created = tuple(sorted(self._created))
        try:
            self._store.write_journal(spill.journal(decider, self._generations, created))
        except BaseException as error:
            self._abandon(agents, error)
            raise
        try:
            self._contexts[decider].__exit__(None, None, None)
        except BaseException as error:
            self._abandon(others, error)
            self._remove_created([decider])
            self._store.remove_journal()
            raise
        # The commit point is passed: from here on the transaction has happened.
        if commit_generation(self._partitions[decider]) == self._generations[decider]:
            try:  # the decider's share changed nothing: the journal says it committed
                self._store.write_journal(spill.journal(decider, self._generations, created,
                                                        decided=True))
            except Exception:  # noqa: BLE001, S110 - the commit goes on; only a crash
                pass           # before its end would now lose the other agents' share
        for position, agent_id in enumerate(others):
            try:
                self._contexts[agent_id].__exit__(None, None, None)
            except BaseException as error:  # noqa: BLE001 - finished from the journal
                self._abandon(others[position + 1:], error)
                self._finish_later(agent_id, error)
                return
        self._store.remove_journal()
        self._store.committed(self._placed, agents, self._deleted_in)

    def _finish_later(self, agent_id: str, error: BaseException) -> None:
        """A partition's commit failed after the commit point: try the journal at once;
        if that fails too, the store finishes it when it is next opened for writing."""
        try:
            self._store.complete_interrupted_commit()
        except BaseException as retry_error:  # noqa: BLE001 - reported with the first
            raise StoreError(
                f"the transaction committed, but agent {agent_id!r}'s share could not be "
                f"written yet ({error}; again: {retry_error}); the store's commit journal "
                "keeps it, and it is written when the store is next opened for writing"
            ) from error

    def roll_back(self, error: BaseException) -> None:
        """Roll every partition transaction back and remove the partitions made here."""
        try:
            self._abandon(sorted(self._contexts), error)
        finally:
            self._close_spill()

    def _abandon(self, agents: list[str], error: BaseException) -> None:
        for agent_id in agents:
            try:
                self._contexts[agent_id].__exit__(type(error), error, error.__traceback__)
            except Exception as secondary:  # noqa: BLE001 - the rest must still roll back; the first error is reported
                error.add_note(f"rolling back agent {agent_id!r} also failed: {secondary}")
        self._remove_created(agents)

    def _remove_created(self, agents: list[str]) -> None:
        for agent_id in agents:
            if agent_id in self._created:
                self._store.remove_partition(agent_id)
