"""Shrinking a difference to the smallest corpus and query that still differ the same way,
and writing it out as a ready-to-save case file.

Owns: `ddmin` (Zeller's delta debugging over a list: drop chunks while a test still
holds), `shrink` (messages, then query terms, then each message's words, then windows
left empty, each kept only while the finding keeps its `kind`: a loose "any difference"
would shrink to another bug), and `case_file` (the shrunk finding as a case of
docs/conformance.md's format, expecting the first backend's answer, with the seed and
both answers in its comment, so it becomes a permanent regression case). Must not touch:
how a difference is found (`engine.conformance.differential`) or printed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from engine.conformance.differential import RELATIONS, Finding, compare_backends, load
from engine.conformance.targets import Target

Item = TypeVar("Item")


def ddmin(items: Sequence[Item], holds: Callable[[list[Item]], bool]) -> list[Item]:
    """A smallest-found sublist of `items` (order kept) for which `holds` is true; `holds`
    must be true of `items`. Each round tries dropping each of n chunks; a drop that
    holds is kept and n shrinks, else n doubles, until chunks are single items.

    >>> ddmin(list(range(10)), lambda kept: 3 in kept and 7 in kept)
    [3, 7]
    """
    current = list(items)
    chunks = 2
    while len(current) >= 1:
        size = max(1, -(-len(current) // chunks))
        for start in range(0, len(current), size):
            candidate = current[:start] + current[start + size:]
            if holds(candidate):
                current = candidate
                chunks = max(chunks - 1, 2)
                break
        else:
            if size == 1:
                break
            chunks = min(chunks * 2, len(current))
    return current


Still = Callable[[list[dict[str, Any]], dict[str, Any]], bool]


def predicate(finding: Finding, targets: Sequence[Target]) -> Still:
    """Whether a corpus and params still show `finding`'s kind of difference: between the
    two backends, or, for a metamorphic relation, on the backend it broke on (the first
    of `targets` given)."""
    if finding.kind.startswith("metamorphic:"):
        check = RELATIONS[finding.kind.split(":", 1)[1]]

        def still(corpus: list[dict[str, Any]], params: dict[str, Any]) -> bool:
            load(targets[0], corpus)
            return check(targets[0], params) is not None
        return still

    def differs(corpus: list[dict[str, Any]], params: dict[str, Any]) -> bool:
        found = compare_backends(targets, corpus, params)
        return found is not None and found.kind == finding.kind
    return differs


def _with_text(corpus: list[dict[str, Any]], index: int, text: str) -> list[dict[str, Any]]:
    changed = list(corpus)
    step = changed[index]
    changed[index] = {"message": {**step["message"], "text": text}}
    return changed


def shrink(finding: Finding, still: Still) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The smallest corpus and params found that still show the finding."""
    windows = [step for step in finding.corpus if "window" in step]
    messages = [step for step in finding.corpus if "message" in step]
    params = dict(finding.params)
    messages = ddmin(messages, lambda kept: still(windows + kept, params))
    terms = params["query"].split()
    if len(terms) > 1:
        terms = ddmin(terms, lambda kept: bool(kept) and still(
            windows + messages, {**params, "query": " ".join(kept)}))
        params["query"] = " ".join(terms)
    corpus = windows + messages
    for index in range(len(windows), len(corpus)):
        words = corpus[index]["message"]["text"].split()
        kept = ddmin(words, lambda kept, at=index, now=corpus: bool(kept) and still(
            _with_text(now, at, " ".join(kept)), params))
        corpus = _with_text(corpus, index, " ".join(kept))
    used = {step["message"]["session"] for step in corpus if "message" in step}
    named = set(params.get("sessionKeys") or ())
    leaner = [step for step in corpus if "message" in step or step["window"]["sessionId"] in used
              or step["window"]["sessionKey"] in named]
    if still(leaner, params):
        corpus = leaner
    return corpus, params


def relation_steps(kind: str, params: dict[str, Any],
                   expected: dict[str, Any]) -> list[dict[str, Any]]:
    """The steps that pin a metamorphic relation on a corpus, when the case format can say
    it (a saved answer compared with another); else one call expecting `expected`."""
    call = {name: value for name, value in params.items() if name != "subject"}
    ids = "hits[*].messageId"
    if kind in ("metamorphic:term-order", "metamorphic:case"):
        from engine.conformance.differential import swap_ascii_case

        query = (" ".join(reversed(call["query"].split())) if kind.endswith("term-order")
                 else swap_ascii_case(call["query"]))
        return [{"call": "sessions.search", "params": call, "expect": {"save": {"hits": ids}}},
                {"call": "sessions.search", "params": {**call, "query": query},
                 "expect": {"unordered": {ids: "$hits"}}}]
    if kind == "metamorphic:own-words":
        return [{"call": "sessions.search", "params": call,
                 "expect": {"subset": {ids: [params["subject"]]}}}]
    if kind == "metamorphic:top-k-prefix":
        return [{"call": "sessions.search", "params": call, "expect": {"save": {"top": ids}}},
                {"call": "sessions.search", "params": {**call, "limit": call["limit"] + 1},
                 "expect": {"prefix": {ids: "$top"}}}]
    return [{"call": "sessions.search", "params": call, "expect": expected}]


def case_file(finding: Finding, corpus: list[dict[str, Any]], params: dict[str, Any],
              backends: Sequence[str], answers: Sequence[dict[str, Any]], detail: str,
              seed: int, number: int) -> dict[str, Any]:
    """The shrunk finding as a case file: the relation it broke, or the first backend's
    answer, with the seed, the difference and every answer in its comment."""
    first = answers[0]
    expected = {"error": first["error"]} if "error" in first else {"result": first["result"]}
    comment = [(f"found by session-search diff --backends {','.join(backends)} --seed {seed}: "
                f"{finding.kind}: {detail}"),
               *(f"{name} answered {json.dumps(answer, ensure_ascii=False)}"
                 for name, answer in zip(backends, answers, strict=False))]
    return {"comment": comment, "corpus": corpus, "cases": [{
        "id": f"diff/seed-{seed}-{number}", "spec": ["§5.4"], "features": ["ranking"],
        "comment": f"{finding.kind}: {detail}",
        "steps": relation_steps(finding.kind, params, expected)}]}
