"""Message texts for synthetic transcripts: sentences, code blocks and log excerpts.

Owns: turning a seeded `random.Random` and the word lists of `engine.bench.vocabulary`
into realistic text, and reporting which natural-language words each text holds (their
folded forms), so the corpus generator can count expected search answers while it
writes. Must not touch: files, JSON, event shapes (that is `corpus_generator`).

Every function takes the random generator explicitly and draws from nothing else, so a
seed fixes every byte. A text is returned as a `Text`: the string plus the set of folded
natural-language words in it. Words that come from code identifiers, log fields,
numbers or metadata preambles are not in that set; the vocabulary guarantees that none
of them can be a probe word.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from engine.bench.vocabulary import (
    CODE_IDENTIFIERS,
    CODE_KEYWORDS,
    LANGUAGE_SHARES,
    LANGUAGES,
    LOG_COMPONENTS,
    LOG_EVENTS,
    LOG_LEVELS,
    UNSPACED_LANGUAGES,
    WORDS_BY_LANGUAGE,
    ZipfSampler,
    fold_word,
    language_samplers,
)

#: The compound planted for the "term with inner punctuation" probe; its folded key in a
#: `Text.words` set is the compound itself, because the probe needs adjacency.
COMPOUND_WORD = "per-session"

#: A topic sentence planted now and then, so a 3–5 word AND query has hits at every size.
TOPIC_SENTENCE = "The deployment failed on Friday after the database migration."
TOPIC_WORDS = ("the", "deployment", "failed", "on", "friday", "after", "database", "migration")

_FOLDED: dict[str, str] = {
    word: fold_word(word) for words in WORDS_BY_LANGUAGE.values() for word in words
}
_SENTENCE_ENDS = (".", ".", ".", "?", "!", ":")
_CUMULATIVE_LANGUAGE_SHARES: list[float] = []
_running_share = 0.0
for _language in LANGUAGES:
    _running_share += LANGUAGE_SHARES[_language]
    _CUMULATIVE_LANGUAGE_SHARES.append(_running_share)


@dataclass(slots=True)
class Text:
    """A piece of text and the folded natural-language words it contains."""

    text: str
    words: set[str] = field(default_factory=set)

    def extend(self, other: Text, separator: str) -> None:
        """Append `other` after `separator` (nothing when this text is empty)."""
        self.text = other.text if not self.text else self.text + separator + other.text
        self.words |= other.words


class TextSynthesizer:
    """Seeded text factory; one instance per corpus (it caches the Zipf samplers)."""

    def __init__(self, generator: random.Random) -> None:
        self.generator = generator
        self.samplers: dict[str, ZipfSampler] = language_samplers()

    def pick_language(self) -> str:
        """Choose a message language by `LANGUAGE_SHARES` (mostly English)."""
        point = self.generator.random() * _CUMULATIVE_LANGUAGE_SHARES[-1]
        for language, bound in zip(LANGUAGES, _CUMULATIVE_LANGUAGE_SHARES):
            if point < bound:
                return language
        return LANGUAGES[-1]

    def sentence(self, language: str, word_count: int) -> Text:
        """One sentence of `word_count` Zipf-drawn words, capitalised and punctuated."""
        sampler = self.samplers[language]
        if language in UNSPACED_LANGUAGES:
            # At least three words, so a CJK run never equals a single word: a word inside
            # a run is found only through the CJK substring retry (behaviour.md §7.1).
            word_count = max(3, word_count)
        words = self.generator.choices(
            sampler.words, cum_weights=sampler.cumulative_weights, k=max(1, word_count)
        )
        folded = {_FOLDED[word] for word in words}
        if language in UNSPACED_LANGUAGES:
            return Text("".join(words) + "。", folded)
        first = words[0]
        words[0] = first[:1].upper() + first[1:]
        if word_count > 6 and self.generator.random() < 0.3:
            cut = self.generator.randrange(2, word_count - 2)
            words[cut] = words[cut] + ","
        return Text(" ".join(words) + self.generator.choice(_SENTENCE_ENDS), folded)

    def paragraph(self, language: str, word_count: int) -> Text:
        """Sentences of 3–18 words until `word_count` words; 10% switch language."""
        result = Text("")
        remaining = max(1, word_count)
        while remaining > 0:
            length = min(remaining, self.generator.randint(3, 18))
            sentence_language = language
            if self.generator.random() < 0.1:
                sentence_language = self.pick_language()
            result.extend(self.sentence(sentence_language, length), " ")
            remaining -= length
        return result

    def code_block(self, target_bytes: int) -> Text:
        """A fenced code block of about `target_bytes` bytes (no natural words)."""
        generator = self.generator
        lines = [f"```{generator.choice(('python', 'ts', 'bash', 'sql'))}"]
        size = 0
        while size < target_bytes:
            indent = "    " * generator.randint(0, 2)
            keyword = generator.choice(CODE_KEYWORDS)
            left, right = generator.choice(CODE_IDENTIFIERS), generator.choice(CODE_IDENTIFIERS)
            line = f"{indent}{keyword} {left} = {right}({generator.randint(0, 999)})"
            lines.append(line)
            size += len(line) + 1
        lines.append("```")
        return Text("\n".join(lines))

    def log_excerpt(self, target_bytes: int, start_ms: int) -> Text:
        """Log lines of about `target_bytes` bytes: time, level, component, event, fields."""
        generator = self.generator
        lines: list[str] = []
        size = 0
        moment = start_ms
        while size < target_bytes:
            moment += generator.randint(1, 2000)
            seconds, millis = divmod(moment, 1000)
            line = (
                f"{seconds}.{millis:03d} {generator.choice(LOG_LEVELS)} "
                f"[{generator.choice(LOG_COMPONENTS)}] {generator.choice(LOG_EVENTS)} "
                f"latency_ms={generator.randint(1, 9000)} attempt={generator.randint(1, 5)}"
            )
            lines.append(line)
            size += len(line) + 1
        return Text("\n".join(lines))

    def compound(self) -> Text:
        """The inner-punctuation compound inside a short English clause."""
        clause = self.sentence("en", self.generator.randint(3, 8))
        return Text(f"{COMPOUND_WORD} {clause.text}", clause.words | {COMPOUND_WORD})

    def topic_sentence(self) -> Text:
        """The planted topic sentence."""
        return Text(TOPIC_SENTENCE, set(TOPIC_WORDS))

    def planted_word(self, word: str) -> Text:
        """A short English sentence that contains `word` (a probe-only word)."""
        sentence = self.sentence("en", self.generator.randint(4, 10))
        return Text(f"{sentence.text} {word.capitalize()}.", sentence.words | {word})
