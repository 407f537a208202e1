"""Every doctest in the `engine` package passes (plain `pytest` collects only `tests/`).

Each module is a separate case, so a failure names the module; a module that holds no
example still counts as passing.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import engine

MODULES = sorted(
    info.name for info in pkgutil.walk_packages(engine.__path__, prefix="engine.")
    if not info.name.endswith("__main__")
)


def test_the_package_has_modules_with_examples():
    examples = sum(
        len(test.examples)
        for name in MODULES
        for test in doctest.DocTestFinder().find(importlib.import_module(name))
    )
    assert len(MODULES) > 50 and examples > 200


@pytest.mark.parametrize("module_name", MODULES)
def test_module_examples(module_name: str) -> None:
    results = doctest.testmod(importlib.import_module(module_name), optionflags=doctest.ELLIPSIS)
    assert results.failed == 0, f"{results.failed} of {results.attempted} examples failed"
