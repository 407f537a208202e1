"""Every file, test and `engine.` name that the README, `docs/` or a `--help` text points at
exists in the repository.

What counts as a pointer, in the text of `README.md`, every `docs/*.md`,
`corpora/README.md` (the input formats) and the `--help` of the program and of every
command (rendered wide, so that no path is broken across lines):

* a Markdown link target that is not a URL: resolved from the folder of the file that
  holds it; a `#anchor` must name a heading of the target;
* a path whose first part is an entry of the repository's root (`engine/...`,
  `tests/...`, `docs/...`, `.ci/run`, `README.md`, ...), optionally with `::name` (a test
  or function that the file must define);
* a bare file name ending in `.md` (the name of a document, which must then sit beside
  the file that names it, at the root, or in `docs/`), and a path ending in `.md` whatever
  its first part (`spec/behaviour.md`): a document is named to be read, so it must be in
  the repository, beside the file that names it or from the root;
* a dotted `engine.` name: a module, or an attribute reached from one.

Not pointers: absolute paths, `~/` paths, URLs, and names with a placeholder (`<id>`,
`NNNNNN`, `*`), such as the store's own files (`transcripts/...`), which live in a store,
not in the repository. Paths that a command creates when it runs are listed in `MADE_BY_COMMANDS`.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.cli import build_parser
from engine.cli.commands import COMMANDS

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
             ROOT / "corpora" / "README.md"]

#: Paths the documents name that a command makes when it runs (each is gitignored or
#: created on demand), with the command that makes it.
MADE_BY_COMMANDS = {
    "bench/out": "session-search bench (its default --out)",
    "corpora/cache": "session-search bench (the corpus cache of a checkout)",
    "bench/results/100k": "the README's benchmark command (--out bench/results/100k)",
}

LINK = re.compile(r"\]\(([^)\s]+)\)")
PATH = re.compile(r"(?<![\w./~:<>*-])((?:\.?[\w-]+/)+(?:[\w.-]*\w)?/?(?:::\w+)?|[\w.-]+\.md)"
                  r"(?![\w<>*]|/[<*])")
DOTTED = re.compile(r"(?<![\w.])engine(?:\.\w+)+")


def help_texts() -> Iterator[tuple[str, str]]:
    """(label, text) of the program's `--help` and each command's, 1000 columns wide."""
    parser = build_parser()
    parser.formatter_class = wide_formatter(parser.formatter_class)
    yield "session-search --help", parser.format_help()
    subparsers = next(action for action in parser._actions if action.choices and
                      isinstance(action.choices, dict))
    for entry in COMMANDS:
        command = subparsers.choices[entry.name]
        command.formatter_class = wide_formatter(command.formatter_class)
        yield f"session-search {entry.name} --help", command.format_help()


def wide_formatter(formatter: type) -> type:
    return lambda prog: formatter(prog, width=1000)


def headings(path: Path) -> set[str]:
    """The GitHub anchors of a Markdown file's headings."""
    anchors = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            anchors.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return anchors


def pointers(text: str, base: Path) -> Iterator[tuple[str, Path | None, str | None]]:
    """(as written, the path it names or None for a dotted name, the anchor or `::` name)."""
    top = {entry.name for entry in ROOT.iterdir()} - {".git"}
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        file, _, anchor = target.partition("#")
        yield target, (base / file).resolve(), anchor or None
    for match in PATH.finditer(LINK.sub("", text)):
        written = match.group(1)
        path, _, name = written.partition("::")
        first = path.split("/", 1)[0]
        if first in top:
            yield written, ROOT / path, name or None
        elif path.endswith(".md"):
            folders = (base, ROOT, ROOT / "docs") if "/" not in path else (base, ROOT)
            places = [folder / path for folder in folders]
            yield written, next((place for place in places if place.exists()), places[0]), None
    for dotted in DOTTED.findall(text):
        yield dotted, None, None


def missing(written: str, path: Path | None, name: str | None) -> str | None:
    """Why a pointer points at nothing, or None when it is fine."""
    if path is None:
        return None if resolves(written) else "no such module or attribute"
    relative = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)
    if relative.rstrip("/") in MADE_BY_COMMANDS:
        return None
    if not path.exists():
        return "no such file or folder"
    if name is not None and path.suffix == ".md" and name not in headings(path):
        return f"no heading #{name}"
    if name is not None and path.suffix == ".py" and not re.search(
            rf"^\s*(?:async )?(?:def|class) {re.escape(name)}\b",
            path.read_text(encoding="utf-8"), re.MULTILINE):
        return f"{path.name} defines no {name}"
    return None


def resolves(dotted: str) -> bool:
    """Whether `engine.a.b.c` is a module, or an attribute chain from the longest module."""
    parts = dotted.split(".")
    for split in range(len(parts), 0, -1):
        try:
            value = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        try:
            for attribute in parts[split:]:
                value = getattr(value, attribute)
        except AttributeError:
            return False
        return True
    return False


def texts() -> Iterator[tuple[str, str, Path]]:
    for document in DOCUMENTS:
        yield document.relative_to(ROOT).as_posix(), document.read_text(encoding="utf-8"), \
            document.parent
    for label, text in help_texts():
        yield label, text, ROOT


@pytest.mark.parametrize("label, text, base", list(texts()), ids=lambda value: (
    value if isinstance(value, str) and len(value) < 60 else ""))
def test_every_pointer_exists(label: str, text: str, base: Path) -> None:
    problems = [f"{written}: {reason}" for written, path, name in pointers(text, base)
                if (reason := missing(written, path, name)) is not None]
    assert problems == [], f"{label} points at what does not exist"


def test_the_checks_can_fail(tmp_path: Path) -> None:
    """The extraction finds the kinds of pointer it promises, and a wrong one fails."""
    text = ("see [the rules](rules.md#6-scope-which-windows-a-search-sees), "
            "`engine/cli/output.py`, tests/cli/test_help.py::test_every_command_has_an_example"
            ", behaviour.md, spec/openclaw-state-format.md, engine.cli.output.format_bytes, "
            "transcripts/<sessionId>.jsonl, "
            "index/segment-NNNNNN.terms, /tmp/x, ~/.openclaw, https://example.org/a/b and "
            "engine/codec/*.py")
    found = {written: missing(written, path, name)
             for written, path, name in pointers(text, ROOT / "docs")}
    assert found == {
        "rules.md#6-scope-which-windows-a-search-sees": None,
        "engine/cli/output.py": None,
        "tests/cli/test_help.py::test_every_command_has_an_example": None,
        "behaviour.md": "no such file or folder",
        "spec/openclaw-state-format.md": "no such file or folder",
        "engine.cli.output.format_bytes": None,
    }
    wrong = "[x](rules.md#no-such-heading) engine.cli.output.nothing tests/x.py docs/"
    assert [missing(*pointer) for pointer in pointers(wrong, ROOT / "docs")] == [
        "no heading #no-such-heading", "no such file or folder", None,
        "no such module or attribute"]
