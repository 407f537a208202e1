"""The layers of `engine/`: a module imports only from the layers below its own.

The table, top to bottom. Names joined by `|` are siblings on one layer and do not import
each other. The tests read the table from this docstring, so this is the one place the
layering is written (README.md's Layout section lists the same layers, checked below):

    __main__
    cli
    explorer
    bench | conformance
    rpc | mcp_server
    agent_tools | ingest | diagnostics | inspection
    store
    backends
    search
    results | history
    query
    index | transcript
    analysis | codec | score | directory
    model | light_values | errors | config | file_system | gc_policy | progress | cancellation | held_signals | demo_corpus | __init__

Rules of their own (such a name may import exactly the names listed, whatever the layers
above say):

    history: transcript, model, errors, config, analysis, codec, directory
    model: errors
    config: errors
    file_system: errors
    __init__: store, backends, ingest, demo_corpus, model, query, history, agent_tools, errors
    cli: __init__, store, agent_tools, ingest, diagnostics, inspection, bench, conformance, rpc, mcp_server, explorer, model, errors, config, progress, cancellation, gc_policy, demo_corpus
    conformance: __init__, store, agent_tools, ingest, rpc, model, errors, config
    rpc: __init__, store, agent_tools, model, errors, config, progress, cancellation
    mcp_server: __init__, store, agent_tools, ingest, model, errors
    explorer: __init__, store, agent_tools, ingest, inspection, conformance, model, errors

The command line, the RPC server, the MCP server and the explorer are doors a user walks
through, so they import only the front door (`engine`), the wings (`store`, `agent_tools`,
`ingest`, `diagnostics`, `bench`, and `inspection`, the teaching wing; the command line
also `rpc`, `mcp_server` and `explorer`, which it serves; the explorer also `conformance`,
whose case format its Compare panel saves) and the bottom layer's shared
values (`model`, `errors`, ...), never the stages below the wings: what a command needs
of a stage, a wing or the front door offers.

A name is a sub-package (`engine/<name>/`) or a top-level module (`engine/<name>.py`);
`__init__` is `engine/__init__.py` itself (`from engine import __version__`): the front
door, on the bottom layer so that every module may read `__version__`, with a rule of its
own for the names it re-exports (it imports them lazily, on first use, so loading it
loads nothing above it). A planned
name is placed before it exists (listed in `PLANNED`), so that its first module already
meets its rule; `history` was placed that way. `errors` imports nothing, so `model`,
`config` and `file_system` (which raise its errors) may use it although it shares their
layer.

Imports are read with `ast` from every module's source: `import engine.x`, `from engine.x
import y`, `from engine import x` (x a sub-package or module), relative imports, imports
inside functions and under `TYPE_CHECKING`, and module names written as strings for
`importlib` when they name a module that exists.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENGINE = ROOT / "engine"
README = ROOT / "README.md"

#: The known violations, each with its reason, until the code that causes it is moved.
#: `(importing module, imported module)`.
ALLOWED: dict[tuple[str, str], str] = {}

#: Names the table places before they exist.
PLANNED: frozenset[str] = frozenset()


# ----- the table ----------------------------------------------------------------------


def _indented_blocks() -> list[list[str]]:
    """The indented blocks of this module's docstring, in order, each as stripped lines."""
    blocks: list[list[str]] = []
    previous_indented = False
    for line in (__doc__ or "").splitlines():
        indented = line.startswith("    ") and bool(line.strip())
        if indented:
            if not previous_indented:
                blocks.append([])
            blocks[-1].append(line.strip())
        previous_indented = indented or (previous_indented and not line.strip())
    return blocks


def read_layers() -> tuple[tuple[str, ...], ...]:
    """The table of the docstring (its first indented block), top layer first."""
    return tuple(
        tuple(name.strip() for name in line.split("|")) for line in _indented_blocks()[0]
    )


def read_own_rules() -> dict[str, frozenset[str]]:
    """The names with a rule of their own (the second block) and what each may import."""
    rules = {}
    for line in _indented_blocks()[1]:
        name, allowed = line.split(":")
        rules[name.strip()] = frozenset(part.strip() for part in allowed.split(","))
    return rules


LAYERS = read_layers()
OWN_RULES = read_own_rules()
#: name -> its layer number, counted from the bottom (0).
LAYER_OF = {name: len(LAYERS) - 1 - row for row, names in enumerate(LAYERS) for name in names}


def render_table() -> str:
    """The table as the failure messages show it."""
    width = len(str(len(LAYERS) - 1))
    return "\n".join(
        f"  {LAYER_OF[names[0]]:>{width}}  {' | '.join(names)}" for names in LAYERS
    )


# ----- reading the imports ------------------------------------------------------------


@dataclass(frozen=True)
class Import:
    """One `engine.*` module named by one module of `engine/`."""

    importer: str  # dotted name of the importing module
    imported: str  # dotted name of the imported module or package
    line: int


def module_name(path: Path) -> str:
    """`engine/cli/output.py` -> `engine.cli.output`; a package's `__init__.py` -> the package."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def exists(dotted: str) -> bool:
    """Whether `dotted` names a module or package of the checkout."""
    base = ROOT.joinpath(*dotted.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def imports_in(source: str, importer: str, *, is_package: bool) -> Iterator[Import]:
    """Every `engine.*` import of one module's source (the module docstring says which
    forms count); `importer` is the module's dotted name."""
    package = importer if is_package else importer.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                anchor = ".".join(parts[: len(parts) - node.level + 1])
                base = f"{anchor}.{base}" if base else anchor
            # `from engine import gc_policy` names the module, `from engine import
            # __version__` the package itself.
            names = list(dict.fromkeys(
                f"{base}.{alias.name}" if exists(f"{base}.{alias.name}") else base
                for alias in node.names
            ))
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str)
              and re.fullmatch(r"engine(\.\w+)+(:\w+)?", node.value)):
            dotted = node.value.split(":")[0]
            if exists(dotted):
                names = [dotted]
        for name in names:
            if name == "engine" or name.startswith("engine."):
                yield Import(importer, name, getattr(node, "lineno", 0))


def imports_of(path: Path) -> Iterator[Import]:
    """Every `engine.*` import of one module file."""
    return imports_in(path.read_text(encoding="utf-8"), module_name(path),
                      is_package=path.name == "__init__.py")


def unit(dotted: str) -> str:
    """The table's name for a module: its sub-package, top-level module, or `__init__`."""
    parts = dotted.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def all_imports() -> list[Import]:
    return [found for path in sorted(ENGINE.rglob("*.py")) for found in imports_of(path)]


def broken_rule(importer: str, imported: str) -> str | None:
    """Which rule `importer` importing `imported` breaks (names of the table), or None."""
    if importer == imported:
        return None
    if importer in OWN_RULES:
        if imported in OWN_RULES[importer]:
            return None
        return f"{importer} may import only {', '.join(sorted(OWN_RULES[importer]))}"
    if imported not in LAYER_OF:
        return f"{imported} is not in the table"
    if LAYER_OF[imported] < LAYER_OF[importer]:
        return None
    if LAYER_OF[imported] == LAYER_OF[importer]:
        return f"siblings on layer {LAYER_OF[importer]} do not import each other"
    return (f"a lower layer never imports a higher one ({importer} is on layer "
            f"{LAYER_OF[importer]}, {imported} on layer {LAYER_OF[imported]})")


# ----- the tests ----------------------------------------------------------------------


def test_the_table_places_every_package_and_top_level_module():
    present = {path.name for path in ENGINE.iterdir()
               if path.is_dir() and (path / "__init__.py").is_file()}
    present |= {path.stem for path in ENGINE.glob("*.py")}
    missing = sorted(present - set(LAYER_OF))
    assert not missing, (
        f"engine/ has {', '.join(missing)}, which the layer table of tests/test_layers.py "
        f"does not place; add each to the layer it belongs to:\n{render_table()}"
    )
    unknown = sorted(set(LAYER_OF) - present - PLANNED)
    assert not unknown, f"the table names {', '.join(unknown)}, which engine/ does not have"
    assert set(OWN_RULES) <= set(LAYER_OF)
    for name, allowed in OWN_RULES.items():
        assert allowed <= set(LAYER_OF), f"{name}'s own rule names a name not in the table"


def test_every_import_follows_the_layers():
    violations = []
    used_allowances = set()
    for found in all_imports():
        importer, imported = unit(found.importer), unit(found.imported)
        rule = broken_rule(importer, imported)
        if rule is None:
            continue
        if (found.importer, found.imported) in ALLOWED:
            used_allowances.add((found.importer, found.imported))
            continue
        violations.append(
            f"{found.importer} (line {found.line}) imports {found.imported}: "
            f"{importer} may not import {imported}: {rule}"
        )
    assert not violations, (
        "imports against the layers of tests/test_layers.py:\n  " + "\n  ".join(violations)
        + f"\nthe layers (bottom = 0; `|` joins siblings):\n{render_table()}"
    )
    stale = sorted(set(ALLOWED) - used_allowances)
    assert not stale, (
        f"ALLOWED in tests/test_layers.py lists imports that no longer break a rule: {stale}; "
        "delete those entries"
    )


def test_the_rules_themselves():
    assert broken_rule("search", "index") is None
    assert broken_rule("index", "search") is not None
    assert "siblings" in (broken_rule("index", "transcript") or "")
    assert "siblings" in (broken_rule("results", "history") or "")
    assert broken_rule("history", "transcript") is None
    for forbidden in ("index", "search", "query", "score", "results"):
        assert broken_rule("history", forbidden) is not None
    assert broken_rule("model", "errors") is None
    assert broken_rule("model", "config") is not None
    assert broken_rule("errors", "model") is not None
    assert broken_rule("__main__", "cli") is None
    assert broken_rule("gc_policy", "errors") is not None
    assert broken_rule("__init__", "agent_tools") is None  # the front door re-exports the tools
    assert broken_rule("__init__", "cli") is not None  # but never the command line
    # The doors: the command line and the RPC server reach the engine through the front
    # door and the wings only.
    assert broken_rule("cli", "__init__") is None
    assert broken_rule("cli", "store") is None
    assert broken_rule("rpc", "agent_tools") is None
    for stage in ("analysis", "query", "search", "history", "index", "transcript", "backends"):
        assert broken_rule("cli", stage) is not None
        assert broken_rule("rpc", stage) is not None
    assert broken_rule("rpc", "bench") is not None  # a wing above the server stays above it
    assert broken_rule("mcp_server", "agent_tools") is None
    assert broken_rule("mcp_server", "rpc") is not None  # siblings: two doors, neither inside
    assert broken_rule("cli", "mcp_server") is None
    for stage in ("query", "search", "history", "backends"):
        assert broken_rule("mcp_server", stage) is not None


def test_imports_are_read_in_every_form():
    source = (
        "from typing import TYPE_CHECKING\n"
        "import engine.model\n"
        "from engine import __version__, gc_policy\n"
        "from . import sibling\n"
        "from ..index.view import IndexView\n"
        "if TYPE_CHECKING:\n"
        "    from engine.query import ast\n"
        "def later():\n"
        "    from engine.results.bounds import bound_snippet\n"
        "TARGET = 'engine.backends.reference.backend:ReferenceBackend'\n"
        "NOT_A_MODULE = 'engine.nothing_here'\n"
    )
    found = [item.imported for item in imports_in(source, "engine.search.probe", is_package=False)]
    assert sorted(found) == sorted([
        "engine.model", "engine", "engine.gc_policy", "engine.search", "engine.index.view",
        "engine.query.ast", "engine.results.bounds", "engine.backends.reference.backend",
    ])
    assert [unit(name) for name in ("engine", "engine.gc_policy", "engine.cli.output")] == [
        "__init__", "gc_policy", "cli"]


def test_the_readme_lists_the_same_layers():
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"^\s+(\d+)\s+(\w+)(?:/|\.py)\s", section, flags=re.MULTILINE)
    expected = [(str(LAYER_OF[name]), name) for names in LAYERS for name in names]
    assert listed == expected, (
        "README.md's Layout section must list the layers of tests/test_layers.py, one line "
        f"per name, top first:\n{render_table()}"
    )


# ----- third-party modules stay in their rooms ------------------------------------------

#: The libraries that belong to one room of the engine, and the modules (dotted prefixes)
#: that may import them: SQLite to its backend, that backend's verification and the
#: benchmark's upstream-speed comparators; msgpack to the byte layouts (the codec) and the
#: comparator that writes the same records; psycopg to the table generator that probes a
#: real server (and, later, the PostgreSQL backend); the MCP SDK (an optional extra) to
#: the one module of the MCP server that speaks it; Starlette and uvicorn (the `explore`
#: extra) to the explorer's application and its server. The table generators under
#: `analysis/tables` probe the real programs they model.
ROOMS: dict[str, tuple[str, ...]] = {
    "sqlite3": ("engine.backends.sqlite", "engine.backends.sqlite.backend",
                "engine.backends.sqlite.verify", "engine.bench", "engine.analysis.tables"),
    "msgpack": ("engine.codec", "engine.bench.sqlite_kernel"),
    "psycopg": ("engine.backends.postgres", "engine.analysis.tables"),
    "mcp": ("engine.mcp_server.server",),
    "starlette": ("engine.explorer.app",),
    "uvicorn": ("engine.explorer.server",),
}


def third_party_imports(source: str) -> Iterator[tuple[str, int]]:
    """The top-level name and line of every absolute import of a module's source.

    >>> list(third_party_imports("import sqlite3\\nfrom msgpack import packb\\nfrom . import x"))
    [('sqlite3', 1), ('msgpack', 2)]
    """
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name.split(".")[0], node.lineno
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module.split(".")[0], node.lineno


def room_violations(module: str, source: str) -> list[str]:
    """Imports of a roomed library by `module` outside its room."""
    return [f"{module} (line {line}) imports {name}, which only "
            f"{', '.join(ROOMS[name])} may import"
            for name, line in third_party_imports(source)
            if name in ROOMS and not any(module == room or module.startswith(room + ".")
                                         for room in ROOMS[name])]


def test_third_party_modules_stay_in_their_rooms():
    violations = [violation for path in sorted(ENGINE.rglob("*.py"))
                  for violation in room_violations(module_name(path),
                                                   path.read_text(encoding="utf-8"))]
    assert not violations, "\n".join(violations)


def test_the_room_rule_itself():
    assert room_violations("engine.search.fast_path", "import sqlite3\n") != []
    assert room_violations("engine.backends.sqlite.search", "import sqlite3\n") == []
    assert room_violations("engine.backends.sqlite_other", "import sqlite3\n") != []
    assert room_violations("engine.index.postings", "import msgpack\n") != []
    assert room_violations("engine.codec.framing", "from msgpack import packb\n") == []
    assert room_violations("engine.cli.output", "import psycopg\n") != []


# ----- no cycle inside a package ---------------------------------------------------------


def runtime_imports(source: str, importer: str, *, is_package: bool) -> Iterator[str]:
    """The engine modules a module's source imports when it runs: the `import` forms of
    `imports_in` (inside functions too), without those under `if TYPE_CHECKING:` (names
    for annotations, never loaded) and without module names written as strings (a lazy
    registry names what it may load; loading happens at a call, not at import).

    >>> source = "from typing import TYPE_CHECKING\\nif TYPE_CHECKING:\\n    import engine.model\\n"
    >>> list(runtime_imports(source, "engine.x", is_package=False))
    []
    """
    tree = ast.parse(source)
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(inner) for statement in node.body for inner in ast.walk(statement))
    kept = [node for node in ast.walk(tree)
            if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in skipped]
    module = ast.Module(body=kept, type_ignores=[])
    for found in imports_in(ast.unparse(module), importer, is_package=is_package):
        yield found.imported


def module_graph() -> dict[str, set[str]]:
    """Every engine module and the engine modules it imports when it runs."""
    graph: dict[str, set[str]] = {}
    for path in sorted(ENGINE.rglob("*.py")):
        importer = module_name(path)
        graph[importer] = {
            imported for imported in runtime_imports(
                path.read_text(encoding="utf-8"), importer,
                is_package=path.name == "__init__.py")
            if imported != importer and exists(imported)}
    return graph


def package_of(module: str) -> str:
    """`engine.diagnostics.verify` -> `engine.diagnostics`; a package is its own."""
    return module if exists(module + ".__init__") else module.rpartition(".")[0]


def cycles_inside_packages(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles whose modules all lie in one package (found by depth-first
    search over imports that stay in the importer's package).

    >>> cycles_inside_packages({"engine.a.x": {"engine.a.y"}, "engine.a.y": {"engine.a.x"}})
    [['engine.a.x', 'engine.a.y', 'engine.a.x']]
    >>> cycles_inside_packages({"engine.a.x": {"engine.b.y"}, "engine.b.y": {"engine.a.x"}})
    []
    """
    found: list[list[str]] = []
    seen: set[frozenset[str]] = set()

    def walk(module: str, path: list[str]) -> None:
        for imported in sorted(graph.get(module, ())):
            if package_of(imported) != package_of(path[0]):
                continue
            if imported == path[0]:
                cycle = frozenset(path)
                if cycle not in seen:
                    seen.add(cycle)
                    found.append([*path, imported])
            elif imported not in path:
                walk(imported, [*path, imported])

    for module in sorted(graph):
        walk(module, [module])
    return found


def test_no_import_cycle_inside_a_package():
    cycles = cycles_inside_packages(module_graph())
    assert not cycles, "import cycles inside a package (break each by moving what both " \
        "sides need into a module of its own):\n" + "\n".join(" -> ".join(c) for c in cycles)


# ----- one concept a module: no module over 600 lines ---------------------------------------

#: The longest a module may be; a longer one holds more than one concept (split it).
MAX_MODULE_LINES = 600
#: Tables a program writes (`engine/analysis/tables/generate.py`), exempt by name.
GENERATED_TABLES = frozenset({"unicode61_data.py", "pg_unaccent_map.py"})


def long_modules(lengths: dict[str, int]) -> list[str]:
    """The modules over `MAX_MODULE_LINES`, generated tables left out, longest first.

    >>> long_modules({"engine/a.py": 601, "engine/b.py": 600,
    ...               "engine/analysis/tables/unicode61_data.py": 900})
    ['engine/a.py (601 lines)']
    """
    return [f"{path} ({count} lines)" for path, count in
            sorted(lengths.items(), key=lambda item: -item[1])
            if count > MAX_MODULE_LINES and Path(path).name not in GENERATED_TABLES]


def test_no_module_is_over_600_lines():
    lengths = {str(path.relative_to(ROOT)): len(path.read_text(encoding="utf-8").splitlines())
               for path in sorted(ENGINE.rglob("*.py"))}
    assert not long_modules(lengths), (
        "modules over 600 lines (split each into modules of one concept):\n  "
        + "\n  ".join(long_modules(lengths)))


def test_the_length_rule_itself():
    assert long_modules({"engine/a.py": 601, "engine/b.py": 600}) == ["engine/a.py (601 lines)"]
    assert long_modules({"engine/analysis/tables/pg_unaccent_map.py": 1664}) == []
