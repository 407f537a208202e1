"""The product's query policy compiled to a PostgreSQL tsquery (the postgres backend's, and
the reference engine's prediction of it).

Owns: turning the policy's terms (behaviour.md §4: one phrase per whitespace-separated
term, ANDed; prefix on the final token of the final term) into a tsquery over the
PostgreSQL backend's lexemes (`PgPhrase`, `PgQuery`), its text form (what the backend
sends, cast to `tsquery` so that the server does not analyze it again), the operands in
the order PostgreSQL stores them (what `ts_rank` reads: `engine.score.ts_rank`), and the
phrase instances of a compiled query in a row's tokens (what the excerpt is cut around).
Must not touch: tokenization (the analyzer is the `pg` profile of
`engine.analysis.profiles.POSTGRES_PROFILE`, handed in), SQL, ranking, excerpts.

Why not PostgreSQL's own query functions (tokenizers.md §4.6;
../shared/spec/postgres/fts-facts.md §2):
* a term with no lexemes (`-`) silently drops out of `phraseto_tsquery(a) &&
  phraseto_tsquery(b)`, so `deploy - fix` would match `deploy the fix`; the policy says
  such a query matches nothing: `PgQuery.matches_nothing`, and the backend sends nothing;
* `phraseto_tsquery('per-session')` keeps the compound lexeme (`'per-session' <-> 'per' <->
  'session'`) and so misses `per session`; here a term's compound tokens (`asciihword`,
  `hword`, `numhword`: a hyphenated word as a whole, which the parser gives before its
  parts) are left out, and the parts keep their distances: `per-session` is `'per' <->
  'session'`, which matches both `per-session` (parts at 2, 3) and `per session`; `x,per-session`
  is `'x' <2> 'per' <-> 'session'`, which matches the same text (the compound takes a
  position between `x` and `per`);
* `'a b':*` puts the prefix on every part; the policy's prefix is on the final token of the
  final term only: `'per' <-> 'session':*`.

Each operand is a lexeme the backend's analysis produced (lowercased, unaccented per
token), quoted as `engine.analysis.pg_query.quote_operand` does. The tree is the terms'
phrases joined by `&` in term order: `(p1 & p2) & p3`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from engine.analysis.pg_query import And, Follows, Node, Operand, TsQuery, tsquery_text
from engine.analysis.token import Analyzer, Token

#: The parser's compound token types (a hyphenated word as a whole), left out of a term.
COMPOUND_KINDS = frozenset({"pg:asciihword", "pg:hword", "pg:numhword"})


@dataclass(frozen=True, slots=True)
class PgPhrase:
    """One term's operands: `(offset from the first, lexeme)`, offsets increasing; with
    `prefix`, the last operand matches every lexeme it starts. Empty: matches nothing."""

    operands: tuple[tuple[int, str], ...]
    prefix: bool = False

    @property
    def width(self) -> int:
        """Positions from the first operand to the last, inclusive (0 when empty)."""
        return self.operands[-1][0] + 1 if self.operands else 0

    def tree(self) -> Node:
        """`a <N> b <M> c ...` (left-nested, `<->` for a distance of 1)."""
        node: Node | None = None
        previous = 0
        last = len(self.operands) - 1
        for index, (offset, lexeme) in enumerate(self.operands):
            operand = Operand(lexeme, prefix=self.prefix and index == last)
            node = operand if node is None else Follows(node, operand, offset - previous)
            previous = offset
        assert node is not None
        return node


@dataclass(frozen=True, slots=True)
class PgQuery:
    """Every phrase of one query (ANDed), and the CJK retry's substrings (§7.1)."""

    phrases: tuple[PgPhrase, ...]
    substrings: tuple[str, ...] = ()
    matches_nothing: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        nothing = (not self.phrases and not self.substrings) or any(
            not phrase.operands for phrase in self.phrases)
        object.__setattr__(self, "matches_nothing", nothing)

    def tree(self) -> TsQuery:
        """The tsquery tree of the phrases (None without phrases or when one is empty)."""
        if self.matches_nothing or not self.phrases:
            return None
        node = self.phrases[0].tree()
        for phrase in self.phrases[1:]:
            node = And(node, phrase.tree())
        return node

    def text(self) -> str:
        """The tsquery as PostgreSQL prints it (`''` when there is none).

        >>> from engine.analysis.profiles import POSTGRES_PROFILE
        >>> analyzer = POSTGRES_PROFILE.analyzer()
        >>> compile_terms(["per-session", "Café"], analyzer, prefix=True).text()
        "'per' <-> 'session' & 'cafe':*"
        >>> compile_terms(["x,per-session", "-"], analyzer, prefix=False).matches_nothing
        True
        >>> compile_terms(["x,per-session"], analyzer, prefix=False).text()
        "'x' <2> 'per' <-> 'session'"
        """
        return tsquery_text(self.tree())


def compile_term(term: str, analyzer: Analyzer, *, prefix: bool) -> PgPhrase:
    """One term's phrase: its tokens but the compounds (and a token unaccent emptied,
    which PostgreSQL keeps as a stop word's position), at their distances."""
    tokens = [token for token in analyzer.tokens(term)
              if token.kind not in COMPOUND_KINDS and token.text]
    if not tokens:
        return PgPhrase(())
    first = tokens[0].position
    return PgPhrase(tuple((token.position - first, token.text) for token in tokens), prefix)


def compile_terms(terms: Sequence[str], analyzer: Analyzer, *, prefix: bool) -> PgQuery:
    """The query of a term list (`prefix`: the final term's final token is a prefix)."""
    last = len(terms) - 1
    return PgQuery(tuple(compile_term(term, analyzer, prefix=prefix and index == last)
                         for index, term in enumerate(terms)))


def stored_operands(node: TsQuery) -> list[Operand]:
    """The operands of a tsquery in the order PostgreSQL stores them (its items are in
    prefix order with each operator's right argument first: `a & b` is `&, b, a`).

    >>> [operand.lexeme for operand in stored_operands(And(And(Operand("a"), Operand("b")),
    ...                                                    Operand("c")))]
    ['c', 'b', 'a']
    """
    if node is None:
        return []
    if isinstance(node, Operand):
        return [node]
    if isinstance(node, (And, Follows)):
        return stored_operands(node.right) + stored_operands(node.left)
    raise TypeError(f"no {type(node).__name__} in a compiled query")


def _operand_at(token: Token, lexeme: str, prefix: bool) -> bool:
    return token.text.startswith(lexeme) if prefix else token.text == lexeme


def phrase_instances(tokens: Sequence[Token], query: PgQuery) -> list[tuple[int, int, int]]:
    """`(phrase index, start, length)` of every instance of every phrase in a row's tokens
    (indices into `tokens`, one per indexed token, compounds included: a PostgreSQL
    position is its index plus one), for the excerpt's window.

    >>> from engine.analysis.profiles import POSTGRES_PROFILE
    >>> analyzer = POSTGRES_PROFILE.analyzer()
    >>> query = compile_terms(["per-session"], analyzer, prefix=False)
    >>> phrase_instances(analyzer.tokens("a per-session x per session"), query)
    [(0, 2, 2), (0, 5, 2)]
    """
    found = []
    for index, phrase in enumerate(query.phrases):
        if not phrase.operands:
            continue
        width = phrase.width
        last = len(phrase.operands) - 1
        for start in range(len(tokens) - width + 1):
            if all(_operand_at(tokens[start + offset], lexeme, phrase.prefix and number == last)
                   for number, (offset, lexeme) in enumerate(phrase.operands)):
                found.append((index, start, width))
    return found
