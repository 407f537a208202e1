"""The readable view of `session-search explain`: the plan, then each hit's bm25 and excerpt.

Owns: how a `SearchExplanation` reads as text (`--json` prints its `to_json()`). Must not
touch: what is explained (`engine.search.explain` computes every number) or the formulas.

The view names the quantities as the JSON does (N, D, avgdl, k1, b per hit; n, f, idf
per phrase) and writes numbers for people: scores with three decimals, other fractions
with three decimals or, below 0.0005, in scientific notation (the floored idf, 1e-6);
no Python representation of any value appears. A phrase is shown as FTS5 writes it,
in double quotes, with `*` after a prefix phrase.
"""

from __future__ import annotations

from engine.cli.highlight import excerpt_cell
from engine.cli.output import Marked, Output, format_score, format_time
from engine.cli.search_notices import truncation_hint
from engine.inspection.explanations import (
    Bm25Explanation,
    HitExplanation,
    PartitionHitExplanation,
    Phrase,
    QueryPlan,
    SearchExplanation,
    SnippetExplanation,
)
from engine.inspection.no_hits import no_hit_reasons
from engine.model import SearchRequest


def format_quantity(value: float) -> str:
    """A bm25 quantity: an integer as it is, else three decimals, tiny values as 1.00e-06.

    >>> format_quantity(59), format_quantity(8.016949152542374), format_quantity(1e-06)
    ('59', '8.017', '1.00e-06')
    >>> format_quantity(0.0)
    '0.000'
    """
    if isinstance(value, int):
        return str(value)
    if value == 0 or abs(value) >= 0.0005:
        return f"{value:.3f}"
    return f"{value:.2e}"


def format_phrase(phrase: Phrase) -> str:
    """A phrase as FTS5 writes it: `"per session"`, `"communi"*`, `""` (matches nothing).

    >>> format_phrase(Phrase(("per", "session"))), format_phrase(Phrase(("communi",), True))
    ('"per session"', '"communi"*')
    """
    return '"' + " ".join(phrase.terms) + '"' + ("*" if phrase.prefix else "")


def plan_lines(plan: QueryPlan, retried: bool) -> list[str]:
    """The plan the search ran: its phrases (ANDed), its substrings, whether it retried.

    >>> from engine.inspection.explanations import SubstringTerm
    >>> plan_lines(QueryPlan((Phrase(("cat",)),), (SubstringTerm("会议"),)), True)
    ['phrases: "cat"', 'substrings: "会议"', 'no word match in scope: CJK terms retried as literal substrings']
    """
    phrases = " AND ".join(format_phrase(phrase) for phrase in plan.phrases)
    lines = [f"phrases: {phrases or '(none)'}"]
    if any(phrase.is_empty for phrase in plan.phrases):
        lines.append('an empty phrase ("") matches nothing, so the query finds nothing')
    if plan.substrings:
        lines.append("substrings: " + " AND ".join(f'"{term.text}"' for term in plan.substrings))
    if retried:
        lines.append("no word match in scope: CJK terms retried as literal substrings")
    return lines


def bm25_lines(bm25: Bm25Explanation | None) -> list[str]:
    """The bm25 inputs of one hit, its per-phrase terms, and the result."""
    if bm25 is None:
        return ["no bm25 (found by substrings alone): score 0"]
    lines = [(f"N={bm25.total_rows} D={bm25.document_length} "
             f"avgdl={format_quantity(bm25.average_length)} k1={bm25.k1:g} b={bm25.b:g}")]
    for item in bm25.phrases:
        floored = " (floored)" if item.idf_floored else ""
        lines.append(f"  phrase \"{item.phrase}\": n={item.matching_rows} f={item.frequency} "
                     f"idf={format_quantity(item.idf)}{floored} "
                     f"contribution={format_quantity(item.contribution)}")
    lines.append(f"bm25={format_score(bm25.bm25)} score={format_score(bm25.score)}")
    return lines


def excerpt_lines(item: HitExplanation) -> list[str]:
    """How the excerpt was chosen: every window tried, then the one kept."""
    excerpt = item.excerpt
    if not isinstance(excerpt, SnippetExplanation):
        needles = ", ".join(f'"{needle}"' for needle in excerpt.needles)
        return [f"no window: the text around the earliest substring ({needles})"]
    starts = ", ".join(str(start) for start in excerpt.sentence_starts)
    lines = [(f"tokens={excerpt.document_tokens} window={excerpt.window_tokens} "
             f"sentence starts={starts or '(none)'}")]
    for candidate in excerpt.candidates:
        mark = " <- best so far" if candidate.chosen else ""
        lines.append(f"  {candidate.kind} at {candidate.anchor}: start {candidate.start} "
                     f"score {candidate.score}{mark}")
    lines.append(f"chosen start {excerpt.start} (score {excerpt.score})")
    return lines


def print_explanation(output: Output, explanation: SearchExplanation,
                      request: SearchRequest) -> None:
    """The whole readable view of one explained search."""
    for line in plan_lines(explanation.plan, explanation.retried):
        output.line(line)
    if not explanation.hits:
        output.line("no hits")
        for reason in no_hit_reasons(request.query, request.match):
            output.line(reason)
    for number, item in enumerate(explanation.hits, 1):
        hit = item.hit
        output.line()
        output.line(f"#{number} {hit.session_key} {hit.session_id} {hit.message_id} "
                    f"({hit.role}) {format_time(hit.timestamp)} score "
                    f"{format_score(hit.score)} doc {item.doc_id}")
        if isinstance(item, PartitionHitExplanation):
            output.line(f"  partition {item.partition}: scored with the statistics of that "
                        "agent's index")
        for line in bm25_lines(item.bm25):
            output.line(f"  {line}")
        output.line("  excerpt window:")
        for line in excerpt_lines(item):
            output.line(f"    {line}")
        output.line(labelled("  snippet: ", excerpt_cell(hit.snippet, hit.matched, output)))
    if explanation.truncated:
        output.line(truncation_hint(request.limit))


def labelled(label: str, cell: Marked | str) -> Marked | str:
    """`cell` after `label`, its marked spans moved along.

    >>> labelled("x: ", Marked("ab", ((1, 2),)))
    Marked(text='x: ab', spans=((4, 5),))
    """
    if isinstance(cell, str):
        return label + cell
    return Marked(label + cell.text, tuple((start + len(label), end + len(label))
                                           for start, end in cell.spans))
