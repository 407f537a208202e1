"""The table of file kinds: one format version each, and a decoder named for it."""

from __future__ import annotations

import importlib

import pytest

from engine import codec
from engine.codec import DECODERS, FILE_KINDS, check_version, kind_of_magic
from engine.errors import UnsupportedVersion


#: Earlier versions a kind is still read in, and why: a commit journal an earlier build
#: left behind (a crash in a commit across agents) must still be finished by this one.
EARLIER_VERSIONS_READ = {"journal": [1]}


def test_every_kind_has_one_version_and_its_decoder_describes_records():
    assert sorted(DECODERS) == sorted(FILE_KINDS)
    for name, kind in FILE_KINDS.items():
        assert list(DECODERS[name]) == [*EARLIER_VERSIONS_READ.get(name, []), kind.version], name
        module = importlib.import_module(check_version(kind, kind.version, "f"))
        assert callable(module.describe_payload), name


def test_magics_name_their_kinds():
    assert [kind_of_magic(kind.magic) for kind in FILE_KINDS.values()] == list(FILE_KINDS.values())
    assert len({kind.magic for kind in FILE_KINDS.values()}) == len(FILE_KINDS)


def test_the_refusal_names_the_file_and_every_version_read(monkeypatch: pytest.MonkeyPatch):
    kind = FILE_KINDS["manifest"]
    monkeypatch.setitem(codec.DECODERS, "manifest", {2: "a", 3: "b"})
    assert check_version(kind, 3, "s/index/manifest") == "b"
    with pytest.raises(UnsupportedVersion) as older:
        check_version(kind, 1, "s/index/manifest")
    assert str(older.value) == (
        "s/index/manifest: unsupported version 1 of a manifest file (this build reads "
        "versions 2, 3); it was written by an earlier build of session-search: re-import "
        "the store")
    with pytest.raises(UnsupportedVersion, match="version 4 .* by a newer build of session-search$"):
        check_version(kind, 4, "s/index/manifest")
