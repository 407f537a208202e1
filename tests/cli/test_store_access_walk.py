"""The store path check's walk (`engine.store.registry._require_access`) asks one system
call of an entry that allows the mode, its kind taken from the listing; it must refuse
exactly what the clear walk refused (a `Path` and a `stat` per entry, every entry asked
the careful way: `access_refused`), with the same message, on any tree. Refusals are
made by a stand-in for `os.access` (this suite may run as root, whom nothing refuses)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.errors import StorePathError
from engine.store import registry


def clear_entries_below(directory: Path) -> Iterator[Path]:
    """The walk as it was: every entry as a `Path`, by name, a folder before its contents."""
    try:
        with os.scandir(directory) as listing:
            entries = sorted(listing, key=lambda entry: entry.name)
    except (FileNotFoundError, NotADirectoryError):
        return
    for entry in entries:
        yield Path(entry.path)
        if entry.is_dir(follow_symlinks=False):
            yield from clear_entries_below(Path(entry.path))


def clear_require_access(directory: Path, shown: str, command: str, access: str) -> None:
    """`_require_access` as it was (the oracle)."""
    folder_mode = os.R_OK | os.X_OK | (os.W_OK if access == "write" else 0)
    file_mode = os.R_OK | (os.W_OK if access == "write" else 0)
    if not os.access(directory, folder_mode):
        raise StorePathError(shown, registry._denied(directory, command, access))
    for entry in clear_entries_below(directory):
        if access == "write" and entry.is_symlink():
            raise StorePathError(str(entry), registry.SYMLINK_REFUSAL.format(command=command))
        if registry.access_refused(entry, folder_mode, file_mode):
            raise StorePathError(str(entry), registry._denied(entry, command, access))


def outcome(check, directory: Path, access: str) -> str | None:
    try:
        check(directory, str(directory), "search", access)
    except StorePathError as error:
        return str(error)
    return None


#: A tree: each entry a relative path and its kind; folders are made as needed.
entries = st.lists(st.tuples(
    st.lists(st.sampled_from(["a", "b", "index", "agents"]), min_size=1, max_size=3),
    st.sampled_from(["file", "folder", "link to file", "link to folder", "dangling link"])),
    max_size=8)


def make_tree(root: Path, tree: list[tuple[list[str], str]]) -> list[Path]:
    """Make what `tree` lists under `root` (an entry whose place is taken is skipped);
    return every path under `root`."""
    (root / "target-file").write_text("x")
    (root / "target-folder").mkdir()
    for parts, kind in tree:
        path = root.joinpath(*parts)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if os.path.lexists(path):
                continue
            if kind == "file":
                path.write_text("x")
            elif kind == "folder":
                path.mkdir()
            elif kind == "link to file":
                path.symlink_to(root / "target-file")
            elif kind == "link to folder":
                path.symlink_to(root / "target-folder")
            else:
                path.symlink_to(root / "nowhere")
        except (FileExistsError, NotADirectoryError):
            continue
    return [Path(folder, name) for folder, folders, files in os.walk(root)
            for name in folders + files]


@settings(max_examples=60, deadline=None)
@given(tree=entries, refused_picks=st.lists(st.integers(0, 50), max_size=3),
       refuse_root=st.booleans(), access=st.sampled_from(["read", "write"]))
def test_the_walk_refuses_what_the_clear_walk_refused(
        tree: list[tuple[list[str], str]], refused_picks: list[int], refuse_root: bool,
        access: str) -> None:
    with tempfile.TemporaryDirectory(prefix="access-walk-") as folder:
        root = Path(folder)
        paths = sorted(make_tree(root, tree))
        refused = {os.fspath(paths[pick % len(paths)]) for pick in refused_picks if paths}
        if refuse_root:
            refused.add(os.fspath(root))
        real_access = os.access

        def access_stand_in(path, mode, **options) -> bool:
            return os.fspath(path) not in refused and real_access(path, mode, **options)

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(os, "access", access_stand_in)
            expected = outcome(clear_require_access, root, access)
            assert outcome(registry._require_access, root, access) == expected


def test_a_refused_file_is_named(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "agents" / "main").mkdir(parents=True)
    locked = tmp_path / "agents" / "main" / "store.meta"
    locked.write_text("x")
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode, **options: os.fspath(path) != str(
        locked) and real_access(path, mode, **options))
    with pytest.raises(StorePathError) as refused:
        registry._require_access(tmp_path, str(tmp_path), "search", "read")
    assert str(refused.value) == f"{locked}: permission denied (search needs read access)"
