"""The table of known, explained differences the parity tests tolerate (ideally empty).

Owns: `KNOWN_DIVERGENCES`, the `Divergence` entry type and `recognised`, which the
differential tests call before comparing one request. Must not touch: engine code, the
strategies, the comparisons themselves.

Rules for an entry:
* it names a REAL difference that the parity test files cannot fix (an engine issue for
  its owner, or an upstream behaviour the reference deliberately does not copy);
* `recognises(case)` is a narrow predicate over the inputs (corpus, request), never over
  the outputs, so it cannot hide an unrelated failure;
* `applies_to` names the tests that consult it; each of those tests asserts, at the end of
  its hypothesis run, that every entry applying to it fired at least once, and
  `test_every_known_divergence_still_reproduces` runs each entry's `reproducer` and
  requires the difference to still be there, so an entry goes stale loudly once the
  engine is fixed (the entry's reproducer also runs as an explicit hypothesis example, so
  "fired" never depends on luck).

`HISTORY_DIVERGENCES` are the differences of OpenClaw's `sessions_history` answers
(`tests/oracles/test_openclaw_history.py`): each names the part of an answer it takes
out, and the test requires that the raw answers really differ there whenever it fires,
and that each entry fired.

The `OPENCLAW` entries are differences from the real OpenClaw 2026.9.6 npm package
(`tests/oracles/test_openclaw_search.py`, which runs their reproducers on OpenClaw and on
both backends and checks that each still differs, and that each fired on its generated
corpus). Where the npm version predates the seed document, the seed wins and the entry
says so. The `OPENCLAW_TOOL` entries are differences of the `sessions_search` agent tool
(`tests/oracles/test_openclaw_sessions_search_tool.py`, same rules; a tool entry's
`reproducer` is one call on that test's generated corpus, and its predicate reads the call
and the corpus's sessions and links). The kernel's `OPENCLAW` entries apply to the tool's
calls too (its searches go through that kernel).

Entries removed once the engine was fixed (their reproducers stay as regression tests in
`test_backend_differential.py`): `sqlite-query-lone-surrogate` (d9ea26e),
`snippet-text-with-nul` and `recent-ties-after-reconcile` (324c07f),
`openclaw-per-agent-statistics` once stores kept one partition per agent (issue 11 item 1:
the multi-agent store now agrees with OpenClaw exactly; its reproducer stays as the test
`test_per_agent_statistics_reproducer_agrees_with_openclaw`), and the tool entry
entries `ours-blank-session-key-is-not-absent`, `ours-resolves-retained-window-ids`,
`ours-does-not-resolve-keys-with-capitals`, `ours-gives-unscoped-targets-to-main`,
`ours-resolves-any-session-id-under-sandbox` and
`ours-ignores-parent-only-children-under-sandbox` once the tool agreed with OpenClaw on
them (docs/openclaw-sessions-search-findings.md section 9; the oracle's calls keep every case).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from engine.model import SearchRequest
from engine.query.cjk import contains_cjk
from tests.oracles.session_tree_corpus import TreeSession
from tests.parity.strategies import Corpus

#: The tests that read this table.
BACKEND_DIFFERENTIAL = "backend_differential"
UPSTREAM_SQL = "upstream_sql"
OPENCLAW = "openclaw"
OPENCLAW_TOOL = "openclaw_tool"


@dataclass(frozen=True, slots=True)
class DivergenceCase:
    """The inputs of one compared request.

    `reconciled`: the request runs right after a `reconcile()` (False before the first one,
    and after appends that follow a reconcile)."""

    corpus: Corpus
    request: SearchRequest
    reconciled: bool
    #: The messages, `(session id, message id)`, that the other side stored with other
    #: text than it was given (OpenClaw's storage redaction, read back from its
    #: databases); None when unknown (a reproducer checked on its own).
    rewritten: frozenset[tuple[str, str]] | None = None


@dataclass(frozen=True, slots=True)
class Divergence:
    """One known difference: what it is, why it is tolerated, and how to recognise it."""

    id: str
    description: str
    reason: str
    applies_to: frozenset[str]
    recognises: Callable[[DivergenceCase], bool]
    #: A minimal case that shows the difference (checked to still differ).
    reproducer: DivergenceCase


def single_message_case(text: str, query: str) -> DivergenceCase:
    """One window `w` of `agent:main:main` holding one user message `m1`; one request."""
    from engine.model import SessionWindow
    from tests.parity.strategies import AppendEvent, PutWindow, corpus_of

    corpus = corpus_of([[
        PutWindow(SessionWindow("w", "agent:main:main")),
        AppendEvent("w", {"type": "message", "id": "m1", "parentId": None, "timestamp": 1,
                          "message": {"role": "user", "content": text}}, 1.0),
    ]])
    return DivergenceCase(corpus, SearchRequest(query, agent_id="main"), reconciled=False)


# ---- OpenClaw 2026.9.6 (the npm package as an oracle) -------------------------------------

#: What counts as a credential-looking line: an assignment to a name ending in `_key` or
#: holding secret, token or password (`SECRET_KEY = '...'`, `password: ...`, but not
#: `key=value`); a bearer token; a vendor key prefix (`sk-...`). OpenClaw's storage
#: redaction rewrites (at least) these.
CREDENTIAL_LOOKING = re.compile(
    r"(?i)\b[\w.-]*(?:_key|secret|token|passw(?:or)?d)\s*[:=]"
    r"|\bbearer\s+\S|\b(?:sk|ghp|xox[abp])[-_][A-Za-z0-9]")
_WORD_RUN = re.compile(r"[^\W_]+")


def _scoped_messages(case: DivergenceCase) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(session key, session id, event) of each message event with string content that
    the request's scope covers (key, window, role), on the corpus as written (every event
    ever appended; a narrow, input-only view)."""
    request = case.request
    keys: dict[str, str] = {}
    for transaction in case.corpus.transactions:
        for operation in transaction:
            window = getattr(operation, "window", None)
            if window is not None:
                keys[window.session_id] = window.session_key
                continue
            event = getattr(operation, "event", None)
            message = event.get("message") if isinstance(event, dict) else None
            if not isinstance(message, dict) or not isinstance(message.get("content"), str):
                continue
            key = keys.get(operation.session_id, "")
            if request.session_keys is None:
                in_scope = key.startswith(f"agent:{request.agent_id}:") or key in ("global", "unknown")
            else:
                in_scope = not request.session_keys or key in request.session_keys
            if in_scope and request.session_id in (None, operation.session_id) \
                    and request.role in (None, message.get("role")):
                yield key, operation.session_id, event


def messages_in_scope(case: DivergenceCase) -> list[tuple[str, str]]:
    """The (session key, text) of each message event the request's scope covers."""
    return [(key, event["message"]["content"]) for key, _, event in _scoped_messages(case)]


def message_ids_in_scope(case: DivergenceCase) -> list[tuple[str, str]]:
    """The (session id, message id) of each message event the request's scope covers."""
    return [(session_id, str(event.get("id"))) for _, session_id, event in _scoped_messages(case)]


def _texts_in_scope(case: DivergenceCase) -> list[str]:
    return [text for _, text in messages_in_scope(case)]


def _rewritten_in_scope(case: DivergenceCase) -> bool:
    """Whether a message the request's scope covers was stored rewritten by OpenClaw:
    what it stored, when the case knows it; else (a reproducer on its own) whether a
    message looks like a credential (`CREDENTIAL_LOOKING`)."""
    if case.rewritten is None:
        return any(CREDENTIAL_LOOKING.search(text) for text in _texts_in_scope(case))
    return bool(case.rewritten) and any(
        identity in case.rewritten for identity in message_ids_in_scope(case))


def _prefix_request(case: DivergenceCase) -> bool:
    return case.request.match == "prefix"


def _cjk_term_inside_longer_runs_only(case: DivergenceCase) -> bool:
    """A message in scope holds every CJK query term as a substring, but some term is no
    message's whole word: upstream's word search cannot find it, the seed's retry can."""
    terms = [term for term in case.request.query.split() if contains_cjk(term)]
    texts = _texts_in_scope(case)
    if not terms or not any(all(term in text for term in terms) for text in texts):
        return False
    words = {word for text in texts for word in _WORD_RUN.findall(text)}
    return any(term not in words for term in terms)


def _user_messages_case(windows: dict[tuple[str, str], list[str]], request: SearchRequest) -> DivergenceCase:
    """One window per (session id, key), holding user messages with ids `<window>-<n>` and
    timestamps 1, 2, ... in order; one request."""
    from engine.model import SessionWindow
    from tests.parity.strategies import AppendEvent, PutWindow, corpus_of

    operations: list[PutWindow | AppendEvent] = []
    clock = 0
    for (session_id, session_key), texts in windows.items():
        operations.append(PutWindow(SessionWindow(session_id, session_key)))
        for number, text in enumerate(texts):
            clock += 1
            operations.append(AppendEvent(session_id, {
                "type": "message", "id": f"{session_id}-{number}", "parentId": None,
                "timestamp": clock, "message": {"role": "user", "content": text}}, float(clock)))
    return DivergenceCase(corpus_of([operations]), request, reconciled=True)


OPENCLAW_DIVERGENCES: tuple[Divergence, ...] = (
    Divergence(
        id="openclaw-redacts-credentials",
        description="OpenClaw rewrites credential-looking text before storage "
                    "(`SECRET_KEY = '***'`): the secret is not found, its snippet differs, and "
                    "the shorter text shifts bm25 for every hit of that agent database; it "
                    "excuses a request only when a message in its scope was stored rewritten "
                    "(the adapter reads OpenClaw's databases back after loading)",
        reason="the npm version predates the seed, which says excerpts preserve transcript "
               "text, including credentials: the seed wins",
        applies_to=frozenset({OPENCLAW}),
        recognises=_rewritten_in_scope,
        reproducer=single_message_case("SECRET_KEY = 'abc123'", "abc123"),
    ),
    Divergence(
        id="openclaw-no-prefix-mode",
        description="`match: \"prefix\"` is answered as an exact search (`deploy` does not "
                    "find `deployment`)",
        reason="the npm version predates the seed: its kernel quotes every word and has no "
               "match parameter; the seed (and the Control UI) define the prefix mode: the "
               "seed wins",
        applies_to=frozenset({OPENCLAW}),
        recognises=_prefix_request,
        reproducer=replace(single_message_case("deployment finished", "deploy"),
                           request=SearchRequest("deploy", agent_id="main", match="prefix")),
    ),
    Divergence(
        id="openclaw-no-cjk-retry",
        description="a CJK term found only inside a longer CJK run (`会议` in "
                    "`明天下午三点开项目评审会议讨论排期`) has no hits upstream",
        reason="the npm version predates the seed: `unicode61` keeps a CJK run as one token "
               "and 2026.9.6 has no substring retry (PR #143127 is open); the seed retries "
               "CJK terms as literal substrings: the seed wins",
        applies_to=frozenset({OPENCLAW}),
        recognises=_cjk_term_inside_longer_runs_only,
        reproducer=single_message_case("明天下午三点开项目评审会议讨论排期", "会议"),
    ),
)

#: The backend differential and upstream-SQL tests have no entries: every difference they
#: found so far was fixed in the engine (lone-surrogate queries, NUL excerpts, reconcile
#: order, lone-surrogate CJK needles); their reproducers stand as regression tests in the
#: test modules. The OpenClaw entries describe the npm package, not an engine bug.
KNOWN_DIVERGENCES: tuple[Divergence, ...] = OPENCLAW_DIVERGENCES


def recognised(test: str, case: DivergenceCase) -> list[Divergence]:
    """The entries applying to `test` whose predicate recognises `case`."""
    return [entry for entry in KNOWN_DIVERGENCES if test in entry.applies_to and entry.recognises(case)]


# ---- OpenClaw 2026.9.6: sessions_history (tests/oracles/test_openclaw_history.py) --------

#: The `__openclaw` members of a shown message that both sides send.
SHARED_MESSAGE_METADATA = ("id", "seq")


@dataclass(frozen=True, slots=True)
class HistoryDivergence:
    """One known difference of a `sessions_history` answer from OpenClaw's.

    `recognises(params)` is a predicate over the request's params only; `normalise(ours,
    theirs)` returns both answers with the difference taken out (and nothing else), and
    `present(ours, theirs)` says whether the raw answers really show it, so an entry that
    stops describing OpenClaw goes stale loudly. Entries apply in table order.
    """

    id: str
    description: str
    reason: str
    recognises: Callable[[dict[str, Any]], bool]
    normalise: Callable[[dict[str, Any], dict[str, Any]], tuple[dict[str, Any], dict[str, Any]]]
    present: Callable[[dict[str, Any], dict[str, Any]], bool]


def _anchored(params: dict[str, Any]) -> bool:
    return params.get("messageId") is not None


def _without_anchored_total(ours: dict[str, Any], theirs: dict[str, Any]):
    return {name: value for name, value in ours.items() if name != "totalMessages"}, theirs


def _anchored_total_present(ours: dict[str, Any], theirs: dict[str, Any]) -> bool:
    return "totalMessages" in ours and "totalMessages" not in theirs


def _has_messages(params: dict[str, Any]) -> bool:
    del params
    return True


def _shared_metadata_only(message: Any) -> Any:
    if not isinstance(message, dict) or not isinstance(message.get("__openclaw"), dict):
        return message
    metadata = {name: value for name, value in message["__openclaw"].items()
                if name in SHARED_MESSAGE_METADATA}
    return {**message, "__openclaw": metadata}


def _without_extra_metadata(ours: dict[str, Any], theirs: dict[str, Any]):
    """Their messages with only the shared metadata, and their `bytes` less what the
    extra metadata weighed (so the byte counts still have to agree)."""
    from engine.analysis.js_json import js_json_bytes as json_bytes

    if "messages" not in theirs:
        return ours, theirs
    trimmed = [_shared_metadata_only(message) for message in theirs["messages"]]
    extra = sum(json_bytes(message) for message in theirs["messages"]) - sum(
        json_bytes(message) for message in trimmed)
    adjusted = {**theirs, "messages": trimmed}
    if isinstance(theirs.get("bytes"), int):
        adjusted["bytes"] = theirs["bytes"] - extra
    return ours, adjusted


def _extra_metadata_present(ours: dict[str, Any], theirs: dict[str, Any]) -> bool:
    return any(isinstance(message, dict) and set(message.get("__openclaw", {}))
               - set(SHARED_MESSAGE_METADATA) for message in theirs.get("messages", []))


def _offset_with_anchor(params: dict[str, Any]) -> bool:
    return params.get("offset") is not None and params.get("messageId") is not None


def _rejection_for_their_page(ours: dict[str, Any], theirs: dict[str, Any]):
    return theirs, theirs


def _offset_rejected_upstream_dropped(ours: dict[str, Any], theirs: dict[str, Any]) -> bool:
    return (ours == {"error": "offset and messageId cannot be used together"}
            and "messages" in theirs)


HISTORY_DIVERGENCES: tuple[HistoryDivergence, ...] = (
    HistoryDivergence(
        id="openclaw-history-anchored-total",
        description="an anchored read (`messageId`) answers without `totalMessages` upstream; "
                    "the engine sends the rows of the view or interval it read",
        reason="behaviour.md §9.4 says anchored responses expose totalMessages (and no "
               "cursor); the 2026.9.6 Gateway returns no pagination for an anchor, so its "
               "tool has none to pass on. The specification is followed",
        recognises=_anchored,
        normalise=_without_anchored_total,
        present=_anchored_total_present,
    ),
    HistoryDivergence(
        id="openclaw-history-message-metadata",
        description="each shown message's `__openclaw` also carries `recordTimestampMs` and "
                    "`transcriptPosition` (`{source, rawSeq}`) upstream, so `bytes` is larger "
                    "by exactly their size",
        reason="`transcriptPosition.source` is a digest of OpenClaw's database path, agent, "
               "window and rewrite generation: nothing a reader of this store can reproduce; "
               "the engine sends `id` and `seq`, the members pages, anchors and cursors use. "
               "Where the 80 KiB cap binds, the larger upstream messages can fit one fewer "
               "(the generated corpora stay below it)",
        recognises=_has_messages,
        normalise=_without_extra_metadata,
        present=_extra_metadata_present,
    ),
    HistoryDivergence(
        id="openclaw-history-offset-with-anchor",
        description="`offset` with `messageId`: upstream's tool drops the offset and answers "
                    "the anchored page; the engine refuses the request with `offset and "
                    "messageId cannot be used together`",
        reason="behaviour.md Precedence: the seed says to omit offset with an anchor, and the "
               "Gateway already refuses the pair; the tool refuses it too (the seed wins)",
        recognises=_offset_with_anchor,
        normalise=_rejection_for_their_page,
        present=_offset_rejected_upstream_dropped,
    ),
)


# ---- OpenClaw 2026.9.6's `sessions_search` tool --------------------------------------------


@dataclass(frozen=True, slots=True)
class ToolCase:
    """One `sessions_search` call: who asks, sandboxed or not, under which `openclaw.json`,
    with which arguments."""

    requester: str
    arguments: Mapping[str, Any]
    sandboxed: bool = False
    config: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ToolDivergence:
    """A known difference of the tool: as `Divergence`, over a call and the corpus's sessions."""

    id: str
    description: str
    reason: str
    recognises: Callable[[ToolCase, Sequence[TreeSession]], bool]
    #: A call on the tool test's generated corpus that shows the difference.
    reproducer: ToolCase


def _blank_query(case: ToolCase, sessions: Sequence[TreeSession]) -> bool:
    query = case.arguments.get("query")
    return not isinstance(query, str) or not query.strip()


OPENCLAW_TOOL_DIVERGENCES: tuple[ToolDivergence, ...] = (
    ToolDivergence(
        id="openclaw-tool-empty-query-message",
        description="a blank or missing query: OpenClaw throws `query must not be empty`, we "
                    "throw `query must not be empty; retry with non-empty keywords to match in "
                    "past session text`",
        reason="the npm version predates the spec's message (behaviour.md section 3.2, kept for "
               "providers that strip the schema pattern): the spec wins",
        recognises=_blank_query,
        reproducer=ToolCase("agent:main:main", {"query": "   "}),
    ),
)


def recognised_tool_call(case: ToolCase, sessions: Sequence[TreeSession]) -> list[ToolDivergence]:
    """The tool entries whose predicate recognises one call on a corpus of `sessions`."""
    return [entry for entry in OPENCLAW_TOOL_DIVERGENCES if entry.recognises(case, sessions)]


def _unscoped_name(params: dict[str, Any]) -> bool:
    name = params.get("sessionKey")
    return isinstance(name, str) and name.strip() in ("global", "unknown")


def _their_owner_refusal(ours: dict[str, Any], theirs: dict[str, Any]) -> bool:
    return "has no explicit owner" in theirs.get("error", "") and "error" not in ours


#: The differences of `sessions_history` under `agents.ownership: explicit` with several
#: agents and none marked default (`tests/oracles/test_openclaw_history_targets.py`, its
#: own adapter): each must fire there, and only where the raw answers differ.
OWNERSHIP_DIVERGENCES: tuple[HistoryDivergence, ...] = (
    HistoryDivergence(
        id="openclaw-history-no-default-owner",
        description="with explicit ownership and no default agent, OpenClaw 2026.9.6 refuses "
                    "some unscoped names (`global`, `unknown`): `Multiple agents are "
                    "configured, but session agent resolution has no explicit owner. ...`; "
                    "which requesters it refuses changed from run to run on one corpus (the "
                    "default agent's in some runs, the other agents' in others)",
        reason="OpenClaw picks the owner of an unscoped row from what its agent databases "
               "record at the time (`resolveSessionAgentId`, `persistedStoreOwner`), in an "
               "order this engine cannot reproduce; the engine's store has one owner for "
               "every unscoped key (the default agent, behaviour.md §5.4), so it answers "
               "every such name as with a default agent configured",
        recognises=_unscoped_name,
        normalise=_rejection_for_their_page,
        present=_their_owner_refusal,
    ),
)
