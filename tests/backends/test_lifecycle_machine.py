"""The whole index lifecycle as a hypothesis state machine, on both backends at once.

Every rule is applied to a reference store and a SQLite store alike (and, in
`PostgresLifecycleMachine`, to a postgres store and a reference store answering as
PostgreSQL would, compared exactly as `tests/parity/test_postgres_differential.py`
compares them) (each partitioned
per agent, the §8.2 limits shrunk so that a replacement of more than three events is a
large one): appends on and off the active branch, rewinds, resets (a new current window
under the key), small and large replacements, an old window imported without its index
(a transcript that predates the index), archive, restore, deletion, a compaction of the
transcript log (where the store has one), a background reconcile running while the
application writes, a foreground reconcile, and closing and reopening both stores.

After every step both stores must give the same kernel answer (hits, order, excerpts,
`truncated`, `indexing`, archived counts) for every probe query, scoped to each agent
and across all of them, and the same `indexing` status. After a reconcile (foreground,
or a background run waited for), the index of each must equal a full rebuild from its
transcripts (`verify`, and on SQLite the FTS rows read directly).

The stores run without background reconcile, so that a probe never starts a run in one
store and not the other; the `background_run` rule turns it on for one search, writes
while the run works, and waits for both runs before anything is compared.
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from engine.config import EngineConfig
from engine.model import SearchRequest, SessionWindow
from engine.store.archives import archive_session, restore_session
from engine.store.opening import open_partitioned
from engine.store.partitioned import PartitionedStore
from tests.backends.test_background_reconcile import strip_the_index
from tests.backends.test_replace_and_delete import (
    check_consistent,
    configured_kind,
    message,
    new_store,
)
from tests.parity.test_backend_differential import outcome, result_differences
from tests.parity.test_postgres_differential import differences as postgres_differences

CONFIG = EngineConfig(sync_rebuild_max_events=3, sync_rebuild_max_bytes=4096,
                      background_reconcile=False, reconcile_batch_events=3)
KEYS = ("agent:main:alpha", "agent:main:beta", "agent:ops:gamma")
WORDS = ("amber", "basil", "cedar", "dill", "ember")
BACKENDS = ("reference", "sqlite")


def probe_requests() -> list[SearchRequest]:
    requests = []
    for word in (*WORDS, "amber basil", "ced"):
        requests.append(SearchRequest(word, agent_id="main"))
        requests.append(SearchRequest(word, agent_id="ops", order="recent"))
        requests.append(SearchRequest(word, session_keys=(), match="prefix"))
        requests.append(SearchRequest(word, session_keys=(KEYS[0], KEYS[2]), limit=2))
    return requests


PROBES = probe_requests()


class LifecycleMachine(RuleBasedStateMachine):
    """Both backends driven alike (see the module docstring)."""

    #: The stores driven alike: the prediction first, then the backend it predicts.
    backends: tuple[str, str] = BACKENDS

    def __init__(self) -> None:
        super().__init__()
        self.folder = Path(tempfile.mkdtemp(prefix="lifecycle-"))
        self.stores: dict[str, PartitionedStore] = {
            name: new_store(self.folder, name, CONFIG) for name in self.backends}
        #: session id -> (key, ids of its messages in order), as the stores hold them.
        self.windows: dict[str, tuple[str, list[str]]] = {}
        self.counter = 0

    def teardown(self) -> None:
        for store in self.stores.values():
            store.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    # ----- helpers ----------------------------------------------------------------------

    def next_id(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def each(self, write: Any) -> None:
        """Apply `write(store)` to both stores; both must succeed or fail alike (so
        `write` must draw nothing: what it writes is drawn before)."""
        outcomes = []
        for name in self.backends:
            try:
                write(self.stores[name])
                outcomes.append(None)
            except Exception as error:  # the two must refuse alike
                outcomes.append((type(error).__name__, str(error)))
        assert outcomes[0] == outcomes[1], outcomes

    def transact(self, body: Any) -> None:
        def write(store: PartitionedStore) -> None:
            with store.transaction() as transaction:
                body(transaction)
        self.each(write)

    def text(self, data: st.DataObject) -> str:
        return " ".join(data.draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=3)))

    def current_of(self, key: str) -> str | None:
        for window in self.stores[self.backends[1]].windows_of(key):
            if window.current:
                return window.session_id
        return None

    def reconciled(self) -> None:
        for store in self.stores.values():
            check_consistent(store)

    # ----- rules ------------------------------------------------------------------------

    @rule(data=st.data(), key=st.sampled_from(KEYS))
    def new_window(self, data: st.DataObject, key: str) -> None:
        session_id = self.next_id("w")
        previous = self.current_of(key)
        text = self.text(data)

        def body(transaction: Any) -> None:
            if previous is not None:  # a reset: the key's current window is retained
                old = self.stores_window(previous)
                transaction.put_window(dataclasses.replace(old, current=False))
            transaction.put_window(SessionWindow(
                session_id, key, previous_session_id=previous,
                reason="reset" if previous else "initial"))
            transaction.append_event(session_id, message("m0", None, text, "user", 1.0))
        self.transact(body)
        self.windows[session_id] = (key, ["m0"])

    def stores_window(self, session_id: str) -> SessionWindow:
        return self.stores[self.backends[1]].window(session_id)

    @precondition(lambda self: self.windows)
    @rule(data=st.data(), branch=st.booleans(), role=st.sampled_from(["user", "assistant"]))
    def append(self, data: st.DataObject, branch: bool, role: str) -> None:
        session_id = data.draw(st.sampled_from(sorted(self.windows)))
        key, ids = self.windows[session_id]
        parent = (data.draw(st.sampled_from(ids)) if branch and ids else (ids[-1] if ids else None))
        message_id = self.next_id("m")
        stamp = float(self.counter)
        text = self.text(data)
        self.transact(lambda transaction: transaction.append_event(
            session_id, message(message_id, parent, text, role, stamp)))
        ids.append(message_id)

    @precondition(lambda self: any(len(ids) > 1 for _, ids in self.windows.values()))
    @rule(data=st.data())
    def rewind(self, data: st.DataObject) -> None:
        session_id = data.draw(st.sampled_from(sorted(
            session_id for session_id, (_, ids) in self.windows.items() if len(ids) > 1)))
        _, ids = self.windows[session_id]
        target = data.draw(st.sampled_from(ids[:-1]))
        leaf = {"type": "leaf", "id": self.next_id("l"), "parentId": ids[-1], "targetId": target}
        self.transact(lambda transaction: transaction.append_event(session_id, leaf))

    @precondition(lambda self: self.windows)
    @rule(data=st.data(), size=st.integers(0, 6))
    def replace(self, data: st.DataObject, size: int) -> None:
        """A replacement of `size` messages in a chain (more than 3: a large one, left to
        reconcile), the last one sometimes rewound to the first."""
        session_id = data.draw(st.sampled_from(sorted(self.windows)))
        key, _ = self.windows[session_id]
        prefix = self.next_id("r")
        events = [message(f"{prefix}-{i}", f"{prefix}-{i - 1}" if i else None, self.text(data),
                          "user" if i % 2 == 0 else "assistant", float(i)) for i in range(size)]
        if size > 1 and data.draw(st.booleans()):
            events.append({"type": "leaf", "id": f"{prefix}-leaf", "parentId": f"{prefix}-{size - 1}",
                           "targetId": f"{prefix}-0"})
        self.transact(lambda transaction: transaction.replace_transcript(session_id, events, 7.0))
        self.windows[session_id] = (key, [f"{prefix}-{i}" for i in range(size)])

    @rule(data=st.data(), key=st.sampled_from(KEYS))
    def import_old_window(self, data: st.DataObject, key: str) -> None:
        """A retained window whose transcript predates the index: events, no index state."""
        session_id = self.next_id("old")
        ids = ["o0", "o1"]
        texts = [self.text(data), self.text(data)]

        def body(transaction: Any) -> None:
            transaction.put_window(SessionWindow(session_id, key, current=False, reason="rollover"))
            transaction.append_event(session_id, message("o0", None, texts[0], "user", 2.0))
            transaction.append_event(session_id, message("o1", "o0", texts[1], "assistant", 3.0))
        self.transact(body)
        for store in self.stores.values():
            strip_the_index(store, [session_id])
        self.windows[session_id] = (key, ids)

    @precondition(lambda self: self.windows)
    @rule(data=st.data(), archived=st.booleans())
    def archive_or_restore(self, data: st.DataObject, archived: bool) -> None:
        key = data.draw(st.sampled_from(sorted({key for key, _ in self.windows.values()})))
        self.each(lambda store: (archive_session if archived else restore_session)(store, key))

    @rule(key=st.sampled_from(KEYS))
    def delete(self, key: str) -> None:
        self.transact(lambda transaction: transaction.delete_session(key))
        self.windows = {session_id: value for session_id, value in self.windows.items()
                        if value[0] != key}

    @rule()
    def compact(self) -> None:
        for store in self.stores.values():
            compact = getattr(store, "compact", None)
            if compact is not None:
                compact()

    @rule()
    def reconcile(self) -> None:
        self.each(lambda store: store.reconcile())
        self.reconciled()

    @rule(data=st.data())
    def background_run(self, data: st.DataObject) -> None:
        """A search that finds work pending starts a run; the application appends while it
        works; both runs are waited for, and the index then equals a rebuild."""
        for store in self.stores.values():
            store.config = dataclasses.replace(CONFIG, background_reconcile=True)
            try:
                store.search(SearchRequest(WORDS[0], session_keys=()))
            finally:
                store.config = CONFIG
        if self.windows:
            self.append(data, branch=False, role="user")
        for store in self.stores.values():
            assert store.wait_for_reconcile(60.0)
        if any(store.index_status() for store in self.stores.values()):
            # The append may land before a run rebuilds its window or after the run has
            # ended (it then leaves that window for the next run): which one depends on
            # the threads' timing, separately on each backend. Settle both the same way.
            self.reconcile()
        else:
            self.reconciled()

    @rule()
    def reopen(self) -> None:
        for name in self.backends:
            self.stores[name].close()
            self.stores[name] = open_partitioned(self.folder / name, configured_kind(name, CONFIG),
                                                 writer=True, config=CONFIG)

    # ----- the invariant ----------------------------------------------------------------

    @staticmethod
    def differences(backend: Any, prediction: Any) -> list[str]:
        """How the backend's answer differs from the prediction's."""
        return result_differences(backend, prediction)

    @invariant()
    def both_backends_answer_alike(self) -> None:
        reference, backend = (self.stores[name] for name in self.backends)
        assert reference.index_status() == backend.index_status()
        assert sorted(window.session_id for window in reference.windows()) == sorted(
            window.session_id for window in backend.windows())
        for request in PROBES:
            problems = self.differences(outcome(backend, request), outcome(reference, request))
            assert problems == [], f"{request!r}\n" + "\n".join(problems)


MACHINE_SETTINGS = settings(
    max_examples=30, stateful_step_count=14, deadline=None, derandomize=True, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
LifecycleMachine.TestCase.settings = MACHINE_SETTINGS
test_the_lifecycle_keeps_both_backends_alike = LifecycleMachine.TestCase


class PostgresLifecycleMachine(LifecycleMachine):
    """The postgres backend and the reference's prediction of it, driven alike."""

    backends = ("postgres-expected", "postgres")

    @staticmethod
    def differences(backend: Any, prediction: Any) -> list[str]:
        return postgres_differences(backend, prediction)


@pytest.mark.postgres
def test_the_lifecycle_keeps_postgres_and_its_prediction_alike(postgres_stores: str) -> None:
    run_state_machine_as_test(PostgresLifecycleMachine, settings=MACHINE_SETTINGS)
