"""A deleted agent partition is reported, never silently left out (both backends).

The store's root `store.meta` lists every agent that has a partition
(`engine.backends.partitioned`, "A deleted partition"). Deleting `agents/<agentId>/`
therefore makes every command that opens the store refuse it with one line naming the
folder, `stats` warn (exit 1), `verify` report it (on both backends) and `verify --repair` drop the agent
from the list, saying its sessions cannot be recovered. Run as a user runs the commands
(`python -m engine` in a subprocess from the checkout's root), on the demo corpus.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from engine.backends.partitioned import read_root_meta
from engine.backends.registry import open_backend
from engine.codec.meta_file import encode_root_meta_file
from engine.errors import InputError
from engine.model import SessionWindow

ROOT = Path(__file__).resolve().parent.parent.parent
DEMO = ROOT / "engine" / "demo_corpus"
BACKENDS = ("reference", "sqlite")


def engine(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "engine", *argv], check=False, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("imported")
    stores = {}
    for backend in BACKENDS:
        store = folder / backend
        completed = engine("import", "--quiet", "--store", str(store), "--backend", backend, str(DEMO))
        assert completed.returncode == 0, completed.stderr
        stores[backend] = store
    return stores


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, imported: dict[str, Path], tmp_path: Path) -> Path:
    copy = tmp_path / request.param
    shutil.copytree(imported[request.param], copy)
    return copy


def test_the_root_lists_every_agent_with_a_partition(store: Path) -> None:
    agents = sorted(child.name for child in (store / "agents").iterdir())
    assert len(agents) == 5
    assert read_root_meta(store).agents == tuple(agents)


def test_a_deleted_partition_is_refused_by_every_reading_command(store: Path) -> None:
    shutil.rmtree(store / "agents" / "work")
    folder = store / "agents" / "work"
    expected = (f"session-search: error: {folder}: the partition of agent 'work' is missing "
                "(the store's store.meta lists it): its sessions are lost; restore the folder "
                "from a backup, or run `session-search verify --repair` to drop the agent "
                "from the store\n")
    for argv in (["search", "--store", str(store), "--all-sessions", "cafe"],
                 ["search", "--store", str(store), "--agent", "main", "cafe"],
                 ["import", "--store", str(store), str(DEMO)]):
        completed = engine(*argv)
        assert (completed.returncode, completed.stderr) == (1, expected), argv
        assert "Traceback" not in completed.stderr


def test_stats_warns_about_a_deleted_partition(store: Path) -> None:
    shutil.rmtree(store / "agents" / "work")
    completed = engine("stats", "--store", str(store), "--json")
    assert completed.returncode == 1
    report = json.loads(completed.stdout)
    assert "work" not in report["partitions"]
    assert [problem.split(":")[0] for problem in report["problems"]] == [str(store / "agents" / "work")]
    assert "session-search: warning: " in completed.stderr


def test_verify_reports_and_repair_drops_a_deleted_partition(store: Path) -> None:
    shutil.rmtree(store / "agents" / "work")
    verified = engine("verify", "--store", str(store), "--json")
    assert verified.returncode == 1
    assert json.loads(verified.stdout)["problems"][0].startswith(
        f"{store / 'agents' / 'work'}: the partition of agent 'work' is missing")
    repaired = engine("verify", "--store", str(store), "--repair")
    assert repaired.returncode == 0, repaired.stdout
    assert ("repaired: agents/work: dropped agent 'work' from the store: its partition folder "
            "was missing, and its sessions cannot be recovered without a backup") in repaired.stdout
    assert "work" not in read_root_meta(store).agents
    searched = engine("search", "--store", str(store), "--all-sessions", "--json", "cafe")
    assert searched.returncode == 0 and json.loads(searched.stdout)["hits"]


def test_an_unlisted_partition_folder_is_listed_by_the_next_writer(store: Path) -> None:
    """What a creation cut short between its rename and the root's rewrite leaves."""
    meta = read_root_meta(store)
    (store / "store.meta").write_bytes(encode_root_meta_file(meta.with_agents(set(meta.agents) - {"work"})))
    searched = engine("search", "--store", str(store), "--agent", "work", "--json", "quasar")
    assert searched.returncode == 0, searched.stderr
    assert json.loads(searched.stdout)["hits"]
    with open_backend(store, writer=True):
        pass
    assert read_root_meta(store).agents == meta.agents


def test_a_partition_made_by_a_transaction_that_failed_is_unlisted(store: Path) -> None:
    before = read_root_meta(store).agents
    with pytest.raises(InputError), open_backend(store, writer=True) as backend, \
            backend.transaction() as transaction:
        transaction.put_window(SessionWindow("new-agent-window", "agent:newcomer:main"))
        transaction.append_event("new-agent-window", {"type": 5})
    assert not (store / "agents" / "newcomer").exists()
    assert read_root_meta(store).agents == before
    with open_backend(store, writer=True) as backend, backend.transaction() as transaction:
        transaction.put_window(SessionWindow("new-agent-window", "agent:newcomer:main"))
    assert read_root_meta(store).agents == tuple(sorted({*before, "newcomer"}))
