"""The indexed kernel against a brute-force search over every stored row (hypothesis).

The oracle below reads no postings: it re-analyzes every row's text, finds phrases with
the naive `phrase_match.phrase_positions`, counts `n_i` over all rows, scores with
`score.bm25`, filters the scope with its own reading of behaviour.md §5.3, and sorts
with an explicit comparison function. The query policy (`plan_query`, `retry_plan`,
`substring_matches`) and the excerpt functions are shared on purpose: they are the
definitions, not the thing under test.
"""

from __future__ import annotations

import functools
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.analysis.profiles import SEARCH_PROFILE
from engine.backends.reference.backend import ReferenceBackend
from engine.config import EngineConfig
from engine.directory import MemoryDirectory
from engine.index.check import check_index
from engine.model import SearchRequest, SessionWindow
from engine.query.cjk import retry_plan, substring_excerpt, substring_matches
from engine.query.phrase_match import phrase_positions
from engine.query.user_query import clamp_limit, plan_query
from engine.results.bounds import bound_snippet
from engine.results.snippet import fts5_snippet
from engine.score.bm25 import bm25, inverse_document_frequency

ANALYZER = SEARCH_PROFILE.analyzer()
WINDOWS = [
    SessionWindow("w1", "agent:main:main"),
    SessionWindow("w2", "agent:main:other"),
    SessionWindow("w3", "agent:work_team:main"),
    SessionWindow("w4", "agent:workxteam:main"),
    SessionWindow("w5", "global"),
    SessionWindow("w6", "agent:main:cold", archived=True),
]
WORDS = ["saffron", "ballast", "Café", "cafe", "per-session", "communication", "commun",
         "会议", "明天会议讨论", "the", "x.", "OR"]


def message(number: int, parent: str | None, text: str, timestamp: float, role: str) -> dict:
    return {"type": "message", "id": f"m{number % 5}", "parentId": parent,
            "timestamp": timestamp, "message": {"role": role, "content": text}}


@st.composite
def corpora(draw: st.DrawFn) -> list[tuple[str, str, float, str]]:
    rows = []
    for _ in range(draw(st.integers(0, 24))):
        window = draw(st.sampled_from([w.session_id for w in WINDOWS]))
        text = " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=6)))
        rows.append((window, text, float(draw(st.integers(0, 3))), draw(st.sampled_from(["user", "assistant"]))))
    return rows


requests = st.builds(
    SearchRequest,
    query=st.one_of(
        st.sampled_from(WORDS + ["comm", "讨论", "cafe 会议"]),
        st.lists(st.sampled_from(WORDS + ["-", "comm", "讨论"]), min_size=1, max_size=3).map(" ".join),
    ),
    agent_id=st.sampled_from(["main", "work_team", None]),
    limit=st.sampled_from([None, 1, 2, 30]),
    session_keys=st.sampled_from([None, (), (), ("agent:main:main", "global"), ("agent:main:cold",)]),
    session_id=st.sampled_from([None, None, None, "w1", "w6"]),
    role=st.sampled_from([None, "user"]),
    match=st.sampled_from(["exact", "prefix"]),
    order=st.sampled_from(["relevance", "recent"]),
)


FIVE_A_SEGMENT = EngineConfig(index_flush_documents=5)
#: The plain literal scan instead of the CJK gram index (the clear version of the retry).
LITERAL_SCAN = EngineConfig(index_flush_documents=5, cjk_gram_index=False)


def build(rows, dirty: bool, config: EngineConfig = FIVE_A_SEGMENT) -> ReferenceBackend:
    backend = ReferenceBackend.create_in(MemoryDirectory(), config=config)
    parents: dict[str, str | None] = {}
    with backend.transaction() as transaction:
        for window in WINDOWS:
            transaction.put_window(window)
            parents[window.session_id] = None
        for number, (window, text, timestamp, role) in enumerate(rows):
            event = message(number, parents[window], text, timestamp, role)
            transaction.append_event(window, event)
            parents[window] = event["id"]
        if dirty and parents["w2"] is not None:  # a rewind: w2 needs a rebuild
            transaction.append_event("w2", {"type": "leaf", "id": "l", "parentId": parents["w2"], "targetId": None})
    return backend


def in_scope(window: SessionWindow, request: SearchRequest) -> bool:
    if request.session_id is not None and window.session_id != request.session_id:
        return False
    keys = request.session_keys
    if keys is None:
        agent = request.agent_id or "main"
        return window.session_key in ("global", "unknown") or (
            window.session_key.split(":")[:2] == ["agent", agent]
        )
    return not keys or window.session_key in keys


def compare(left, right) -> int:
    def ordering(a, b):
        return (a > b) - (a < b)
    if left["order"] == "recent":
        return ordering(right["timestamp"], left["timestamp"]) or ordering(right["doc"], left["doc"])
    return (
        ordering(left["rank"], right["rank"])
        or ordering(right["timestamp"], left["timestamp"])
        or ordering(left["message"].encode(), right["message"].encode())
        or ordering(left["record"].session_id.encode(), right["record"].session_id.encode())
        or ordering(left["doc"], right["doc"])
    )


def oracle(rows, backend: ReferenceBackend, request: SearchRequest) -> dict:
    documents = []  # every row of the whole index, as the transcripts say
    for doc, record in enumerate(backend.index.documents()):
        documents.append((doc, record))
    dirty = {sid for sid, state in backend.index.window_states.items() if state.needs_rebuild}
    selected = {w.session_id: w for w in WINDOWS if in_scope(w, request) and not w.archived and w.session_id not in dirty}
    archived = sum(1 for w in WINDOWS if in_scope(w, request) and w.archived)
    total_rows = len(documents)
    total_tokens = sum(len(ANALYZER.terms(record.text)) for _doc, record in documents)

    def matches(plan):
        if plan.matches_nothing:
            return []
        phrase_rows = [
            {doc: phrase_positions(ANALYZER.terms(record.text), phrase) for doc, record in documents}
            for phrase in plan.phrases
        ]
        counts = [sum(1 for positions in table.values() if positions) for table in phrase_rows]
        found = []
        for doc, record in documents:
            if record.session_id not in selected or (request.role and record.role != request.role):
                continue
            if not all(table[doc] for table in phrase_rows):
                continue
            if not all(substring_matches(record.text, term.text) for term in plan.substrings):
                continue
            stats = [(inverse_document_frequency(total_rows, n), len(table[doc])) for n, table in zip(counts, phrase_rows)]
            length = len(ANALYZER.terms(record.text))
            rank = bm25(stats, length, total_tokens / total_rows) if stats else 0.0
            hits = [(i, start, len(plan.phrases[i].terms)) for i, table in enumerate(phrase_rows) for start in table[doc]]
            found.append({"doc": doc, "record": record, "rank": rank, "hits": hits, "order": request.order,
                          "timestamp": record.timestamp, "message": record.message_id})
        return found

    plan = plan_query(request.query, ANALYZER, match=request.match)
    found = matches(plan)
    if not found and (retry := retry_plan(request.query, ANALYZER, match=request.match)) is not None:
        plan = retry
        found = matches(plan)
    found.sort(key=functools.cmp_to_key(compare))
    limit = clamp_limit(request.limit)
    hits = []
    for item in found[:limit]:
        record = item["record"]
        if item["hits"]:
            spans = [(t.start, t.end) for t in ANALYZER.tokens(record.text)]
            excerpt = fts5_snippet(record.text, spans, item["hits"])
        else:
            excerpt = substring_excerpt(record.text, [term.text for term in plan.substrings])
        hits.append({
            "sessionKey": selected[record.session_id].session_key, "sessionId": record.session_id,
            "messageId": record.message_id, "role": record.role, "timestamp": record.timestamp,
            "snippet": bound_snippet(excerpt), "score": -item["rank"] if item["rank"] else 0.0,
        })
    result = {"hits": hits, "truncated": len(found) > limit, "indexing": bool(dirty)}
    if archived:
        result["archivedTranscriptsExcluded"] = archived
    return result


@settings(max_examples=150, deadline=None)
@given(corpora(), st.lists(requests, min_size=1, max_size=4), st.booleans())
def test_indexed_kernel_equals_brute_force(rows, request_list, dirty):
    backend = build(rows, dirty)
    scanning = build(rows, dirty, LITERAL_SCAN)
    try:
        assert check_index(backend.index) == []
        for request in request_list:
            expected = oracle(rows, backend, request)
            actual = backend.search(request).to_json()
            assert actual == expected
            assert scanning.search(request).to_json() == expected  # the plain literal scan too
            for hit in actual["hits"]:
                assert math.isfinite(hit["score"])
    finally:
        backend.close()
        scanning.close()
