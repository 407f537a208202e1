"""What `engine.store.registry.open_or_create_store` returns to a command that writes.

Owns: `OpenedStore`, the store a writing command opened or made, with its backend's
name and whether this call created it. Must not touch: how a store path is checked,
opened or created (`engine.store.registry`, `engine.store.opening`). Its own module so
that a command that only reads (`search`) never defines the class.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.store.partitioned import PartitionedStore


@dataclass(frozen=True, slots=True)
class OpenedStore:
    """A store `open_or_create_store` opened as writer: the backend, its name, and
    whether this call created it (so a failed first import can remove it again)."""

    backend: PartitionedStore
    name: str
    created: bool
