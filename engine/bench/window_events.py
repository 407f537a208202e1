"""The events of one generated window, in append order, with its tree state.

Owns: the event shapes a generated transcript holds (openclaw-state-format.md,
behaviour.md §2): `model_change`; `message` events from users (string or text-block
content, sometimes behind a channel metadata preamble), assistants (`thinking`, `text`
and `toolCall` blocks, usage, the occasional empty error reply) and tools
(`toolResult`); `custom_message` with `display`; `compaction`; logical `reset` with
`firstKeptEntryId`; and rewinds: a short branch that a `leaf` event then abandons.
It also feeds every searchable message (user and assistant text on the active path)
to the `ProbeCounter`, which is how a corpus knows its own expected answers.
Must not touch: files or JSON (`corpus_generator` writes what this yields).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from engine.bench.corpus_plan import WindowPlan, short_hex
from engine.bench.probes import NEVER_INDEXED_WORD, RARE_WORD, ProbeCounter
from engine.bench.text_synthesis import Text, TextSynthesizer
from engine.model import is_incognito_key


def iso_time(moment_ms: int) -> str:
    """ISO-8601 UTC with milliseconds, as OpenClaw writes it.

    >>> iso_time(1_767_571_201_234)
    '2026-01-05T00:00:01.234Z'
    """
    seconds, millis = divmod(moment_ms, 1000)
    stamp = datetime.fromtimestamp(seconds, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S")
    return f"{stamp}.{millis:03d}Z"


@dataclass(slots=True)
class WindowSummary:
    """What writing one window produced (for the manifest)."""

    events: int = 0
    messages: int = 0
    searchable_messages: int = 0
    active_message_ids: list[str] = field(default_factory=list)


class WindowWriter:
    """Writes the events of one window; the tree state lives here.

    `leaf` is the id of the active leaf: a new tree entry's `parentId`. A rewind writes
    a short branch, then a `leaf` event whose `targetId` is the leaf before the branch,
    and continues from there, so the branch is off the active path.
    """

    def __init__(
        self,
        plan: WindowPlan,
        synthesizer: TextSynthesizer,
        counter: ProbeCounter,
        rare_rate: float,
        keep_active_ids: bool,
    ) -> None:
        self.plan = plan
        self.synthesizer = synthesizer
        self.generator = synthesizer.generator
        self.counter = counter
        self.rare_rate = rare_rate
        self.keep_active_ids = keep_active_ids
        #: An incognito window is stored and never indexed (`SessionWindow.is_incognito`):
        #: its messages are neither searchable nor counted for the probes.
        self.private = bool(plan.metadata.get("incognito")) or is_incognito_key(
            plan.metadata["sessionKey"])
        self.salt = self.generator.getrandbits(32)
        self.next_number = 0
        self.leaf: str | None = None
        self.clock = plan.start_ms
        self.summary = WindowSummary()
        self.recent_active: list[str] = []
        self.channel = ":telegram:" in plan.metadata["sessionKey"]

    # -- identifiers and time ---------------------------------------------------------

    def new_id(self) -> str:
        """A fresh 8-hex id, unique in the window (an odd multiplier is a bijection)."""
        self.next_number += 1
        return f"{(self.next_number * 2_654_435_761 + self.salt) & 0xFFFFFFFF:08x}"

    def tick(self) -> int:
        """Advance the clock 2 s – 2 min (sometimes hours) and return it."""
        step = self.generator.randint(2_000, 120_000)
        if self.generator.random() < 0.02:
            step += self.generator.randint(3_600_000, 36_000_000)
        self.clock += step
        return self.clock

    # -- text ---------------------------------------------------------------------------

    def natural_text(self, role: str, abandoned: bool) -> Text:
        """The visible text of a user or assistant message, with probe plantings."""
        synthesizer = self.synthesizer
        generator = self.generator
        language = synthesizer.pick_language()
        roll = generator.random()
        if roll < 0.72:
            text = synthesizer.paragraph(language, generator.randint(3, 30))
        elif roll < 0.94:
            text = synthesizer.paragraph(language, generator.randint(30, 160))
        else:
            text = synthesizer.paragraph(language, generator.randint(200, 700))
        extra = generator.random()
        if role == "assistant" and extra < 0.08:
            text.extend(synthesizer.code_block(generator.randint(300, 4000)), "\n\n")
        elif role == "user" and extra < 0.04:
            text.extend(synthesizer.log_excerpt(generator.randint(500, 4000), self.clock), "\n")
        if generator.random() < 0.004:
            text.extend(synthesizer.topic_sentence(), " ")
        if generator.random() < 0.006:
            text.extend(synthesizer.compound(), " ")
        if not abandoned and generator.random() < self.rare_rate:
            text.extend(synthesizer.planted_word(RARE_WORD), " ")
        if abandoned:
            text.extend(synthesizer.planted_word(NEVER_INDEXED_WORD), " ")
        return text

    def hidden_text(self, minimum: int, maximum: int) -> str:
        """Text for places that are never indexed (thinking, tool results)."""
        text = self.synthesizer.paragraph("en", self.generator.randint(minimum, maximum))
        if self.generator.random() < 0.05:
            text.extend(self.synthesizer.planted_word(NEVER_INDEXED_WORD), " ")
        return text.text

    # -- events -------------------------------------------------------------------------

    def tree_entry(self, kind: str, moment: int | None = None, **fields: Any) -> dict[str, Any]:
        """A tree entry: id, parentId (the current leaf) and timestamp; becomes the leaf.

        `moment` is the entry's time (epoch ms); by default the clock ticks once."""
        entry_id = self.new_id()
        moment = self.tick() if moment is None else moment
        event: dict[str, Any] = {
            "type": kind, "id": entry_id, "parentId": self.leaf, "timestamp": iso_time(moment),
        }
        event.update(fields)
        self.leaf = entry_id
        return event

    def user_message(self, abandoned: bool) -> tuple[dict[str, Any], Text]:
        moment = self.tick()
        text = self.natural_text("user", abandoned)
        visible = text.text
        if self.channel and self.generator.random() < 0.5:
            visible = (
                "Conversation info (untrusted metadata):\n```json\n"
                f'{{"sender": "user{self.generator.randint(1, 99)}", "chat_type": "direct"}}\n'
                f"```\n[{iso_time(self.clock)}] {visible}"
            )
            text = Text(visible, text.words)
        content: Any
        if self.generator.random() < 0.3:
            content = visible
        else:
            content = [{"type": "text", "text": visible}]
        event = self.tree_entry("message", moment, message={
            "role": "user", "content": content, "timestamp": moment,
        })
        return event, text

    def assistant_message(self, abandoned: bool) -> tuple[dict[str, Any], Text, str | None]:
        generator = self.generator
        moment = self.tick()
        if generator.random() < 0.01:
            event = self.tree_entry("message", moment, message={
                "role": "assistant", "content": [], "api": "openai-responses",
                "provider": "openai", "model": "gpt-5", "stopReason": "error",
                "errorMessage": "upstream overloaded", "timestamp": moment,
            })
            return event, Text(""), None
        blocks: list[dict[str, Any]] = []
        if generator.random() < 0.4:
            blocks.append({"type": "thinking", "thinking": self.hidden_text(10, 120)})
        text = self.natural_text("assistant", abandoned)
        visible = text.text
        if self.channel and generator.random() < 0.3:
            visible = "[[reply_to_current]] " + visible
            text = Text(visible, text.words)
        blocks.append({"type": "text", "text": visible})
        tool_call_id: str | None = None
        if generator.random() < 0.25:
            tool_call_id = f"call_{short_hex(generator, 12)}"
            blocks.append({
                "type": "toolCall", "id": tool_call_id,
                "name": generator.choice(("exec", "read", "web_search", "edit")),
                "arguments": {"command": f"ls -la /srv/app/{generator.randint(1, 50)}"},
            })
        output_tokens = max(1, len(visible) // 4)
        input_tokens = generator.randint(200, 20_000)
        event = self.tree_entry("message", moment, message={
            "role": "assistant", "content": blocks, "api": "openai-responses",
            "provider": "openai", "model": "gpt-5",
            "usage": {
                "input": input_tokens, "output": output_tokens, "cacheRead": 0, "cacheWrite": 0,
                "totalTokens": input_tokens + output_tokens,
                "cost": {"total": round((input_tokens + 4 * output_tokens) * 1e-6, 6)},
            },
            "stopReason": "toolUse" if tool_call_id else "stop",
            "timestamp": moment,
        })
        return event, text, tool_call_id

    def tool_result(self, tool_call_id: str) -> dict[str, Any]:
        generator = self.generator
        moment = self.tick()
        if generator.random() < 0.5:
            output = self.synthesizer.log_excerpt(generator.randint(50, 6000), moment).text
        else:
            output = self.hidden_text(5, 80)
        return self.tree_entry("message", moment, message={
            "role": "toolResult", "toolCallId": tool_call_id,
            "toolName": generator.choice(("exec", "read", "web_search", "edit")),
            "content": [{"type": "text", "text": output}],
            "isError": generator.random() < 0.05, "timestamp": moment,
        })

    def iter_events(self) -> Iterator[dict[str, Any]]:
        """Yield the window's events; `summary` is complete when the iterator ends."""
        generator = self.generator
        remaining = self.plan.messages
        yield self.tree_entry("model_change", provider="openai", modelId="gpt-5")
        reset_at = -1
        if remaining >= 12 and generator.random() < 0.15:
            reset_at = generator.randrange(remaining // 3, remaining - 2)
        compaction_at = -1
        if remaining >= 40 and generator.random() < 0.1:
            compaction_at = generator.randrange(10, remaining - 5)
        written = 0
        next_role = "user"
        pending_call: str | None = None
        while remaining > 0:
            if written == reset_at and self.recent_active:
                kept = self.recent_active[-min(len(self.recent_active), generator.randint(1, 4))]
                yield self.tree_entry("reset", firstKeptEntryId=kept, reason="new")
            if written == compaction_at and self.recent_active:
                yield self.tree_entry(
                    "compaction", firstKeptEntryId=self.recent_active[-1],
                    tokensBefore=generator.randint(50_000, 180_000),
                    summary=self.hidden_text(20, 60),
                )
            if next_role == "user" and generator.random() < 0.003:
                yield self.tree_entry(
                    "custom_message", customType="note", display=True,
                    content=self.hidden_text(3, 12),
                )
            if next_role == "user" and remaining >= 4 and generator.random() < 0.02:
                rewind_target = self.leaf
                for event in self.rewound_branch(generator.randint(1, 2)):
                    yield event
                    remaining -= 1
                    written += 1
                yield {"type": "leaf", "id": self.new_id(), "parentId": self.leaf,
                       "targetId": rewind_target, "timestamp": iso_time(self.tick())}
                self.leaf = rewind_target
                continue
            if next_role == "toolResult" and pending_call is not None:
                yield self.tool_result(pending_call)
                pending_call = None
                next_role = "assistant"
            elif next_role == "user":
                event, text = self.user_message(abandoned=False)
                self.record_searchable(event, text)
                yield event
                next_role = "assistant"
            else:
                event, text, pending_call = self.assistant_message(abandoned=False)
                self.record_searchable(event, text)
                yield event
                next_role = "toolResult" if pending_call else "user"
            remaining -= 1
            written += 1

    def rewound_branch(self, length: int) -> Iterator[dict[str, Any]]:
        """A user (then assistant) message that a `leaf` event will abandon."""
        for index in range(length):
            if index % 2 == 0:
                event, _ = self.user_message(abandoned=True)
            else:
                event, _, _ = self.assistant_message(abandoned=True)
            yield event

    def record_searchable(self, event: dict[str, Any], text: Text) -> None:
        """Count an active-path user/assistant message (if it has text) for the probes."""
        message_id = event["id"]
        self.recent_active = (self.recent_active + [message_id])[-8:]
        if self.keep_active_ids:
            self.summary.active_message_ids.append(message_id)
        if not text.text.strip() or self.private:
            return
        self.summary.searchable_messages += 1
        self.counter.observe(self.plan.agent, text.words, text.text)
