"""The unicode61 engine against PostgreSQL on match sets: every difference is explained by
a listed tokenizer difference, or the test fails (issue 30, "Must show").

For random multilingual messages and queries (`tests.parity.strategies`), the match of
each (message, query) pair is computed two ways:
* unicode61 (what the reference and the SQLite backend match): the policy's phrases of
  `unicode61 remove_diacritics 2` tokens, each at consecutive positions of the message's
  tokens, the last phrase's last token a prefix in prefix mode, an empty phrase matching
  nothing (behaviour.md §4);
* PostgreSQL: the server itself, `to_tsvector(<the backend's configuration>, message) @@
  <the compiled query>` (`engine.query.pg_tsquery`).

A pair on which they disagree must be one whose message or query terms the two
tokenizers cut differently; it is classified by the first token where they part
(`LISTED`, each a difference tokenizers.md names). A disagreement on text both cut alike
is unexplained, and fails the test: it would be a bug of the compiled query, not a
tokenizer difference.
"""

from __future__ import annotations

import secrets
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.analysis.profiles import SEARCH_PROFILE
from engine.backends.postgres.schema import CONFIGURATION, migrate
from engine.index.documents import postgres_text
from engine.query.pg_tsquery import COMPOUND_KINDS, compile_terms
from engine.query.user_query import split_terms
from engine.search.postgres_mode import postgres_analyzer
from tests.parity.strategies import PARITY_SETTINGS, Corpus, message_texts, queries

pytestmark = pytest.mark.postgres

UNICODE61 = SEARCH_PROFILE.analyzer()
#: Token kinds of PostgreSQL's parser that unicode61 cuts at their punctuation.
STRUCTURED = frozenset({"pg:url", "pg:host", "pg:email", "pg:file", "pg:url_path",
                        "pg:version", "pg:float", "pg:sfloat", "pg:int", "pg:numhword",
                        "pg:hword_numpart"})
#: The tokenizer differences a disagreement may come from (tokenizers.md §4, §6).
LISTED = {
    "compound": "a hyphenated word is a compound token too, at a position of its own (§4.3)",
    "structured": "URLs, hosts, e-mail addresses, paths, versions and signed numbers are "
                  "one token in PostgreSQL (§4.3)",
    "folding": "unaccent and per-code-point lowercasing fold differently from unicode61's "
               "remove_diacritics 2 and case folding (§4.1, §4.4)",
    "boundaries": "word boundaries differ: character classes, specials that continue a "
                  "word, tags and entities the parser drops (§4.2, §4.3, §6)",
}


def unicode61_tokens(text: str) -> list[str]:
    return UNICODE61.terms(text)


def postgres_tokens(text: str) -> list[tuple[str, str]]:
    """(lexeme, kind) of every token PostgreSQL indexes of `text` as a row stores it,
    compounds included."""
    return [(token.text, token.kind) for token in postgres_analyzer().tokens(postgres_text(text))]


def unicode61_match(text: str, terms: list[str], prefix: bool) -> bool:
    """The FTS5 match of the policy's phrases (module docstring)."""
    tokens = unicode61_tokens(text)
    for index, term in enumerate(terms):
        phrase = unicode61_tokens(term)
        if not phrase:
            return False
        last_is_prefix = prefix and index == len(terms) - 1
        if not any(all((tokens[start + offset].startswith(word)
                        if last_is_prefix and offset == len(phrase) - 1
                        else tokens[start + offset] == word)
                       for offset, word in enumerate(phrase))
                   for start in range(len(tokens) - len(phrase) + 1)):
            return False
    return True


def classify(text: str, terms: list[str]) -> str | None:
    """The listed difference behind a disagreement on `text` and `terms`, or None when
    both tokenizers cut all of them alike (unexplained)."""
    for piece in [text, *terms]:
        theirs = postgres_tokens(piece)
        ours = unicode61_tokens(piece)
        parts = [lexeme for lexeme, kind in theirs if kind not in COMPOUND_KINDS and lexeme]
        if parts == ours and len(parts) == len(theirs):
            continue
        if any(kind in COMPOUND_KINDS for _, kind in theirs):
            return "compound"
        if any(kind in STRUCTURED for _, kind in theirs):
            return "structured"
        if len(parts) == len(ours):
            return "folding"
        return "boundaries"
    return None


@pytest.fixture(scope="module")
def configuration(pg_dsn: str) -> object:
    import psycopg

    connection = psycopg.connect(pg_dsn, autocommit=True)
    schema = f"t{secrets.token_hex(4)}_tokens"
    migrate(connection, schema, "test server", create=True)
    try:
        yield connection, f'"{schema}".{CONFIGURATION}'
    finally:
        connection.execute(f'DROP SCHEMA "{schema}" CASCADE')
        connection.close()


def server_matches(configuration: tuple, pairs: list[tuple[str, str]]) -> list[bool]:
    connection, name = configuration
    rows = connection.execute(
        "SELECT to_tsvector(%s::regconfig, t) @@ q::tsquery FROM unnest(%s::text[], "
        "%s::text[]) WITH ORDINALITY AS u(t, q, i) ORDER BY i",
        (name, [text for text, _ in pairs], [query for _, query in pairs])).fetchall()
    return [row[0] for row in rows]


@st.composite
def batches(draw: st.DrawFn) -> list[tuple[str, str, bool]]:
    texts = draw(st.lists(message_texts(), min_size=20, max_size=20))
    corpus = Corpus((), tuple(texts), ("agent:main:main",), ("w",), ("main",))
    found = []
    for text in texts:
        for _ in range(4):
            query = draw(queries(corpus))
            if split_terms(query):
                found.append((text, query, draw(st.booleans())))
    return found


def test_every_match_difference_is_a_listed_tokenizer_difference(
        configuration: tuple, record_property) -> None:
    tally: Counter[str] = Counter()
    unexplained: list[str] = []

    def run(batch: list[tuple[str, str, bool]]) -> None:
        compiled = []
        for text, query, prefix in batch:
            terms = split_terms(query)
            query_value = compile_terms([postgres_text(term) for term in terms],
                                        postgres_analyzer(), prefix=prefix)
            compiled.append((text, terms, prefix, query_value))
        sent = [(postgres_text(text), value.text()) for text, _, _, value in compiled
                if not value.matches_nothing]
        answers = iter(server_matches(configuration, sent))
        for text, terms, prefix, value in compiled:
            theirs = False if value.matches_nothing else next(answers)
            ours = unicode61_match(text, terms, prefix)
            tally["pairs"] += 1
            tally["matched"] += ours
            if theirs == ours:
                continue
            reason = classify(text, terms)
            if reason is None:
                unexplained.append(f"{text!r} / {terms!r} prefix={prefix}: unicode61 {ours}, "
                                   f"postgres {theirs}")
            else:
                tally[reason] += 1

    settings(PARITY_SETTINGS, suppress_health_check=[
        *PARITY_SETTINGS.suppress_health_check, HealthCheck.large_base_example])(
        given(batches())(run))()
    record_property("tally", dict(tally))
    print("tokenizer differences:", dict(tally))
    assert unexplained == []
    assert tally["matched"] > 100 and set(tally) - {"pairs", "matched"} <= set(LISTED)
