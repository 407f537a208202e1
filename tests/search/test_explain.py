"""`explain_search` returns values whose `to_json()` is plain JSON with numbers as numbers."""

from __future__ import annotations

import json

from engine.analysis.profiles import SEARCH_PROFILE
from engine.index.inverted_index import InvertedIndex
from engine.model import IndexEntry, SearchRequest, SessionWindow
from engine.query.checked_request import check_request
from engine.results.snippet_explanation import SnippetExplanation
from engine.search.explain import SubstringExcerpt, explain_search
from engine.search.kernel import search_index

ANALYZER = SEARCH_PROFILE.analyzer()
WINDOWS = [SessionWindow("w1", "agent:main:main"), SessionWindow("w2", "global")]
TEXTS = ["saffron ballast", "the saffron boat. It sails", "明天会议讨论", "ballast only"]


def index_of(texts: list[str]) -> InvertedIndex:
    index = InvertedIndex()
    for number, text in enumerate(texts):
        entry = IndexEntry(f"w{1 + number % 2}", f"m{number}", "user", float(number), text, number)
        index.add_entry(entry, ANALYZER.terms(text))
    return index


def test_word_hits_explain_bm25_and_the_window_as_numbers():
    view = index_of(TEXTS).view()
    request = SearchRequest("saffron", session_keys=(), limit=1)
    explanation = explain_search(view, WINDOWS, check_request(request), ANALYZER)
    assert explanation.truncated and not explanation.retried
    assert [item.hit for item in explanation.hits] == list(
        search_index(view, WINDOWS, check_request(request), ANALYZER).hits)
    (item,) = explanation.hits
    assert item.bm25 is not None and isinstance(item.excerpt, SnippetExplanation)
    assert item.snippet_lines == tuple(item.excerpt.lines())
    report = explanation.to_json()
    assert json.loads(json.dumps(report)) == report
    assert not any(isinstance(value, str) for value in report["hits"][0]["bm25"].values()
                   if not isinstance(value, list))
    bm25 = report["hits"][0]["bm25"]
    assert (bm25["N"], bm25["D"], bm25["avgdl"]) == (4, item.bm25.document_length, 2.5)
    assert bm25["phrases"][0]["n"] == 2 and bm25["score"] == item.hit.score
    excerpt = report["hits"][0]["excerpt"]
    assert excerpt["kind"] == "window"
    assert all(type(excerpt[key]) is int for key in ("tokens", "window", "start", "score"))
    assert excerpt["candidates"][0]["chosen"] is True


def test_substring_hits_have_no_bm25_and_a_substring_excerpt():
    view = index_of(TEXTS).view()
    explanation = explain_search(view, WINDOWS, check_request(SearchRequest("会议", session_keys=())),
                                 ANALYZER)
    assert explanation.retried
    (item,) = explanation.hits
    assert item.bm25 is None and item.excerpt == SubstringExcerpt(("会议",))
    assert item.to_json()["bm25"] is None
    assert item.to_json()["excerpt"] == {"kind": "substring", "needles": ["会议"]}
    assert explanation.to_json()["substrings"] == ["会议"]
