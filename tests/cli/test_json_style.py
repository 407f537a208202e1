"""One key style in every `--json` document (docs/protocol.md, "JSON style").

Every command that prints JSON runs on a store of the demo corpus, on both backends, and
every key of its document must be camelCase, except the keys the protocol names as data:
an agent id under `partitions`, a tokenizer option's own name under `options`, a dumped
record's `fields`, and a history page's `messages` (the transcript's messages as OpenClaw
answers them, `__openclaw` included); and the symbols of bm25's formula in `explain`
(`N`, `D`). A time that is whole is an integer.
"""

from __future__ import annotations

import io
import json
import re
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from engine.cli import main
from engine.model import json_key

DEMO = Path(__file__).resolve().parents[2] / "engine" / "demo_corpus"

#: Keys whose value is keyed by data (not by the engine's names).
DATA_KEYED = {"partitions", "options", "fields"}
#: Keys whose value is data throughout (the transcript's own messages).
DATA = {"fields", "options", "messages"}

CAMEL = re.compile(r"[a-z][a-zA-Z0-9]*")
#: The symbols of bm25's formula as behaviour.md writes it (`explain`'s `bm25` object).
FORMULA_SYMBOLS = {"N", "D"}


def json_of(*argv: str) -> Any:
    buffer = io.StringIO()
    with redirect_stdout(buffer):
        main(list(argv))
    return json.loads(buffer.getvalue())


def off_style(document: Any, path: str = "$") -> list[str]:
    """The keys of `document` that are not camelCase, with where they are.

    >>> off_style({"sessionKey": 1, "crc_ok": {"a_b": 1}, "partitions": {"work_team": {}}})
    ['$.crc_ok', '$.crc_ok.a_b']
    """
    found: list[str] = []
    if isinstance(document, dict):
        for key, value in document.items():
            if not CAMEL.fullmatch(key) and key not in FORMULA_SYMBOLS:
                found.append(f"{path}.{key}")
            if key in DATA:
                continue
            if key in DATA_KEYED and isinstance(value, dict):
                for inner_key, inner in value.items():
                    found.extend(off_style(inner, f"{path}.{key}[{inner_key}]"))
            else:
                found.extend(off_style(value, f"{path}.{key}"))
    elif isinstance(document, list):
        for index, value in enumerate(document):
            found.extend(off_style(value, f"{path}[{index}]"))
    return found


def whole_floats(document: Any, path: str = "$") -> list[str]:
    """Floats that are whole numbers (which JSON should carry as integers)."""
    if isinstance(document, float) and document.is_integer():
        return [path]
    if isinstance(document, dict):
        return [found for key, value in document.items() if key not in DATA
                for found in whole_floats(value, f"{path}.{key}")]
    if isinstance(document, list):
        return [found for index, value in enumerate(document)
                for found in whole_floats(value, f"{path}[{index}]")]
    return []


@pytest.fixture(scope="module", params=["reference", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp(f"style-{request.param}") / "store"
    return folder


def test_every_json_document_uses_one_key_style(store: Path) -> None:
    backend = "sqlite" if "sqlite" in str(store.parent) else "reference"
    documents = {
        "import": json_of("import", "--store", str(store), "--backend", backend, "--create",
                          "--json", str(DEMO)),
        "stats": json_of("stats", "--store", str(store), "--json"),
        "verify": json_of("verify", "--store", str(store), "--json"),
        "search": json_of("search", "--store", str(store), "--json", "--all-sessions",
                          "roadmap"),
        "ui-search": json_of("ui-search", "--store", str(store), "--json", "roadmap"),
        "reconcile": json_of("reconcile", "--store", str(store), "--json"),
        "compact": json_of("compact", "--store", str(store), "--json"),
        "tokenize": json_of("tokenize", "--json", "Café crème"),
    }
    if backend == "reference":
        documents["explain"] = json_of("explain", "--store", str(store), "--json", "roadmap")
        documents["dump"] = json_of("dump", "--store", str(store), "--json", "store.meta")
    hits = documents["search"]["hits"]
    assert hits, "the demo corpus has hits for 'roadmap'"
    key = hits[0]["sessionKey"]
    documents["history"] = json_of("history", "--store", str(store), "--json", key)
    assert documents["stats"]["messagesIndexed"] > 0
    problems = {name: off_style(document) + whole_floats(document)
                for name, document in documents.items()}
    assert {name: found for name, found in problems.items() if found} == {}


def test_json_key_is_the_one_conversion() -> None:
    assert [json_key(name) for name in ("messages_indexed", "index_bytes", "agents")] == [
        "messagesIndexed", "indexBytes", "agents"]
