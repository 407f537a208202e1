"""The real OpenClaw 2026.9.6 `sessions_search` agent tool as a differential oracle (issue 12).

How it runs: one generated multi-agent corpus of session trees (`session_tree_corpus`:
three agents, main sessions with retained windows, group and direct chats, subagent,
grandchild, ACP and parent-only children, children across agents, incognito sessions,
`global`, a session archived in the list, a session whose search overflows the 32 KiB
budget, texts with diacritics, Greek and CJK) goes into OpenClaw through
`openclaw/adapter.mjs` (`corpus.load`, then `sessions.upsert` for the links) and into
both of our backends through `session-search import` of the same corpus as a corpus
directory. Then, for each visibility mode below, the same OpenClaw-shaped `openclaw.json`
is written for OpenClaw (`config.write`) and read by `engine.agent_tools.load_tool_config`,
and the same calls go to OpenClaw's own tool (embedded mode, `sessions_search` of the
adapter) and to `engine.agent_tools.sessions_search` on each backend (in-process).

The calls of a mode: every requester lists-and-searches with each query (a limit drawn
from 1, 3, 10 and 25; absent means 10), and a few requesters name each session key as
`sessionKey` (every key of the corpus, the `current`, `main`, `global` and `unknown`
aliases, a window's sessionId, capitals, a key and a name that do not exist); the first
mode also sends the edge arguments (`EDGE_ARGUMENTS`). Sandboxed modes call with `sandboxed: true`.

What must agree: the whole answer — `results` (each hit's keys in their order, every field,
the excerpt, the score to 1e-9 relative), the order, `truncated`, `indexing`, `warning`,
refusals (`status` and `error` text), and input errors (OpenClaw throws `ToolInputError`,
we raise ours: the message must match). A call an `OPENCLAW` entry of
`tests.parity.known_divergences` recognises (its scope taken as every session of the
corpus) is counted and not compared; redaction of credentials, the one divergence the tool
itself adds, is shown by its own test on the entry's reproducer. The counts per mode are
printed in the "OpenClaw oracle" section at the end of the run.
"""

from __future__ import annotations

import json
import math
import random
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from engine.agent_tools.sessions_search import ToolInputError, sessions_search
from engine.agent_tools.tool_config import ToolConfig, load_tool_config, tool_config_from_json
from engine.agent_tools.visibility import Requester
from engine.backends.protocol import Backend
from engine.ingest.into_store import import_into_store
from engine.model import SearchRequest
from engine.rpc.client import RpcClient
from engine.rpc.errors import INVALID_PARAMS, RpcError
from engine.store.registry import open_backend
from tests.oracles.answers import SCORE_RELATIVE_TOLERANCE
from tests.oracles.chat_corpus import flat_corpus, flat_messages, generate_queries, write_flat_file
from tests.oracles.openclaw.installation import Installation
from tests.oracles.oracle_run import oracle_summary, running_adapter
from tests.oracles.session_tree_corpus import (
    AGENTS,
    MARKER_WORD,
    UNSCOPED_AGENT,
    TreeCorpus,
    TreeSession,
    generate_tree_corpus,
    openclaw_entries,
    write_corpus_directory,
)
from tests.parity.known_divergences import (
    OPENCLAW,
    OPENCLAW_DIVERGENCES,
    OPENCLAW_TOOL_DIVERGENCES,
    DivergenceCase,
    ToolCase,
    ToolDivergence,
    recognised,
    recognised_tool_call,
)
from tests.parity.strategies import Corpus

BACKENDS = ("reference", "sqlite")
SEED = 1212
ROSTER = {"ownership": "explicit", "list": [{"id": agent} for agent in AGENTS]}
LIMITS = (None, 1, 3, 10, 25)
#: Arguments at the edges of what the tool reads: blank, missing and oversized queries,
#: limits out of range or of another type (a digit string is a limit upstream), a blank
#: or snake-case `sessionKey`.
EDGE_ARGUMENTS: tuple[dict[str, Any], ...] = (
    {"query": "   "}, {}, {"query": 5}, {"query": "x" * 4097}, {"query": " " + "x" * 4096 + " "},
    {"query": "ledger", "limit": 0}, {"query": "ledger", "limit": 26},
    {"query": "ledger", "limit": 2.5}, {"query": "ledger", "limit": -3},
    {"query": "ledger", "limit": 25.0}, {"query": "ledger", "limit": None},
    {"query": "ledger", "limit": "5"}, {"query": "ledger", "limit": " "},
    {"query": "ledger", "limit": True}, {"query": "ledger", "limit": "five"},
    {"query": "ledger", "sessionKey": "   "}, {"query": "ledger", "session_key": "current"},
)


# ---- the modes -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Mode:
    """One configuration, and whether its requesters call sandboxed."""

    name: str
    tools: dict[str, Any]
    sandboxed: bool = False
    sandbox_visibility: str | None = None

    def config(self) -> dict[str, Any]:
        """The `openclaw.json` both sides read."""
        agents: dict[str, Any] = dict(ROSTER)
        if self.sandbox_visibility is not None:
            agents["defaults"] = {"sandbox": {"sessionToolsVisibility": self.sandbox_visibility}}
        return {"agents": agents, "tools": self.tools}


def visibility(value: str) -> dict[str, Any]:
    return {"sessions": {"visibility": value}}


MODES = (
    Mode("all", {}),
    Mode("self", visibility("self")),
    Mode("tree", visibility("tree")),
    Mode("agent", visibility("agent")),
    Mode("all, agent-to-agent disabled", {"agentToAgent": {"enabled": False}}),
    Mode("all, agent-to-agent allow main and research", {"agentToAgent": {"allow": ["main", "research"]}}),
    Mode("all, agent-to-agent allow globs", {"agentToAgent": {"allow": ["m*", "*ps"]}}),
    Mode("sandboxed (spawned only)", {}, sandboxed=True),
    Mode("sandboxed, self clamped to tree", visibility("self"), sandboxed=True),
    Mode("sandboxed with sessionToolsVisibility all", visibility("agent"), sandboxed=True,
         sandbox_visibility="all"),
)


# ---- the calls --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call: who asks, with which arguments."""

    requester: str
    arguments: dict[str, Any]
    kind: str

    def params(self, sandboxed: bool) -> dict[str, Any]:
        return {"requesterSessionKey": self.requester, "sandboxed": sandboxed,
                "arguments": self.arguments}


def list_requesters() -> list[str]:
    """Per agent its main session, its group chat and its subagent; and one requester
    without a session of its own."""
    return [key for agent in AGENTS for key in (
        f"agent:{agent}:main", f"agent:{agent}:telegram:group:42", f"agent:{agent}:subagent:worker",
    )] + ["agent:ops:discord:dm:nobody"]


#: Who names explicit targets; each mode draws one.
TARGET_REQUESTERS = ("agent:main:main", "agent:ops:telegram:group:42", "agent:main:subagent:worker",
                     "agent:research:main")
QUERIES_PER_REQUESTER = 3


def tool_queries(corpus: TreeCorpus) -> list[str]:
    """The chat corpus's query kinds drawn from this corpus (no match modes: the tool has
    none), the marker word, the budget word and a pair."""
    drawn = [query.text for query in generate_queries(list(corpus.messages), SEED)
             if query.match == "exact" and query.text.strip()]
    return list(dict.fromkeys([MARKER_WORD, "budget", "ledger quota", *drawn]))


def targets_of(corpus: TreeCorpus) -> list[str]:
    """Every key, the aliases, a current and a retained window's sessionId, capitals
    (whole keys, aliases, the agent part), a key and a name that do not exist."""
    ops = corpus.session("agent:ops:main")
    return [*corpus.keys, "current", "main", "global", "unknown", ops.window_ids[-1],
            ops.window_ids[0], "AGENT:MAIN:MAIN", "agent:main:missing", "nowhere",
            # other spellings of stored keys, read in OpenClaw's stored form (issue 27, item 6)
            "MAIN", "Global", "Agent:Ops:Main", "agent:Ops:Telegram:Group:42", "Notes"]


def calls_of(corpus: TreeCorpus, mode: Mode, queries: Sequence[str], *, first: bool) -> list[Call]:
    """Every call of one mode (the module docstring): each requester lists with the marker
    word and with `QUERIES_PER_REQUESTER - 1` drawn queries, each with a drawn limit, and
    `agent:main:main` with the budget word (the byte budget cuts it where the session is
    visible); a drawn requester names every target; the first mode also sends the edge
    arguments."""
    generator = random.Random(f"{SEED}:{mode.name}")
    calls = []
    for requester in list_requesters():
        for query in [queries[0], *generator.sample(queries[1:], QUERIES_PER_REQUESTER - 1)]:
            arguments: dict[str, Any] = {"query": query}
            limit = generator.choice(LIMITS)
            if limit is not None:
                arguments["limit"] = limit
            calls.append(Call(requester, arguments, "list"))
    calls.append(Call("agent:main:main", {"query": "budget", "limit": 25}, "list"))
    for requester in generator.sample(TARGET_REQUESTERS, 1):
        calls += [Call(requester, {"query": MARKER_WORD, "sessionKey": target, "limit": 25}, "target")
                  for target in targets_of(corpus)]
    if first:
        calls += [Call("agent:main:main", arguments, "edge arguments") for arguments in EDGE_ARGUMENTS]
    return calls


# ---- the two sides ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Answer:
    """A tool's answer: its JSON result, or an input error's message."""

    result: dict[str, Any] | None = None
    input_error: str | None = None


def openclaw_answer(client: RpcClient, params: dict[str, Any]) -> Answer:
    try:
        return Answer(result=client.call("sessions_search", params))
    except RpcError as error:
        if error.code != INVALID_PARAMS:
            raise
        return Answer(input_error=error.message)


def our_answer(backend: Backend, call: Call, sandboxed: bool, config: ToolConfig) -> Answer:
    try:
        return Answer(result=sessions_search(backend, Requester(call.requester, sandboxed),
                                             call.arguments, config=config))
    except ToolInputError as error:
        return Answer(input_error=str(error))


def differences(theirs: Answer, ours: Answer) -> list[str]:
    """Every way the answers differ (empty when they agree): the kind of answer, the keys
    of the result and their order, each hit's keys, fields and score (1e-9 relative)."""
    if theirs.result is None or ours.result is None:
        return [] if theirs == ours else [f"openclaw {theirs!r} vs ours {ours!r}"]
    want, got = theirs.result, ours.result
    problems = []
    if list(want) != list(got):
        problems.append(f"result keys: openclaw {list(want)} vs ours {list(got)}")
    problems += [f"{name}: openclaw {want.get(name)!r} vs ours {got.get(name)!r}"
                 for name in sorted(want.keys() | got.keys())
                 if name != "results" and want.get(name) != got.get(name)]
    theirs_hits, our_hits = want.get("results", []), got.get("results", [])
    if len(theirs_hits) != len(our_hits):
        problems.append(f"hit count: openclaw {len(theirs_hits)} vs ours {len(our_hits)}: "
                        f"{[hit['sessionKey'] for hit in theirs_hits]} vs {[hit['sessionKey'] for hit in our_hits]}")
    for position, (one, other) in enumerate(zip(theirs_hits, our_hits)):
        if list(one) != list(other):
            problems.append(f"hit {position} keys: openclaw {list(one)} vs ours {list(other)}")
        for name in sorted(one.keys() | other.keys()):
            if name == "score" and name in one and name in other:
                same = math.isclose(one[name], other[name], rel_tol=SCORE_RELATIVE_TOLERANCE, abs_tol=0.0)
            else:
                same = one.get(name) == other.get(name)
            if not same:
                problems.append(f"hit {position} {name}: openclaw {one.get(name)!r} vs ours {other.get(name)!r}")
    return problems


def results_bytes(answer: Answer) -> int:
    """The UTF-8 size of the `results` array as JavaScript serialises it (no spaces)."""
    assert answer.result is not None
    return len(json.dumps(answer.result["results"], ensure_ascii=False, separators=(",", ":")).encode())


@dataclass
class OurStores:
    """Both backends with a corpus directory imported."""

    backends: dict[str, Backend]

    def close(self) -> None:
        for backend in self.backends.values():
            backend.close()


def imported_stores(folder: Path, corpus: TreeCorpus, *, incognito_transcripts: bool = False) -> OurStores:
    """Our stores of `corpus` (`session-search import` of its corpus directory); by default
    holding what OpenClaw's databases hold: incognito sessions without transcripts."""
    source = write_corpus_directory(corpus, folder / "corpus", incognito_transcripts=incognito_transcripts)
    backends = {}
    for name in BACKENDS:
        import_into_store(folder / name, name, [source])
        backends[name] = open_backend(folder / name, backend=name)
    return OurStores(backends)


@contextmanager
def loaded_adapter(installation: Installation, state: Path, corpus: TreeCorpus, folder: Path,
                   *, load: bool, world: World | None = None) -> Iterator[RpcClient]:
    """An adapter on `state`; with `load`, the corpus written through OpenClaw first, and
    every field of every session entry checked to be kept (and `world` told which
    messages OpenClaw stored rewritten)."""
    with running_adapter(installation, state) as client:
        if load:
            flat_file = write_flat_file(corpus.messages, folder / "messages.jsonl")
            loaded = client.call("corpus.load", {"path": str(flat_file), "unscopedAgentId": UNSCOPED_AGENT})
            assert loaded["appended"] == loaded["messages"] == len(corpus.messages), loaded
            if world is not None:
                world.rewritten = frozenset((row["sessionId"], row["messageId"])
                                            for row in loaded["rewritten"])
            entries = openclaw_entries(corpus)
            stored = client.call("sessions.upsert", {"entries": entries})["entries"]
            assert [entry["entry"] for entry in stored] == [
                {name: value for name, value in entry.items() if name not in ("sessionKey", "agentId")}
                for entry in entries], "OpenClaw dropped a field of a session entry"
        yield client


# ---- comparing ---------------------------------------------------------------------------------


@dataclass
class Tally:
    """One mode's counts, the problems it found, and the answers it kept by call."""

    mode: Mode
    counts: Counter[str] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)
    answers: dict[str, Answer] = field(default_factory=dict)

    def summary(self) -> str:
        divergences = {name.removeprefix("divergence:"): count for name, count in sorted(self.counts.items())
                       if name.startswith("divergence:")}
        return (f"{self.mode.name}: {self.counts['calls']} calls ({self.counts['with hits']} with hits, "
                f"{self.counts['refusals']} refusals, {self.counts['input errors']} input errors, "
                f"{self.counts['truncated']} truncated, {self.counts['byte budget']} cut by the byte "
                f"budget), {self.counts['compared']} answers compared ({len(BACKENDS)} backends), "
                f"{self.counts['identical']} identical, {self.counts['skipped']} calls skipped; "
                f"divergences (calls): {divergences or 'none'}; problems: {len(self.problems)}")


@dataclass
class World:
    """The corpus on both sides, and what the parity predicates read of it."""

    corpus: TreeCorpus
    searched: Corpus
    stores: OurStores
    folder: Path
    #: The messages OpenClaw stored rewritten (its redaction), once the corpus is loaded.
    rewritten: frozenset[tuple[str, str]] | None = None

    def config_of(self, mode: Mode) -> ToolConfig:
        """Our reading of the mode's `openclaw.json` (`load_tool_config`, as `--config`)."""
        path = self.folder / f"config-{MODES.index(mode)}.json"
        path.write_text(json.dumps(mode.config(), indent=2) + "\n", encoding="utf-8")
        return load_tool_config(path)


def call_key(call: Call) -> str:
    return json.dumps([call.requester, call.arguments], ensure_ascii=False, sort_keys=True)


def tool_case(call: Call, mode: Mode) -> ToolCase:
    return ToolCase(call.requester, call.arguments, mode.sandboxed, mode.config())


def recognised_entries(world: World, call: Call, mode: Mode) -> list[str]:
    """The ids of the entries recognising a call: the tool's own, and the kernel's `OPENCLAW`
    entries for its query in any agent's partition (each kernel call searches one)."""
    found = [entry.id for entry in recognised_tool_call(tool_case(call, mode), world.corpus.sessions)]
    query = call.arguments.get("query")
    if isinstance(query, str) and query.strip() and len(query) <= 4096:
        for agent in AGENTS:
            case = DivergenceCase(world.searched, SearchRequest(query.strip(), agent_id=agent),
                                  reconciled=True, rewritten=world.rewritten)
            found += [entry.id for entry in recognised(OPENCLAW, case) if entry.id not in found]
    return found


def compare_mode(tally: Tally, client: RpcClient, world: World, calls: Sequence[Call]) -> None:
    """Every call of one mode on both sides; a recognised divergence skips the call."""
    mode = tally.mode
    client.call("config.write", {"config": mode.config()})
    config = world.config_of(mode)
    for call in calls:
        tally.counts["calls"] += 1
        entries = recognised_entries(world, call, mode)
        tally.counts.update("divergence:" + entry for entry in entries)
        if entries:
            tally.counts["skipped"] += 1
            continue
        theirs = openclaw_answer(client, call.params(mode.sandboxed))
        tally.answers[call_key(call)] = theirs
        if theirs.input_error is not None:
            tally.counts["input errors"] += 1
        elif "status" in (theirs.result or {}):
            tally.counts["refusals"] += 1
        else:
            assert theirs.result is not None
            tally.counts["with hits"] += bool(theirs.result["results"])
            tally.counts["truncated"] += "truncated" in theirs.result
            limit = call.arguments.get("limit", 10)
            tally.counts["byte budget"] += (results_bytes(theirs) > 30_000
                                            and len(theirs.result["results"]) < limit)
        for name, backend in world.stores.backends.items():
            problems = differences(theirs, our_answer(backend, call, mode.sandboxed, config))
            tally.counts["compared"] += 1
            if problems:
                tally.problems.append(f"[{mode.name}] {name} {call.params(mode.sandboxed)!r}:\n    "
                                      + "\n    ".join(problems))
            else:
                tally.counts["identical"] += 1


# ---- the fixtures and the tests -----------------------------------------------------------------


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    folder = tmp_path_factory.mktemp("tool")
    corpus = generate_tree_corpus(SEED)
    stores = imported_stores(folder / "ours", corpus)
    searched = [message for message in corpus.messages if not corpus.session(message.session_key).incognito]
    try:
        yield World(corpus, flat_corpus(searched), stores, folder)
    finally:
        stores.close()


@dataclass
class Run:
    """Every mode compared, the replays made after switching configurations, and OpenClaw's
    answer to each tool entry's reproducer."""

    tallies: dict[str, Tally]
    replays: list[tuple[Call, Answer, Answer]]
    reproduced: dict[str, Answer]


def reproducer_mode(entry: ToolDivergence) -> tuple[Mode, Call]:
    case = entry.reproducer
    return (Mode(entry.id, dict(case.config.get("tools", {})), sandboxed=case.sandboxed),
            Call(case.requester, dict(case.arguments), "reproducer"))


@pytest.fixture(scope="module")
def run(openclaw_installation: Installation, world: World, pytestconfig: pytest.Config) -> Run:
    """Every mode, compared once; the tests below assert on the counts. One adapter per
    `agents` section (the session-row projection keeps the roster it was built with); the
    first mode runs on the configuration the first adapter started with, and its first
    calls are asked again after every other mode of that adapter, to show that
    `config.write` leaves nothing of an earlier configuration behind. The tool entries'
    reproducers are asked last."""
    started = time.monotonic()
    queries = tool_queries(world.corpus)
    tallies = {mode.name: Tally(mode) for mode in MODES}
    replays: list[tuple[Call, Answer, Answer]] = []
    reproduced: dict[str, Answer] = {}
    for load, sandbox_visibility in ((True, None), (False, "all")):
        with loaded_adapter(openclaw_installation, world.folder / "openclaw", world.corpus,
                            world.folder, load=load, world=world) as client:
            for mode in MODES:
                if mode.sandbox_visibility == sandbox_visibility:
                    compare_mode(tallies[mode.name], client, world,
                                 calls_of(world.corpus, mode, queries, first=mode is MODES[0]))
            if load:
                first = MODES[0]
                client.call("config.write", {"config": first.config()})
                for call in calls_of(world.corpus, first, queries, first=True)[:REPLAYED_CALLS]:
                    if call_key(call) in tallies[first.name].answers:
                        replays.append((call, tallies[first.name].answers[call_key(call)],
                                        openclaw_answer(client, call.params(first.sandboxed))))
                for entry in OPENCLAW_TOOL_DIVERGENCES:
                    mode, call = reproducer_mode(entry)
                    client.call("config.write", {"config": mode.config()})
                    reproduced[entry.id] = openclaw_answer(client, call.params(mode.sandboxed))
    summary = oracle_summary(pytestconfig)
    summary.append(f"sessions_search tool: {len(world.corpus.sessions)} sessions, "
                   f"{len(world.corpus.messages)} messages, {len(queries)} queries, "
                   f"{time.monotonic() - started:.1f} s")
    summary.extend(tally.summary() for tally in tallies.values())
    return Run(tallies, replays, reproduced)


REPLAYED_CALLS = 20


@pytest.mark.parametrize("mode", MODES, ids=lambda mode: mode.name)
def test_the_tool_agrees_with_openclaw(run: Run, mode: Mode) -> None:
    tally = run.tallies[mode.name]
    assert tally.problems == [], "\n".join(tally.problems)
    assert tally.counts["identical"] > 0 and tally.counts["with hits"] > 0, tally.counts


def test_switching_the_configuration_leaves_nothing_behind(run: Run) -> None:
    assert run.replays
    assert [(call, before) for call, before, after in run.replays if before != after] == []


def test_the_modes_differ(run: Run) -> None:
    """The modes are not all alike: refusals happen, narrower modes find less."""
    counts = {name: tally.counts for name, tally in run.tallies.items()}
    assert counts["self"]["refusals"] > counts["all"]["refusals"] > 0
    assert counts["self"]["with hits"] < counts["all"]["with hits"]
    assert counts["sandboxed (spawned only)"]["with hits"] < counts["all"]["with hits"]


def test_limits_and_the_byte_budget_truncate(run: Run) -> None:
    counts = run.tallies["all"].counts
    assert counts["truncated"] > counts["byte budget"] > 0, counts


def test_every_tool_divergence_fired(run: Run) -> None:
    fired = {name.removeprefix("divergence:") for tally in run.tallies.values()
             for name in tally.counts if name.startswith("divergence:")}
    assert {entry.id for entry in OPENCLAW_TOOL_DIVERGENCES} - fired == set(), "stale entries"


@pytest.mark.parametrize("entry", OPENCLAW_TOOL_DIVERGENCES, ids=lambda entry: entry.id)
def test_every_tool_divergence_still_reproduces(entry: ToolDivergence, run: Run, world: World) -> None:
    """The entry's reproducer, on the corpus loaded into OpenClaw and into both backends,
    still differs; once the engine agrees, the entry must go."""
    assert entry.recognises(entry.reproducer, world.corpus.sessions)
    mode, call = reproducer_mode(entry)
    config = tool_config_from_json(mode.config())
    for name, backend in world.stores.backends.items():
        ours = our_answer(backend, call, mode.sandboxed, config)
        assert differences(run.reproduced[entry.id], ours) != [], (
            f"known divergence {entry.id!r} no longer reproduces on {name}: remove it")


def test_incognito_transcripts_do_not_change_scores(
    run: Run, world: World, tmp_path: Path
) -> None:
    """Our stores of the corpus as written, incognito transcripts included, answer the
    listing calls of mode `all` as OpenClaw did: the incognito events are stored, and
    no index holds them, so they change no score (docs/openclaw-sessions-search-findings.md,
    finding 1)."""
    tally = run.tallies["all"]
    stores = imported_stores(tmp_path, world.corpus, incognito_transcripts=True)
    config = world.config_of(tally.mode)
    try:
        for name, backend in stores.backends.items():
            incognito = [window for window in backend.windows() if window.is_incognito]
            assert incognito and any(backend.event_count(window.session_id) for window in incognito), name
        calls = [call for call in calls_of(world.corpus, tally.mode, tool_queries(world.corpus), first=True)
                 if call.kind == "list" and call_key(call) in tally.answers]
        assert calls
        for name, backend in stores.backends.items():
            for call in calls:
                assert differences(tally.answers[call_key(call)], our_answer(backend, call, False, config)) == [], (
                    name, call)
    finally:
        stores.close()


REDACTION = next(entry for entry in OPENCLAW_DIVERGENCES if entry.id == "openclaw-redacts-credentials")


def test_credential_redaction_is_the_divergence_the_tool_adds(
    openclaw_installation: Installation, tmp_path: Path
) -> None:
    """The kernel entry's reproducer through the tool: OpenClaw stored `SECRET_KEY = '***'`,
    so the tool finds nothing for the secret, while ours answers the hit as written."""
    messages = flat_messages(REDACTION.reproducer.corpus)
    windows = dict.fromkeys((message.session_key, message.session_id) for message in messages)
    corpus = TreeCorpus(tuple(TreeSession(key, (session_id,)) for key, session_id in windows), tuple(messages))
    call = Call("agent:main:main", {"query": REDACTION.reproducer.request.query}, "redaction")
    mode = Mode("redaction", {})
    stores = imported_stores(tmp_path / "ours", corpus)
    try:
        with loaded_adapter(openclaw_installation, tmp_path / "openclaw", corpus, tmp_path, load=True) as client:
            client.call("config.write", {"config": mode.config()})
            theirs = openclaw_answer(client, call.params(False))
        assert theirs.result == {"results": []}, theirs
        for name, backend in stores.backends.items():
            ours = our_answer(backend, call, False, tool_config_from_json(mode.config()))
            assert ours.result is not None, name
            assert [hit["snippet"] for hit in ours.result["results"]] == ["SECRET_KEY = 'abc123'"], name
    finally:
        stores.close()
