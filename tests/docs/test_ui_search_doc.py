"""`docs/protocol.md` documents every param and result member of `ui.search`, read from
real answers on the demo corpus (flags included), and its notice texts exactly."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.agent_tools.budgets import ReaderGate, TimeBudgets
from engine.agent_tools.ui_search import (
    INDEXING_NOTICE,
    UNAVAILABLE_NOTICE,
    archived_notice,
    ui_search,
)
from engine.ingest import import_sources
from engine.rpc.ui_method import PARAM_NAMES
from engine.store.registry import open_backend
from tests.docs.test_protocol_doc import section, table_first_cells

ROOT = Path(__file__).resolve().parents[2]
UI_SECTION = section("`ui.search`")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    backend = open_backend(tmp_path_factory.mktemp("ui-doc") / "demo", backend="reference",
                           create=True)
    import_sources(backend, [ROOT / "engine" / "demo_corpus"])
    backend.reconcile()
    try:
        yield backend
    finally:
        backend.close()


def documented_results() -> str:
    return " ".join(table_first_cells(UI_SECTION.split("**Result**")[1].split("**Errors**")[0]))


def test_every_param_is_documented() -> None:
    params = [cell.strip("`") for cell in table_first_cells(UI_SECTION.split("**Result**")[0])]
    assert params[2:] == list(PARAM_NAMES)


def test_every_result_member_is_documented(demo: object) -> None:
    gate = ReaderGate()
    assert gate.admit(0)
    try:
        failed = ui_search(demo, "notes", gate=gate, budgets=TimeBudgets(reader_seconds=0.01))
    finally:
        gate.release()
    answers = [ui_search(demo, "notes"), ui_search(demo, "cafe", limit=1), failed]
    members: set[str] = set()
    for answer in answers:
        members.update(answer)
        for entry in answer["sessions"] + answer["messages"]:
            members.update(entry)
            members.update(f"hit.{name}" for name in entry.get("hit", {}))
    members.add("indexing")  # the demo corpus is reconciled: named here, not produced
    rows = documented_results()
    hit_row = next(line for line in UI_SECTION.splitlines() if line.startswith("| `hit`"))
    for member in sorted(members):
        if member.startswith("hit."):
            assert f"`{member.removeprefix('hit.')}`" in hit_row, member
        else:
            assert f"`{member}`" in rows, member


def test_the_notice_texts_are_written_exactly() -> None:
    text = " ".join(UI_SECTION.split())
    for notice in (UNAVAILABLE_NOTICE, INDEXING_NOTICE, archived_notice(0).replace("0", "N")):
        assert f"`{notice}`" in text, notice
