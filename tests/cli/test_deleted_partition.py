"""A deleted agent partition is reported, never silently left out (both backends).

The store's root `store.meta` lists every agent that has a partition
(`engine.store.layout`, "A deleted partition"). Deleting `agents/<agentId>/`
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

from engine.codec.meta_file import encode_root_meta_file
from engine.errors import InputError, StoreError
from engine.model import SessionWindow
from engine.store.layout import read_root_meta
from engine.store.registry import open_backend
from tests.conftest import postgres_configured

ROOT = Path(__file__).resolve().parent.parent.parent
DEMO = ROOT / "engine" / "demo_corpus"
BACKENDS = ("reference", "sqlite", "postgres")


def engine(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "engine", *argv], check=False, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("imported")
    stores = {}
    for backend in BACKENDS:
        if backend == "postgres" and not postgres_configured():
            continue  # its tests skip (or fail under CI) through the pg_dsn fixture
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


STRAY_WARNING = ("a folder the store does not list (its store.meta has no agent 'work'): "
                 "ignored, never searched, counted or written; run `session-search verify "
                 "--repair` to adopt it as the partition of agent 'work', or remove the folder")


def unlist(store: Path, agent_id: str) -> None:
    meta = read_root_meta(store)
    (store / "store.meta").write_bytes(
        encode_root_meta_file(meta.with_agents(set(meta.agents) - {agent_id})))


def test_a_stray_folder_is_ignored_with_a_warning_never_half_used(store: Path) -> None:
    """Issue 34, item 6: a folder in `agents/` the root does not list was searched,
    counted and verified, and a writer listed it without a word. Now every command
    ignores it and says so; nothing writes it or the root's list."""
    meta = read_root_meta(store)
    unlist(store, "work")
    stray = store / "agents" / "work"
    warning = f"session-search: warning: {stray}: {STRAY_WARNING}\n"
    searched = engine("search", "--store", str(store), "--agent", "work", "--json", "quasar")
    assert (searched.returncode, searched.stderr) == (0, warning)
    assert json.loads(searched.stdout)["hits"] == []
    everywhere = engine("search", "--store", str(store), "--all-sessions", "--json", "quasar")
    assert json.loads(everywhere.stdout)["hits"] == [] and everywhere.stderr == warning
    history = engine("history", "--store", str(store), "--json", "agent:work:recall")
    assert history.returncode == 2 and history.stderr.startswith(warning)
    counted = engine("stats", "--store", str(store), "--json")
    assert counted.returncode == 1
    report = json.loads(counted.stdout)
    assert "work" not in report["partitions"] and report["agents"] == 4
    assert report["problems"] == [f"{stray}: {STRAY_WARNING}"]
    verified = engine("verify", "--store", str(store), "--json")
    assert verified.returncode == 1
    assert json.loads(verified.stdout)["problems"] == [f"{stray}: {STRAY_WARNING}"]
    # a writer neither lists it nor writes it: a failing delete leaves the root as it was
    before = (store / "store.meta").read_bytes()
    deleted = engine("delete", "--store", str(store), "agent:work:recall")
    assert deleted.returncode == 2 and deleted.stderr.startswith(warning)
    imported = engine("import", "--store", str(store), "--quiet", str(DEMO))
    assert imported.returncode == 2 and imported.stderr.startswith(warning)
    assert (store / "store.meta").read_bytes() == before
    with open_backend(store, writer=True) as writer:
        assert "work" not in writer.partitions()
    assert read_root_meta(store).agents == tuple(sorted(set(meta.agents) - {"work"}))


def test_a_write_for_a_stray_agent_is_refused_naming_the_folder(store: Path) -> None:
    unlist(store, "work")
    with pytest.raises(StoreError, match="a folder the store does not list is where agent "
                                         "'work'.s partition would be made; nothing was "
                                         "written"):
        with open_backend(store, writer=True) as writer, writer.transaction() as transaction:
            transaction.put_window(SessionWindow("brand-new", "agent:work:new"))
    assert "work" not in read_root_meta(store).agents
    assert (store / "agents" / "work").is_dir()


def test_repair_adopts_a_stray_folder_explicitly(store: Path) -> None:
    meta = read_root_meta(store)
    unlist(store, "work")
    repaired = engine("verify", "--store", str(store), "--repair")
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    assert ("repaired: agents/work: adopted the folder the store did not list as the "
            "partition of agent 'work' (verified below)") in repaired.stdout
    assert read_root_meta(store).agents == meta.agents
    searched = engine("search", "--store", str(store), "--agent", "work", "--json", "quasar")
    assert searched.stderr == "" and json.loads(searched.stdout)["hits"]


def test_an_empty_leftover_of_a_cut_short_creation_is_replaced(store: Path) -> None:
    """What a creation cut short between its rename and the root's rewrite leaves: an
    empty partition the root does not list. It is ignored like any stray, and the next
    creation of that agent removes it and goes on."""
    with open_backend(store, writer=True) as writer:  # made, then the root's rewrite undone
        writer.space.create_partition("newcomer").close()
    unlist(store, "newcomer")
    assert (store / "agents" / "newcomer").is_dir()
    with open_backend(store, writer=True) as writer, writer.transaction() as transaction:
        transaction.put_window(SessionWindow("w-new", "agent:newcomer:main"))
    assert "newcomer" in read_root_meta(store).agents
    with open_backend(store) as reader:
        assert [window.session_id for window in reader.windows_of("agent:newcomer:main")] == [
            "w-new"]


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
