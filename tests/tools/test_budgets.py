"""The seed's time budgets (behaviour.md §7.3): 90 s a request, 60 s its reader, admission
included, and a reader past its deadline stops before its next kernel call.

No timing thresholds: every timeout here is certain (a budget of 0, a gate another thread
holds for the whole call, a kernel call that returns only once the watchdog interrupted
it), and what is asserted is the outcome and the kernel calls made, never a duration.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from engine.agent_tools.budgets import (
    TIMEOUT_ADVICE,
    Cancellation,
    ReaderGate,
    SearchTimedOut,
    TimeBudgets,
    run_reader,
)
from engine.agent_tools.sessions_search import sessions_search
from engine.agent_tools.visibility import Requester
from engine.errors import EngineError, StoreError
from tests.tools.stores import CountingStore, StoreMaker, session

MAIN = "agent:main:main"
ARGUMENTS = {"query": "text"}
ADVICE = ("A timeout does not mean that no matching conversation exists. Retry "
          "sessions_search with a sessionKey to search one session, or with more specific "
          "query keywords.")


def two_agent_store(make_store: StoreMaker) -> CountingStore:
    """A store whose search takes two kernel calls (agents main and work)."""
    return CountingStore(make_store([session(MAIN, "text main"),
                                     session("agent:work:main", "text work")]))


@pytest.fixture
def held_gate() -> Iterator[ReaderGate]:
    """A gate whose only slot another thread holds until the test ends."""
    gate = ReaderGate()
    taken, done = threading.Event(), threading.Event()

    def hold() -> None:
        assert gate.admit(5)
        taken.set()
        done.wait(60)
        gate.release()

    holder = threading.Thread(target=hold, daemon=True)
    holder.start()
    assert taken.wait(30)
    yield gate
    done.set()
    holder.join(30)


def test_the_timeout_message_carries_the_seed_advice() -> None:
    assert TIMEOUT_ADVICE == ADVICE
    assert str(SearchTimedOut("reader", 60.0)) == (
        f"sessions_search timed out: the transcript reader took more than 60 s. {ADVICE}")
    assert str(SearchTimedOut("request", 90.0)) == (
        f"sessions_search timed out: the request took more than 90 s. {ADVICE}")
    assert isinstance(SearchTimedOut("reader", 1), EngineError)
    assert TimeBudgets() == TimeBudgets(request_seconds=90.0, reader_seconds=60.0)


def test_a_reader_budget_of_zero_times_out_before_any_kernel_call(make_store: StoreMaker) -> None:
    store = two_agent_store(make_store)
    with pytest.raises(SearchTimedOut) as raised:
        sessions_search(store, Requester(MAIN), ARGUMENTS, budgets=TimeBudgets(reader_seconds=0))
    assert (raised.value.stage, raised.value.seconds) == ("reader", 0)
    assert str(raised.value) == (
        f"sessions_search timed out: the transcript reader took more than 0 s. {ADVICE}")
    assert store.requests == []


def test_the_request_budget_binds_when_it_ends_first(make_store: StoreMaker) -> None:
    store = two_agent_store(make_store)
    with pytest.raises(SearchTimedOut) as raised:
        sessions_search(store, Requester(MAIN), ARGUMENTS,
                        budgets=TimeBudgets(request_seconds=0, reader_seconds=60))
    assert raised.value.stage == "request"
    assert str(raised.value).startswith(
        "sessions_search timed out: the request took more than 0 s. ")
    assert store.requests == []


def test_waiting_for_admission_counts_against_the_reader_budget(
        make_store: StoreMaker, held_gate: ReaderGate) -> None:
    store = two_agent_store(make_store)
    with pytest.raises(SearchTimedOut) as raised:
        sessions_search(store, Requester(MAIN), ARGUMENTS, gate=held_gate,
                        budgets=TimeBudgets(reader_seconds=0.2))
    assert raised.value.stage == "reader"
    assert store.requests == []  # never admitted, never searched


def test_a_free_gate_admits_and_is_released_after_a_timeout(make_store: StoreMaker) -> None:
    store = two_agent_store(make_store)
    gate = ReaderGate()
    with pytest.raises(SearchTimedOut):
        sessions_search(store, Requester(MAIN), ARGUMENTS, gate=gate,
                        budgets=TimeBudgets(reader_seconds=0))
    answer = sessions_search(store, Requester(MAIN), ARGUMENTS, gate=gate)
    assert len(answer["results"]) == 2 and len(store.requests) == 2
    assert gate.admit(0)  # released again after the successful call too
    gate.release()


def test_after_a_timeout_no_further_kernel_call_starts(make_store: StoreMaker) -> None:
    # the first kernel call returns only once the watchdog has interrupted it
    store = two_agent_store(make_store)
    store.hold = True
    with pytest.raises(SearchTimedOut) as raised:
        sessions_search(store, Requester(MAIN), ARGUMENTS, budgets=TimeBudgets(reader_seconds=1))
    assert raised.value.stage == "reader"
    assert store.interrupts == 1  # the running call was interrupted, not left running
    assert [request.agent_id for request in store.requests] == ["main"]  # work never asked
    # the same store answers the next request in full: no interrupt leaks into it
    store.hold = False
    answer = sessions_search(store, Requester(MAIN), ARGUMENTS)
    assert len(answer["results"]) == 2 and store.interrupts == 1


def test_an_error_of_a_reader_within_its_budget_is_its_own() -> None:
    gate = ReaderGate()

    def failing(cancellation: Cancellation) -> None:
        raise StoreError("the partition is unreadable")

    with pytest.raises(StoreError, match="the partition is unreadable"):
        run_reader(failing, budgets=TimeBudgets(), request_started=time.monotonic(), gate=gate)
    assert gate.admit(0)  # released on the error path


def test_an_error_of_an_interrupted_reader_is_a_timeout() -> None:
    def interrupted(cancellation: Cancellation) -> None:
        while not cancellation.cancelled:
            time.sleep(0.01)
        raise StoreError("interrupted")  # what SQLite's interrupted statement raises

    with pytest.raises(SearchTimedOut):
        run_reader(interrupted, budgets=TimeBudgets(reader_seconds=0.05),
                   request_started=time.monotonic(), gate=ReaderGate())


def test_a_reader_that_ends_past_its_deadline_is_thrown_away() -> None:
    # no kernel call checks the cancellation here: the answer is refused on return
    def slow(cancellation: Cancellation) -> str:
        while not cancellation.cancelled:
            time.sleep(0.01)
        return "late answer"

    with pytest.raises(SearchTimedOut):
        run_reader(slow, budgets=TimeBudgets(reader_seconds=0.05),
                   request_started=time.monotonic(), gate=ReaderGate())


def test_a_reader_within_its_budget_answers() -> None:
    calls: list[int] = []

    def reader(cancellation: Cancellation) -> str:
        calls.append(1)
        return "answer"

    assert run_reader(reader, budgets=TimeBudgets(), request_started=time.monotonic(),
                      gate=ReaderGate()) == "answer"
    assert calls == [1]
