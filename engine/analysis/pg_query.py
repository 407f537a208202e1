"""The query side of the `pg` profile: `phraseto_tsquery`, `plainto_tsquery`, prefix queries,
their PostgreSQL text form, and a `matches(tsvector, tsquery)` evaluator.

Owns: building tsquery trees from user text with the same analysis as the documents
(`to_tsvector('simple', unaccent(x))`), printing them as PostgreSQL prints them, and deciding
whether a tsvector (a `PgSimpleUnaccentAnalyzer.tsvector` dict) satisfies one. The evaluator is
the test oracle for match sets against a PostgreSQL backend (behaviour.md §7.2 compares match
sets, not scores). Must not touch: the analysis rules (`pg_profile.py`), SQL, ranking.

Semantics (tokenizers.md §4.6, checked on PostgreSQL 15.20):

* `phraseto_tsquery('simple', unaccent(x))`: the lexemes of x, in order, joined with `<->`
  (`simple` has no stop words, so no `<N>` gaps). `a-b` gives `'a-b' <-> 'a' <-> 'b'`.
* `plainto_tsquery('simple', unaccent(x))`: the same lexemes joined with `&`.
* Prefix: `to_tsquery('simple', '''x'':*')` gives every lexeme of x with `:*`, joined with
  `<->` (`'a b':*` → `'a':* <-> 'b':*`). A prefix operand matches every lexeme that starts
  with its bytes (`super:*` matches `superman`).
* A text without lexemes gives the empty query (None here), which matches nothing. Beware:
  for the empty string PostgreSQL's `to_tsquery('simple', ''''':*')` is a syntax error, so a
  backend must not send an empty prefix operand.
* `L <N> R` holds at the positions p of R's last lexeme where L ends at p - N - width(R);
  a chain `a <-> b <-> c` therefore needs a, b, c at consecutive positions.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.analysis.pg_profile import PgSimpleUnaccentAnalyzer
from engine.errors import UsageError


@dataclass(frozen=True, slots=True)
class Operand:
    """One lexeme; with `prefix`, any lexeme starting with it (`'lex':*`)."""

    lexeme: str
    prefix: bool = False


@dataclass(frozen=True, slots=True)
class Follows:
    """`left <distance> right` (`<->` when distance is 1)."""

    left: Node
    right: Node
    distance: int = 1


@dataclass(frozen=True, slots=True)
class And:
    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class Or:
    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class Not:
    operand: Node


Node = Operand | Follows | And | Or | Not
#: A tsquery: a tree, or None for the empty query (no lexemes).
TsQuery = Node | None

_ANALYZER = PgSimpleUnaccentAnalyzer()


def _chain(operands: list[Operand], combine: type[Follows | And]) -> TsQuery:
    query: TsQuery = None
    for operand in operands:
        query = operand if query is None else combine(query, operand)
    return query


def phraseto_tsquery(text: str) -> TsQuery:
    """`phraseto_tsquery('simple', unaccent(text))`.

    >>> tsquery_text(phraseto_tsquery("Café state-of-the-art"))
    "'cafe' <-> 'state-of-the-art' <-> 'state' <-> 'of' <-> 'the' <-> 'art'"
    """
    return _chain([Operand(term) for term in _ANALYZER.terms(text)], Follows)


def plainto_tsquery(text: str) -> TsQuery:
    """`plainto_tsquery('simple', unaccent(text))`.

    >>> tsquery_text(plainto_tsquery("quick | brown a-b"))
    "'quick' & 'brown' & 'a-b' & 'a' & 'b'"
    """
    return _chain([Operand(term) for term in _ANALYZER.terms(text)], And)


def prefix_tsquery(text: str) -> TsQuery:
    """`to_tsquery('simple', quote_operand(unaccent(text)) || ':*')`: every lexeme a prefix.

    >>> tsquery_text(prefix_tsquery("it's"))
    "'it':* <-> 's':*"
    """
    return _chain([Operand(term, prefix=True) for term in _ANALYZER.terms(text)], Follows)


def quote_operand(text: str) -> str:
    """Quote text as one `to_tsquery` operand (what `prefix_tsquery` models).

    >>> quote_operand("it's")
    "'it''s'"
    """
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


# -- text form ------------------------------------------------------------------------

_PRIORITY = {Or: 1, And: 2, Follows: 3, Not: 4, Operand: 5}


def tsquery_text(query: TsQuery) -> str:
    """The tsquery as PostgreSQL prints it ('' for the empty query).

    >>> tsquery_text(And(Operand("a"), And(Or(Operand("b"), Operand("c")), Not(Operand("d")))))
    "'a' & ( 'b' | 'c' ) & !'d'"
    >>> tsquery_text(Follows(And(Operand("a"), Operand("b")), Operand("c", prefix=True), 2))
    "( 'a' & 'b' ) <2> 'c':*"
    """
    if query is None:
        return ""
    return _text(query)


def _wrapped(node: Node, parent_priority: int) -> str:
    text = _text(node)
    if _PRIORITY[type(node)] < parent_priority:
        return f"( {text} )"
    return text


def _text(node: Node) -> str:
    if isinstance(node, Operand):
        return quote_operand(node.lexeme) + (":*" if node.prefix else "")
    if isinstance(node, Not):
        return "!" + _wrapped(node.operand, _PRIORITY[Not])
    priority = _PRIORITY[type(node)]
    if isinstance(node, Follows):
        symbol = "<->" if node.distance == 1 else f"<{node.distance}>"
    else:
        symbol = "&" if isinstance(node, And) else "|"
    return f"{_wrapped(node.left, priority)} {symbol} {_wrapped(node.right, priority)}"


# -- evaluation ------------------------------------------------------------------------


def _operand_positions(vector: dict[str, list[int]], operand: Operand) -> set[int]:
    if not operand.prefix:
        return set(vector.get(operand.lexeme, ()))
    found: set[int] = set()
    for lexeme, positions in vector.items():
        if lexeme.startswith(operand.lexeme):
            found.update(positions)
    return found


def _phrase_ends(vector: dict[str, list[int]], node: Node) -> tuple[set[int], int]:
    """End positions where a phrase (or operand) holds, and its width."""
    if isinstance(node, Operand):
        return _operand_positions(vector, node), 0
    if isinstance(node, Follows):
        left_ends, left_width = _phrase_ends(vector, node.left)
        right_ends, right_width = _phrase_ends(vector, node.right)
        offset = node.distance + right_width
        ends = {end for end in right_ends if end - offset in left_ends}
        return ends, left_width + node.distance + right_width
    raise UsageError(f"{type(node).__name__} inside a phrase is not supported by the oracle")


def matches(vector: dict[str, list[int]], query: TsQuery) -> bool:
    """`vector @@ query` (the empty query matches nothing).

    >>> vector = PgSimpleUnaccentAnalyzer().tsvector("the superman flies")
    >>> matches(vector, prefix_tsquery("super")), matches(vector, phraseto_tsquery("the man"))
    (True, False)
    >>> matches(vector, phraseto_tsquery("Superman flies"))
    True
    """
    if query is None:
        return False
    if isinstance(query, And):
        return matches(vector, query.left) and matches(vector, query.right)
    if isinstance(query, Or):
        return matches(vector, query.left) or matches(vector, query.right)
    if isinstance(query, Not):
        return not matches(vector, query.operand)
    ends, _ = _phrase_ends(vector, query)
    return bool(ends)
