"""Where the benchmark keeps its generated corpora, and what the command's report leaves
out: one real `session-search bench` run on the tiny corpus, with `--cache`.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from engine.bench.corpus_generator import DEFAULT_SEED, default_cache_root
from engine.cli import main


def test_the_cache_root_is_the_variable_else_the_checkout_else_the_home_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("SESSION_SEARCH_CACHE", raising=False)
    assert default_cache_root() == tmp_path / "home" / ".cache" / "session-search" / "corpora"
    (tmp_path / "corpora").mkdir()
    assert default_cache_root() == Path("corpora") / "cache"
    monkeypatch.setenv("SESSION_SEARCH_CACHE", str(tmp_path / "elsewhere"))
    assert default_cache_root() == tmp_path / "elsewhere"


def test_the_help_says_where_the_cache_is(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["bench", "--help"])
    assert exited.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "--cache DIR" in text
    assert "$SESSION_SEARCH_CACHE" in text and "./corpora/cache" in text
    assert "~/.cache/session-search/corpora" in text


@pytest.fixture(scope="module")
def cached_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """`bench --cache DIR` with `$SESSION_SEARCH_CACHE` pointing elsewhere, on workloads
    that exist (append) and that do not yet (history reads, the agent tool)."""
    root = tmp_path_factory.mktemp("cached-run")
    printed = io.StringIO()
    with pytest.MonkeyPatch.context() as patch, redirect_stdout(printed):
        patch.setenv("SESSION_SEARCH_CACHE", str(root / "variable-cache"))
        out = root / "out"
        status = main([
            "bench", "--size", "tiny", "--cache", str(root / "option-cache"),
            "--backends", "sqlite", "--only", "append,history,agent", "--rounds", "1",
            "--out", str(out), "--no-progress", "--markdown",
        ])
    return {"root": root, "status": status, "printed": printed.getvalue(),
            "report": json.loads((out / "bench.json").read_text(encoding="utf-8"))}


def test_the_cache_option_wins_over_the_variable(cached_run: dict[str, Any]) -> None:
    root = cached_run["root"]
    assert cached_run["status"] == 0
    manifest = root / "option-cache" / f"tiny-{DEFAULT_SEED}" / "manifest.json"
    assert json.loads(manifest.read_text(encoding="utf-8"))["size"] == "tiny"
    assert not (root / "variable-cache").exists()
    assert cached_run["report"]["corpus"]["directory"] == str(manifest.parent)


def test_the_history_and_agent_workloads_are_measured(cached_run: dict[str, Any]) -> None:
    cells = cached_run["report"]["cells"]
    assert [(cell["workload"], cell["status"]) for cell in cells] == [
        ("history/tail", "ok"), ("history/anchored", "ok"),
        ("agent/sessions_search_all", "ok"), ("agent/sessions_search_agent", "ok"),
        ("append/one_message", "ok")]
    printed = cached_run["printed"]
    assert "| append/one_message | sqlite | 20 |" in printed
    assert "| agent/sessions_search_all | sqlite |" in printed
    assert "| history/anchored | sqlite |" in printed
    assert "Not measured" not in printed
