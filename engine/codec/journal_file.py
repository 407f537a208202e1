"""The commit journal of a store's transaction across agents: its bytes.

Owns: the layout of `commit.journal` (kind `journal`), the file a partitioned store
writes before a transaction that changes several agents' partitions commits, so that the
transaction lands in all of them or in none even when the process dies between two
partitions' commits (what the journal is for and how it is used:
`engine.store.commit_journal`). Must not touch: files (this module turns values into
bytes and back and opens nothing) or what a write means (the partitions' transactions).

File grammar: a sealed `framing` file written at once (`write_atomic`), so any damage,
even at its end, is corruption::

    journal     := header operation*
    header      := ["h", {"decider": agent:str,
                          "generations": {agent:str: generation:int, ...},
                          "created": [agent:str, ...],
                          "decided": bool}]
                   `decider`: the agent whose partition commits first; its commit is the
                   transaction's commit point. `generations`: each agent's
                   `commit_generation()` before the transaction. `created`: the agents
                   whose partition the transaction made. `decided`: the decider's commit
                   changed nothing, so the journal itself records that it landed
    operation   := window | event | replace | delete
    window      := ["w", agent:str, {field: value, ...}]
                   every field of `engine.model.SessionWindow` (as in a log's window record)
    event       := ["e", agent:str, session_id:str, created_at:float|nil, event]
    replace     := ["r", agent:str, session_id:str, [event, ...],
                    created_at:float|nil|[float|nil, ...]]
    event       := the transcript event, a msgpack map (or, as earlier builds wrote it,
                   its JSON text: str)
    delete      := ["d", agent:str, session_key:str]

Each operation is one write of the transaction, in the order it was made, for every
agent except the decider (its share is in its own partition once it committed). An
`event` is the transcript JSON object as a msgpack value, as a log's event record keeps
it (`framing.encode_payload`: a lone surrogate passes through): every value a store
accepts comes back exactly (`engine.transcript.validation`: integers within 64 bits,
string keys). Earlier builds wrote its JSON text instead, every non-ASCII character
escaped (version 1 of the kind; version 2 packs events); such a journal is read as it
was written, so a commit an earlier build left unfinished is still finished. (Packing the event as it is costs a
fraction of encoding it as JSON again, which an import spilled for every event.)
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.codec import FILE_KINDS
from engine.codec.framing import (
    DecodeError,
    decode_payload,
    decode_sealed_frames,
    encode_footer,
    encode_header,
    encode_record,
    update_crc,
)
from engine.codec.log_file import decode_window_fields, encode_window_fields
from engine.errors import CorruptFile
from engine.model import SessionWindow

MAGIC = FILE_KINDS["journal"].magic


@dataclass(frozen=True, slots=True)
class JournalOperation:
    """One write of a transaction across agents, as the journal keeps it.

    `kind` is `put_window` (`arguments`: the window), `append_event` (session id, event,
    created_at), `replace_transcript` (session id, events, created_at) or
    `delete_session` (session key)."""

    agent_id: str
    kind: str
    arguments: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class CommitJournal:
    """What a store needs to finish a transaction across agents after a crash."""

    decider: str
    generations: dict[str, int]
    created: tuple[str, ...] = ()
    operations: tuple[JournalOperation, ...] = field(default=())
    decided: bool = False


def _event_of(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    if not isinstance(value, str):
        raise DecodeError("journal event is neither an object nor JSON text")
    try:  # written by an earlier build
        event = json.loads(value)
    except ValueError as error:
        raise DecodeError(f"journal event is not JSON: {error}") from None
    if not isinstance(event, dict):
        raise DecodeError("journal event is not a JSON object")
    return event


def _stamps_value(created_at: Any) -> Any:
    if created_at is None or isinstance(created_at, (int, float)):
        return None if created_at is None else float(created_at)
    return [None if stamp is None else float(stamp) for stamp in created_at]


def _append_value(agent_id: str, session_id: str, event: dict[str, Any], created_at: Any
                  ) -> list[Any]:
    return ["e", agent_id, session_id, _stamps_value(created_at), event]


def encode_operation(operation: JournalOperation) -> list[Any]:
    """The msgpack-ready value of one operation.

    >>> encode_operation(JournalOperation("ops", "delete_session", ("agent:ops:main",)))
    ['d', 'ops', 'agent:ops:main']
    >>> encode_operation(JournalOperation("ops", "append_event", ("s1", {"a": 1}, None)))
    ['e', 'ops', 's1', None, {'a': 1}]
    """
    agent, arguments = operation.agent_id, operation.arguments
    match operation.kind:
        case "put_window":
            return ["w", agent, encode_window_fields(arguments[0])]
        case "append_event":
            return _append_value(agent, *arguments)
        case "replace_transcript":
            session_id, events, created_at = arguments
            return ["r", agent, session_id, list(events), _stamps_value(created_at)]
        case "delete_session":
            return ["d", agent, arguments[0]]
    raise ValueError(f"not a journal operation: {operation.kind!r}")


def decode_operation(value: Any) -> JournalOperation:
    """The operation of a decoded record value (DecodeError when it is none).

    >>> decode_operation(['e', 'ops', 's1', 5.0, {'a': 1}])
    JournalOperation(agent_id='ops', kind='append_event', arguments=('s1', {'a': 1}, 5.0))
    >>> decode_operation(['e', 'ops', 's1', None, '{"a":1}']).arguments  # an earlier build's
    ('s1', {'a': 1}, None)
    """
    if not (isinstance(value, list) and len(value) >= 3 and isinstance(value[1], str)):
        raise DecodeError("journal operation: expected [tag, agent, ...]")
    tag, agent = value[0], value[1]
    if tag == "w" and len(value) == 3:
        window: SessionWindow = decode_window_fields(value[2])
        return JournalOperation(agent, "put_window", (window,))
    if tag == "e" and len(value) == 5 and isinstance(value[2], str):
        return JournalOperation(agent, "append_event", (value[2], _event_of(value[4]), value[3]))
    if tag == "r" and len(value) == 5 and isinstance(value[2], str) and isinstance(value[3], list):
        created_at = value[4]
        stamps = tuple(created_at) if isinstance(created_at, list) else created_at
        return JournalOperation(agent, "replace_transcript",
                                (value[2], [_event_of(text) for text in value[3]], stamps))
    if tag == "d" and len(value) == 3 and isinstance(value[2], str):
        return JournalOperation(agent, "delete_session", (value[2],))
    raise DecodeError(f"journal operation: unknown or malformed record tagged {tag!r}")


def encode_operation_record(operation: JournalOperation) -> bytes:
    """One operation as its framed record (what a transaction spills as it writes)."""
    return encode_record(encode_operation(operation))


def encode_append_record(agent_id: str, session_id: str, event: dict[str, Any],
                         created_at: Any) -> bytes:
    """`encode_operation_record` of an `append_event` operation, without making it (the
    commonest write, once an event).

    >>> encode_append_record("ops", "s1", {"a": 1}, 5) == encode_operation_record(
    ...     JournalOperation("ops", "append_event", ("s1", {"a": 1}, 5)))
    True
    """
    return encode_record(_append_value(agent_id, session_id, event, created_at))


def encode_journal_chunks(decider: str, generations: dict[str, int], created: Sequence[str],
                          decided: bool, blocks: Iterable[bytes], records: int
                          ) -> Iterator[bytes]:
    """The bytes of a journal file, in pieces: its header, the header record, then
    `blocks` (the framed operation records, in order, cut anywhere: e.g. read from a
    spill file in large blocks), of `records` records, then the footer, whose CRC is
    taken as the pieces pass. So a journal is written without holding its operations in
    memory.

    >>> journal = CommitJournal("main", {"main": 0, "ops": 1}, (), (
    ...     JournalOperation("ops", "delete_session", ("agent:ops:x",)),))
    >>> record = encode_operation_record(journal.operations[0])
    >>> pieces = encode_journal_chunks("main", {"main": 0, "ops": 1}, (), False,
    ...                                [record[:3], record[3:]], 1)
    >>> b"".join(pieces) == encode_journal_file(journal)
    True
    """
    header = encode_record(["h", {"decider": decider, "generations": dict(generations),
                                  "created": list(created), "decided": decided}])
    yield encode_header(MAGIC)
    yield header
    crc = update_crc(0, header)
    for block in blocks:
        yield block
        crc = update_crc(crc, block)
    yield encode_footer(records + 1, crc)


def encode_journal_file(journal: CommitJournal) -> bytes:
    """The whole file of `journal` (the inverse of `decode_journal_file`).

    >>> journal = CommitJournal("main", {"main": 3, "ops": 0}, ("ops",),
    ...     (JournalOperation("ops", "delete_session", ("agent:ops:x",)),))
    >>> decode_journal_file(encode_journal_file(journal), "commit.journal") == journal
    True
    """
    return b"".join(encode_journal_chunks(
        journal.decider, journal.generations, journal.created, journal.decided,
        [encode_operation_record(operation) for operation in journal.operations],
        len(journal.operations)))


def _decode_header(value: Any) -> tuple[str, dict[str, int], tuple[str, ...], bool]:
    if not (isinstance(value, list) and len(value) == 2 and value[0] == "h"
            and isinstance(value[1], dict)):
        raise DecodeError("journal header: expected ['h', {...}]")
    fields = value[1]
    decider, generations = fields.get("decider"), fields.get("generations")
    created, decided = fields.get("created"), fields.get("decided")
    if not isinstance(decider, str):
        raise DecodeError("journal header: decider is not a string")
    if not (isinstance(generations, dict) and all(
            isinstance(agent, str) and isinstance(count, int) and count >= 0
            for agent, count in generations.items()) and decider in generations):
        raise DecodeError("journal header: generations are not a map of agents to counts")
    if not (isinstance(created, list) and all(isinstance(agent, str) for agent in created)):
        raise DecodeError("journal header: created is not a list of agents")
    if not isinstance(decided, bool):
        raise DecodeError("journal header: decided is not a boolean")
    return decider, generations, tuple(created), decided


def decode_journal_file(data: bytes, location: str) -> CommitJournal:
    """The journal in `data` (CorruptFile naming `location` and the offset on any damage)."""
    frames = decode_sealed_frames(data, location, MAGIC)
    if not frames:
        raise CorruptFile(location, len(data), "the journal holds no header")
    offset = frames[0].offset
    try:
        decider, generations, created, decided = _decode_header(
            decode_payload(frames[0].payload))
        operations: list[JournalOperation] = []
        for frame in frames[1:]:
            offset = frame.offset
            operations.append(decode_operation(decode_payload(frame.payload)))
    except DecodeError as error:
        raise CorruptFile(location, offset, str(error)) from None
    return CommitJournal(decider, generations, created, tuple(operations), decided)


def describe_payload(value: Any) -> dict[str, Any]:
    """A record of a journal, readable (for `session-search dump`)."""
    if isinstance(value, list) and value and value[0] == "h":
        return {"record": "header", **(value[1] if len(value) > 1 and isinstance(
            value[1], dict) else {})}
    names = {"w": "window", "e": "event", "r": "replace", "d": "delete_session"}
    tag = value[0] if isinstance(value, list) and value else None
    return {"record": names.get(tag, f"unknown {tag!r}"),
            "agent": value[1] if isinstance(value, list) and len(value) > 1 else None}


def operations_for(agent_id: str, operations: Sequence[JournalOperation]
                   ) -> list[JournalOperation]:
    """The operations of `agent_id`, in their order.

    >>> ops = [JournalOperation("a", "delete_session", ("k",)),
    ...        JournalOperation("b", "delete_session", ("j",))]
    >>> [op.arguments for op in operations_for("b", ops)]
    [('j',)]
    """
    return [operation for operation in operations if operation.agent_id == agent_id]
