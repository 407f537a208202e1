"""The in-process conformance suite: every shipped case on one of this engine's backends.

The cases are the package's own (`engine/conformance/cases/`, run by `session-search
conform` too): the backend test modules run each of them on an `InProcessTarget` of
their backend, exactly as `session-search conform --backend NAME` does, and a failure
shows the runner's readable diff.

Use from a backend's test module::

    from tests.conformance.suite import CASES, case_id, assert_case_passes

    @pytest.fixture(scope="module")
    def conformance_target():
        with in_process_target("sqlite") as target:
            yield target

    @pytest.mark.parametrize("case", CASES, ids=case_id)
    def test_conformance_case(case, conformance_target):
        assert_case_passes(conformance_target, case)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from engine.conformance.case_files import Case, load_cases
from engine.conformance.runner import describe_target, run_case
from engine.conformance.targets import InProcessTarget

#: Every shipped case, in file order.
CASES: list[Case] = load_cases()


def case_id(case: Case) -> str:
    """The test id of a case: its own id."""
    return case.id


@contextmanager
def in_process_target(backend: str) -> Iterator[InProcessTarget]:
    """This engine's `backend` on a scratch store, removed afterwards."""
    target = InProcessTarget(backend)
    try:
        yield target
    finally:
        target.close()


def assert_case_passes(target: InProcessTarget, case: Case) -> None:
    """Run `case` on `target`; fail with the runner's diff unless it passes."""
    outcome = run_case(target, case, describe_target(target))
    assert outcome.status == "passed", f"{case.id} ({case.source}): {outcome.details()}"
