"""The Control UI's command palette search, on the reference and the SQLite backends.

behaviour.md §10 (the palette, message search in prefix mode, title search), §12.2's
prefix cases, §12.5 (a roster of 200+ sessions), and the seed's palette scope: a test per
scope rule, notices with their exact text, the grouping under Sessions and Messages.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.agent_tools.budgets import ReaderGate, TimeBudgets
from engine.agent_tools.palette_scope import palette_scope
from engine.agent_tools.sessions_search import sessions_search
from engine.agent_tools.title_match import TitleQuery
from engine.agent_tools.tool_config import ToolConfig
from engine.agent_tools.ui_search import (
    INDEXING_NOTICE,
    UNAVAILABLE_NOTICE,
    metadata_matches,
    transcript_calls,
    ui_search,
)
from engine.agent_tools.visibility import Requester
from engine.errors import InputError, QueryError, UsageError
from engine.model import SearchRequest, SessionWindow
from engine.store.partitioned import PartitionedStore
from engine.store.registry import open_backend

BACKENDS = ("reference", "sqlite", "postgres")
BASE_TIME = 1_788_000_000_000
ARCHIVED_ONE = ("1 archived transcripts excluded; open a session to restore its searchable "
                "history.")


@pytest.fixture(params=BACKENDS)
def store(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[PartitionedStore]:
    opened = open_backend(tmp_path / "store", backend=request.param, create=True)
    try:
        yield opened
    finally:
        opened.close()


def put(store: PartitionedStore, key: str, *texts: str, session_id: str | None = None,
        minute: int = 0, **window: Any) -> str:
    """One session (one window) with one user message per text; its sessionId."""
    session_id = session_id or key.replace(":", "-")
    with store.transaction() as transaction:
        transaction.put_window(SessionWindow(session_id, key,
                                             created_at=BASE_TIME + minute * 60_000, **window))
        parent = None
        for number, text in enumerate(texts):
            message_id = f"{session_id}-m{number}"
            transaction.append_event(session_id, {
                "type": "message", "id": message_id, "parentId": parent,
                "timestamp": BASE_TIME + minute * 60_000 + number,
                "message": {"role": "user", "content": text}})
            parent = message_id
    return session_id


def keys(entries: list[dict[str, Any]]) -> list[str]:
    return [entry["sessionKey"] for entry in entries]


# ----- message search in prefix mode (§10.2, §12.2) ---------------------------------------

PREFIX_DOCUMENTS = {
    "complete": "Per-session communication controls in UI",
    "missing-word": "Session communication controls in UI",
    "earlier-prefixes": "Periodic sessions communication controls in UI",
    "literal": 'A literal "OR" keyword in the message',
}


@pytest.fixture
def prefix_store(store: PartitionedStore) -> PartitionedStore:
    for minute, (name, text) in enumerate(PREFIX_DOCUMENTS.items()):
        put(store, f"agent:main:{name}", text, minute=minute, title=f"Document {minute}")
    return store


@pytest.mark.parametrize(("query", "expected"), [
    ("per session communi", ["complete"]),
    ("per-session communi", ["complete"]),
    ('literal "OR" key', ["literal"]),
    ("literal OR missing", []),
    ('""', []),
    ("session communi", ["complete", "missing-word"]),
])
def test_message_search_matches_the_final_word_as_a_prefix(
        prefix_store: PartitionedStore, query: str, expected: list[str]) -> None:
    answer = ui_search(prefix_store, query)
    assert answer["sessions"] == []
    assert sorted(keys(answer["messages"])) == sorted(f"agent:main:{name}" for name in expected)


def test_a_lone_quote_is_too_short_to_search(prefix_store: PartitionedStore) -> None:
    assert ui_search(prefix_store, '"')["messages"] == []


def test_the_agent_tool_keeps_exact_words(prefix_store: PartitionedStore) -> None:
    requester = Requester("agent:main:main")
    assert sessions_search(prefix_store, requester, {"query": "per session communi"}) == {
        "results": []}
    assert len(ui_search(prefix_store, "per session communi")["messages"]) == 1


def test_a_messages_entry_is_the_sessions_row_and_its_best_hit(
        prefix_store: PartitionedStore) -> None:
    [entry] = ui_search(prefix_store, "per session communi")["messages"]
    hit = entry.pop("hit")
    assert entry == {"sessionKey": "agent:main:complete", "agentId": "main",
                     "sessionId": "agent-main-complete", "title": "Document 0", "kind": "chat",
                     "group": None, "createdAt": BASE_TIME, "match": "transcript"}
    assert hit["messageId"] == "agent-main-complete-m0" and hit["role"] == "user"
    assert hit["sessionId"] == "agent-main-complete" and hit["timestamp"] == BASE_TIME
    assert "communication" in hit["excerpt"] and hit["score"] > 0


# ----- title search (§10.3, §12.5) ---------------------------------------------------------

TITLE = "Per-session communication controls in UI"


@pytest.fixture
def title_store(store: PartitionedStore) -> PartitionedStore:
    put(store, "agent:main:communication", "nothing to see", title=TITLE)
    put(store, "agent:main:other", "nothing either", title="Periodic sessions communication")
    return store


@pytest.mark.parametrize("query", [
    "per session communi", "per-session communication controls", "PER—SESSION   COMMUNICATION",
])
def test_title_queries_find_the_title(title_store: PartitionedStore, query: str) -> None:
    answer = ui_search(title_store, query)
    assert [(entry["sessionKey"], entry["match"]) for entry in answer["sessions"]] == [
        ("agent:main:communication", "title")]
    assert answer["messages"] == []


@pytest.mark.parametrize("query", ["per session missing", "---", "— … —"])
def test_title_queries_that_find_nothing(title_store: PartitionedStore, query: str) -> None:
    answer = ui_search(title_store, query)
    assert (answer["sessions"], answer["messages"], answer["searched"]) == ([], [], True)


def test_identifiers_keep_literal_matching(title_store: PartitionedStore) -> None:
    assert ui_search(title_store, "agent main communication")["sessions"] == []
    found = ui_search(title_store, "agent:main:communication")["sessions"]
    assert [(entry["sessionKey"], entry["match"]) for entry in found] == [
        ("agent:main:communication", "identifier")]
    by_id = ui_search(title_store, "AGENT-MAIN-COMM")["sessions"]  # its sessionId, any case
    assert keys(by_id) == ["agent:main:communication"]


def test_a_retained_windows_session_id_finds_its_session(store: PartitionedStore) -> None:
    with store.transaction() as transaction:
        transaction.put_window(SessionWindow("old-window-77", "agent:main:k", current=False))
        transaction.put_window(SessionWindow("new-window", "agent:main:k",
                                             previous_session_id="old-window-77"))
    assert keys(ui_search(store, "old-window-77")["sessions"]) == ["agent:main:k"]


def test_title_matches_rank_before_transcript_matches_and_group_by_the_same_rule(
        store: PartitionedStore) -> None:
    put(store, "agent:main:titled", "the deployment went fine", title="Deployment review",
        minute=1)
    put(store, "agent:main:talk", "deployment deployment deployment", title="Chat", minute=2)
    put(store, "agent:main:newer", "unrelated", title="Deploy notes", minute=3)
    answer = ui_search(store, "deploy")
    # newest first among the title matches; the titled session is not repeated below
    assert keys(answer["sessions"]) == ["agent:main:newer", "agent:main:titled"]
    assert keys(answer["messages"]) == ["agent:main:talk"]


def test_one_excerpt_per_session_in_hit_order(store: PartitionedStore) -> None:
    put(store, "agent:main:many", "saffron", "saffron rice", "saffron tea", minute=1)
    put(store, "agent:main:once", "saffron saffron saffron saffron", minute=2)
    answer = ui_search(store, "saffron")
    assert sorted(keys(answer["messages"])) == ["agent:main:many", "agent:main:once"]
    scores = [entry["hit"]["score"] for entry in answer["messages"]]
    assert scores == sorted(scores, reverse=True)


def test_the_excerpt_is_compact(store: PartitionedStore) -> None:
    put(store, "agent:main:long", "saffron\n\n  " + " ".join(["word"] * 200))
    [entry] = ui_search(store, "saffron")["messages"]
    excerpt = entry["hit"]["excerpt"]
    assert "\n" not in excerpt and "  " not in excerpt
    assert len(excerpt) <= 161


# ----- the scope: a test per rule (seed, §10.1) ---------------------------------------------

#: (key, window fields, found) -- each session's title and transcript hold "zebra<n>".
SCOPE_CASES: dict[str, tuple[str, dict[str, Any], bool]] = {
    "chat": ("agent:main:chat", {}, True),
    "configured other agent": ("agent:work:chat", {}, True),
    "unconfigured agent": ("agent:stranger:chat", {}, False),
    "global": ("global", {}, False),
    "unknown": ("unknown", {}, False),
    "subagent by kind": ("agent:main:child:one", {"kind": "subagent",
                                                  "spawned_by": "agent:main:main"}, False),
    "subagent by key": ("agent:main:subagent:run-1", {}, False),
    "acp child by key": ("agent:main:acp:claude:1", {}, False),
    "cron by kind": ("agent:main:jobs", {"kind": "cron"}, False),
    "cron by key": ("agent:main:cron:daily", {}, False),
    "system by kind": ("agent:main:beat", {"kind": "system"}, False),
    "system by key": ("agent:main:system:heartbeat", {}, False),
    "dock by kind": ("agent:main:pad", {"kind": "dock"}, False),
    "dock by key": ("agent:main:dock:notes", {}, False),
    "incognito by key": ("agent:main:dashboard:incognito-x", {}, False),
    "incognito by flag": ("agent:main:secret", {"incognito": True}, False),
    "archived": ("agent:main:cold", {"archived": True}, False),
    "grouped agent-created": ("agent:main:research", {"spawned_by": "agent:main:main",
                                                      "group": "Research"}, True),
    "ungrouped agent-created": ("agent:main:spawned", {"spawned_by": "agent:main:main"}, False),
    "ungrouped child by parent": ("agent:main:kid", {"parent_session_key": "agent:main:main"},
                                  False),
    "grouped subagent run": ("agent:main:subagent:run-2", {"spawned_by": "agent:main:main",
                                                           "group": "Research"}, False),
    "grouped incognito": ("agent:main:dashboard:incognito-y", {"group": "Research"}, False),
    "grouped archived": ("agent:main:cold-grouped", {"archived": True, "group": "Research",
                                                     "spawned_by": "agent:main:main"}, False),
    "grouped cron": ("agent:main:cron:weekly", {"group": "Research"}, False),
    "grouped unconfigured agent": ("agent:stranger:grouped", {"group": "Research",
                                                              "spawned_by": "agent:main:main"},
                                   False),
    "chat in a group": ("agent:main:filed", {"group": "Research"}, True),
}
CONFIGURED = ToolConfig(agents=("main", "work"))


@pytest.fixture(scope="module", params=BACKENDS)
def scope_store(tmp_path_factory: pytest.TempPathFactory,
                request: pytest.FixtureRequest) -> Iterator[PartitionedStore]:
    """One store per backend for every scope case (they only read it)."""
    if request.param == "postgres":
        request.getfixturevalue("pg_dsn")  # the server, or the skip (a failure under CI)
    opened = open_backend(tmp_path_factory.mktemp("scope") / "store", backend=request.param,
                          create=True)
    try:
        for number, (key, window, _) in enumerate(SCOPE_CASES.values()):
            put(opened, key, f"zebra{number} stripes", title=f"Zebra{number} notes",
                minute=number, **window)
        yield opened
    finally:
        opened.close()


@pytest.mark.parametrize("case", list(SCOPE_CASES))
@pytest.mark.parametrize("by", ["title", "transcript"])
def test_each_scope_rule(scope_store: PartitionedStore, case: str, by: str) -> None:
    number = list(SCOPE_CASES).index(case)
    key, _, found = SCOPE_CASES[case]
    query = f"Zebra{number} notes" if by == "title" else f"zebra{number} stripes"
    answer = ui_search(scope_store, query, CONFIGURED)
    group = answer["sessions"] if by == "title" else answer["messages"]
    assert keys(group) == ([key] if found else [])
    if by == "title":  # the title matches, so the session is never under Messages
        assert answer["messages"] == []


def test_without_configured_agents_every_agent_is_in_scope(scope_store: PartitionedStore) -> None:
    number = list(SCOPE_CASES).index("unconfigured agent")
    answer = ui_search(scope_store, f"zebra{number} notes", ToolConfig())
    assert keys(answer["sessions"]) == ["agent:stranger:chat"]
    assert keys(ui_search(scope_store, f"zebra{number} notes", CONFIGURED)["sessions"]) == []


def test_archived_transcripts_are_counted_with_the_palettes_notice(
        scope_store: PartitionedStore) -> None:
    answer = ui_search(scope_store, "zebra stripes", CONFIGURED)
    # "archived" and "grouped archived" pass every other rule; the grouped archived one is
    # agent-created in a group, so it is in scope and counted too
    assert answer["archivedTranscriptsExcluded"] == 2
    assert answer["notices"] == [ARCHIVED_ONE.replace("1 ", "2 ", 1)]


def test_the_archived_count_is_the_kernels_for_the_same_keys(store: PartitionedStore) -> None:
    with store.transaction() as transaction:
        transaction.put_window(SessionWindow("cold-1", "agent:main:recall", current=False,
                                             archived=True))
        transaction.put_window(SessionWindow("warm-1", "agent:main:recall",
                                             previous_session_id="cold-1"))
        transaction.put_window(SessionWindow("cold-2", "agent:main:gone", archived=True))
    scope = palette_scope(store, ToolConfig())
    kernel = store.search(SearchRequest("anything", agent_id="main", session_keys=(
        "agent:main:recall", "agent:main:gone")))
    assert scope.archived_transcripts == kernel.archived_transcripts_excluded == 2
    answer = ui_search(store, "anything")
    assert answer["archivedTranscriptsExcluded"] == 2


def test_a_matching_session_older_than_any_roster_page_is_found(store: PartitionedStore) -> None:
    with store.transaction() as transaction:
        for number in range(250):
            session_id = f"s{number:03d}"
            transaction.put_window(SessionWindow(
                session_id, f"agent:main:chat-{number:03d}", title=f"Chat {number}",
                created_at=BASE_TIME + number * 60_000))
            text = "quasar alignment" if number == 0 else f"ordinary talk {number}"
            transaction.append_event(session_id, {
                "type": "message", "id": f"{session_id}-m", "parentId": None,
                "timestamp": BASE_TIME + number * 60_000,
                "message": {"role": "user", "content": text}})
        transaction.put_window(SessionWindow("oldest-title", "agent:main:ancient",
                                             title="Quasar retrospective", created_at=1))
    scope = palette_scope(store, ToolConfig())
    assert [len(call.request.session_keys or ()) for call in
            transcript_calls(scope.sessions, "quas", 25)] == [200, 51]
    answer = ui_search(store, "quas")
    assert keys(answer["sessions"]) == ["agent:main:ancient"]
    assert keys(answer["messages"]) == ["agent:main:chat-000"]
    assert "truncated" not in answer


# ----- request rules, flags and notices -----------------------------------------------------

@pytest.mark.parametrize("query", ["", " ", "a", "  a  ", "😀", "\u3000x\u3000"])
def test_fewer_than_two_characters_is_not_a_search(title_store: PartitionedStore,
                                                   query: str) -> None:
    answer = ui_search(title_store, query)
    assert answer == {"query": query.strip(" \u3000"), "searched": False, "sessions": [],
                      "messages": [], "notices": []}


def test_two_characters_search(title_store: PartitionedStore) -> None:
    assert keys(ui_search(title_store, "ui")["sessions"]) == ["agent:main:communication"]


@pytest.mark.parametrize("limit", [0, 26, -1, 2.5, True, "3", None])
def test_a_bad_limit_is_refused(title_store: PartitionedStore, limit: Any) -> None:
    with pytest.raises(InputError, match="limit must be an integer from 1 to 25"):
        ui_search(title_store, "per", limit=limit)


def test_a_query_longer_than_4096_units_is_refused(title_store: PartitionedStore) -> None:
    with pytest.raises(QueryError, match="query must not exceed 4096 characters"):
        ui_search(title_store, "x" * 4097)


def test_more_matches_than_the_limit_is_truncated_without_a_notice(
        store: PartitionedStore) -> None:
    for number in range(4):
        put(store, f"agent:main:t{number}", f"nebula talk {number}", title=f"Nebula {number}",
            minute=number)
        put(store, f"agent:main:m{number}", f"nebula again {number}", title="Chat",
            minute=10 + number)
    answer = ui_search(store, "nebula", limit=2)
    assert keys(answer["sessions"]) == ["agent:main:t3", "agent:main:t2"]
    assert len(answer["messages"]) == 2
    assert answer["truncated"] is True and answer["notices"] == []


def test_unconfirmed_completeness_has_the_indexing_notice(store: PartitionedStore) -> None:
    put(store, "agent:main:k", "alpha first", "alpha second")
    with store.transaction() as transaction:  # a leaf move: the window needs a rebuild
        transaction.append_event("agent-main-k", {
            "type": "leaf", "id": "leaf-1", "parentId": "agent-main-k-m0",
            "targetId": "agent-main-k-m0"})
    answer = ui_search(store, "alpha")
    assert answer["indexing"] is True
    assert answer["notices"] == [INDEXING_NOTICE]


def test_a_failed_transcript_search_keeps_the_titles(title_store: PartitionedStore) -> None:
    gate = ReaderGate()
    assert gate.admit(0)  # another reader holds the only slot: admission times out
    try:
        answer = ui_search(title_store, "per session communi", gate=gate,
                           budgets=TimeBudgets(reader_seconds=0.05))
    finally:
        gate.release()
    assert keys(answer["sessions"]) == ["agent:main:communication"]
    assert answer["messages"] == []
    assert answer["transcriptSearchUnavailable"] is True
    assert answer["notices"] == [UNAVAILABLE_NOTICE]


def test_the_notice_texts_are_the_palettes() -> None:
    assert INDEXING_NOTICE == "Indexing older messages — search again shortly."
    assert UNAVAILABLE_NOTICE == "Transcript search unavailable — showing chat titles and metadata"


def test_metadata_order_is_titles_first_then_newest_then_key(store: PartitionedStore) -> None:
    put(store, "agent:main:b", title="Orbit b", minute=5)
    put(store, "agent:main:a", title="Orbit a", minute=5)
    put(store, "agent:main:c", title="Orbit c", minute=9)
    put(store, "agent:main:orbit-log", title="Flight log", minute=20)  # by its key only
    with store.transaction() as transaction:
        transaction.put_window(SessionWindow("undated", "agent:main:0", title="Orbit undated"))
    scope = palette_scope(store, ToolConfig())
    assert [(session.entry.key, how) for session, how in metadata_matches(
        scope, TitleQuery.parse("orbit"))] == [
        ("agent:main:c", "title"), ("agent:main:a", "title"), ("agent:main:b", "title"),
        ("agent:main:0", "title"), ("agent:main:orbit-log", "identifier")]


class SearchOnly:
    """A store that can search but cannot list its sessions (no TranscriptReader)."""

    name = "search-only"

    def search(self, request: SearchRequest) -> object:
        raise AssertionError("never reached")


def test_a_store_that_cannot_list_its_sessions_is_refused() -> None:
    with pytest.raises(UsageError, match="ui.search needs a backend with TranscriptReader"):
        ui_search(SearchOnly(), "per session")  # type: ignore[arg-type]
