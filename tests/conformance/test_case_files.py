"""The case format refuses what it does not know, and compares as docs/conformance.md says.

A misspelt expectation must never pass silently, so every unknown key is an error that
names the file, the case and the key; the comparisons (paths, order modes, tolerance,
saved values) are checked on small values.
"""

from __future__ import annotations

import pytest

from engine.conformance.case_files import CaseFileError, cases_of_file
from engine.conformance.compare import MISSING, check, equal, select
from engine.conformance.plan import plan_case


def document(**case: object) -> dict:
    base = {"id": "demo/one", "spec": ["§4"], "features": ["query-language"],
            "steps": [{"call": "sessions.search", "params": {"query": "x"}}]}
    return {"corpus": [{"window": {"sessionId": "s", "sessionKey": "agent:main:main"}}],
            "cases": [{**base, **case}]}


@pytest.mark.parametrize(("case", "message"), [
    ({"id": "NoSlash"}, "id must look like group/what-it-pins"),
    ({"spec": ["§99"]}, "unknown spec §99"),
    ({"features": ["teleport"]}, "unknown features teleport"),
    ({"colour": 1}, "unknown key(s) colour"),
    ({"steps": [{"call": "sessions.search", "expect": {"mach": {}}}]}, "unknown expectation(s) mach"),
    ({"steps": [{"window": {}, "message": {}}]}, "exactly one of call"),
    ({"steps": []}, "steps must be a non-empty list"),
])
def test_a_case_file_that_is_not_valid_is_refused_by_name(case: dict, message: str) -> None:
    with pytest.raises(CaseFileError, match="demo.json") as refused:
        cases_of_file(document(**case), "demo.json")
    assert message in str(refused.value)


def test_set_up_steps_become_one_load_then_the_calls() -> None:
    (case,) = cases_of_file(document(steps=[
        {"message": {"session": "s", "id": "m1", "role": "user", "text": "a"}},
        {"message": {"session": "s", "id": "m2", "role": "user", "text": {"$repeat": "b", "times": 3}}},
        {"reconcile": True, "expect": 0},
        {"call": "sessions.search", "params": {"agentId": "main", "query": "bbb"}}]), "demo.json")
    calls = plan_case(case)
    assert [call.method for call in calls] == ["conformance.load", "conformance.load",
                                               "conformance.reconcile", "sessions.search"]
    events = [item["event"] for item in calls[1].params["events"]]
    assert [(event["id"], event["parentId"], event["message"]["content"]) for event in events] == [
        ("m1", None, "a"), ("m2", "m1", "bbb")]
    assert calls[2].expect == {"match": {"rebuilt": 0}}


def test_paths_order_modes_and_tolerance() -> None:
    result = {"hits": [{"messageId": "b", "score": 2.0}, {"messageId": "a", "score": 2.0 + 1e-12}]}
    assert select(result, "hits[*].messageId") == ["b", "a"]
    assert select(result, "hits[2].messageId") is MISSING
    assert equal([{"messageId": "a", "score": 2.0}, {"messageId": "b", "score": 2.0}],
                 result["hits"], order="score-then-key")
    assert not equal(["a", "b"], ["b", "a"])
    assert not equal(1.0, 1.1) and equal(1.0, 1.0 + 1e-12)
    rising = [{"messageId": "a", "score": 1.0}, {"messageId": "b", "score": 3.0}]
    assert not equal(list(reversed(rising)), rising, order="score-then-key")


def test_every_expectation_reports_what_differs() -> None:
    saved: dict = {}
    result = {"hits": [{"messageId": "m1", "snippet": "a cat"}], "truncated": False}
    assert check({"match": {"hits[0].messageId": "m1"}, "save": {"first": "hits[0].messageId"},
                  "contains": {"hits[*].snippet": "cat"}, "absent": ["indexing"]},
                 result, None, saved) == []
    assert saved == {"first": "m1"}
    mismatches = check({"match": {"hits[0].messageId": "$first", "truncated": True},
                        "subset": {"hits[*].messageId": ["m2"]}}, result, None, saved)
    assert [mismatch.what for mismatch in mismatches] == ["match truncated",
                                                          "subset hits[*].messageId"]
    error = {"code": -32602, "message": "query must not be empty"}
    assert check({"error": {"code": -32602}}, None, error, saved) == []
    (failed,) = check({"match": {"truncated": False}}, None, error, saved)
    assert "the call failed" in failed.render()
