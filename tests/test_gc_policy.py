"""The garbage collector belongs to the process: library code never changes it.

Pins `engine.gc_policy`'s rule: only the programs (the command line, the benchmark's
probes) set a policy; a host application's garbage made around a transaction, an import,
a reconcile or a search is collected by `gc.collect()` as if the engine were not there.
"""

from __future__ import annotations

import ast
import gc
import subprocess
import sys
import weakref
from pathlib import Path

import pytest

from engine.model import SearchRequest, SessionWindow
from engine.store.registry import open_backend

ENGINE = Path(__file__).resolve().parent.parent / "engine"
#: The packages that are programs (they may set the process's policy).
PROGRAMS = ("engine/cli/", "engine/bench/", "engine/__main__.py")


class Node:
    """A node of a reference cycle the caller makes; its death is observed by a weakref."""

    def __init__(self) -> None:
        self.partner: Node | None = None


def make_cycle() -> weakref.ref[Node]:
    first, second = Node(), Node()
    first.partner, second.partner = second, first
    return weakref.ref(first)


def chat(number: int, parent: str | None) -> dict:
    return {"type": "message", "id": f"m{number}", "parentId": parent,
            "timestamp": 1767225600000 + number,
            "message": {"role": "user", "content": f"alpha word{number} beta"}}


@pytest.mark.parametrize("backend_name", ["reference", "sqlite"])
def test_a_cycle_the_caller_makes_around_engine_work_is_collected(
    tmp_path: Path, backend_name: str
) -> None:
    state = (gc.isenabled(), gc.get_threshold(), gc.get_freeze_count())
    backend = open_backend(tmp_path / "store", backend=backend_name, create=True)
    try:
        before = make_cycle()
        inside = []
        with backend.transaction() as transaction:
            transaction.put_window(SessionWindow("w1", "agent:main:k"))
            parent = None
            for number in range(3000):  # a bulk transaction: tens of thousands of objects
                transaction.append_event("w1", chat(number, parent))
                parent = f"m{number}"
                if number % 1000 == 0:
                    inside.append(make_cycle())
        assert (gc.isenabled(), gc.get_threshold(), gc.get_freeze_count()) == state
        assert len(backend.search(SearchRequest("alpha", agent_id="main")).hits) == 10
        after_search = make_cycle()
        assert (gc.isenabled(), gc.get_threshold(), gc.get_freeze_count()) == state
    finally:
        backend.close()
    gc.collect()
    assert before() is None
    assert [reference() for reference in inside] == [None, None, None]
    assert after_search() is None


def engine_modules() -> list[Path]:
    return sorted(ENGINE.rglob("*.py"))


def test_only_the_policy_module_touches_the_collector() -> None:
    offenders = []
    for path in engine_modules():
        relative = path.relative_to(ENGINE.parent).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""] + [f"{node.module}.{alias.name}" for alias in node.names]
            if "gc" in names and relative != "engine/gc_policy.py":
                offenders.append(f"{relative}: imports gc")
            if any(name == "engine.gc_policy" for name in names) and not relative.startswith(PROGRAMS):
                offenders.append(f"{relative}: library code imports engine.gc_policy")
    assert offenders == []


def test_the_command_line_sets_the_policy_at_its_edge() -> None:
    program = ("import gc; from engine.cli import main; "
               "status = main(['tokenize', '--profile', 'unicode61', 'x']); "
               "print(status, gc.get_threshold(), gc.isenabled())")
    completed = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                               check=True, cwd=ENGINE.parent)
    assert completed.stdout.splitlines()[-1] == "0 (100000, 50, 100) True"


def test_the_command_line_freezes_the_heap_at_exit() -> None:
    # atexit handlers run last registered first: this one, registered before `main`,
    # runs after the policy's and sees the heap frozen (the interpreter's last
    # collections then leave it alone).
    program = ("import atexit, gc; atexit.register(lambda: print(gc.get_freeze_count() > 0)); "
               "from engine.cli import main; "
               "status = main(['tokenize', '--profile', 'unicode61', 'x']); "
               "print(status, gc.get_freeze_count())")
    completed = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                               check=True, cwd=ENGINE.parent)
    assert completed.stdout.splitlines()[-2:] == ["0 0", "True"]
