"""`Directory.open_atomic`, run against both implementations: a file written piece by
piece replaces its target only at its commit, durably, and leaves nothing when aborted."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.directory import Directory, FileDirectory, MemoryDirectory
from engine.errors import StoreError


@pytest.fixture(params=["file", "memory"])
def directory(request: pytest.FixtureRequest, tmp_path: Path) -> Directory:
    if request.param == "file":
        return FileDirectory(tmp_path / "store")
    return MemoryDirectory()


def test_pieces_patches_and_reads_back_then_commit_replaces(directory: Directory) -> None:
    directory.write_atomic("index/file", b"old")
    with directory.open_atomic("index/file") as file:
        file.write(b"head:0000|")
        file.write(b"x" * 100_000)  # past the file handle's own buffer
        file.write(b"|tail")
        assert file.size() == 10 + 100_000 + 5
        assert directory.read_bytes("index/file") == b"old"  # not before the commit
        file.write_at(5, b"1234")
        assert file.read(0, 10) == b"head:1234|"
        assert file.read(file.size() - 5, 5) == b"|tail"
        file.commit()
    assert directory.read_bytes("index/file") == b"head:1234|" + b"x" * 100_000 + b"|tail"
    assert directory.list_names("index/") == ["index/file"]


def test_leaving_without_a_commit_keeps_the_target(directory: Directory) -> None:
    directory.write_atomic("f", b"old")
    with directory.open_atomic("f") as file:
        file.write(b"new")
    with pytest.raises(RuntimeError), directory.open_atomic("g") as other:
        other.write(b"never")
        raise RuntimeError("a merge failed")
    assert directory.read_bytes("f") == b"old"
    assert not directory.exists("g")
    assert directory.list_names() == ["f"]


def test_out_of_range_and_closed_uses_are_refused(directory: Directory) -> None:
    with directory.open_atomic("f") as file:
        file.write(b"abc")
        with pytest.raises(StoreError):
            file.write_at(2, b"xy")
        with pytest.raises(StoreError):
            file.read(1, 5)
        file.commit()
        with pytest.raises(StoreError):
            file.write(b"d")
    assert directory.read_bytes("f") == b"abc"


def test_a_commit_is_durable_and_an_abort_leaves_no_temporary(tmp_path: Path) -> None:
    directory = FileDirectory(tmp_path)
    with directory.open_atomic("a/kept") as file:
        file.write(b"1")
        file.commit()
    with directory.open_atomic("a/dropped") as file:
        file.write(b"2")
    assert sorted(path.name for path in (tmp_path / "a").iterdir()) == ["kept"]
    memory = MemoryDirectory()
    with memory.open_atomic("kept") as file:
        file.write(b"1")
        file.commit()
    assert memory.crash_copy().read_bytes("kept") == b"1"
