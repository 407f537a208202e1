"""Probe queries of the benchmark and the exact count of messages each one matches.

Owns: the list of probe queries (one per query class of the benchmark), and
`ProbeCounter`, which the corpus generator feeds with every searchable message it
writes, so that each corpus ships its own expected answers in `manifest.json`. Must not
touch: files, tokenizers or backends.

A probe matches a message when every one of its `required` folded words is among the
message's natural-language words (`engine.bench.text_synthesis.Text.words`), when one of
its words starts with `prefix`, or when its searchable text contains `substring`. The
vocabulary is built so that this simple model agrees with `unicode61` on every probe
(see `engine.bench.vocabulary`). Only searchable messages are fed: user and assistant
text on the active path (behaviour.md §2.3); thinking blocks, tool results and rewound
branches never are, which is what the `never_indexed` probe checks.

A backend's answer for a probe with `n` matching messages and limit `L` is exactly
`min(n, L)` hits with `truncated == (n > L)` (behaviour.md §5.4).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from engine.bench.text_synthesis import COMPOUND_WORD
from engine.bench.vocabulary import WORDS_BY_LANGUAGE, fold_word

#: The rare probe word, planted in a dozen messages whatever the corpus size.
RARE_WORD = "quokka"
#: Planted only where nothing is indexed: thinking, tool results, rewound branches.
NEVER_INDEXED_WORD = "xylophonic"
#: Appears nowhere.
ABSENT_WORD = "zyzzogeton"
#: A Chinese word that only ever occurs inside longer runs.
CJK_SUBSTRING = "会议"


@dataclass(frozen=True, slots=True)
class Probe:
    """One benchmark query and how to recognise the messages it matches."""

    name: str
    query_class: str
    query: str
    match: str = "exact"
    order: str = "relevance"
    required: tuple[str, ...] = ()
    prefix: str | None = None
    substring: str | None = None

    def matches(self, words: set[str], text: str, prefix_words: frozenset[str]) -> bool:
        """Whether a message with these folded `words` and this `text` matches.

        `prefix_words` is the precomputed set of folded words starting with `prefix`.

        >>> probe = Probe("two", "two-word AND", "a b", required=("a", "b"))
        >>> probe.matches({"a", "b", "c"}, "", frozenset()), probe.matches({"a"}, "", frozenset())
        (True, False)
        """
        if self.substring is not None:
            return self.substring in text
        if self.prefix is not None:
            return not words.isdisjoint(prefix_words)
        return all(word in words for word in self.required)


PROBES: tuple[Probe, ...] = (
    Probe("common_word", "common word", "the", required=("the",)),
    Probe("rare_word", "rare word", RARE_WORD, required=(RARE_WORD,)),
    Probe("diacritic_word", "word with diacritics", "déjà", required=(fold_word("déjà"),)),
    Probe("two_words", "two-word AND", "deployment failed", required=("deployment", "failed")),
    Probe(
        "multi_words", "3–5 word query", "deployment friday database migration",
        required=("deployment", "friday", "database", "migration"),
    ),
    Probe("inner_punctuation", "term with inner punctuation", COMPOUND_WORD,
          required=(COMPOUND_WORD,)),
    Probe("prefix", "prefix mode", "deploym", match="prefix", prefix="deploym"),
    Probe("no_hit", "no hit", ABSENT_WORD, required=(ABSENT_WORD,)),
    Probe("never_indexed", "no hit (unindexed text only)", NEVER_INDEXED_WORD,
          required=(NEVER_INDEXED_WORD,)),
    Probe("cjk_retry", "CJK 2-character substring (retry)", CJK_SUBSTRING,
          substring=CJK_SUBSTRING),
    Probe("recent_common", "recent order", "the", order="recent", required=("the",)),
)


def _prefix_words(prefix: str | None) -> frozenset[str]:
    if prefix is None:
        return frozenset()
    folded = {fold_word(word) for words in WORDS_BY_LANGUAGE.values() for word in words}
    return frozenset(word for word in folded if word.startswith(prefix))


class ProbeCounter:
    """Counts, per probe, the searchable messages that match, in total and per agent."""

    def __init__(self, probes: Iterable[Probe] = PROBES) -> None:
        self.probes = tuple(probes)
        self.prefix_words = {probe.name: _prefix_words(probe.prefix) for probe in self.probes}
        self.totals: dict[str, int] = {probe.name: 0 for probe in self.probes}
        self.by_agent: dict[str, dict[str, int]] = {probe.name: {} for probe in self.probes}

    def observe(self, agent: str, words: set[str], text: str) -> None:
        """Record one searchable message of `agent` (`""` for unscoped keys)."""
        for probe in self.probes:
            if probe.matches(words, text, self.prefix_words[probe.name]):
                self.totals[probe.name] += 1
                per_agent = self.by_agent[probe.name]
                per_agent[agent] = per_agent.get(agent, 0) + 1

    def to_json(self) -> dict[str, dict[str, object]]:
        """The manifest's `probes` object: query, mode, order, class and counts."""
        return {
            probe.name: {
                "queryClass": probe.query_class,
                "query": probe.query,
                "match": probe.match,
                "order": probe.order,
                "matchingMessages": self.totals[probe.name],
                "matchingMessagesByAgent": dict(sorted(self.by_agent[probe.name].items())),
            }
            for probe in self.probes
        }
