"""Value classes lighter to make than frozen dataclasses: `FrozenValue` and the
own-kind equality of NamedTuple values.

Owns: `FrozenValue`, the base of a frozen value with `__slots__` written out by hand, and
`same_kind_equal` / `same_kind_unequal`, the `==` and `!=` of a NamedTuple value that
equals only a value of its own class. Must not touch: any value's fields or meaning (each
class that uses them says what it holds); this module imports nothing from `engine`.

Why. A frozen dataclass's class costs several times a NamedTuple's or a plain slotted
class's to make, and a fresh search pays for every class of every module it imports, so
the internal values a search or an open makes are NamedTuples or `FrozenValue`s. They
must still behave as the dataclasses did where a caller can tell: a tuple's own equality
would make a value equal a plain tuple, or another kind with the same items (a log
record and the change it stands for), so a mix-up of the two would pass every test.
"""

from __future__ import annotations

from dataclasses import FrozenInstanceError


class FrozenValue:
    """Base of an internal frozen value with `__slots__`: fields frozen; equality (same
    class), hash, repr, copy and pickle over the fields `_compared` names (a class
    attribute of each subclass), which are the constructor's arguments, in order.

    >>> class Pair(FrozenValue):
    ...     __slots__ = ("left", "right")
    ...     _compared = ("left", "right")
    ...     def __init__(self, left: int, right: int) -> None:
    ...         object.__setattr__(self, "left", left)
    ...         object.__setattr__(self, "right", right)
    >>> Pair(1, 2), Pair(1, 2) == Pair(1, 2), Pair(1, 2) == (1, 2)
    (Pair(left=1, right=2), True, False)
    """

    __slots__ = ()
    _compared: tuple[str, ...] = ()

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def _values(self) -> tuple:
        return tuple(map(self.__getattribute__, self._compared))

    def __eq__(self, other: object) -> bool:
        same = other.__class__ is self.__class__
        return self._values() == other._values() if same else NotImplemented  # type: ignore

    def __hash__(self) -> int:
        return hash(self._values())

    def __reduce__(self) -> tuple:  # copy and pickle make it again from those fields
        return self.__class__, self._values()

    def __repr__(self) -> str:
        shown = zip(self._compared, self._values())
        return f"{self.__class__.__qualname__}({', '.join(f'{n}={v!r}' for n, v in shown)})"


def same_kind_equal(value: tuple, other: object) -> bool:
    """`==` of a NamedTuple value that equals only a value of its own class (with the
    same items), never a plain tuple or another NamedTuple with the same items.

    >>> from typing import NamedTuple
    >>> class Kept(NamedTuple):
    ...     item: object
    ...     __eq__ = same_kind_equal
    ...     __ne__ = same_kind_unequal
    ...     __hash__ = tuple.__hash__
    >>> Kept(None) == (None,), Kept(None) == Kept(None), Kept(None) != (None,)
    (False, True, True)
    """
    return other.__class__ is value.__class__ and tuple.__eq__(value, other)


def same_kind_unequal(value: tuple, other: object) -> bool:
    """`!=`, the negation of `same_kind_equal` (a tuple's own `!=` compares items)."""
    return not same_kind_equal(value, other)
