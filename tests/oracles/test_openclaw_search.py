"""The real OpenClaw 2026.9.6 as a test oracle for `sessions.search` (issue 11 item 4).

How it runs: `openclaw_installation` (conftest) installs Node 24 and the `openclaw` npm
package once into a cache folder; `openclaw/adapter.mjs` puts OpenClaw's own transcript
writer, indexer and search kernel behind the project's JSON-RPC line protocol and is
driven with `RpcClient`; both of our backends import the same flat messages file with
`engine.ingest` and answer in-process through the server's own `handle_message`, so the
two sides answer the same `sessions.search` params with the same result shape.

Three comparisons, each request against the reference and the SQLite backend:

1. a single-agent corpus: every request (agent-scoped and across agents) must agree
   exactly — the hits and their order, every hit field, snippets, `truncated`,
   `indexing`, scores to 1e-9 relative, and errors by code and message — unless an
   OpenClaw entry of `tests.parity.known_divergences` recognises the request;
2. a multi-agent corpus, each agent's requests against stores holding only that agent's
   messages (what OpenClaw's per-agent database holds): exact, as in 1;
3. the multi-agent corpus against stores holding every agent: exact, as in 1 — our stores
   keep one partition per agent with its own bm25 statistics, as OpenClaw keeps one
   database per agent, and merge across agents as the Gateway does (until they did, this
   section could only compare what statistics cannot change, under the retired entry
   `openclaw-per-agent-statistics`).

Then every OpenClaw entry must have fired, and each entry's reproducer, loaded into a
fresh OpenClaw and into both backends, must still differ (an entry goes stale loudly).
The counts are printed in the "OpenClaw oracle" section at the end of the run.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from engine.backends.protocol import Backend
from engine.ingest.into_store import import_into_store
from engine.model import SearchRequest
from engine.rpc.client import RpcClient
from engine.rpc.errors import INVALID_PARAMS, METHOD_NOT_FOUND, RpcError
from engine.rpc.search_method import SEARCH_METHOD
from engine.store.registry import open_backend
from engine.transcript.events import SEARCHABLE_ROLES, js_trim
from tests.oracles.answers import (
    Outcome,
    exact_differences,
    our_outcome,
)
from tests.oracles.chat_corpus import (
    FlatMessage,
    agent_queries,
    agent_slice,
    flat_corpus,
    flat_messages,
    generate_messages,
    generate_queries,
    scoped_requests,
    write_flat_file,
)
from tests.oracles.openclaw.installation import Installation
from tests.oracles.oracle_run import oracle_summary, running_adapter
from tests.parity.known_divergences import (
    OPENCLAW,
    OPENCLAW_DIVERGENCES,
    DivergenceCase,
    recognised,
)
from tests.parity.strategies import Corpus

BACKENDS = ("reference", "sqlite")
MULTI_AGENTS = ("main", "ops", "research", "vault")
#: The agent holding the credential lines also holds the key with capitals: both entries
#: cover its whole scope, so the other agents stay exactly comparable.
CREDENTIAL_AGENT = UPPER_CASE_AGENT = "vault"
SINGLE_AGENT = "solo"
MULTI_SEED = 1106
SINGLE_SEED = 1107


# ---- the two sides -------------------------------------------------------------------------


class OpenClawOracle:
    """The adapter process with one corpus loaded; answers are kept by params."""

    def __init__(self, client: RpcClient, load: dict[str, Any], started_seconds: float) -> None:
        self.client = client
        self.load = load
        self.started_seconds = started_seconds
        #: The messages OpenClaw stored rewritten (its redaction), read back by the adapter.
        self.rewritten = frozenset((row["sessionId"], row["messageId"])
                                   for row in load["rewritten"])
        self._answers: dict[str, Outcome] = {}

    def outcome(self, params: dict[str, Any]) -> Outcome:
        key = json.dumps(params, sort_keys=True, ensure_ascii=False)
        if key not in self._answers:
            try:
                self._answers[key] = Outcome(result=self.client.call(SEARCH_METHOD, params))
            except RpcError as error:
                self._answers[key] = Outcome(error=(error.code, error.message))
        return self._answers[key]


@contextmanager
def started_oracle(installation: Installation, state: Path, flat_file: Path) -> Iterator[OpenClawOracle]:
    """An adapter on a fresh OpenClaw state folder, with `flat_file` loaded through
    OpenClaw's writer; a failure to start is a skip locally and a failure in CI."""
    started = time.monotonic()
    with running_adapter(installation, state) as client:
        started_seconds = time.monotonic() - started
        load = client.call("corpus.load", {"path": str(flat_file)})
        yield OpenClawOracle(client, load, started_seconds)


@dataclass
class OurStores:
    """Both backends with one flat file imported (`engine.ingest`), open for reading."""

    corpus: Corpus
    backends: dict[str, Backend] = field(default_factory=dict)

    @classmethod
    def imported(cls, folder: Path, messages: Sequence[FlatMessage]) -> OurStores:
        folder.mkdir(parents=True)
        flat_file = write_flat_file(messages, folder / "messages.jsonl")
        stores = cls(flat_corpus(messages))
        for name in BACKENDS:
            import_into_store(folder / name, name, [flat_file])
            stores.backends[name] = open_backend(folder / name, backend=name)
        return stores

    def close(self) -> None:
        for backend in self.backends.values():
            backend.close()


# ---- comparing -------------------------------------------------------------------------------

@dataclass
class Section:
    """One comparison's counts and the problems it found."""

    name: str
    tally: Counter[str] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)

    def summary(self) -> str:
        divergences = {name.removeprefix("divergence:"): count for name, count in sorted(self.tally.items())
                       if name.startswith("divergence:")}
        return (f"{self.name}: {self.tally['requests']} requests ({self.tally['with hits']} with hits, "
                f"{self.tally['truncated']} truncated, {self.tally['errors']} errors upstream), "
                f"{self.tally['compared']} answers compared ({len(BACKENDS)} backends), "
                f"{self.tally['identical']} identical, "
                f"{self.tally['skipped']} skipped; divergences (requests): {divergences or 'none'}; "
                f"problems: {len(self.problems)}")


def compare(section: Section, oracle: OpenClawOracle, stores: OurStores,
            requests: Sequence[SearchRequest]) -> None:
    """Ask every request of both sides; a known divergence narrows or skips the check."""
    for request in requests:
        params = request.to_json()
        entries = recognised(OPENCLAW, DivergenceCase(stores.corpus, request, reconciled=True,
                                                      rewritten=oracle.rewritten))
        section.tally["requests"] += 1
        section.tally.update("divergence:" + entry.id for entry in entries)
        if entries:
            section.tally["skipped"] += 1
            continue
        expected = oracle.outcome(params)
        if expected.result is not None:
            section.tally["with hits"] += bool(expected.result["hits"])
            section.tally["truncated"] += expected.result["truncated"]
        else:
            section.tally["errors"] += 1
        for name, backend in stores.backends.items():
            problems = exact_differences(expected, our_outcome(backend, params))
            section.tally["compared"] += 1
            if problems:
                section.problems.append(f"{name} {params!r}:\n    " + "\n    ".join(problems))
            else:
                section.tally["identical"] += 1


# ---- corpora and requests --------------------------------------------------------------------


def requests_for(messages: Sequence[FlatMessage], agents: Sequence[str], seed: int) -> list[SearchRequest]:
    """Every generated query in each agent's scope and across agents, plus a few narrowed
    to one key, to two keys of different agents, and to one window."""
    generator = random.Random(seed)
    queries = generate_queries(messages, seed)
    if len(agents) > 1:
        queries += agent_queries(messages, agents, seed)
    requests = [request for query in queries for request in scoped_requests(query, agents, generator)]
    keys = sorted({message.session_key for message in messages})
    for query in queries[:3]:
        first = generator.choice(messages)
        other = generator.choice([message for message in messages if message.agent_id != first.agent_id]
                                 or [first])
        requests.append(SearchRequest(query.text, session_keys=(first.session_key,)))
        requests.append(SearchRequest(query.text, session_keys=tuple(sorted({first.session_key, other.session_key}))))
        requests.append(SearchRequest(query.text, agent_id=first.agent_id, session_id=first.session_id, limit=25))
        requests.append(SearchRequest(query.text, session_keys=tuple(keys), limit=25))
    return requests


def indexed_message_count(messages: Sequence[FlatMessage]) -> int:
    """How many messages an index holds: user and assistant, text not blank once trimmed."""
    return sum(1 for message in messages if message.role in SEARCHABLE_ROLES and js_trim(message.text))


@dataclass
class World:
    """One corpus on both sides: OpenClaw loaded, our stores imported."""

    messages: list[FlatMessage]
    oracle: OpenClawOracle
    stores: OurStores
    slices: dict[str, OurStores]


@contextmanager
def world(installation: Installation, folder: Path, messages: list[FlatMessage],
          agents: Sequence[str], *, slices: bool) -> Iterator[World]:
    stores = OurStores.imported(folder / "ours", messages)
    agent_stores = {agent: OurStores.imported(folder / f"slice-{agent}", agent_slice(messages, agent))
                    for agent in agents} if slices else {}
    try:
        with started_oracle(installation, folder / "openclaw", folder / "ours" / "messages.jsonl") as oracle:
            yield World(messages, oracle, stores, agent_stores)
    finally:
        for each in (stores, *agent_stores.values()):
            each.close()


@pytest.fixture(scope="module")
def single_agent(openclaw_installation: Installation, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    messages = generate_messages(SINGLE_SEED, [SINGLE_AGENT], keys_per_agent=(5, 5))
    with world(openclaw_installation, tmp_path_factory.mktemp("single"), messages,
               [SINGLE_AGENT], slices=False) as loaded:
        yield loaded


@pytest.fixture(scope="module")
def multi_agent(openclaw_installation: Installation, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    messages = generate_messages(MULTI_SEED, MULTI_AGENTS, credential_agent=CREDENTIAL_AGENT,
                                 upper_case_agent=UPPER_CASE_AGENT)
    with world(openclaw_installation, tmp_path_factory.mktemp("multi"), messages,
               MULTI_AGENTS, slices=True) as loaded:
        yield loaded


@pytest.fixture(scope="module")
def sections(single_agent: World, multi_agent: World, pytestconfig: pytest.Config) -> dict[str, Section]:
    """The three comparisons, run once; each test below asserts one of them."""
    started = time.monotonic()
    single = Section("single agent, one store")
    compare(single, single_agent.oracle, single_agent.stores,
            requests_for(single_agent.messages, [SINGLE_AGENT], SINGLE_SEED))
    multi_requests = requests_for(multi_agent.messages, MULTI_AGENTS, MULTI_SEED)
    per_agent = Section("multi-agent, each agent against its own slice")
    for agent, stores in multi_agent.slices.items():
        compare(per_agent, multi_agent.oracle, stores,
                [request for request in multi_requests if _only_agent(request) == agent])
    one_store = Section("multi-agent, one store for every agent")
    compare(one_store, multi_agent.oracle, multi_agent.stores, multi_requests)
    summary = oracle_summary(pytestconfig)
    for loaded in (single_agent, multi_agent):
        load = loaded.oracle.load
        summary.append(f"OpenClaw load: {load['messages']} messages, {len(load['agents'])} agents, "
                       f"{load['elapsedMs'] / 1000:.1f} s ({1000 * load['messages'] / max(load['elapsedMs'], 1):.0f}"
                       f"/s); adapter start {loaded.oracle.started_seconds:.1f} s")
    summary.extend(section.summary() for section in (single, per_agent, one_store))
    summary.append(f"comparisons took {time.monotonic() - started:.1f} s")
    return {"single": single, "per agent": per_agent, "one store": one_store}


def _only_agent(request: SearchRequest) -> str | None:
    """The one agent a request reads, or None when it may read several."""
    if request.session_keys is None:
        return request.agent_id
    agents = {key.split(":")[1] for key in request.session_keys if key.startswith("agent:")}
    return agents.pop() if len(agents) == 1 and len(request.session_keys) > 0 else None


# ---- the tests -------------------------------------------------------------------------------


def test_openclaw_indexes_every_message_with_text(single_agent: World, multi_agent: World) -> None:
    for loaded in (single_agent, multi_agent):
        load = loaded.oracle.load
        assert load["appended"] == load["messages"] == len(loaded.messages)
        agents = sorted({message.agent_id for message in loaded.messages})
        assert load["agents"] == agents
        assert load["indexedRows"] == {agent: indexed_message_count(agent_slice(loaded.messages, agent))
                                       for agent in agents}


def test_single_agent_corpus_agrees_with_openclaw(sections: dict[str, Section]) -> None:
    section = sections["single"]
    assert section.problems == [], "\n".join(section.problems)
    assert section.tally["identical"] > 0 and set(section.tally) >= {
        "divergence:openclaw-no-prefix-mode", "divergence:openclaw-no-cjk-retry"}, section.tally


def test_each_agent_agrees_with_openclaw_on_a_store_of_its_own(sections: dict[str, Section]) -> None:
    section = sections["per agent"]
    assert section.problems == [], "\n".join(section.problems)
    assert section.tally["identical"] > 0, section.tally


def test_one_store_for_every_agent_agrees_with_openclaw(sections: dict[str, Section]) -> None:
    """Per-agent partitions: agent-scoped and across agents, exact (scores to 1e-9)."""
    section = sections["one store"]
    assert section.problems == [], "\n".join(section.problems)
    assert section.tally["identical"] > 0, section.tally


def test_per_agent_statistics_reproducer_agrees_with_openclaw(
    openclaw_installation: Installation, tmp_path: Path
) -> None:
    """The reproducer of the retired `openclaw-per-agent-statistics` entry: `saffron` once in
    agent main, two other messages in agent ops; OpenClaw scores it with main's statistics
    only, and so must both backends (they did not while the store kept global ones)."""
    case = _two_agents_case()
    messages = flat_messages(case.corpus)
    with world(openclaw_installation, tmp_path, messages, ["main", "ops"], slices=False) as loaded:
        for request in (case.request, SearchRequest("saffron", session_keys=())):
            params = request.to_json()
            expected = loaded.oracle.outcome(params)
            assert expected.result is not None and expected.result["hits"]
            for name, backend in loaded.stores.backends.items():
                assert exact_differences(expected, our_outcome(backend, params)) == [], name


def _two_agents_case() -> Any:
    from tests.parity.known_divergences import _user_messages_case

    return _user_messages_case(
        {("w-main", "agent:main:main"): ["saffron risotto tonight"],
         ("w-ops", "agent:ops:main"): ["pasta for lunch", "pasta again"]},
        SearchRequest("saffron", agent_id="main"))


def test_every_openclaw_divergence_fired(sections: dict[str, Section]) -> None:
    fired = {name.removeprefix("divergence:") for section in sections.values()
             for name in section.tally if name.startswith("divergence:")}
    assert {entry.id for entry in OPENCLAW_DIVERGENCES} - fired == set(), "stale entries"


@pytest.mark.parametrize("entry", OPENCLAW_DIVERGENCES, ids=lambda entry: entry.id)
def test_every_openclaw_divergence_still_reproduces(
    entry: Any, openclaw_installation: Installation, tmp_path: Path
) -> None:
    """The reproducer on a fresh OpenClaw and on both backends still differs; once the
    engine changes (per-agent partitions, say), the entry must go."""
    case = entry.reproducer
    assert entry.recognises(case)
    messages = flat_messages(case.corpus)
    agents = sorted({message.agent_id for message in messages})
    with world(openclaw_installation, tmp_path, messages, agents, slices=False) as loaded:
        params = case.request.to_json()
        expected = loaded.oracle.outcome(params)
        for name, backend in loaded.stores.backends.items():
            assert exact_differences(expected, our_outcome(backend, params)) != [], (
                f"known divergence {entry.id!r} no longer reproduces on {name}: remove it")


def test_the_adapter_answers_bad_requests_like_our_server(single_agent: World) -> None:
    """Params errors: the same code and message on both sides; unknown methods too."""
    backend = single_agent.stores.backends["reference"]
    bad = [
        {"query": "cafe"},
        {"agentId": SINGLE_AGENT, "query": "cafe", "limit": "2"},
        {"agentId": SINGLE_AGENT, "query": "cafe", "colour": "red"},
        {"agentId": SINGLE_AGENT, "query": "cafe", "role": "system"},
        {"agentId": SINGLE_AGENT, "query": "cafe", "sessionKeys": ["a", 1]},
        {"agentId": SINGLE_AGENT},
        {"agentId": SINGLE_AGENT, "query": " \t "},
        {"agentId": SINGLE_AGENT, "query": "x" * 4097},
        ["not", "an", "object"],
    ]
    for params in bad:
        theirs = single_agent.oracle.outcome(params)  # type: ignore[arg-type]
        assert theirs.error is not None and theirs.error[0] == INVALID_PARAMS, (params, theirs)
        assert theirs == our_outcome(backend, params), params  # type: ignore[arg-type]
    with pytest.raises(RpcError) as raised:
        single_agent.oracle.client.call("sessions.list")
    assert (raised.value.code, raised.value.message) == (METHOD_NOT_FOUND, "unknown method 'sessions.list'")
