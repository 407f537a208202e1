"""Expectation sets: a case's `expectOn` overrides for the backends the specification lets
answer otherwise (PostgreSQL, behaviour.md §7.2), each case saying why (`differsOn`), and
the overrides generated from the reference engine that predicts those backends.

The format refuses an override that says nowhere why, an unknown set, an explanation
without its reason; the planner gives each backend the expectation of its set; the
shipped overrides are exactly what the predictor answers (running the generator on a
copy of the cases changes nothing), and every explanation has overrides.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from engine.conformance.case_files import CASES_FOLDER, CaseFileError, cases_of_file, load_cases
from engine.conformance.plan import plan_case
from engine.conformance.predicted import fill_expectations, with_step_member

SEARCH = {"call": "sessions.search", "params": {"query": "x"},
          "expect": {"match": {"hits.length": 1}}}
WHY = {"postgres": {"spec": ["§7.2"], "comment": "ts_rank, not bm25"}}


def document(**case: object) -> dict:
    base = {"id": "demo/one", "spec": ["§4"], "features": ["query-language"],
            "steps": [SEARCH]}
    return {"corpus": [{"window": {"sessionId": "s", "sessionKey": "agent:main:main"}}],
            "cases": [{**base, **case}]}


@pytest.mark.parametrize(("case", "message"), [
    ({"steps": [{**SEARCH, "expectOn": {"postgres": {}}}]},
     "steps override the expectations of postgres but differsOn does not say why"),
    ({"steps": [{**SEARCH, "expectOn": {"mysql": {}}}], "differsOn": WHY},
     "'mysql' is no expectation set a case may override"),
    ({"steps": [{**SEARCH, "expectOn": {"sqlite": {}}}], "differsOn": WHY},
     "sqlite is the step's own expect"),
    ({"steps": [{**SEARCH, "expectOn": {"postgres": {"mach": {}}}}], "differsOn": WHY},
     "unknown expectation(s) mach"),
    ({"steps": [{**SEARCH, "expectOn": {}}]}, "expectOn must be an object of expectation sets"),
    ({"steps": [{**SEARCH, "expectOn": {"postgres": {}}}],
      "differsOn": {"postgres": {"spec": ["§7.2"], "comment": " "}}},
     "differsOn.postgres must say why in its comment"),
    ({"steps": [{**SEARCH, "expectOn": {"postgres": {}}}],
      "differsOn": {"postgres": {"spec": ["§99"], "comment": "why"}}}, "unknown spec §99"),
    ({"steps": [{**SEARCH, "expectOn": {"postgres": {}}}],
      "differsOn": {"postgres": {"spec": ["§7.2"], "comment": "why", "note": 1}}},
     "unknown key(s) note"),
])
def test_an_override_that_is_not_valid_is_refused_by_name(case: dict, message: str) -> None:
    with pytest.raises(CaseFileError, match="demo.json") as refused:
        cases_of_file(document(**case), "demo.json")
    assert message in str(refused.value)


def test_each_backend_gets_the_expectation_of_its_set() -> None:
    override = {"match": {"hits.length": 2}}
    (case,) = cases_of_file(document(steps=[{**SEARCH, "expectOn": {"postgres": override}},
                                            SEARCH], differsOn=WHY), "demo.json")
    assert case.differs_on("postgres").spec == ("§7.2",)
    assert case.differs_on("sqlite") is None
    default = [call.expect for call in plan_case(case) if call.method == "sessions.search"]
    postgres = [call.expect for call in plan_case(case, "postgres")
                if call.method == "sessions.search"]
    assert default == [SEARCH["expect"], SEARCH["expect"]]
    assert postgres == [override, SEARCH["expect"]]


def test_every_explanation_has_overrides_and_every_override_its_explanation() -> None:
    cases = load_cases()
    differing = [case for case in cases if case.differs_on("postgres") is not None]
    assert differing, "the postgres expectations are gone"
    for case in differing:
        assert any("postgres" in step.get("expectOn", {}) for step in case.steps), case.id
        assert "§7.2" in case.differs_on("postgres").spec, case.id


def test_the_shipped_overrides_are_what_the_reference_predicts(tmp_path: Path) -> None:
    """The generator, run again on a copy of the shipped cases, finds nothing to write
    and nothing to report: every override is the predictor's answer, none is idle."""
    copy = tmp_path / "cases"
    shutil.copytree(CASES_FOLDER, copy)
    cases = [case for case in load_cases(copy) if case.differs_on("postgres") is not None]
    reports: list[str] = []
    assert fill_expectations("postgres", cases, copy, reports.append) == 0
    assert reports == []
    for path in sorted(CASES_FOLDER.rglob("*.json")):
        assert (copy / path.relative_to(CASES_FOLDER)).read_bytes() == path.read_bytes()


def test_the_generator_writes_an_override_and_reports_what_it_cannot(tmp_path: Path) -> None:
    """A case the predictor answers otherwise gets `expectOn.postgres` from the answer
    once it says why; without `differsOn` it is reported and left as it was."""
    folder = tmp_path / "cases"
    folder.mkdir()
    text = ('{"corpus": [{"window": {"sessionId": "s", "sessionKey": "agent:main:main"}},\n'
            ' {"message": {"session": "s", "id": "m1", "role": "user", "text": "ﬁnal"}}],\n'
            ' "cases": [\n'
            '  {"id": "demo/ligature", "spec": ["§4.1"], "features": ["tokenizer"],\n'
            '   "steps": [\n'
            '     {"call": "sessions.search", "params": {"query": "final", "agentId": "main"},\n'
            '      "expect": {"match": {"hits[*].messageId": []}}}]}]}\n')
    path = folder / "demo.json"
    path.write_text(text, encoding="utf-8")
    reports: list[str] = []
    assert fill_expectations("postgres", load_cases(folder), folder, reports.append) == 1
    assert "write differsOn.postgres first" in reports[0]
    assert path.read_text(encoding="utf-8") == text
    explained = text.replace('"steps": [\n', '"differsOn": {"postgres": {"spec": ["§7.2"], '
                             '"comment": "unaccent maps the ligature"}},\n   "steps": [\n')
    path.write_text(explained, encoding="utf-8")
    reports.clear()
    assert fill_expectations("postgres", load_cases(folder), folder, reports.append) == 0
    (case,) = load_cases(folder)
    assert case.steps[0]["expectOn"] == {"postgres": {"match": {"hits[*].messageId": ["m1"]}}}
    assert case.steps[0]["expect"] == {"match": {"hits[*].messageId": []}}
    assert path.read_text(encoding="utf-8").startswith(explained.split('"expect"')[0])


def test_a_member_is_written_into_the_text_as_it_stands() -> None:
    text = ('{"cases": [{"id": "a/b", "steps": [\n'
            '  {\n    "call": "x",\n    "expect": {}\n  }\n]}]}')
    once = with_step_member(text, "a/b", 0, "expectOn", {"postgres": {"result": 1}})
    assert once == ('{"cases": [{"id": "a/b", "steps": [\n'
                    '  {\n    "call": "x",\n    "expect": {},\n'
                    '    "expectOn": {"postgres": {"result": 1}}\n  }\n]}]}')
    twice = with_step_member(once, "a/b", 0, "expectOn", {"postgres": {"result": 2}})
    assert twice == once.replace('"result": 1', '"result": 2')
