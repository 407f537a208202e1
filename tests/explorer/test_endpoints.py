"""Every panel's JSON endpoint answers what the command line answers for the same question.

The explorer shows the engine's own values, never a copy of a rule: so its Analysis is
`tokenize --json`'s tokens for each profile, its Hits `search --json`'s result (and
`call`'s answer with a requester), its Why this hit `explain --json`'s hit, its History
`history --json`'s page, its Index the postings bm25's `n` counts, its Compare the same
answer from both backends, and a saved case a conformance case that passes on both.
Each test asks a real server over HTTP (`tests/explorer/client.py`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.conformance.case_files import cases_of_file
from tests.conformance.suite import assert_case_passes, in_process_target
from tests.explorer.client import Explorer, run_engine

PROFILES = ("unicode61", "icu", "pg")


def engine_json(*argv: str) -> object:
    """The JSON a `session-search` command prints (it must succeed)."""
    completed = run_engine(*argv)
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)


@pytest.mark.parametrize("text", ["Café crème, ΟΣ ος", "会议讨论 per-session don't",
                                  "東京タワー 🎉 naïve"])
def test_analysis_is_tokenize_json_for_every_profile(explorer: Explorer, text: str) -> None:
    data = explorer.get("/api/analysis", {"text": text}).json
    assert [profile["profile"] for profile in data["profiles"]] == list(PROFILES)
    for profile in data["profiles"]:
        expected = engine_json("tokenize", "--json", "--profile", profile["profile"], "--", text)
        assert profile["tokens"] == expected["tokens"]
        assert profile["stages"] == expected["stages"]
        assert profile["options"] == expected["options"]
    runs = [text[run["start"]:run["end"]] for run in data["cjkRuns"]]
    assert runs == [run["text"] for run in data["cjkRuns"]]
    assert all(runs) and (("会议讨论" in runs) == ("会议讨论" in text))


def test_analysis_marks_terms_the_profiles_disagree_on(explorer: Explorer) -> None:
    data = explorer.get("/api/analysis", {"text": "会议讨论 don't"}).json
    made_by = {item["term"]: item["profiles"] for item in data["terms"]}
    assert made_by["会议讨论"] == ["unicode61", "pg"]
    assert made_by["会议"] == ["icu"] and made_by["don't"] == ["icu"]
    assert made_by["don"] == ["unicode61", "pg"]


def test_query_plan_and_its_warnings(explorer: Explorer) -> None:
    data = explorer.get("/api/query", {"q": "  per-session OR - 会议 ", "match": "prefix"}).json
    assert data["trimmed"] == "per-session OR - 会议"
    assert [term["tokens"] for term in data["terms"]] == [["per", "session"], ["or"], [], ["会议"]]
    assert data["matchesNothing"] is True
    assert data["fts5Match"] == '"per-session" AND "OR" AND "-" AND "会议"*'
    assert data["cjkRetry"]["substrings"] == ["会议"]
    warnings = "\n".join(data["warnings"])
    assert "`-` has no tokens" in warnings and "`OR` is a literal word" in warnings
    assert "only the last word completes" in warnings
    assert "as a literal substring" in warnings


@pytest.mark.parametrize("argv, params", [
    (["cafe"], {"q": "cafe"}),
    (["--agent", "work", "recall"], {"q": "recall", "agent": "work"}),
    (["--match", "prefix", "--order", "recent", "per", "session", "communi"],
     {"q": "per session communi", "match": "prefix", "order": "recent"}),
    (["--role", "assistant", "--limit", "2", "namespace"],
     {"q": "namespace", "role": "assistant", "limit": 2}),
    (["会议"], {"q": "会议"}),
])
def test_hits_are_search_json(explorer: Explorer, demo_store: Path, argv: list[str],
                              params: dict[str, object]) -> None:
    data = explorer.get("/api/hits", params).json
    assert data["mode"] == "store"
    assert data["result"] == engine_json("search", "--store", str(demo_store), "--json", *argv)
    assert len(data["matched"]) == len(data["result"]["hits"])
    for hit, spans in zip(data["result"]["hits"], data["matched"], strict=True):
        assert spans, hit  # every hit shows what matched in its excerpt
    assert len(data["tieBreaks"]) == max(0, len(data["result"]["hits"]) - 1)
    assert any(line.startswith("truncated:") for line in data["flags"])


def test_hits_say_why_nothing_matched(explorer: Explorer) -> None:
    data = explorer.get("/api/hits", {"q": "deployment - failed"}).json
    assert data["result"]["hits"] == []
    assert any("`-` has no tokens" in reason for reason in data["noHitReasons"])


def test_tool_hits_are_call_json(explorer: Explorer, demo_store: Path) -> None:
    data = explorer.get("/api/hits", {"q": "cafe", "requester": "agent:main:main",
                                      "limit": 5}).json
    expected = engine_json("call", "sessions_search", "--store", str(demo_store),
                           "--requester", "agent:main:main", '{"query": "cafe", "limit": 5}')
    assert data["mode"] == "tool" and data["answer"] == expected
    assert data["bytes"]["bytes"] <= data["bytes"]["budget"] == 32768
    assert any("visibility all" in line for line in data["scope"])


def test_why_is_explain_json(explorer: Explorer, demo_store: Path) -> None:
    expected = engine_json("explain", "--store", str(demo_store), "--json", "cafe")
    for number, hit in enumerate(expected["hits"]):
        data = explorer.get("/api/why", {"q": "cafe", "hit": number}).json
        assert data["explanation"] == hit
        assert data["plan"]["phrases"] == expected["phrases"]
        assert data["count"] == len(expected["hits"])
    first = explorer.get("/api/why", {"q": "cafe", "hit": 0}).json
    assert first["above"] is None
    assert first["below"]["decidedBy"] == "score (higher first)"
    assert first["excerptBounds"]["kernelBound"] == 500
    assert first["excerptBounds"]["toolBound"] == 300
    assert first["excerptBounds"]["toolCut"] is False


def test_why_shows_the_cuts_of_a_long_excerpt(explorer: Explorer) -> None:
    data = explorer.get("/api/why", {"q": "quasar", "agent": "work"}).json
    bounds = data["excerptBounds"]  # "quasar question " and a word of 700 "x"
    assert (bounds["units"], bounds["kernelCut"]) == (501, True)
    assert (bounds["toolUnits"], bounds["toolCut"]) == (301, True)
    assert bounds["toolExcerpt"].endswith("…")


def test_index_postings_count_what_bm25_counts(explorer: Explorer) -> None:
    why = explorer.get("/api/why", {"q": "cafe"}).json["explanation"]
    postings = explorer.get("/api/index/postings", {"term": "Café"}).json
    main = next(p for p in postings["partitions"] if p["agent"] == why["partition"])
    [term] = main["terms"]
    assert term["term"] == "cafe" and term["n"] == why["bm25"]["phrases"][0]["n"]
    assert main["rows"] == why["bm25"]["N"]
    assert why["docId"] in [posting["docId"] for posting in term["postings"]]
    prefix = explorer.get("/api/index/postings", {"term": "communi", "prefix": 1}).json
    main = next(p for p in prefix["partitions"] if p["agent"] == "main")
    assert [item["term"] for item in main["terms"][0]["expanded"]] == ["communication"]


def test_index_message_tokens_and_facts(explorer: Explorer) -> None:
    why = explorer.get("/api/why", {"q": "cafe"}).json["explanation"]
    row = explorer.get("/api/index/message", {"sessionId": why["sessionId"],
                                              "messageId": why["messageId"]}).json
    assert row["docId"] == why["docId"] and row["length"] == why["bm25"]["D"]
    assert len(row["tokens"]) == row["length"] and row["tokens"][0]["text"] == "cafe"
    facts = explorer.get("/api/index/facts").json
    assert facts["backend"] == "reference" and facts["compareBackend"] == "sqlite"
    main = next(p for p in facts["partitions"] if p["agent"] == "main")
    assert main["index"]["rows"] == why["bm25"]["N"]
    assert main["commitGeneration"] >= 1 and main["index"]["segments"]


@pytest.mark.parametrize("argv, params", [
    (["agent:main:logical-reset"], {"sessionKey": "agent:main:logical-reset"}),
    (["agent:main:logical-reset", "--message-id", "reset-m3", "--limit", "3"],
     {"sessionKey": "agent:main:logical-reset", "messageId": "reset-m3", "limit": 3}),
    (["agent:work:recall", "--session-id", "archived-session", "--message-id",
      "archived-answer"],
     {"sessionKey": "agent:work:recall", "sessionId": "archived-session",
      "messageId": "archived-answer"}),
])
def test_history_is_history_json(explorer: Explorer, demo_store: Path, argv: list[str],
                                 params: dict[str, object]) -> None:
    data = explorer.get("/api/history", params).json
    assert data["page"] == engine_json("history", "--store", str(demo_store), "--json", *argv)
    assert len(data["rows"]) == len(data["page"]["messages"])
    if "messageId" in params:
        assert [row["id"] for row in data["rows"] if row["anchor"]] == [params["messageId"]]


def test_history_draws_resets_and_pages_with_cursors(explorer: Explorer) -> None:
    data = explorer.get("/api/history", {"sessionKey": "agent:main:logical-reset"}).json
    kinds = [row["kind"] for row in data["rows"]]
    assert "reset" in kinds and "compaction" in kinds and "notice" in kinds
    assert data["scope"] == "current" and "current view" in data["view"]
    page = explorer.get("/api/history", {"sessionKey": "agent:main:logical-reset",
                                         "limit": 3}).json["page"]
    older = explorer.get("/api/history", {"sessionKey": "agent:main:logical-reset",
                                          "limit": 3, "cursor": page["olderCursor"]}).json
    assert older["page"]["messages"] and older["page"]["messages"] != page["messages"]
    retained = explorer.get("/api/history", {
        "sessionKey": "agent:work:recall", "sessionId": "archived-session",
        "messageId": "archived-answer"}).json
    assert retained["retained"] is True
    assert {window["sessionId"] for window in retained["windows"]} >= {"archived-session"}


@pytest.mark.parametrize("params", [{"q": "cafe"}, {"q": "会议"},
                                    {"q": "per session communi", "match": "prefix"},
                                    {"q": "namespace", "agent": "work_team"},
                                    {"q": "cafe", "requester": "agent:main:main"}])
def test_compare_runs_both_backends_alike_on_the_demo(explorer: Explorer,
                                                      params: dict[str, str]) -> None:
    data = explorer.get("/api/compare", params).json
    assert data["backends"] == ["reference", "sqlite"]
    assert data["same"] is True and data["differences"] == []
    assert data["answers"][0] == data["answers"][1]


def test_a_saved_case_passes_on_both_backends(explorer: Explorer) -> None:
    answer = explorer.get("/api/case", {"q": "per-session communication"})
    assert answer.status == 200
    disposition = answer.headers["content-disposition"]
    assert disposition.startswith('attachment; filename="explorer-per-session-communication-')
    document = answer.json
    assert document["corpus"] == "demo"
    [case] = cases_of_file(document, "saved.json")
    assert case.steps[0]["call"] == "sessions.search"
    for backend in ("reference", "sqlite"):
        with in_process_target(backend) as target:
            assert_case_passes(target, case)
