"""The oracle's generated corpus: deterministic, as varied as it claims, and described
faithfully by the parity `Corpus` the known-divergence predicates read. No OpenClaw needed."""

from __future__ import annotations

import doctest
from collections import Counter
from pathlib import Path

import pytest

from engine.ingest.into_store import import_into_store
from engine.model import SearchRequest
from engine.store.registry import open_backend
from tests.oracles import chat_corpus
from tests.oracles.answers import (
    Outcome,
    exact_differences,
    statistics_free_differences,
)
from tests.oracles.chat_corpus import (
    CREDENTIAL_LINES,
    flat_corpus,
    flat_messages,
    generate_messages,
    generate_queries,
    write_flat_file,
)
from tests.oracles.openclaw import installation
from tests.parity.known_divergences import (
    OPENCLAW_DIVERGENCES,
    DivergenceCase,
    single_message_case,
)
from tests.parity.strategies import load_corpus

AGENTS = ("main", "ops", "vault")


@pytest.fixture(scope="module")
def messages() -> list[chat_corpus.FlatMessage]:
    return generate_messages(7, AGENTS, credential_agent="vault", upper_case_agent="vault")


def test_a_seed_fixes_every_message_and_query(messages: list[chat_corpus.FlatMessage]) -> None:
    again = generate_messages(7, AGENTS, credential_agent="vault", upper_case_agent="vault")
    assert again == messages
    assert generate_queries(again, 8) == generate_queries(messages, 8)
    assert generate_messages(9, AGENTS) != messages


def test_the_corpus_holds_what_the_oracle_needs(messages: list[chat_corpus.FlatMessage]) -> None:
    texts = "\n".join(message.text for message in messages)
    windows_per_key = Counter(key for key, _ in {(m.session_key, m.session_id) for m in messages})
    assert {message.agent_id for message in messages} == set(AGENTS)
    assert max(windows_per_key.values()) > 1  # resets: older windows stay retained
    assert {key for key in windows_per_key if key != key.lower()} == {"agent:vault:webchat:Ana"}
    assert any(char in texts for char in "éèçöüñ") and "ς" in texts
    assert any("\u4e00" <= char <= "\u9fff" for char in texts)
    assert any(not message.text.strip() for message in messages)
    assert any(len(message.text.split()) > 48 for message in messages)
    assert all(line in texts for line in CREDENTIAL_LINES)
    assert not any(line in message.text for message in messages if message.agent_id != "vault"
                   for line in CREDENTIAL_LINES)
    kinds = {query.kind for query in generate_queries(messages, 8)}
    assert kinds >= {"common", "rare", "two words", "folded", "greek", "cjk whole token",
                     "cjk inside a run", "prefix", "absent", "blank", "credential"}


def test_the_parity_corpus_writes_what_the_flat_import_writes(
    messages: list[chat_corpus.FlatMessage], tmp_path: Path
) -> None:
    corpus = flat_corpus(messages)
    assert flat_messages(corpus) == messages
    imported = tmp_path / "imported"
    import_into_store(imported, "reference", [write_flat_file(messages, tmp_path / "m.jsonl")])
    replayed = open_backend(tmp_path / "replayed", backend="reference", create=True)
    load_corpus(replayed, corpus)
    replayed.reconcile()
    from_import = open_backend(imported)
    try:
        assert sorted(from_import.windows(), key=repr) == sorted(replayed.windows(), key=repr)
        for query in generate_queries(messages, 8)[:12]:
            if query.kind == "blank":
                continue
            request = SearchRequest(query.text, session_keys=(), limit=25)
            assert from_import.search(request) == replayed.search(request), query
    finally:
        from_import.close()
        replayed.close()


def test_the_redaction_entry_excuses_only_what_openclaw_stored_rewritten() -> None:
    """Issue 27: the credential-redaction divergence once recognised any message a local
    pattern flagged, so ordinary prose ("the standard bearer") excused every difference of
    its agent. Given what OpenClaw stored (`rewritten`, read back by the adapter), it
    recognises a request only when a message in its scope was really rewritten."""
    (redaction,) = [entry for entry in OPENCLAW_DIVERGENCES
                    if entry.id == "openclaw-redacts-credentials"]
    secret = single_message_case("SECRET_KEY = 'abc123'", "abc123")
    prose = single_message_case("the standard bearer of the team", "bearer")
    assert redaction.recognises(secret)  # a reproducer on its own: the pattern
    assert not redaction.recognises(DivergenceCase(secret.corpus, secret.request, True,
                                                   rewritten=frozenset()))
    assert redaction.recognises(DivergenceCase(secret.corpus, secret.request, True,
                                               rewritten=frozenset({("w", "m1")})))
    assert not redaction.recognises(DivergenceCase(prose.corpus, prose.request, True,
                                                   rewritten=frozenset({("other", "m1")})))


def test_each_openclaw_reproducer_is_a_flat_corpus() -> None:
    for entry in OPENCLAW_DIVERGENCES:
        assert flat_messages(entry.reproducer.corpus), entry.id


def test_result_comparisons_allow_only_what_each_check_allows() -> None:
    hit = {"sessionKey": "agent:main:main", "sessionId": "w", "messageId": "m1", "role": "user",
           "timestamp": 5, "snippet": "saffron", "score": 1.25}
    other = {**hit, "messageId": "m2", "score": 0.5}

    def answer(*hits: dict, truncated: bool = False) -> Outcome:
        return Outcome(result={"hits": list(hits), "truncated": truncated, "indexing": False})

    assert exact_differences(answer(hit, other), answer(hit, other)) == []
    nearly = {**hit, "score": 1.25 * (1 + 1e-12)}
    assert exact_differences(answer(hit), answer(nearly)) == []
    off = {**hit, "score": 1.25 * (1 + 1e-6)}
    assert exact_differences(answer(hit), answer(off)) == ["hit 0 score: openclaw 1.25 vs ours 1.25000125"]
    assert statistics_free_differences(answer(hit), answer(off)) == []
    swapped = answer({**other, "score": 2.0}, hit)
    assert exact_differences(answer(hit, other), swapped) != []
    assert statistics_free_differences(answer(hit, other), swapped) == []
    assert statistics_free_differences(answer(hit), answer({**hit, "snippet": "***"})) != []
    assert statistics_free_differences(answer(hit, truncated=True), answer(hit)) == [
        "truncated: openclaw True vs ours False"]
    error = Outcome(error=(-32602, "query must not be empty"))
    assert exact_differences(error, error) == [] and exact_differences(error, answer()) != []


@pytest.mark.parametrize("module", [chat_corpus, installation], ids=lambda module: module.__name__)
def test_module_examples(module: object) -> None:
    results = doctest.testmod(module)  # type: ignore[arg-type]
    assert results.failed == 0 and results.attempted > 0
