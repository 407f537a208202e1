"""The spans `engine.cli.highlight` marks in excerpts: the analyzer's tokens, the query
folded as the search folds it, and every returned hit marked where it matched."""

from __future__ import annotations

import pytest

from engine.analysis.profiles import SEARCH_PROFILE
from engine.cli.output import one_line
from engine.inspection.text_matches import matched_spans, query_plans
from engine.model import SearchRequest
from engine.store.registry import open_backend

ANALYZER = SEARCH_PROFILE.analyzer()


def marked(text: str, query: str, match: str = "exact") -> list[str]:
    spans = matched_spans(text, query_plans(query, ANALYZER, match=match), ANALYZER)
    return [text[start:end] for start, end in spans]


@pytest.mark.parametrize("text, query, match, expected", [
    ("Café, CAFÉ and cafeteria", "cafe", "exact", ["Café", "CAFÉ"]),
    ("Café, CAFÉ and cafeteria", "cafe", "prefix", ["Café", "CAFÉ", "cafeteria"]),
    ("per-session, per session, session per", "per-session", "exact",
     ["per-session", "per session"]),  # a phrase: adjacent words only
    ("per-session communication, per-sessions", "per-session", "prefix",
     ["per-session", "per-sessions"]),  # the prefix is the phrase's last word
    ("ΟΣ ος οσ", "ος", "exact", ["ΟΣ", "ος", "οσ"]),  # the final sigma folds
    ("deploy the fix", "deploy - fix", "exact", ["deploy", "fix"]),  # the empty phrase marks nothing
    ("a literal OR keyword", "literal OR", "exact", ["literal", "OR"]),  # OR is a word
    ("per-session", "per-session session", "exact", ["per-session"]),  # overlaps merge
    ("明天开会议讨论会议", "会议", "exact", ["会议", "会议"]),
    ("开会议ABC了", "会议abc", "exact", ["会议ABC"]),  # the retry ignores ASCII case
    ("nothing here", "absent", "exact", []),
])
def test_marked_words(text: str, query: str, match: str, expected: list[str]) -> None:
    assert marked(text, query, match) == expected


def test_offsets_index_the_text_as_given() -> None:
    text = "x\u0301 Café 🙂 café"  # a combining mark, an astral character
    assert marked(text, "cafe") == ["Café", "café"]


@pytest.mark.parametrize("query, match", [
    ("cafe", "exact"), ("per session communi", "prefix"), ("deployment", "exact"),
    ("the", "exact"), ("会议", "exact"), ("οσ", "exact"), ("namespace", "exact"),
    ("literal OR keyword", "exact"), ("fresh", "exact"), ("quasar", "exact"),
])
def test_every_hit_of_the_demo_corpus_is_marked(tmp_path, query: str, match: str) -> None:
    from engine.cli import main

    store = tmp_path / "demo"
    assert main(["import", "--quiet", "--store", str(store), "engine/demo_corpus"]) == 0
    backend = open_backend(store)
    try:
        request = SearchRequest(query, session_keys=(), match=match, limit=25)
        hits = backend.search(request).hits
    finally:
        backend.close()
    assert hits
    for hit in hits:
        assert marked(one_line(hit.snippet), query, match), hit.snippet


@pytest.mark.parametrize("backend_name", ["reference", "sqlite"])
def test_a_search_hit_carries_its_matched_spans_and_the_line_marks_them(
        tmp_path, backend_name: str) -> None:
    """A search's hits are marked from the spans the engine found (no query planned, no
    excerpt tokenized): every demo hit of a word query has some, and each span encloses a
    word the query names."""
    from engine.cli import main
    from engine.cli.highlight import spans_on_one_line

    store = tmp_path / backend_name
    assert main(["import", "--quiet", "--backend", backend_name, "--store", str(store),
                 "engine/demo_corpus"]) == 0
    backend = open_backend(store)
    try:
        for query in ("cafe", "deployment", "per session", "会议"):
            hits = backend.search(SearchRequest(query, session_keys=(), limit=25)).hits
            assert hits, query
            for hit in hits:
                assert hit.matched, (query, hit.snippet)
                line = one_line(hit.snippet)
                shown = [line[start:end] for start, end in spans_on_one_line(hit.snippet,
                                                                             hit.matched)]
                assert shown and all(marked(text, query) for text in shown), (query, shown)
    finally:
        backend.close()
