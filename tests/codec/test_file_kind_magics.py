"""Every file kind's magic is `MAGIC_LENGTH` bytes (a header holds exactly that many):
the check `FileKind` made when it was a dataclass (`__post_init__`), made once here
for the table instead of at every import."""

from engine.codec import FILE_KINDS, MAGIC_LENGTH, FileKind


def test_every_kind_has_a_magic_of_the_header_length():
    assert FILE_KINDS
    for kind in FILE_KINDS.values():
        assert isinstance(kind, FileKind)
        assert len(kind.magic) == MAGIC_LENGTH, kind.name
