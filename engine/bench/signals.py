"""Why a workload cannot run a cell: the benchmark's signals, shared by its modules.

Owns: `CapabilityMissing` and its two kinds, `FeatureNotBuilt` and `NotApplicable`. Must
not touch: anything else. They live apart so that the harness's adapters and the
comparators (`engine.bench.sqlite_kernel`) both raise them without importing each other.
"""

from __future__ import annotations


class CapabilityMissing(Exception):
    """An engine capability a workload needs does not exist (yet); the message says which."""


class FeatureNotBuilt(CapabilityMissing):
    """The engine (or one backend) has no such feature yet: its module or method is absent."""


class NotApplicable(CapabilityMissing):
    """A comparator (`engine.bench.comparators`) has no counterpart for this workload or
    request; the message says why."""
