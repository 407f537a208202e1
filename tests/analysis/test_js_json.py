"""`js_json` and `js_number` (engine/analysis/js_json.py) against Node's `JSON.stringify`.

The byte budget is measured on JavaScript's text, so the differential oracle is the real
thing: a Node process (the OpenClaw oracle's Node from the cache, else a `node` on the
path) stringifies the same values. A Python string is handed over as its UTF-16 code
units (`json.dumps` escapes lone surrogates, and a high surrogate followed by a low one
is a pair in JavaScript). Without Node the differential tests skip, except under
`CI=true`, where the oracle's Node is installed (`installation.ensure_installed`) and a
failure fails them, as the oracle tests do.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from engine.analysis.js_json import js_json, js_json_bytes, js_number, js_string
from tests.oracles.openclaw.installation import (
    InstallationError,
    cache_root,
    ensure_installed,
    install_folder,
    installation_in,
)
from tests.oracles.oracle_run import running_in_ci, skip_or_fail

STRINGIFY = ("const lines = require('readline').createInterface({input: process.stdin});"
             "lines.on('line', (line) => process.stdout.write("
             "JSON.stringify(JSON.parse(line)) + '\\n'));")


def node_binary() -> Path | None:
    """The oracle's Node when installed, else (outside CI) one on the path; in CI, the
    oracle's, installed first."""
    installed = installation_in(install_folder(cache_root())).node
    if installed.is_file():
        return installed
    if running_in_ci():
        try:
            return ensure_installed().node
        except InstallationError as error:
            skip_or_fail(f"installing Node failed: {error}")
    found = shutil.which("node")
    return Path(found) if found else None


class Node:
    """A Node process that answers each JSON line with `JSON.stringify` of its value."""

    def __init__(self, binary: Path) -> None:
        self.process = subprocess.Popen([str(binary), "-e", STRINGIFY], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, encoding="utf-8")

    def stringify(self, value: Any) -> str:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(value, ensure_ascii=True, allow_nan=False) + "\n")
        self.process.stdin.flush()
        return self.process.stdout.readline().removesuffix("\n")

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(30)


@pytest.fixture(scope="module")
def node() -> Iterator[Node]:
    binary = node_binary()
    if binary is None:
        skip_or_fail("no Node.js: neither the OpenClaw oracle's cache nor `node` on the path")
        raise AssertionError("unreachable")
    process = Node(binary)
    try:
        yield process
    finally:
        process.close()


finite_floats = st.floats(allow_nan=False, allow_infinity=False)
#: code points including lone surrogates, controls, astral characters and JSON's escapes
characters = st.one_of(
    st.characters(codec=None, min_codepoint=0, max_codepoint=0x10FFFF),
    st.sampled_from(['"', "\\", "\n", "\t", "\u2028", "\u007f", "\ud800", "\udfff", "\ud83d",
                     "\ude00", "é", "😀"]))
texts = st.text(characters, max_size=30)
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), finite_floats, st.integers(-2**63, 2**64 - 1), texts),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(texts, inner, max_size=4)),
    max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(finite_floats)
@example(1e21)
@example(1e-7)
@example(123e-20)
@example(5e-324)
@example(1.7976931348623157e308)
@example(0.1 + 0.2)
@example(-0.0)
@example(123456789012345680000.0)
def test_numbers_are_written_as_javascript_writes_them(node: Node, number: float) -> None:
    assert js_number(number) == node.stringify(number)


@settings(max_examples=200, deadline=None)
@given(st.integers(-2**64, 2**64))
def test_integers_are_written_as_the_double_javascript_holds(node: Node, number: int) -> None:
    assert js_number(number) == node.stringify(number)


@settings(max_examples=300, deadline=None)
@given(texts)
@example("\ud83d\ude00")  # a pair held as two code points is one character in JavaScript
@example("\ude00\ud83d")
@example("a\ud800")
def test_strings_are_written_as_javascript_writes_them(node: Node, text: str) -> None:
    written = js_string(text)
    assert written == node.stringify(text)
    assert js_json_bytes(text) == len(written.encode("utf-8"))


@settings(max_examples=150, deadline=None)
@given(json_values)
def test_values_and_their_byte_counts_match_javascript(node: Node, value: Any) -> None:
    expected = node.stringify(value)
    assert js_json(value) == expected
    assert js_json_bytes(value) == len(expected.encode("utf-8"))


# ----- without Node -----------------------------------------------------------------------


@pytest.mark.parametrize(("value", "text"), [
    (0.0, "0"), (-0.0, "0"), (1.0, "1"), (-2.5, "-2.5"), (1e21, "1e+21"), (1e20, "100000000000000000000"),
    (1e-6, "0.000001"), (1e-7, "1e-7"), (1.5e-7, "1.5e-7"), (-1.375e-6, "-0.000001375"),
    (5e-324, "5e-324"), (1.7976931348623157e308, "1.7976931348623157e+308"),
    (math.nan, "null"), (math.inf, "null"), (2**64, "18446744073709552000"), (7, "7"),
])
def test_known_numbers(value: float, text: str) -> None:
    assert js_number(value) == text


def test_booleans_are_not_numbers_and_other_types_are_refused() -> None:
    with pytest.raises(TypeError):
        js_number(True)
    with pytest.raises(TypeError, match="not a JSON value: set"):
        js_json({1})
    assert js_json([True, False, None, (1, "a")]) == '[true,false,null,[1,"a"]]'


def test_a_hit_weighs_its_javascript_text() -> None:
    hit = {"sessionKey": "main", "timestamp": 123.0, "role": "assistant", "snippet": "é\n\"",
           "score": 1e-06, "sessionId": "s", "messageId": "m"}
    text = js_json(hit)
    assert text == ('{"sessionKey":"main","timestamp":123,"role":"assistant","snippet":"é\\n\\"",'
                    '"score":0.000001,"sessionId":"s","messageId":"m"}')
    assert js_json_bytes(hit) == len(text.encode("utf-8")) == len(text) + 1
