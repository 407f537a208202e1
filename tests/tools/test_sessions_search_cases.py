"""The `sessions_search` tool against behaviour.md §12.1, every case on both backends.

Upstream's tests (`sessions-search-tool.test.ts`) mock the Gateway; here each fixture is
a real store holding the sessions the case needs, and "what the Gateway was asked" is
`plan_search`'s kernel calls (or a `CountingStore`'s record of the calls the tool really
made). Where the seed wins over upstream (excerpts keep credentials verbatim), the test
asserts the seed. Upstream's scoped-grant case ("changed after access was granted") is
not among these cases: scoped grants (`Requester.grants`, `session-search call --grant`)
are tested through the command line in `tests/cli/test_call_command.py`.
"""

from __future__ import annotations

from typing import Any

import pytest

from engine.agent_tools.sessions_search import (
    EMPTY_QUERY_MESSAGE,
    INDEXING_WARNING,
    MAX_RESULT_BYTES,
    ToolInputError,
    plan_search,
    sessions_search,
)
from engine.agent_tools.tool_config import ToolConfig
from engine.agent_tools.visibility import Requester
from engine.analysis.js_json import js_json_bytes
from engine.model import SearchRequest
from tests.tools.stores import CountingStore, Message, Session, StoreMaker, dirty, session

MAIN = "agent:main:main"
HIT_KEYS = ["sessionKey", "timestamp", "role", "snippet", "score", "sessionId", "messageId"]
SUCCESS_KEYS = {"results", "sessionLinkRule", "indexing", "archivedTranscriptsExcluded",
                "warning", "truncated"}
CROSS_AGENT_DENIAL = (
    "Session search visibility is restricted. Set tools.sessions.visibility=all to allow "
    "cross-agent access; use tools.agentToAgent to restrict permitted agent pairs.")


def searched(store: Any, requester: Requester, arguments: dict[str, Any],
             config: ToolConfig = ToolConfig()) -> list[tuple[str, list[str]]]:
    """The kernel calls the tool would make: (agent, session keys) per call."""
    plan = plan_search(store, requester, arguments, config)
    assert plan.refusal is None, plan.refusal
    for call in plan.calls:
        assert call.request.limit == 25 and call.request.agent_id == call.agent_id
    return [(call.agent_id, list(call.request.session_keys or ())) for call in plan.calls]


def shown(answer: dict[str, Any]) -> list[tuple[str, str]]:
    """(sessionKey, snippet) of each result, in order."""
    return [(hit["sessionKey"], hit["snippet"]) for hit in answer["results"]]


# ----- explicit targets refused before any search ----------------------------------------


@pytest.mark.parametrize("config", [
    ToolConfig(visibility="agent"), ToolConfig(agent_to_agent_enabled=False),
    ToolConfig(agent_to_agent_allow=("work",)), ToolConfig(),
])
def test_a_literal_global_target_of_another_agent_is_never_searched(
        make_store: StoreMaker, config: ToolConfig) -> None:
    """behaviour.md §12.1 "rejects a literal global target owned by another fixed-store
    agent". An unscoped target names the requester's own agent's session, as OpenClaw
    2026.9.6 resolves it (`resolveSessionToolTargetAgentId`; measured by the oracle:
    `global` from `agent:ops:*` is ops's own, which it does not hold, so `{"results": []}`).
    Here `global` lives in main's partition: for a requester of agent work it is another
    agent's session, which no kernel call reaches, whatever the visibility. (Upstream's
    case answers `forbidden` because its fixture pins `global` to a fixed-store agent, a
    configuration this engine does not model.)"""
    store = make_store([session("global", "matching text"), session("agent:work:main", "x")])
    counting = CountingStore(store)
    arguments = {"query": "matching", "sessionKey": "global"}
    answer = sessions_search(counting, Requester("agent:work:main"), arguments, config=config)
    assert answer == {"results": []}
    assert counting.requests == []
    plan = plan_search(store, Requester("agent:work:main"), arguments, config)
    assert (plan.refusal, plan.calls) == (None, ())
    # the agent that holds it finds it
    own = sessions_search(store, Requester("agent:main:main"), arguments, config=config)
    assert [hit["sessionKey"] for hit in own["results"]] == ["global"]


# ----- the output contract ----------------------------------------------------------------


def fixture_hit_store(make_store: StoreMaker) -> Any:
    """The upstream fixture hit as a stored message."""
    return make_store([Session(MAIN, (Message("matching text", role="assistant", timestamp=123,
                                              message_id="message-1"),),
                               session_id="session-main")])


def test_a_hit_has_exactly_the_contract_fields_in_the_wire_order(make_store: StoreMaker) -> None:
    store = fixture_hit_store(make_store)
    answer = sessions_search(store, Requester(MAIN), {"query": "matching"})
    assert set(answer) <= SUCCESS_KEYS and list(answer) == ["results"]
    (hit,) = answer["results"]
    assert list(hit) == HIT_KEYS
    score = hit.pop("score")
    assert isinstance(score, float) and score > 0
    assert hit == {"sessionKey": MAIN, "timestamp": 123, "role": "assistant",
                   "snippet": "matching text", "sessionId": "session-main",
                   "messageId": "message-1"}
    assert isinstance(hit["timestamp"], int)  # written as JavaScript writes 123


def test_the_main_alias_requester_sees_its_hit_under_main(make_store: StoreMaker) -> None:
    store = fixture_hit_store(make_store)
    config = ToolConfig(visibility="self")
    answer = sessions_search(store, Requester("main"), {"query": "matching"}, config=config)
    assert [hit["sessionKey"] for hit in answer["results"]] == ["main"]


def test_a_uuid_session_key_that_names_no_session_is_an_error_result(
        make_store: StoreMaker) -> None:
    store = fixture_hit_store(make_store)
    uuid = "0b6f1c9e-3a52-4c1e-9d7a-2f5b8e4c1a90"
    counting = CountingStore(store)
    answer = sessions_search(counting, Requester(MAIN), {"query": "matching", "sessionKey": uuid})
    assert answer == {"status": "error",
                      "error": f"Session not found: {uuid} (use the full sessionKey from sessions_list)"}
    assert counting.requests == []


def test_a_session_id_target_is_resolved_to_its_session(make_store: StoreMaker) -> None:
    store = fixture_hit_store(make_store)
    arguments = {"query": "matching", "sessionKey": "session-main"}
    assert searched(store, Requester(MAIN), arguments) == [("main", [MAIN])]
    assert shown(sessions_search(store, Requester(MAIN), arguments)) == [(MAIN, "matching text")]


# ----- indexing ---------------------------------------------------------------------------


def test_indexing_adds_the_exact_warning_and_keeps_the_confirmed_hits(
        make_store: StoreMaker) -> None:
    store = make_store([session(MAIN, "matching clean"),
                        session("agent:main:rewound", "matching one", "matching two",
                                session_id="rewound")])
    dirty(store, "rewound")
    answer = sessions_search(store, Requester(MAIN), {"query": "matching"})
    assert answer == {"results": answer["results"], "indexing": True, "warning": INDEXING_WARNING}
    assert INDEXING_WARNING == ("Transcript indexing is in progress; results may be incomplete. "
                                "Retry sessions_search shortly.")
    assert shown(answer) == [(MAIN, "matching clean")]  # the dirty window is hidden meanwhile


def test_an_archived_transcript_is_counted_with_its_warning(make_store: StoreMaker) -> None:
    store = make_store([session(MAIN, "matching"),
                        session("agent:main:cold", "matching", archived=True)])
    answer = sessions_search(store, Requester(MAIN), {"query": "matching"})
    assert answer["archivedTranscriptsExcluded"] == 1
    assert answer["warning"] == ("Search excludes 1 archived transcripts. Restore a "
                                 "transcript to include it in search.")
    assert shown(answer) == [(MAIN, "matching")]


# ----- arguments ------------------------------------------------------------------------


@pytest.mark.parametrize(("arguments", "message"), [
    ({"query": "   "}, EMPTY_QUERY_MESSAGE),
    ({"query": ""}, EMPTY_QUERY_MESSAGE),
    ({"query": "\u3000\ufeff\n"}, EMPTY_QUERY_MESSAGE),
    ({}, EMPTY_QUERY_MESSAGE),
    ({"query": "x", "limit": 26}, "limit must be a positive integer"),
    ({"query": "x", "limit": 0}, "limit must be a positive integer"),
    ({"query": "x", "limit": -1}, "limit must be a positive integer"),
    ({"query": "x", "limit": 2.5}, "limit must be a positive integer"),
    ({"query": "x", "limit": True}, "limit must be a positive integer"),
    ({"query": "x", "limit": "three"}, "limit must be a positive integer"),
    ({"query": "x" * 4097}, "query must not exceed 4096 characters"),
    ({"query": "\U0001d400" * 2049}, "query must not exceed 4096 characters"),  # 4098 units
    ({"query": 5}, EMPTY_QUERY_MESSAGE),  # OpenClaw reads a non-string query as absent
    ({"query": "x", "queries": ["x"]},
     "unknown argument 'queries' (expected: query, sessionKey, limit)"),
])
def test_bad_arguments_are_refused_with_the_product_message_before_any_search(
        make_store: StoreMaker, arguments: dict[str, Any], message: str) -> None:
    counting = CountingStore(make_store([session(MAIN, "x")]))
    with pytest.raises(ToolInputError) as raised:
        sessions_search(counting, Requester(MAIN), arguments)
    assert str(raised.value) == message
    assert counting.requests == []


def test_the_empty_query_message_keeps_the_retry_advice() -> None:
    assert EMPTY_QUERY_MESSAGE.startswith("query must not be empty; retry with non-empty keywords")


@pytest.mark.parametrize(("arguments", "query", "limit"), [
    ({"query": "loan"}, "loan", 10),
    ({"query": "  loan  "}, "loan", 10),
    ({"query": "x" * 4096, "limit": 25}, "x" * 4096, 25),
    ({"query": "\U0001d400" * 2048, "limit": 25.0}, "\U0001d400" * 2048, 25),
    ({"query": "loan", "limit": 1, "sessionKey": ""}, "loan", 1),
    ({"query": "loan", "sessionKey": " \t "}, "loan", 10),
])
def test_good_arguments_reach_the_kernel_trimmed_with_limit_25(
        make_store: StoreMaker, arguments: dict[str, Any], query: str, limit: int) -> None:
    store = make_store([session(MAIN, "loan")])
    plan = plan_search(store, Requester(MAIN), arguments)
    assert plan.arguments.query == query and plan.arguments.limit == limit
    assert [call.request for call in plan.calls] == [
        SearchRequest(query, agent_id="main", limit=25, session_keys=(MAIN,))]


# ----- visibility before limits -------------------------------------------------------


def test_invisible_hits_are_filtered_before_the_limit(make_store: StoreMaker) -> None:
    # the hidden session matches better; under `self` it must not take the one slot
    store = make_store([session(MAIN, "matching text"),
                        session("agent:main:other", "matching matching matching")])
    config = ToolConfig(visibility="self")
    arguments = {"query": "matching", "limit": 1}
    assert searched(store, Requester(MAIN), arguments, config) == [("main", [MAIN])]
    answer = sessions_search(store, Requester(MAIN), arguments, config=config)
    assert answer == {"results": answer["results"]}  # not truncated: one visible hit
    assert shown(answer) == [(MAIN, "matching text")]


def test_a_multi_session_visible_set_is_searched_in_one_kernel_call(
        make_store: StoreMaker) -> None:
    store = make_store([session(MAIN, "text one"), session("agent:main:other", "text two")])
    for requester in (Requester("main"), Requester(MAIN)):
        assert searched(store, requester, {"query": "text"}) == [
            ("main", [MAIN, "agent:main:other"])]
    counting = CountingStore(store)
    answer = sessions_search(counting, Requester("main"), {"query": "text"})
    assert len(counting.requests) == 1
    assert sorted(shown(answer)) == [("agent:main:main", "text one"),
                                     ("agent:main:other", "text two")]


def test_incognito_sessions_are_never_searched_or_returned(make_store: StoreMaker) -> None:
    incognito_key = "agent:main:dashboard:incognito-private"
    store = make_store([
        session(MAIN, "matching text"),
        session(incognito_key, "matching secret", spawned_by=MAIN),
        session("agent:main:flagged", "matching flagged", incognito=True, spawned_by=MAIN),
        session("agent:main:subagent:incognito-run", "matching child", spawned_by=MAIN),
    ])
    for config in (ToolConfig(), ToolConfig(visibility="tree"), ToolConfig(visibility="agent")):
        assert searched(store, Requester(MAIN), {"query": "matching"}, config) == [
            ("main", [MAIN])]
        answer = sessions_search(store, Requester(MAIN), {"query": "matching"}, config=config)
        assert shown(answer) == [(MAIN, "matching text")]
    for target in (incognito_key, "agent:main:flagged", "agent:main:dashboard:Incognito-Other"):
        counting = CountingStore(store)
        answer = sessions_search(counting, Requester(MAIN),
                                 {"query": "matching", "sessionKey": target})
        assert answer == {"status": "forbidden",
                          "error": f"Session not visible from session tools: {target}"}
        assert counting.requests == []


def test_the_main_alias_of_an_incognito_session_is_not_a_way_in(make_store: StoreMaker) -> None:
    # `main` is searched as agent:main:main, whose window carries the incognito flag
    store = make_store([session(MAIN, "matching secret", incognito=True),
                        session("agent:main:other", "matching other")])
    for requester in (Requester("main"), Requester(MAIN)):
        assert searched(store, requester, {"query": "matching"}) == [
            ("main", ["agent:main:other"])]
    for requester in (Requester("main"), Requester(MAIN), Requester("global")):
        for target in ("main", MAIN):
            answer = sessions_search(store, requester, {"query": "matching", "sessionKey": target})
            assert answer == {"status": "forbidden",
                              "error": f"Session not visible from session tools: {target}"}
    answer = sessions_search(store, Requester("main"), {"query": "matching", "sessionKey": "current"})
    assert answer == {"status": "forbidden", "error": "Session not visible from session tools: current"}


def test_another_agents_unscoped_session_is_not_a_candidate(make_store: StoreMaker) -> None:
    store = make_store([session("global", "text global"), session(MAIN, "text main"),
                        session("agent:work:main", "text work")])
    assert searched(store, Requester("agent:work:main"), {"query": "text"}) == [
        ("main", [MAIN]), ("work", ["agent:work:main"])]
    answer = sessions_search(store, Requester("agent:work:main"), {"query": "text"})
    assert "global" not in [key for key, _ in shown(answer)]
    # main's own requester does get it, from main's partition
    assert searched(store, Requester(MAIN), {"query": "text"}) == [
        ("main", [MAIN, "global"]), ("work", ["agent:work:main"])]


@pytest.mark.parametrize("visibility", ["self", "tree", "agent", "all"])
def test_an_unscoped_current_session_is_searched_with_the_requester_agent(
        make_store: StoreMaker, visibility: str) -> None:
    # behaviour.md §12.1 "keeps an unscoped current session in the requester agent
    # store" (upstream: {agentId: work, sessionKeys: [agent:work:other, global]}). Here
    # `global` lives in main's partition, so the requester is of agent main.
    store = make_store([session("agent:main:other", "text other"),
                        session("global", "text global")])
    requester = Requester("global", agent_id="main")
    config = ToolConfig(visibility=visibility)
    expected = (["global"] if visibility in ("self", "tree")
                else ["agent:main:other", "global"])
    assert searched(store, requester, {"query": "text"}, config) == [("main", expected)]
    answer = sessions_search(store, requester, {"query": "text"}, config=config)
    assert sorted(key for key, _ in shown(answer)) == expected
    current = {"query": " text ", "sessionKey": "current"}
    assert searched(store, requester, current, config) == [("main", ["global"])]
    assert shown(sessions_search(store, requester, current, config=config)) == [
        ("global", "text global")]


def test_an_explicit_cross_agent_target_is_searched_in_the_target_agent(
        make_store: StoreMaker) -> None:
    store = make_store([session(MAIN, "text main"), session("agent:work:main", "text work")])
    arguments = {"query": "text", "sessionKey": "agent:work:main"}
    assert searched(store, Requester(MAIN), arguments) == [("work", ["agent:work:main"])]
    assert shown(sessions_search(store, Requester(MAIN), arguments)) == [
        ("agent:work:main", "text work")]


def test_sandboxed_callers_are_clamped_to_the_sessions_they_spawned(
        make_store: StoreMaker) -> None:
    store = make_store([
        session(MAIN, "text main"),
        session("agent:main:child:spawned", "text child", spawned_by=MAIN),
        session("agent:main:owned", "text owned", owner_session_key=MAIN),
        session("agent:main:other", "text other"),
        session("agent:work:spawned", "text work", spawned_by=MAIN),
    ])
    sandboxed = Requester(MAIN, sandboxed=True)
    assert searched(store, sandboxed, {"query": "text"}) == [
        ("main", ["agent:main:child:spawned", MAIN])]
    answer = sessions_search(store, sandboxed, {"query": "text"})
    assert sorted(key for key, _ in shown(answer)) == ["agent:main:child:spawned", MAIN]
    refused = sessions_search(store, sandboxed, {"query": "text", "sessionKey": "agent:main:other"})
    assert refused == {"status": "forbidden", "error": (
        "Session search visibility is restricted to the current session tree "
        "(tools.sessions.visibility=tree).")}
    # with the sandbox's visibility opened, the sandbox no longer clamps
    opened = ToolConfig(sandbox_visibility="all")
    assert len(searched(store, sandboxed, {"query": "text"}, opened)[0][1]) == 4


def test_archived_spawned_rows_stay_visible_from_their_ownership_under_tree(
        make_store: StoreMaker) -> None:
    worker = "agent:main:worker"
    store = make_store([
        session(worker, "text worker"),
        session("agent:main:child", "text child", spawned_by=worker, archived=True),
        session("agent:main:stranger", "text stranger"),
    ])
    config = ToolConfig(visibility="tree")
    assert searched(store, Requester(worker), {"query": "text"}, config) == [
        ("main", ["agent:main:child", worker])]
    answer = sessions_search(store, Requester(worker), {"query": "text"}, config=config)
    assert shown(answer) == [(worker, "text worker")]
    assert answer["archivedTranscriptsExcluded"] == 1  # found, but cold


def test_requester_owned_children_of_another_agent_stay_reachable(make_store: StoreMaker) -> None:
    store = make_store([
        session(MAIN, "text main"),
        session("agent:work:subagent:run", "text subagent", spawned_by=MAIN),
        session("agent:work:acp:claude:1", "text acp", parent_session_key=MAIN),
        session("agent:work:plain", "text plain", spawned_by=MAIN),
    ])
    children = ["agent:work:acp:claude:1", "agent:work:subagent:run"]
    for config in (ToolConfig(visibility="tree"), ToolConfig(agent_to_agent_enabled=False)):
        assert searched(store, Requester(MAIN), {"query": "text"}, config) == [
            ("main", [MAIN]), ("work", children)]
    assert searched(store, Requester(MAIN), {"query": "text"}, ToolConfig(visibility="agent")) == [
        ("main", [MAIN])]


def test_keys_go_to_their_agents_in_icu_order_in_chunks_of_200(make_store: StoreMaker) -> None:
    many = [session(f"agent:main:s{number:03d}", "text") for number in range(201)]
    # Keys are stored lower-cased (as OpenClaw stores them), so ICU order shows in the
    # punctuation: `a_b` < `a-b` in ICU's root order, `a-b` < `a_b` by code point.
    store = make_store(many + [session("agent:a-b:main", "text"), session("agent:a_b:main", "text")])
    calls = searched(store, Requester(MAIN), {"query": "text"})
    assert [(agent, len(keys)) for agent, keys in calls] == [
        ("a_b", 1), ("a-b", 1), ("main", 200), ("main", 2)]
    assert calls[2][1] + calls[3][1] == sorted(
        [f"agent:main:s{number:03d}" for number in range(201)] + [MAIN])
    answer = sessions_search(store, Requester(MAIN), {"query": "text", "limit": 25})
    assert len(answer["results"]) == 25 and answer["truncated"] is True


def test_hits_merge_by_score_then_newest_then_key_and_message_in_icu_order(
        make_store: StoreMaker) -> None:
    # the same text in sessions of one partition scores the same
    store = make_store([
        Session("agent:main:a-b", (Message("text", timestamp=5, message_id="b"),)),
        Session("agent:main:a_b", (Message("text", timestamp=5, message_id="a"),)),
        Session("agent:main:c", (Message("text", timestamp=9, message_id="Z"),
                                 Message("text", timestamp=9, message_id="y"))),
        session(MAIN, "other"),
    ])
    answer = sessions_search(store, Requester(MAIN), {"query": "text"})
    assert len({hit["score"] for hit in answer["results"]}) == 1
    assert [(hit["sessionKey"], hit["messageId"]) for hit in answer["results"]] == [
        ("agent:main:c", "y"), ("agent:main:c", "Z"), ("agent:main:a_b", "a"),
        ("agent:main:a-b", "b")]  # ICU: a_b < a-b (by code point a-b < a_b)


# ----- excerpts, counts and bytes ---------------------------------------------------------


CREDENTIAL = "sk-proj-Abc123XYZ789secretTOKEN"


def test_excerpts_are_cut_to_300_units_and_keep_credentials_verbatim(
        make_store: StoreMaker) -> None:
    text = f"matching apikey={CREDENTIAL} " + "longwordz " * 80
    store = make_store([session(MAIN, text)])
    (hit,) = sessions_search(store, Requester(MAIN), {"query": "matching"})["results"]
    assert hit["snippet"] == text[:300] + "…"
    assert CREDENTIAL in hit["snippet"]


def test_an_excerpt_cut_never_splits_a_surrogate_pair(make_store: StoreMaker) -> None:
    text = "matching " + "a" * 290 + "\U0001f600" * 5  # the pair at units 299-300
    store = make_store([session(MAIN, text)])
    (hit,) = sessions_search(store, Requester(MAIN), {"query": "matching"})["results"]
    assert hit["snippet"] == "matching " + "a" * 290 + "…"


def test_more_visible_hits_than_the_limit_are_cut_and_flagged(make_store: StoreMaker) -> None:
    store = make_store([session(MAIN, *(f"matching number {n}" for n in range(12)))])
    answer = sessions_search(store, Requester(MAIN), {"query": "matching", "limit": 2})
    assert len(answer["results"]) == 2 and answer["truncated"] is True
    full = sessions_search(store, Requester(MAIN), {"query": "matching", "limit": 25})
    assert len(full["results"]) == 12 and "truncated" not in full
    assert full["results"][:2] == answer["results"]


def test_a_single_hit_over_the_byte_budget_gives_no_results_and_truncated(
        make_store: StoreMaker) -> None:
    store = make_store([Session(MAIN, (Message("matching text", message_id="m" * 40_000),)),
                        session("agent:main:small", "matching")])
    answer = sessions_search(store, Requester(MAIN), {"query": "matching text"})
    assert answer == {"results": [], "truncated": True}


def test_the_byte_budget_stops_at_the_first_hit_that_overflows(make_store: StoreMaker) -> None:
    # ten hits of about 5 KB each: six fit in 32 KiB, the seventh does not
    messages = tuple(Message(f"matching {n}", timestamp=1000 + n, message_id=f"{n}" + "i" * 5000)
                     for n in range(10))
    store = make_store([Session(MAIN, messages)])
    answer = sessions_search(store, Requester(MAIN), {"query": "matching", "limit": 10})
    kept = answer["results"]
    assert answer["truncated"] is True and 0 < len(kept) < 10
    assert js_json_bytes(kept) <= MAX_RESULT_BYTES
    full = sessions_search(store, Requester(MAIN), {"query": "matching", "limit": 10})
    assert full == answer
    # one more hit (the next one in order) would not have fitted
    ordered = sorted(messages, key=lambda message: -message.timestamp)
    assert [hit["messageId"] for hit in kept] == [m.message_id for m in ordered[:len(kept)]]


def test_a_truncated_kernel_answer_sets_truncated(make_store: StoreMaker) -> None:
    store = make_store([session(MAIN, *(f"matching {n}" for n in range(26)))])
    answer = sessions_search(store, Requester(MAIN), {"query": "matching", "limit": 25})
    # 25 visible hits came back (the kernel's limit): only the kernel knew of the 26th
    assert len(answer["results"]) == 25 and answer["truncated"] is True


def test_a_one_session_restriction_sends_one_trimmed_call_with_limit_25(
        make_store: StoreMaker) -> None:
    store = make_store([session(MAIN, "the text"), session("agent:main:other", "text")])
    counting = CountingStore(store)
    answer = sessions_search(counting, Requester(MAIN), {"query": " text ", "sessionKey": "main"})
    assert counting.requests == [
        SearchRequest("text", agent_id="main", limit=25, session_keys=(MAIN,))]
    assert shown(answer) == [("main", "the text")]
