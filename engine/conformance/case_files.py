"""Case files: reading them, checking them, and the `Case` value the runner runs.

Owns: the case file format (docs/conformance.md describes it for readers), `Case`,
`load_cases` (every file of a folder, by default the cases shipped in this package),
the feature tags a case may carry (`FEATURES`) and the step and expectation keys a case
may write. Must not touch: what a step does (`engine.conformance.plan`), how a result is
compared (`engine.conformance.compare`), or any backend.

A file (`*.json`, UTF-8) holds cases that share a corpus:

    {"comment": "why these cases exist", "corpus": [SET-UP STEP, ...] | "NAME",
     "cases": [{"id": "scope/namespace-is-literal", "spec": ["§5.3", "seed ¶29"],
                "features": ["scope"], "comment": "...", "config": {...}?,
                "corpus": ...?, "differsOn": {SET: {"spec", "comment"}}?,
                "steps": [STEP, ...]}]}

Every case runs on an empty store: the file's corpus (or the case's own) is loaded, the
case's `config` (the params of `conformance.configure`) applied, then its steps run in
order. `comment` may be a string or a list of strings (lines of one text). Unknown keys
are refused, so a misspelt expectation never passes silently: `CaseFileError` names the
file, the case and the key.

**Expectation sets.** A call's `expect` is what every backend must answer, unless the
specification says a backend answers otherwise: the seed's PostgreSQL path tokenizes
with `simple` and `unaccent` and ranks with its own function, "so scores and result order
can differ from SQLite" (behaviour.md §7.2). A backend says which set of expectations it
is held to (`EXPECTATION_SETS`; `conformance.describe`'s `expectationSet`, `sqlite` when
absent), and a call step may carry `"expectOn": {SET: EXPECT}`: for a backend of that
set, EXPECT replaces the step's `expect` whole. A case with any `expectOn` says why once,
`"differsOn": {SET: {"spec": [UNIT, ...], "comment": "why"}}`, naming the part of the
specification that makes the backend differ; an override without it is refused, so no
override is left unexplained. The overrides are generated from the engine that predicts
the set's backends, not written by hand (`engine.conformance.predicted`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.conformance.spec_units import UNIT_TITLES

#: The folder of the cases shipped in the package (and `corpora/cases/README.md` says so).
CASES_FOLDER = Path(__file__).resolve().parent / "cases"

#: Feature tags: a backend that lacks one says so (`unsupportedFeatures`) and its cases
#: are skipped, not failed.
FEATURES: dict[str, str] = {
    "query-language": "the query policy: validation, literal terms, phrases, AND",
    "tokenizer": "unicode61 remove_diacritics 2: case, diacritics, separators",
    "prefix": "prefix mode (match: prefix): the last word completes",
    "cjk-retry": "CJK terms retried as literal substrings when nothing matched",
    "scope": "session scope: agent namespace, explicit keys, every key, sessionId",
    "ranking": "bm25 scores and the order they give, exactly",
    "recent-order": "order: recent (newest first)",
    "role-filter": "role: user | assistant",
    "excerpts": "snippet(): the 48-token window and its ellipses",
    "lifecycle": "forward indexing, dirty windows, reconcile, the indexing flag",
    "replace": "replacing a transcript (synchronous and deferred rebuilds)",
    "delete": "deleting a session and compaction",
    "archive": "archived windows excluded, counted, restored",
    "large-messages": "messages of hundreds of KiB",
    "many-keys": "thousands of explicit session keys",
    "agent-tool": "the sessions_search agent tool",
    "visibility": "visibility, agent-to-agent policy, sandbox clamp",
    "budgets": "the request and reader time budgets",
    "gateway": "the Gateway's sessions.search (gateway.sessions.search)",
    "history": "chat.history pages: tail, offset, cursor",
    "history-anchors": "history reads around a messageId, across resets",
    "history-tool": "the sessions_history agent tool",
    "ui-search": "the Control UI command palette (ui.search)",
    "key-case": "session keys stored trimmed and lower-cased",
    "redaction": "excerpts and history keep credentials verbatim (no redaction)",
}

#: The expectation sets a backend may be held to (`conformance.describe`'s
#: `expectationSet`): the default, what `expect` says, and those a step may override.
EXPECTATION_SETS: dict[str, str] = {
    "sqlite": "SQLite FTS5: unicode61 remove_diacritics 2 tokens, bm25 scores and order "
              "(the default: every call's `expect`)",
    "postgres": "PostgreSQL: the simple configuration with unaccent, ts_rank scores and "
                "order (behaviour.md §7.2; a step's `expectOn.postgres` when it has one)",
}
DEFAULT_EXPECTATION_SET = "sqlite"

#: The set-up steps a case may write, each a key of its own step object.
SETUP_STEP_KEYS = ("window", "message", "messages", "event", "replace", "delete",
                   "reconcile", "compact", "archive", "restore", "configure")
#: The keys a call step may write beside `call`.
CALL_STEP_KEYS = ("call", "params", "expect", "expectOn", "comment")
#: What an `expect` object of a call may hold (`engine.conformance.compare`).
EXPECT_KEYS = ("result", "match", "unordered", "subset", "prefix", "distinct", "contains", "atMost",
               "absent", "members", "wellFormed", "order", "tolerance", "error", "save")

CASE_KEYS = ("id", "spec", "features", "comment", "corpus", "config", "differsOn", "steps")
#: What a case's `differsOn` says for one expectation set.
DIFFERENCE_KEYS = ("spec", "comment")
FILE_KEYS = ("comment", "corpus", "cases")
CASE_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*(?:/[a-z0-9]+(?:-[a-z0-9]+)*)+$")


class CaseFileError(ValueError):
    """A case file that is not valid; the message names the file, the case and why."""


@dataclass(frozen=True, slots=True)
class Difference:
    """Why a case expects other answers of the backends of one expectation set: the
    parts of the specification that say so, and the reason in words."""

    expectation_set: str
    spec: tuple[str, ...]
    comment: str


@dataclass(frozen=True, slots=True)
class Case:
    """One case: what it pins (`spec`, `features`), its corpus, configuration and steps.

    `corpus` is a tuple of set-up steps or the name of a named corpus; `config` the
    params of `conformance.configure` (None: the defaults); `source` the file's name.
    """

    id: str
    spec: tuple[str, ...]
    features: tuple[str, ...]
    comment: str
    corpus: tuple[dict[str, Any], ...] | str
    config: dict[str, Any] | None
    steps: tuple[dict[str, Any], ...]
    source: str
    differences: tuple[Difference, ...] = ()

    def methods(self) -> set[str]:
        """The product methods the steps call."""
        return {step["call"] for step in self.steps if "call" in step}

    def differs_on(self, expectation_set: str) -> Difference | None:
        """Why the case expects other answers of the backends of `expectation_set`
        (None: it expects of them what it expects of every backend)."""
        return next((difference for difference in self.differences
                     if difference.expectation_set == expectation_set), None)


def text_of(comment: Any) -> str:
    """A comment as one text (a list of strings is joined with spaces).

    >>> text_of(["one", "two"]), text_of(None)
    ('one two', '')
    """
    if comment is None:
        return ""
    if isinstance(comment, list):
        return " ".join(str(line) for line in comment)
    return str(comment)


def _only(value: dict[str, Any], allowed: Iterable[str], where: str, what: str = "key(s)",
          suffix: str = "") -> None:
    """Refuse any key of `value` not in `allowed`, naming them and the allowed ones."""
    allowed = tuple(allowed)
    unknown = sorted(set(value) - set(allowed))
    if unknown:
        raise CaseFileError(f"{where}: unknown {what} {', '.join(unknown)}{suffix} "
                            f"(expected: {', '.join(allowed)})")


def _check_step(step: Any, where: str) -> None:
    if not isinstance(step, dict):
        raise CaseFileError(f"{where}: a step must be an object")
    kinds = [key for key in step if key in SETUP_STEP_KEYS or key == "call"]
    if len(kinds) != 1:
        raise CaseFileError(f"{where}: a step needs exactly one of call, "
                            f"{', '.join(SETUP_STEP_KEYS)} (found {kinds or 'none'})")
    allowed = CALL_STEP_KEYS if kinds[0] == "call" else (kinds[0], "expect", "comment")
    _only(step, allowed, where, suffix=f" in a {kinds[0]} step")
    if kinds[0] == "call":
        if not isinstance(step["call"], str):
            raise CaseFileError(f"{where}: call must name a method")
        expect = step.get("expect", {})
        if not isinstance(expect, dict):
            raise CaseFileError(f"{where}: expect must be an object")
        _only(expect, EXPECT_KEYS, where, "expectation(s)")
        if "expectOn" not in step:
            return
        overrides = step["expectOn"]
        if not isinstance(overrides, dict) or not overrides:
            raise CaseFileError(f"{where}: expectOn must be an object of expectation "
                                "sets, each with the expect that replaces the step's")
        for name, override in overrides.items():
            _expectation_set(name, f"{where} expectOn")
            if not isinstance(override, dict):
                raise CaseFileError(f"{where}: expectOn.{name} must be an object")
            _only(override, EXPECT_KEYS, f"{where} expectOn.{name}", "expectation(s)")


def _expectation_set(name: str, where: str) -> None:
    """Refuse a name that is no expectation set a step may override."""
    overridable = [known for known in EXPECTATION_SETS if known != DEFAULT_EXPECTATION_SET]
    if name not in overridable:
        raise CaseFileError(f"{where}: {name!r} is no expectation set a case may override "
                            f"(the sets: {', '.join(overridable)}; {DEFAULT_EXPECTATION_SET} "
                            "is the step's own expect)")


def _differences(item: dict[str, Any], steps: list[Any], where: str) -> tuple[Difference, ...]:
    """The case's `differsOn`, checked against the sets its steps override: every set
    overridden is explained. (An explanation not yet followed by overrides is what the
    case is between its author's `differsOn` and `engine.conformance.predicted`'s run,
    which fills them; `tests/conformance/test_expectation_sets.py` refuses it shipped.)"""
    declared = item.get("differsOn", {})
    if not isinstance(declared, dict):
        raise CaseFileError(f"{where}: differsOn must be an object of expectation sets")
    differences = []
    for name, entry in declared.items():
        _expectation_set(name, f"{where} differsOn")
        if not isinstance(entry, dict):
            raise CaseFileError(f"{where}: differsOn.{name} must be {{\"spec\": [...], "
                                "\"comment\": \"why\"}")
        _only(entry, DIFFERENCE_KEYS, f"{where} differsOn.{name}")
        comment = text_of(entry.get("comment"))
        if not comment.strip():
            raise CaseFileError(f"{where}: differsOn.{name} must say why in its comment")
        differences.append(Difference(name, _strings(entry.get("spec"), f"{where} differsOn."
                                                     f"{name}", "spec", UNIT_TITLES), comment))
    overridden = {name for step in steps if isinstance(step, dict)
                  for name in step.get("expectOn", {})}
    unexplained = sorted(overridden - set(declared))
    if unexplained:
        raise CaseFileError(f"{where}: steps override the expectations of "
                            f"{', '.join(unexplained)} but differsOn does not say why")
    return tuple(differences)


def _strings(value: Any, where: str, name: str, known: Iterable[str]) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise CaseFileError(f"{where}: {name} must be a non-empty list of strings")
    known_set = set(known)
    unknown = [item for item in value if item not in known_set]
    if unknown:
        raise CaseFileError(f"{where}: unknown {name} {', '.join(unknown)} (the list is "
                            f"engine/conformance/{'spec_units.py' if name == 'spec' else 'case_files.py'})")
    return tuple(value)


def _corpus(value: Any, where: str) -> tuple[dict[str, Any], ...] | str:
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        raise CaseFileError(f"{where}: corpus must be a list of set-up steps or a name")
    for number, step in enumerate(value):
        _check_step(step, f"{where} corpus step {number}")
        if "call" in step:
            raise CaseFileError(f"{where} corpus step {number}: a corpus holds set-up "
                                "steps only")
    return tuple(value)


def cases_of_file(document: Any, source: str) -> list[Case]:
    """The cases of one decoded file, checked (`source` names it in messages)."""
    if not isinstance(document, dict):
        raise CaseFileError(f"{source}: a case file holds one object")
    _only(document, FILE_KEYS, source)
    corpus = _corpus(document.get("corpus", []), source)
    cases = document.get("cases")
    if not isinstance(cases, list) or not cases:
        raise CaseFileError(f"{source}: cases must be a non-empty list")
    loaded = []
    for number, item in enumerate(cases):
        where = f"{source} case {number}"
        if not isinstance(item, dict):
            raise CaseFileError(f"{where}: a case must be an object")
        case_id = item.get("id")
        if not isinstance(case_id, str) or not CASE_ID.match(case_id):
            raise CaseFileError(f"{where}: id must look like group/what-it-pins "
                                f"(lower-case words, '-' and '/'), not {case_id!r}")
        where = f"{source} case {case_id}"
        _only(item, CASE_KEYS, where)
        steps = item.get("steps")
        if not isinstance(steps, list) or not steps:
            raise CaseFileError(f"{where}: steps must be a non-empty list")
        for index, step in enumerate(steps):
            _check_step(step, f"{where} step {index}")
        config = item.get("config")
        if config is not None and not isinstance(config, dict):
            raise CaseFileError(f"{where}: config must be an object (the params of "
                                "conformance.configure)")
        loaded.append(Case(
            id=case_id, spec=_strings(item.get("spec"), where, "spec", UNIT_TITLES),
            features=_strings(item.get("features"), where, "features", FEATURES),
            comment=text_of(item.get("comment")),
            corpus=_corpus(item["corpus"], where) if "corpus" in item else corpus,
            config=config, steps=tuple(steps), source=source,
            differences=_differences(item, steps, where)))
    return loaded


def load_cases(folder: Path | None = None) -> list[Case]:
    """Every case of every `*.json` file under `folder` (default: the shipped cases),
    in file-name order; `CaseFileError` for a file that is not valid or an id used twice."""
    root = CASES_FOLDER if folder is None else folder
    if not root.is_dir():
        raise CaseFileError(f"{root}: no such folder of case files")
    cases: list[Case] = []
    seen: dict[str, str] = {}
    for path in sorted(root.rglob("*.json")):
        source = path.relative_to(root).as_posix()
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, ValueError) as error:
            raise CaseFileError(f"{source}: not a JSON file ({error})") from None
        for case in cases_of_file(document, source):
            if case.id in seen:
                raise CaseFileError(f"{source}: case id {case.id} is also in {seen[case.id]}")
            seen[case.id] = source
            cases.append(case)
    return cases
