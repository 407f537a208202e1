"""The case of a session key: the engine's `canonical_session_key` against OpenClaw's own.

OpenClaw 2026.9.6 stores and compares every key in one form
(`normalizeSessionKeyPreservingOpaquePeerIds`): trimmed, lower-cased, but for the opaque
peer ids of Signal groups and Matrix rooms. The adapter's `keys.canonical` runs that
function on the keys given; the engine must give the same form for every one: keys as
channels write them, the case-keeping shapes with their edges (a thread marker in any
case, spaces around the parts, several `agent:` wrappers), non-ASCII letters whose lower
case is special (final sigma, dotted capital I, the Kelvin sign, long s), and generated
keys over an alphabet of those pieces.
"""

from __future__ import annotations

import random

from engine.model import canonical_session_key
from tests.oracles.oracle_run import oracle_summary, running_adapter

FIXED_KEYS = [
    "agent:main:main", "Agent:Main:Main", "  agent:main:Telegram:Group:42  ", "GLOBAL",
    "unknown", "agent:Ops:Slack:Channel:C0ABC:Thread:1700000000.1", "",
    "agent:main:signal:group:AbC+dE=", "agent:main:Signal:Group:  AbC  :x",
    "agent:main:signal:group:A:signal:group:B", "signal:group:XyZ",
    "agent:main:matrix:channel:!Room:Server.Org", "agent:main:Matrix:Group:!R:S:THREAD:$Ev",
    "agent:main:matrix:channel:!R:S:thread:", "agent:a:agent:b:matrix:channel:!Q",
    "agent:a:::matrix:group:!Q:thread:T", "matrix:channel:", "agent:main:matrix:dm:!X",
    "agent:main:ΟΔΟΣ ΣΑΣ", "agent:main:İstanbul", "agent:main:ſignal:group:X",
    "agent:main:\u212aelvin", "agent:main:ß:ẞ", "agent:main:ǅ:ǈ", "\ufeffagent:main:X\u3000",
    "agent:main:matrix:channel: !Spaced:thread:T", "agent:main:x\u00a0Y",
]

PIECES = ["agent:", "main:", "Ops:", "signal:", "Signal:", "group:", "GROUP:", "matrix:",
          "Matrix:", "channel:", "thread:", "THREAD:", ":thread:", "!Room", "AbC", "xYz", " ",
          "\u3000", ":", "Σ", "ς", "İ", "ß", "\u212a", "ſ", "Ǆ", "é", "É", "42", "$Ev", "=", "+"]


def generated_keys(count: int, seed: int = 20261205) -> list[str]:
    """`count` keys of 1..8 random pieces (a fixed seed, so a failure reproduces)."""
    chooser = random.Random(seed)
    return ["".join(chooser.choice(PIECES) for _ in range(chooser.randint(1, 8)))
            for _ in range(count)]


def test_the_engine_writes_a_key_in_openclaws_form(openclaw_installation, tmp_path,
                                                   pytestconfig) -> None:
    keys = FIXED_KEYS + generated_keys(3000)
    with running_adapter(openclaw_installation, tmp_path / "state") as adapter:
        theirs = adapter.call("keys.canonical", {"keys": keys})["keys"]
    differences = [(key, ours, their) for key, their in zip(keys, theirs, strict=True)
                   if (ours := canonical_session_key(key)) != their]
    kept_case = sum(1 for key, their in zip(keys, theirs, strict=True)
                    if their != their.lower())
    oracle_summary(pytestconfig).append(
        f"session keys: {len(keys)} compared with OpenClaw's normalization, "
        f"{kept_case} keeping some case, {len(differences)} differences")
    assert not differences, "\n".join(f"{key!r}: ours {ours!r}, OpenClaw {their!r}"
                                      for key, ours, their in differences[:20])
    assert kept_case >= 20  # the case-keeping shapes were exercised
