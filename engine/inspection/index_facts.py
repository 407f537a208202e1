"""What a store's index holds, as a teaching view reads it: postings, a row's tokens, segments.

Owns: three read-only looks into the partitions of a store, each as plain JSON, for the
explorer's Index panel (Luke's and Xapian `delve`'s views of an index):

* `term_postings`: a text's terms (analyzed by the partition's own analyzer, as the
  query is) and each term's postings in each partition: how many rows hold it (bm25's
  n) and, per row, its message and the token positions (at most `MAX_POSTINGS` rows a
  term and `MAX_PREFIX_TERMS` completions of a prefix are listed; the counts are whole);
* `message_tokens`: one indexed message's row (doc id, length in tokens, seq) and the
  tokens its stored text makes, with the analyzer that made them when it was indexed;
* `index_facts`: each partition's generations, counts, segments and buffer.

Only a reference partition has an index of this engine's own to show; a SQLite
partition says what it is (its counts and generation), its postings being FTS5's.
Must not touch: any index, tokenizer or store rule (the values are the stages' own),
and writing: nothing here changes a partition, the view read is the one a search reads.
"""

from __future__ import annotations

from typing import Any

from engine.backends.protocol import Backend, Generational
from engine.backends.reference.backend import ReferenceBackend
from engine.errors import InputError, UnknownSession
from engine.index.postings import Posting
from engine.index.view import IndexView
from engine.inspection.tokens import printable, token_record
from engine.model import json_number
from engine.store.partitioned import PartitionedStore

#: The most rows listed for one term of one partition.
MAX_POSTINGS = 100
#: The most completions of a prefix listed for one partition.
MAX_PREFIX_TERMS = 50
#: The longest text whose postings are looked up (in characters).
MAX_TERM_TEXT = 1024

SQLITE_NOTE = ("a SQLite partition: its postings live in FTS5's own index (the explorer "
               "shows this engine's reference index; open a reference store, or compare)")


def term_postings(store: PartitionedStore, text: str, *, agent_id: str | None = None,
                  prefix: bool = False) -> dict[str, Any]:
    """The postings of `text`'s terms in each partition (or in `agent_id`'s only); with
    `prefix`, the last term stands for every indexed term it begins."""
    if not text.strip():
        raise InputError("term must not be empty")
    if len(text) > MAX_TERM_TEXT:
        raise InputError(f"term must be at most {MAX_TERM_TEXT} characters (got {len(text)})")
    partitions = []
    for agent, partition in _partitions(store, agent_id):
        if not isinstance(partition, ReferenceBackend):
            partitions.append({"agent": agent, "backend": partition.name, "note": SQLITE_NOTE})
            continue
        view = partition.index.view()
        terms = partition.analyzer.terms(text)
        looked_up = [(term, False) for term in terms]
        if prefix and terms:
            looked_up[-1] = (terms[-1], True)
        partitions.append({
            "agent": agent, "backend": partition.name,
            "rows": view.document_count, "averageLength": view.average_length,
            "terms": [_term_entry(view, term, is_prefix) for term, is_prefix in looked_up]})
    return {"text": printable(text), "prefix": prefix, "partitions": partitions}


def _term_entry(view: IndexView, term: str, is_prefix: bool) -> dict[str, Any]:
    """One term's rows in one partition's view (a prefix: each completion's)."""
    if not is_prefix:
        return {"term": printable(term), **_postings_json(view, view.postings(term))}
    completions = view.terms_with_prefix(term)
    return {"term": printable(term), "prefix": True, "completions": len(completions),
            "expanded": [{"term": printable(completion),
                          **_postings_json(view, view.postings(completion))}
                         for completion in completions[:MAX_PREFIX_TERMS]]}


def _postings_json(view: IndexView, postings: list[Posting]) -> dict[str, Any]:
    """`n` (rows holding the term) and the first `MAX_POSTINGS` rows with positions."""
    rows = []
    for posting in postings[:MAX_POSTINGS]:
        record = view.document(posting.doc_id)
        rows.append({"docId": posting.doc_id, "sessionId": record.session_id,
                     "messageId": record.message_id, "role": record.role,
                     "length": record.length, "positions": list(posting.positions)})
    return {"n": len(postings), "postings": rows, "shown": len(rows)}


def message_tokens(store: PartitionedStore, session_id: str, message_id: str) -> dict[str, Any]:
    """The index row of message `message_id` of window `session_id`, and its tokens.
    `UnknownSession` for a window the store does not hold; `InputError` for a message
    with no row (not indexed: a tool message, a branch left, an incognito window)."""
    agent = store.agent_of_session(session_id)
    if agent is None:
        raise UnknownSession(f"unknown session id {session_id!r}")
    partition = store.partition(agent)
    if not isinstance(partition, ReferenceBackend):
        return {"agent": agent, "backend": partition.name, "note": SQLITE_NOTE}
    index = partition.index
    for doc_id in index.window_doc_ids(session_id):
        record = index.document(doc_id)
        if record.message_id != message_id:
            continue
        text = record.text
        return {
            "agent": agent, "backend": partition.name, "docId": doc_id,
            "sessionId": session_id, "messageId": message_id, "role": record.role,
            "timestamp": json_number(record.timestamp) if not isinstance(record.timestamp, str)
            else record.timestamp,
            "seq": record.seq, "length": record.length, "text": printable(text),
            "analyzer": partition.analyzer.describe(),
            "tokens": [token_record(text, token) for token in partition.analyzer.tokens(text)],
        }
    raise InputError(f"message {message_id!r} of window {session_id!r} has no index row "
                     "(not a user or assistant message on the active branch, or the window "
                     "is incognito or waits for reconcile)")


def index_facts(store: PartitionedStore) -> dict[str, Any]:
    """Each partition's generations, counts and, for a reference partition, its index's
    segments, buffer and statistics."""
    stats = store.partition_stats()
    partitions = []
    for agent, partition in _partitions(store, None):
        entry: dict[str, Any] = {"agent": agent, "backend": partition.name,
                                 "stats": stats.get(agent, {})}
        if isinstance(partition, Generational):
            entry["commitGeneration"] = partition.commit_generation()
            entry["generationFiles"] = partition.generation_files()
        if isinstance(partition, ReferenceBackend):
            index = partition.index
            entry["index"] = {
                "generation": index.generation, "rows": index.document_count,
                "tokens": index.total_tokens, "averageLength": index.average_length,
                "nextDocId": index.next_doc_id, "deletedRows": len(index.deleted),
                "bufferedRows": len(index.buffer),
                "segments": [{"name": segment.name, "rows": len(segment.documents)}
                             for segment in index.segments]}
        else:
            entry["note"] = SQLITE_NOTE
        partitions.append(entry)
    return {"partitions": partitions}


def _partitions(store: PartitionedStore, agent_id: str | None) -> list[tuple[str, Backend]]:
    """The partitions looked at: every one, or `agent_id`'s (`InputError` if it has none)."""
    partitions = store.partitions()
    if agent_id is None:
        return list(partitions.items())
    if agent_id not in partitions:
        raise InputError(f"agent {agent_id!r} has no partition in this store (agents: "
                         f"{', '.join(partitions) or 'none'})")
    return [(agent_id, partitions[agent_id])]
