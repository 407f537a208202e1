"""The demo from an installed package: its corpus ships as package data and is found there.

A wheel holds what setuptools' `build_py` step puts in the build folder: the packages
and their package data. The test runs that step on a copy of the project (so the
checkout is not written to) with the setuptools at hand, offline, checks that every
demo corpus file is in the build, then runs `python -m engine demo` from that build in
a folder outside the repository: the corpus it imports must be the build's own.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from importlib.resources import files
from pathlib import Path

from engine.cli.demo_command import DEMO_CORPUS_PACKAGE, demo_corpus

ROOT = Path(__file__).resolve().parent.parent


def corpus_files(folder: Path) -> list[str]:
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*.jsonl"))


def test_the_demo_finds_its_corpus_through_importlib_resources():
    with demo_corpus() as corpus:
        assert corpus == Path(str(files(DEMO_CORPUS_PACKAGE)))
        assert corpus == ROOT / "engine" / "demo_corpus"
        assert (corpus / "sessions.jsonl").is_file()


def test_an_installed_build_holds_the_corpus_and_runs_the_demo_anywhere(tmp_path: Path):
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "engine", source / "engine",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    build = tmp_path / "build"
    subprocess.run([sys.executable, "-c", "import setuptools; setuptools.setup()",
                    "--quiet", "build_py", "--build-lib", str(build)],
                   cwd=source, check=True, capture_output=True, text=True)
    shipped = build / "engine" / "demo_corpus"
    expected = corpus_files(ROOT / "engine" / "demo_corpus")
    assert len(expected) == 24  # sessions.jsonl and 23 transcripts
    assert corpus_files(shipped) == expected

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    environment = {**os.environ, "PYTHONPATH": str(build)}
    finished = subprocess.run([sys.executable, "-m", "engine", "demo", "--json"],
                              cwd=elsewhere, env=environment, capture_output=True,
                              text=True, check=False)
    assert finished.returncode == 0, finished.stderr
    report = json.loads(finished.stdout)
    assert Path(report["corpus"]) == shipped
    assert report["allBackendsAgree"] is True
    assert report["stats"]["reference"]["windows"] == 23
