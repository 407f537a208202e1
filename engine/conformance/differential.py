"""Differential runs: generated corpora and queries against two backends, and checks that
need no oracle (metamorphic relations), each difference a `Finding`.

Owns: generating a corpus (as set-up steps, reproducible from a seed: multilingual words,
sessions across two agents) and queries; running one query on a target (`answer`);
comparing two backends' answers (`compare_backends`) and the metamorphic relations of
one backend (`metamorphic_findings`): the top k is a prefix of the top k+1; term order
and case do not change the hit set; a message is found by a query of its own words in
its own session; the union of a search over each agent equals the search over every
agent, with the same scores (statistics are per agent). Must not touch: shrinking a
finding (`engine.conformance.shrink`), the targets' transport, or printing.

Every check returns a `Finding` whose `kind` is its signature (`hit-set`, `order`,
`score`, `snippet`, `flags`, `error`, or `metamorphic:<relation>`): the shrinker keeps a
smaller input only when it still differs the same way.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.conformance.compare import equal
from engine.conformance.plan import Planner
from engine.conformance.targets import Target

#: Words the generator draws from: ASCII, accents, Greek, German, CJK, Korean, a phrase.
VOCABULARY = ("deploy", "fix", "review", "saffron", "ballast", "lantern", "harbor", "night",
              "alpha", "beta", "gamma", "the", "café", "naïve", "façade", "Straße", "ΟΣ",
              "ος", "会议", "明天", "회의", "per-session", "communication", "v2.0", "OR",
              "Deploy", "CAFE", "résumé", "łódź", "tide")
AGENTS = ("main", "work")


@dataclass(frozen=True, slots=True)
class Finding:
    """A difference: its signature (`kind`), a readable detail, the corpus (set-up steps)
    and the call (`method`, `params`) that show it, and the backends' answers."""

    kind: str
    detail: str
    corpus: tuple[dict[str, Any], ...]
    params: dict[str, Any]
    answers: tuple[Any, ...] = ()


# ----- generation ---------------------------------------------------------------------


def generate_corpus(rng: random.Random, messages: int) -> list[dict[str, Any]]:
    """`messages` messages in about messages/6 sessions over two agents, as set-up steps."""
    sessions = max(2, messages // 6)
    steps: list[dict[str, Any]] = []
    for number in range(sessions):
        key = f"agent:{AGENTS[number % len(AGENTS)]}:s{number}"
        steps.append({"window": {"sessionId": f"w{number}", "sessionKey": key}})
    for number in range(messages):
        words = [rng.choice(VOCABULARY) for _ in range(rng.randint(2, 10))]
        steps.append({"message": {"session": f"w{rng.randrange(sessions)}", "id": f"m{number}",
                                  "role": "user" if number % 2 == 0 else "assistant",
                                  "text": " ".join(words), "timestamp": number}})
    return steps


def generate_query(rng: random.Random, corpus: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """A `sessions.search` over every session: words of a message or of the vocabulary."""
    texts = [step["message"]["text"].split() for step in corpus if "message" in step]
    pool = rng.choice(texts) if texts and rng.random() < 0.7 else list(VOCABULARY)
    terms = rng.sample(pool, k=min(len(pool), rng.randint(1, 3)))
    params: dict[str, Any] = {"sessionKeys": [], "query": " ".join(terms), "limit": 25}
    if rng.random() < 0.2 and len(terms[-1]) > 3:
        params["query"] = " ".join([*terms[:-1], terms[-1][:3]])
        params["match"] = "prefix"
    return params


# ----- running ------------------------------------------------------------------------


def load(target: Target, corpus: Sequence[dict[str, Any]]) -> None:
    """Reset `target` and load `corpus` (set-up steps) into it."""
    target.call("conformance.reset", {})
    planner = Planner()
    for step in corpus:
        planner.add(step, None)
    planner.flush()
    for call in planner.calls:
        reply = target.call(call.method, call.params)
        if reply.error is not None:
            raise ValueError(f"{call.method} failed: {reply.error.get('message')}")


def answer(target: Target, params: dict[str, Any]) -> dict[str, Any]:
    """One `sessions.search`: `{"result": ...}` or `{"error": ...}`."""
    reply = target.call("sessions.search", params)
    return {"error": reply.error} if reply.error is not None else {"result": reply.result}


def _ids(answer_value: dict[str, Any]) -> list[str]:
    result = answer_value.get("result") or {}
    return [hit["messageId"] for hit in result.get("hits", [])]


def difference(first: dict[str, Any], second: dict[str, Any]) -> tuple[str, str] | None:
    """How two answers to one search differ: `(kind, detail)`, or None.

    >>> hit = {"messageId": "m1", "score": 1.0, "snippet": "a"}
    >>> difference({"result": {"hits": [hit]}}, {"result": {"hits": []}})
    ('hit-set', 'only the first has m1; only the second has nothing')
    """
    if ("error" in first) != ("error" in second):
        return "error", f"first {first.get('error', 'answered')}, second {second.get('error', 'answered')}"
    if "error" in first:
        same = first["error"] == second["error"]
        return None if same else ("error", f"{first['error']} against {second['error']}")
    one, two = _ids(first), _ids(second)
    if set(one) != set(two):
        return "hit-set", (f"only the first has {', '.join(sorted(set(one) - set(two))) or 'nothing'}; "
                           f"only the second has {', '.join(sorted(set(two) - set(one))) or 'nothing'}")
    if one != two:
        return "order", f"first {one}, second {two}"
    hits = {hit["messageId"]: hit for hit in second["result"]["hits"]}
    for hit in first["result"]["hits"]:
        other = hits[hit["messageId"]]
        if not equal(hit["score"], other["score"]):
            return "score", f"{hit['messageId']}: {hit['score']} against {other['score']}"
        if hit["snippet"] != other["snippet"]:
            return "snippet", f"{hit['messageId']}: {hit['snippet']!r} against {other['snippet']!r}"
    flags = ("truncated", "indexing")
    if any(first["result"].get(flag) != second["result"].get(flag) for flag in flags):
        return "flags", f"first {first['result']}, second {second['result']}"
    return None


def compare_backends(targets: Sequence[Target], corpus: Sequence[dict[str, Any]],
                     params: dict[str, Any], *, loaded: bool = False) -> Finding | None:
    """The difference between two backends on one search (loading the corpus first unless
    `loaded`), or None."""
    if not loaded:
        for target in targets:
            load(target, corpus)
    answers = [answer(target, params) for target in targets]
    found = difference(answers[0], answers[1])
    if found is None:
        return None
    return Finding(found[0], found[1], tuple(corpus), dict(params), tuple(answers))


# ----- metamorphic relations of one backend ----------------------------------------------


def _without_keys(params: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in params.items() if name != "sessionKeys"}


def top_k_prefix(target: Target, params: dict[str, Any]) -> str | None:
    """The top `limit` hits are the first of the top `limit + 1`."""
    k = params["limit"]
    shorter, longer = (_ids(answer(target, {**params, "limit": size})) for size in (k, k + 1))
    if longer[:len(shorter)] != shorter:
        return f"limit {k} gave {shorter}, limit {k + 1} gave {longer}"
    return None


def term_order(target: Target, params: dict[str, Any]) -> str | None:
    """Reversing the terms does not change the hit set."""
    query = " ".join(reversed(params["query"].split()))
    one, two = _ids(answer(target, params)), _ids(answer(target, {**params, "query": query}))
    return None if sorted(one) == sorted(two) else f"{query!r} gave {sorted(two)}, not {sorted(one)}"


def swap_ascii_case(text: str) -> str:
    """`text` with its ASCII letters' case swapped (other letters kept: upper-casing ß
    gives SS, another word, so only the folding unicode61 does is a safe change).

    >>> swap_ascii_case("Straße Café")
    'sTRAßE cAFé'
    """
    return "".join(character.swapcase() if character.isascii() else character
                   for character in text)


def letter_case(target: Target, params: dict[str, Any]) -> str | None:
    """Swapping the case of the query's ASCII letters does not change the hit set."""
    query = swap_ascii_case(params["query"])
    one, two = _ids(answer(target, params)), _ids(answer(target, {**params, "query": query}))
    return None if sorted(one) == sorted(two) else f"{query!r} gave {sorted(two)}, not {sorted(one)}"


def partition_union(target: Target, params: dict[str, Any]) -> str | None:
    """Searching each agent apart gives the hits of searching them together, with the
    same scores (statistics are per agent); unchecked when the whole was truncated."""
    whole = answer(target, params)
    if "error" in whole or whole["result"].get("truncated"):
        return None
    parts = [hit for agent in AGENTS for hit in answer(
        target, {**_without_keys(params), "agentId": agent}).get("result", {}).get("hits", [])]
    union = sorted((hit["messageId"], hit["score"]) for hit in parts)
    together = sorted((hit["messageId"], hit["score"]) for hit in whole["result"]["hits"])
    if len(union) == len(together) and all(a[0] == b[0] and equal(a[1], b[1])
                                           for a, b in zip(union, together, strict=True)):
        return None
    return f"per agent {union}, together {together}"


def own_words(target: Target, params: dict[str, Any]) -> str | None:
    """The message `params["subject"]` is found by a query of its own words in its own
    session (unchecked when the session has more matches than the limit)."""
    subject = params["subject"]
    found = answer(target, {name: value for name, value in params.items() if name != "subject"})
    if "error" in found or found["result"].get("truncated") or subject in _ids(found):
        return None
    return f"{subject} is not found by {params['query']!r} in its own session"


#: Relation name -> its check on a loaded target (None: it holds).
RELATIONS = {"top-k-prefix": top_k_prefix, "term-order": term_order, "case": letter_case,
             "partition-union": partition_union, "own-words": own_words}


def relation_params(relation: str, params: dict[str, Any], corpus: Sequence[dict[str, Any]],
                    rng: random.Random) -> dict[str, Any] | None:
    """The params one relation checks, drawn from a search's (None: not applicable)."""
    if relation == "top-k-prefix":
        return {**params, "limit": rng.randint(1, 5)}
    if relation in ("term-order", "case"):
        return None if params.get("match") == "prefix" else dict(params)
    if relation == "partition-union":
        return dict(params)
    messages = [step["message"] for step in corpus if "message" in step]
    windows = {step["window"]["sessionId"]: step["window"]["sessionKey"]
               for step in corpus if "window" in step}
    if not messages:
        return None
    message = rng.choice(messages)
    words = message["text"].split()
    return {"sessionKeys": [windows[message["session"]]], "sessionId": message["session"],
            "query": " ".join(rng.sample(words, k=min(2, len(words)))), "limit": 25,
            "subject": message["id"]}


def metamorphic_findings(target: Target, corpus: Sequence[dict[str, Any]],
                         params: dict[str, Any], rng: random.Random) -> list[Finding]:
    """Every relation the loaded `target` breaks, each checked on params drawn from this
    search's."""
    findings = []
    for relation, check in RELATIONS.items():
        checked = relation_params(relation, params, corpus, rng)
        if checked is None:
            continue
        detail = check(target, checked)
        if detail is not None:
            findings.append(Finding(f"metamorphic:{relation}", detail, tuple(corpus), checked))
    return findings
