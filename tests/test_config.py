"""`EngineConfig`: what each field accepts, `clear_paths()`, the docstring's table of
clear-path switches, and that tests shrink sizes through a config, not by patching."""

from __future__ import annotations

import ast
import re
from dataclasses import fields, replace
from pathlib import Path

import pytest

import engine.config
from engine.codec import catalog_file
from engine.config import EngineConfig, clear_path_switches, flags
from engine.errors import UsageError

ROOT = Path(__file__).resolve().parent.parent
SWITCHES = clear_path_switches()
FLAGS = flags()
SIZES = tuple(item.name for item in fields(EngineConfig)
              if item.name not in SWITCHES and item.name not in FLAGS)


@pytest.mark.parametrize("name", SIZES)
def test_every_size_is_a_whole_number_from_its_minimum(name: str) -> None:
    minimum = 0 if name == "tombstone_runs_factor" else 1
    assert getattr(EngineConfig(**{name: minimum}), name) == minimum
    for wrong in (minimum - 1, True, 2.0, "3", None):
        with pytest.raises(UsageError, match=f"^{name} must be"):
            EngineConfig(**{name: wrong})


@pytest.mark.parametrize("name", SWITCHES)
def test_every_switch_is_true_or_false_and_the_fast_version_by_default(name: str) -> None:
    assert getattr(EngineConfig(), name) is True
    assert getattr(EngineConfig(**{name: False}), name) is False
    for wrong in (0, 1, None, "False"):
        with pytest.raises(UsageError, match=f"^{name} must be True or False"):
            EngineConfig(**{name: wrong})


@pytest.mark.parametrize("name", FLAGS)
def test_every_flag_is_true_or_false_and_never_a_clear_path(name: str) -> None:
    assert getattr(EngineConfig(**{name: False}), name) is False
    assert getattr(EngineConfig.clear_paths(), name) == getattr(EngineConfig(), name)
    for wrong in (0, 1, None, "False"):
        with pytest.raises(UsageError, match=f"^{name} must be True or False"):
            EngineConfig(**{name: wrong})


def test_clear_paths_turns_every_switch_off_and_keeps_the_sizes() -> None:
    default, clear = EngineConfig(), EngineConfig.clear_paths()
    assert len(SWITCHES) == 7
    assert [getattr(clear, name) for name in SWITCHES] == [False] * len(SWITCHES)
    assert [getattr(clear, name) for name in SIZES] == [getattr(default, name) for name in SIZES]
    assert EngineConfig.clear_paths(fast_kernel=True, log_roll_bytes=100) == replace(
        clear, fast_kernel=True, log_roll_bytes=100)
    with pytest.raises(TypeError):
        EngineConfig.clear_paths(no_such_field=1)


def test_the_docstring_table_names_every_switch_and_its_oracle_test() -> None:
    doc = engine.config.__doc__ or ""
    table = doc[doc.index("    field "): doc.index("\n\n", doc.index("    field "))]
    named = [name for name in re.findall(r"^    (\w+) ", table, re.MULTILINE) if name != "field"]
    assert sorted(named) == sorted(SWITCHES)
    oracles = re.findall(r"\((tests/[\w/]+\.py)\)", table)
    assert len(oracles) == len(SWITCHES)
    assert [path for path in oracles if not (ROOT / path).is_file()] == []
    differential = re.search(r"`(tests/[\w/]+\.py)` runs the reference backend", doc)
    assert differential is not None and (ROOT / differential.group(1)).is_file()
    test_name = re.search(r"\(`(test_\w+)`\)", doc)
    assert test_name is not None
    assert f"def {test_name.group(1)}(" in (ROOT / differential.group(1)).read_text()


def test_the_codec_defaults_are_the_production_values() -> None:
    """The codec reads no config; its defaults serve callers without one (tools, tests)."""
    config = EngineConfig()
    assert catalog_file.WINDOWS_PER_RECORD == config.checkpoint_windows_per_record
    assert catalog_file.PROBE_LENGTH == config.checkpoint_probe_bytes


#: Upper-case module names a test may replace, each with why it is not a tunable.
REPLACEABLE_NAMES = {
    "COMMAND_MODULES": "the command modules the CLI registers (a test registers one alone)",
    "MIGRATIONS": "the postgres layout's migrations (a test makes a partition as an earlier "
                  "build did, to check that a reader refuses it and the writer migrates it)",
    "FORMAT_VERSION": "the postgres layout's version, with MIGRATIONS (the same test)",
}


def patched_constants(source: str) -> list[str]:
    """Upper-case attributes the code replaces: `monkeypatch.setattr(module, "NAME", ...)`,
    `setattr(module, "NAME", ...)` or `module.NAME = ...`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and len(node.args) >= 2 and (
                (isinstance(node.func, ast.Attribute) and node.func.attr == "setattr")
                or (isinstance(node.func, ast.Name) and node.func.id == "setattr")):
            name = node.args[1]
            if isinstance(name, ast.Constant) and isinstance(name.value, str):
                found.append(name.value)
        elif isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found.extend(target.attr for target in targets if isinstance(target, ast.Attribute))
    return [name for name in found if re.fullmatch(r"[A-Z][A-Z0-9_]*", name)]


def test_patched_constants_finds_each_way_of_replacing_one() -> None:
    source = ('monkeypatch.setattr(m, "SIZE", 2)\nsetattr(m, "DEPTH", 1)\nm.LIMIT = 3\n'
              'm.LIMIT += 1\nm.name = 4\nmonkeypatch.setattr(m, "update_crc", f)\n')
    assert sorted(patched_constants(source)) == ["DEPTH", "LIMIT", "LIMIT", "SIZE"]


def test_no_test_shrinks_a_size_by_patching_a_module_constant() -> None:
    """Sizes and thresholds are shrunk through `EngineConfig`; replacing functions for
    counting or fault injection is not a tunable and is not looked for."""
    patched = {
        f"{path.relative_to(ROOT)}: {name}"
        for path in sorted((ROOT / "tests").rglob("*.py"))
        for name in patched_constants(path.read_text(encoding="utf-8"))
        if name not in REPLACEABLE_NAMES
    }
    assert patched == set()
